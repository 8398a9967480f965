#include "model/api_names.h"

namespace overlapscope::model {
namespace {

bool Starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool Has(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// The call name without its runtime prefix and without per-thread-stream / version suffixes:
// "cuMemcpyDtoHAsync_v2_ptds" -> "MemcpyDtoHAsync", "hipMemcpyAsync_spt" -> "MemcpyAsync".
std::string_view Base(std::string_view name, ApiVendor v) {
  switch (v) {
    case ApiVendor::kCudaRuntime: name.remove_prefix(4); break;
    case ApiVendor::kCudaDriver: name.remove_prefix(2); break;
    case ApiVendor::kHip: name.remove_prefix(3); break;
    case ApiVendor::kUnknown: return {};
  }
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view suffix : {"_ptsz", "_ptds", "_spt", "_v2", "_v3"}) {
      if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
        name.remove_suffix(suffix.size());
        stripped = true;
      }
    }
  }
  return name;
}

bool IsLaunchBase(std::string_view b) {
  if (Starts(b, "LaunchHostFunc")) return false;  // enqueues a host callback, no device work
  for (std::string_view p :
       {"Launch", "ExtLaunch", "ModuleLaunch", "ExtModuleLaunch", "HccModuleLaunch", "GraphLaunch"})
    if (Starts(b, p)) return true;
  return false;
}

}  // namespace

ApiVendor ApiVendorOf(std::string_view name) {
  if (Starts(name, "cuda")) return ApiVendor::kCudaRuntime;
  if (name.size() > 2 && Starts(name, "cu") && name[2] >= 'A' && name[2] <= 'Z') return ApiVendor::kCudaDriver;
  if (name.size() > 3 && Starts(name, "hip") && name[3] >= 'A' && name[3] <= 'Z') return ApiVendor::kHip;
  return ApiVendor::kUnknown;
}

ApiSemantic ClassifyApiCall(std::string_view name) {
  const ApiVendor v = ApiVendorOf(name);
  if (v == ApiVendor::kUnknown) return ApiSemantic::kOther;
  const std::string_view b = Base(name, v);
  if (b == "StreamSynchronize") return ApiSemantic::kStreamSync;
  if (b == "EventSynchronize") return ApiSemantic::kEventSync;
  if (b == "DeviceSynchronize" || b == "ThreadSynchronize" || b == "CtxSynchronize") return ApiSemantic::kDeviceSync;
  if (b == "EventRecord" || b == "EventRecordWithFlags") return ApiSemantic::kEventRecord;
  if (b == "EventQuery" || b == "StreamQuery") return ApiSemantic::kQuery;
  if (b == "StreamWaitEvent" || Starts(b, "StreamWaitValue")) return ApiSemantic::kStreamWait;
  const bool async = Has(b, "Async");
  if (Starts(b, "Memcpy")) return async ? ApiSemantic::kCopyAsync : ApiSemantic::kCopy;
  if (Starts(b, "Memset")) return async ? ApiSemantic::kMemsetAsync : ApiSemantic::kMemset;
  if (IsLaunchBase(b)) return ApiSemantic::kLaunch;
  for (std::string_view p : {"Malloc", "MemAlloc", "HostMalloc", "ExtMalloc", "HostAlloc", "MemHostAlloc"})
    if (Starts(b, p)) return async ? ApiSemantic::kAllocAsync : ApiSemantic::kAlloc;
  for (std::string_view p : {"Free", "MemFree", "HostFree"})
    if (Starts(b, p)) return async ? ApiSemantic::kFreeAsync : ApiSemantic::kFree;
  return ApiSemantic::kOther;
}

std::string_view ToString(ApiSemantic s) {
  switch (s) {
    case ApiSemantic::kOther: return "other";
    case ApiSemantic::kLaunch: return "launch";
    case ApiSemantic::kCopy: return "copy";
    case ApiSemantic::kCopyAsync: return "copy-async";
    case ApiSemantic::kMemset: return "memset";
    case ApiSemantic::kMemsetAsync: return "memset-async";
    case ApiSemantic::kStreamSync: return "stream-sync";
    case ApiSemantic::kEventSync: return "event-sync";
    case ApiSemantic::kDeviceSync: return "device-sync";
    case ApiSemantic::kEventRecord: return "event-record";
    case ApiSemantic::kQuery: return "query";
    case ApiSemantic::kStreamWait: return "stream-wait";
    case ApiSemantic::kAlloc: return "alloc";
    case ApiSemantic::kFree: return "free";
    case ApiSemantic::kAllocAsync: return "alloc-async";
    case ApiSemantic::kFreeAsync: return "free-async";
  }
  return "other";
}

}  // namespace overlapscope::model
