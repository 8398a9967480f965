// Plain event structs of the trace model. Times are int64_t ns, half-open [start_ns, end_ns).
//
// Every GPU activity keeps its correlation id (the id of the host API call that enqueued it,
// unique per process) and its device/stream. Fields that a source did not provide hold kNone /
// kNoCorrelation / the kUnknown enum value; nothing is guessed.
#pragma once

#include <cstdint>
#include <string>

#include "model/api_names.h"
#include "model/types.h"

namespace overlapscope::model {

struct Process {
  int64_t pid = -1;      // OS pid as recorded (or the trace's pid field)
  int32_t rank = kNone;  // distributed rank, kNone when unknown
  int32_t world_size = kNone;
  StringId name = 0;    // e.g. "python3"
  StringId host = 0;    // host name when known
  StringId source = 0;  // file the process came from (imports) or "capture"
  // What clock alignment added to every timestamp of this process (0: as recorded). Analyses
  // that must see the timestamps as the file has them (HTA's figures: HTA never aligns clocks,
  // and its whole-µs rounding is not shift-invariant) subtract it.
  int64_t clock_offset_ns = 0;
};

struct Thread {
  ProcessId process = kNone;
  int64_t tid = -1;  // OS thread id as recorded
  StringId name = 0;
};

struct Device {
  ProcessId process = kNone;  // devices are per process: rank r's GPU 0 is not rank s's GPU 0
  int32_t ordinal = kNone;    // CUDA device index inside the process
  StringId name = 0;          // e.g. "NVIDIA H200"
};

struct Stream {
  DeviceId device = kNone;
  int64_t native_id = -1;  // CUDA/CUPTI stream id as recorded
  StringId name = 0;       // user or library name when known
};

struct Dim3 {
  int32_t x = 0, y = 0, z = 0;
};

struct Kernel {
  int64_t start_ns = 0, end_ns = 0;
  DeviceId device = kNone;
  StreamId stream = kNone;
  int64_t correlation_id = kNoCorrelation;
  int64_t external_id = kNoCorrelation;  // framework op id (Kineto "External id")
  StringId name = 0;
  Dim3 grid, block;
  int32_t registers_per_thread = kNone;
  int64_t shared_memory_bytes = -1;
  CollectiveId collective = kNone;  // set when this kernel carries a collective
};

struct Memcpy {
  int64_t start_ns = 0, end_ns = 0;
  DeviceId device = kNone;
  StreamId stream = kNone;
  int64_t correlation_id = kNoCorrelation;
  int64_t external_id = kNoCorrelation;
  StringId name = 0;  // as recorded, e.g. "Memcpy DtoH (Device -> Pinned)"
  int64_t bytes = -1;
  MemcpyKind kind = MemcpyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  DeviceId dst_device = kNone;      // peer copies
  int8_t is_async = -1;             // 1 async API, 0 synchronous API, -1 unknown
  CollectiveId collective = kNone;  // copy-engine collectives
};

struct Memset {
  int64_t start_ns = 0, end_ns = 0;
  DeviceId device = kNone;
  StreamId stream = kNone;
  int64_t correlation_id = kNoCorrelation;
  int64_t external_id = kNoCorrelation;
  StringId name = 0;
  int64_t bytes = -1;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  int8_t is_async = -1;
};

// A CUDA runtime/driver or HIP runtime API call on a host thread.
struct ApiCall {
  int64_t start_ns = 0, end_ns = 0;
  ThreadId thread = kNone;
  int64_t correlation_id = kNoCorrelation;
  int64_t external_id = kNoCorrelation;
  StringId name = 0;  // e.g. "cudaLaunchKernel", "hipMemcpyWithStream"
  ApiKind kind = ApiKind::kRuntime;
  int32_t return_code = 0;
  // What the call does for the device (api_names.h), set from `name` by TraceBuilder::Finalize()
  // for every call of every importer; analyses read this instead of matching names.
  ApiSemantic semantic = ApiSemantic::kOther;
};

// A synchronization: a host wait (event/stream/context sync) or a stream→stream wait.
struct Sync {
  int64_t start_ns = 0, end_ns = 0;
  SyncKind kind = SyncKind::kUnknown;
  ThreadId thread = kNone;  // host thread that waited (host syncs), when known
  DeviceId device = kNone;
  StreamId stream = kNone;                               // stream synchronized on, or the waiting stream (wait-event)
  StreamId wait_on_stream = kNone;                       // stream-wait-event: the stream that recorded the event
  int64_t event_id = -1;                                 // CUDA event id when known
  int64_t event_record_correlation_id = kNoCorrelation;  // correlation of the cudaEventRecord
  int64_t correlation_id = kNoCorrelation;               // the API call that issued the sync
  StringId name = 0;
};

// A host-side range: framework op, user annotation, NVTX range, overhead.
struct Range {
  int64_t start_ns = 0, end_ns = 0;
  RangeKind kind = RangeKind::kCpuOp;
  ThreadId thread = kNone;
  int64_t external_id = kNoCorrelation;
  StringId name = 0;
  StringId domain = 0;  // NVTX domain ("NCCL", ...), empty for the default
};

// The operand shape of a matrix product a framework op computed, where the trace recorded it
// (Kineto's "Input Dims" of aten::mm, addmm, matmul, bmm, baddbmm, linear: record_shapes=True):
// batch products of an (m x k) by a (k x n) matrix. The GPU work the op launched carries the op's
// external id (Kineto "External id") on the op's process. Absent without record_shapes.
struct OpShape {
  ThreadId thread = kNone;  // the op's host thread
  int64_t external_id = kNoCorrelation;
  StringId op = 0;  // "aten::mm", ...
  int64_t m = 0, n = 0, k = 0, batch = 1;
};

// A GPU-side annotation range (Kineto "gpu_user_annotation"): spans the GPU work of a range.
struct GpuRange {
  int64_t start_ns = 0, end_ns = 0;
  DeviceId device = kNone;
  StreamId stream = kNone;
  int64_t correlation_id = kNoCorrelation;
  int64_t external_id = kNoCorrelation;
  StringId name = 0;
};

// One collective instance on one rank. Its GPU span is derived from the activities that carry
// it (kernels or copy-engine memcpys whose `collective` field names it).
struct Collective {
  int64_t start_ns = 0, end_ns = 0;  // span of the carrying GPU activities
  ProcessId process = kNone;
  DeviceId device = kNone;
  StreamId stream = kNone;
  StringId op = 0;            // "allgather", "all_to_all", "allreduce", ...
  StringId communicator = 0;  // process group name or communicator id
  StringId dtype = 0;
  int64_t sequence = -1;  // sequence number within the communicator
  int64_t in_elements = -1, out_elements = -1;
  int64_t bytes = -1;  // bytes per rank as nccl-tests counts them, when known
  int32_t rank = kNone, nranks = kNone;
  int64_t correlation_id = kNoCorrelation;
  // From NCCL's profiler plugin (libnccl-profiler-overlapscope.so) when it was loaded; absent
  // (0 / kNone / -1) otherwise.
  StringId algorithm = 0;        // "RING", "TREE", "NVLS", "PAT", ...
  StringId protocol = 0;         // "LL", "LL128", "SIMPLE"
  int32_t channels = kNone;      // NCCL channels (CTAs) the collective ran on
  int64_t channel_span_ns = -1;  // last channel end - first channel start, GPU globaltimer
  // From NCCL's NVTX payload (own captures): root rank (broadcast, reduce, gather, scatter) or
  // peer (send, recv), and the reduction ("sum", "prod", "max", "min", "avg").
  int32_t root_or_peer = kNone;
  StringId reduce_op = 0;
};

// A window in which an own capture recorded (`profile --capture-range`, an in-process session,
// or the whole process). Outside its windows nothing of that process was recorded, except GPU
// work launched inside a window that ran past its end. Traces without windows (imports) were
// recorded throughout.
struct CaptureWindow {
  ProcessId process = kNone;
  int32_t index = 0;  // 1-based per process, in time order
  int64_t start_ns = 0, end_ns = 0;
  WindowTrigger trigger = WindowTrigger::kProcess;
  StringId name = 0;  // the NVTX range name (kNvtx)
};

// A reference to one GPU activity in Trace::kernels()/memcpys()/memsets().
struct GpuRef {
  GpuKind kind = GpuKind::kKernel;
  int32_t index = 0;
};

}  // namespace overlapscope::model
