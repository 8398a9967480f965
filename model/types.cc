#include "model/types.h"

namespace overlapscope::model {

std::string_view ToString(MemcpyKind k) {
  switch (k) {
    case MemcpyKind::kHtoD: return "HtoD";
    case MemcpyKind::kDtoH: return "DtoH";
    case MemcpyKind::kDtoD: return "DtoD";
    case MemcpyKind::kHtoH: return "HtoH";
    case MemcpyKind::kPtoP: return "PtoP";
    case MemcpyKind::kUnknown: break;
  }
  return "unknown";
}

std::string_view ToString(MemoryKind k) {
  switch (k) {
    case MemoryKind::kPageable: return "pageable";
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kManaged: return "managed";
    case MemoryKind::kArray: return "array";
    case MemoryKind::kUnknown: break;
  }
  return "unknown";
}

std::string_view ToString(SyncKind k) {
  switch (k) {
    case SyncKind::kEventSync: return "event_sync";
    case SyncKind::kStreamSync: return "stream_sync";
    case SyncKind::kContextSync: return "context_sync";
    case SyncKind::kStreamWaitEvent: return "stream_wait_event";
    case SyncKind::kUnknown: break;
  }
  return "unknown";
}

std::string_view ToString(ApiKind k) { return k == ApiKind::kRuntime ? "runtime" : "driver"; }

std::string_view ToString(RangeKind k) {
  switch (k) {
    case RangeKind::kCpuOp: return "cpu_op";
    case RangeKind::kUserAnnotation: return "user_annotation";
    case RangeKind::kNvtx: return "nvtx";
    case RangeKind::kPythonFunction: return "python_function";
    case RangeKind::kOverhead: return "overhead";
  }
  return "unknown";
}

std::string_view ToString(GpuKind k) {
  switch (k) {
    case GpuKind::kKernel: return "kernel";
    case GpuKind::kMemcpy: return "memcpy";
    case GpuKind::kMemset: return "memset";
  }
  return "unknown";
}

std::string_view ToString(WindowTrigger k) {
  switch (k) {
    case WindowTrigger::kProcess: return "process";
    case WindowTrigger::kSession: return "session";
    case WindowTrigger::kCudaProfilerApi: return "cudaProfilerApi";
    case WindowTrigger::kNvtx: return "nvtx";
    case WindowTrigger::kDelay: return "delay";
  }
  return "unknown";
}

}  // namespace overlapscope::model
