// The CUDA API calls the capture records by default: one table, in one place, of every runtime
// and driver call an analysis or the trace reader needs, and why. Everything else (cudaGetDevice,
// cudaGetLastError, cuCtxGetCurrent, cudaStreamIsCapturing, cuModuleGetFunction, ...) costs a
// record per call and is read by nothing; `profile --api=all` records it anyway.
//
// Twins: a driver call made inside a recorded runtime call (cudaLaunchKernel -> cuLaunchKernel,
// cudaMemcpyAsync -> cuMemcpyAsync) shares the runtime call's correlation id and is not recorded
// again; a driver call made on its own (Triton, cuBLASLt, NCCL launching through the driver) is
// recorded. The collector applies that rule (collector_api.cc).
//
// Names are matched after CUPTI's version suffix is stripped ("cudaLaunchKernel_v7000" ->
// "cudaLaunchKernel"). kPrefix rules match every name that starts with the rule's name (all
// cudaMemcpy* variants); kFamily rules match the name itself and the name followed by "_" and a
// suffix (_v2, _ptsz, _ptds, _v2_ptsz). Pure C++ (no CUPTI, no Abseil): the injection library and
// the CPU tests use it.
#pragma once

#include <cstdint>
#include <string_view>

namespace overlapscope::cupti {

// What an analysis reads from a call (METRICS.md sections in brackets).
enum class ApiUse : uint8_t {
  kLaunch,       // enqueues kernels: launch delay, iteration of each kernel, NCCL attribution (§2, §6)
  kCopy,         // memcpy: async flag of each copy, sync copies block the host (§3, §5)
  kSet,          // memset: same as copies
  kSync,         // host waits: CPU blocking, what released it, sync points (§3, §5)
  kQuery,        // cudaEventQuery/cudaStreamQuery: their sync records must not count as blocking (§3)
  kEventRecord,  // which stream recorded an event: stream-wait edges (§5, §6 arrival)
  kStreamWait,   // cudaStreamWaitEvent: stream -> stream ordering (§5)
  kAlloc,        // malloc/free and host allocation: implicit synchronization (§5)
  kStream,       // stream create/destroy: stream lifetime and names
  kMemOp,        // stream memory operations NCCL orders its streams with (wait/write value)
  kReset,        // cudaDeviceReset: flush point and device-wide sync
};
std::string_view ToString(ApiUse use);

enum class ApiMatch : uint8_t { kPrefix, kFamily };

struct ApiRule {
  bool driver;  // false: runtime API (cuda*), true: driver API (cu*)
  ApiMatch match;
  const char* name;
  ApiUse use;
};

// The table (api_table.cc).
const ApiRule* ApiRules(int* count);

// The rule that selects `name` (version suffix already stripped), or nullptr when the call is not
// recorded by default.
const ApiRule* MatchApi(bool driver, std::string_view name);

// Calls that synchronize or order streams, for recording them from callbacks (instead of CUPTI's
// SYNCHRONIZATION and CUDA_EVENT activity kinds). The first parameters of each, runtime and
// driver alike: kEventRecord (event, stream), kStreamWait (stream, event), kEventSync (event),
// kStreamSync (stream), kContextSync (none). `per_thread` is set for the _ptsz/_ptds variants
// (their null stream is the per-thread default stream).
enum class SyncRole : uint8_t { kNone, kEventRecord, kStreamWait, kEventSync, kStreamSync, kContextSync };
SyncRole SyncRoleOf(bool driver, std::string_view name, bool* per_thread);

// Strips a trailing "_v<digits>": "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (the name users
// and Kineto know), "cuMemAlloc_v2" -> "cuMemAlloc"; "cuMemcpyHtoD_v2_ptds" is left as it is.
std::string_view StripApiVersion(std::string_view name);

}  // namespace overlapscope::cupti
