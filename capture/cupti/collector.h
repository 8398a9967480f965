// The process-wide CUPTI collector behind CaptureSession and the injection library.
//
// CUPTI's activity state is per process, so there is exactly one collector: Start enables the
// activity kinds and opens the spill file, CUPTI hands filled buffers (from a bounded pool) to a
// callback that encodes them into the spill file at once, and Stop flushes, disables and
// closes. Registration with CUPTI (buffer callbacks, the CLOCK_REALTIME timestamp callback, the
// resource/cudaDeviceReset subscriber) happens once per process and is never undone, so a
// later session never re-registers a timestamp callback.
//
// This interface uses only the C++ library (no Abseil): the injection library links it into
// arbitrary processes (python, MPI ranks) and must not bring symbols that could clash there.
#pragma once

#include <cstdint>
#include <string>

#include "capture/cupti/capture_range.h"
#include "formats/spill_records.h"

namespace overlapscope::cupti::internal {

enum class ApiRecording : uint8_t { kSelected = 0, kAll = 1, kNone = 2 };
enum class ApiMechanism : uint8_t { kCallback = 0, kActivity = 1 };
enum class KindSet : uint8_t { kLean = 0, kMinimal = 1, kFull = 2 };

struct CollectorConfig {
  std::string spill_path;  // created with O_EXCL; the caller picks a fresh name
  // 64 x 4 MiB: CUPTI can hold a partly filled buffer per context and per thread (NCCL adds
  // proxy threads per communicator), so 16 were exhausted under NCCL; unused ones cost nothing.
  int64_t buffer_bytes = 4 << 20;
  int32_t max_buffers = 64;
  // Which CUDA API calls are recorded: kSelected, the table of api_table.h (driver twins of
  // runtime calls left out); kAll, every runtime and driver call (activity records).
  ApiRecording api = ApiRecording::kSelected;
  // How kSelected records them: callbacks into per-thread rings, or per-callback-id activity
  // records (OVERLAPSCOPE_API_MECHANISM=activity|callback; docs/PERFORMANCE.md compares them).
  ApiMechanism api_mechanism = ApiMechanism::kCallback;
  bool driver_api = true;  // false: no driver calls at all (--no-driver-api)
  // Flush at cudaDeviceReset through a runtime-API callback (besides the context-destroy resource
  // callback that every teardown passes). OVERLAPSCOPE_RESET_HOOK=0 leaves the runtime domain
  // without any callback of ours (docs/PERFORMANCE.md: what a hooked domain costs).
  bool reset_hook = true;
  // Activity kinds of a window (OVERLAPSCOPE_KINDS=min|lean|full): kLean (default) records what
  // the analyses read; kFull adds EXTERNAL_CORRELATION and OVERHEAD (as before, and with
  // --api=all); kMinimal only kernels, copies and memsets (for the benchmark's breakdown).
  KindSet kinds = KindSet::kLean;
  // Make the synchronization and cudaEventRecord records from the API callbacks (stream ids from
  // cuptiGetStreamIdEx, event records numbered per event) instead of CUPTI's SYNCHRONIZATION and
  // CUDA_EVENT kinds; callback mechanism only. The injection library (`profile`) turns it on
  // (OVERLAPSCOPE_SYNC_RECORDS=cupti: off); in-process sessions keep CUPTI's kinds (their
  // multi-GPU workloads have not run with it on a GPU yet).
  bool sync_from_callbacks = false;
  bool nvtx = true;
  RangeConfig range;                                 // capture ranges (capture_range.h); default: none
  uint32_t whole_trigger = formats::kWindowProcess;  // what the window is when there is no range
  int32_t rank = -1, world_size = -1;
  int32_t flush_period_ms = 1000;  // CUPTI hands back partly filled buffers this often (0: off)
  bool crash_handlers = false;     // atexit + SIGSEGV/SIGABRT/SIGTERM/SIGBUS flush (injection)
};

enum class EndReason : uint32_t { kStop = 0, kAtExit = 1, kSignal = 2, kTeardown = 3 };

// Both return "" on success, else a message naming the failing call.
std::string StartCollector(const CollectorConfig& config);
std::string StopCollector(EndReason reason);
bool CollectorActive();
// Non-fatal problems of the last Start (kinds that could not be enabled, no subscriber).
std::string CollectorWarnings();
// Writes the names of all CUDA devices into the spill file when the driver is initialized
// already (in-process sessions); does nothing otherwise. Never call it from inside cuInit.
void RecordDeviceNames();

// Path of the libcupti.so this process uses ("" if unknown): NVTX_INJECTION64_PATH wants it.
std::string CuptiLibraryPath();

// CLOCK_REALTIME in ns, the clock registered with CUPTI.
int64_t RealtimeNs();

// Reads RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID (then LOCAL_RANK) and the
// matching world size variables; -1 when unset.
int32_t RankFromEnv();
int32_t WorldSizeFromEnv();

}  // namespace overlapscope::cupti::internal
