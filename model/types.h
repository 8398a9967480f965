// Dense ids and enums shared by every event kind of the trace model.
//
// Ids are indexes into the owning vector of model::Trace (processes(), threads(), devices(),
// streams(), collectives()); kNone (-1) means "unknown / not applicable". All times in the model
// are int64_t nanoseconds on one clock per trace (see Trace::clock_note()).
#pragma once

#include <cstdint>
#include <string_view>

namespace overlapscope::model {

using StringId = int32_t;      // index into Trace::strings(); 0 is always ""
using ProcessId = int32_t;     // one host process (one rank of a multi-rank trace)
using ThreadId = int32_t;      // one host thread of one process
using DeviceId = int32_t;      // one GPU as seen by one process
using StreamId = int32_t;      // one stream of one device
using CollectiveId = int32_t;  // one collective instance on one rank

inline constexpr int32_t kNone = -1;
inline constexpr int64_t kNoCorrelation = -1;

enum class MemcpyKind : uint8_t { kUnknown, kHtoD, kDtoH, kDtoD, kHtoH, kPtoP };
enum class MemoryKind : uint8_t { kUnknown, kPageable, kPinned, kDevice, kManaged, kArray };

// What a synchronization record waits for.
enum class SyncKind : uint8_t {
  kUnknown,
  kEventSync,        // cudaEventSynchronize: host waits for an event
  kStreamSync,       // cudaStreamSynchronize: host waits for a stream
  kContextSync,      // cudaDeviceSynchronize / cuCtxSynchronize: host waits for a device
  kStreamWaitEvent,  // cudaStreamWaitEvent: a stream waits for an event (no host wait)
};

enum class ApiKind : uint8_t { kRuntime, kDriver };

// Host-side ranges: framework ops, user annotations, NVTX ranges, profiler overhead.
enum class RangeKind : uint8_t {
  kCpuOp,           // Kineto "cpu_op" (aten ops)
  kUserAnnotation,  // Kineto "user_annotation" (record_function, ProfilerStep#N)
  kNvtx,            // NVTX push/pop or start/end ranges (any domain)
  kPythonFunction,  // Kineto "python_function"
  kOverhead,        // profiler / CUPTI overhead
};

// What opened a capture window (CaptureWindow, own captures only).
enum class WindowTrigger : uint8_t {
  kProcess,          // no capture range: the whole process, from CUDA's initialization to its exit
  kSession,          // an in-process capture session (Start .. Stop)
  kCudaProfilerApi,  // cudaProfilerStart .. cudaProfilerStop (--capture-range=cudaProfilerApi)
  kNvtx,             // an NVTX range (--capture-range=nvtx)
  kDelay,            // --delay / --duration without a capture range
};

// Where a GPU activity lives; used by references that span the three GPU vectors.
enum class GpuKind : uint8_t { kKernel, kMemcpy, kMemset };

std::string_view ToString(MemcpyKind k);
std::string_view ToString(MemoryKind k);
std::string_view ToString(SyncKind k);
std::string_view ToString(ApiKind k);
std::string_view ToString(RangeKind k);
std::string_view ToString(GpuKind k);
std::string_view ToString(WindowTrigger k);

}  // namespace overlapscope::model
