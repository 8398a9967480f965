// The default API selection (api_table.h).
#include "capture/cupti/api_table.h"

namespace overlapscope::cupti {
namespace {

constexpr bool kRt = false, kDrv = true;
using M = ApiMatch;
using U = ApiUse;

// Every entry says which analysis needs the call (ApiUse); see api_table.h for the match rules.
constexpr ApiRule kRules[] = {
    // Launches: every variant (_ptsz, ExC, cooperative, host functions), graph launches.
    {kRt, M::kPrefix, "cudaLaunch", U::kLaunch},  // cudaLaunchKernel, ...ExC, ...Cooperative..., ...HostFunc
    {kRt, M::kFamily, "cudaGraphLaunch", U::kLaunch},
    {kDrv, M::kPrefix, "cuLaunch", U::kLaunch},  // cuLaunchKernel, ...Ex, ...Cooperative..., cuLaunchGrid...
    {kDrv, M::kFamily, "cuGraphLaunch", U::kLaunch},
    // Copies and memsets: every variant (2D/3D, peer, symbol, array, batch, async, _ptds/_ptsz).
    {kRt, M::kPrefix, "cudaMemcpy", U::kCopy},
    {kRt, M::kPrefix, "cudaMemset", U::kSet},
    {kDrv, M::kPrefix, "cuMemcpy", U::kCopy},
    {kDrv, M::kPrefix, "cuMemset", U::kSet},
    // Host waits and queries.
    {kRt, M::kFamily, "cudaDeviceSynchronize", U::kSync},
    {kRt, M::kFamily, "cudaThreadSynchronize", U::kSync},
    {kRt, M::kFamily, "cudaStreamSynchronize", U::kSync},
    {kRt, M::kFamily, "cudaEventSynchronize", U::kSync},
    {kRt, M::kFamily, "cudaStreamQuery", U::kQuery},
    {kRt, M::kFamily, "cudaEventQuery", U::kQuery},
    {kDrv, M::kFamily, "cuCtxSynchronize", U::kSync},
    {kDrv, M::kFamily, "cuStreamSynchronize", U::kSync},
    {kDrv, M::kFamily, "cuEventSynchronize", U::kSync},
    {kDrv, M::kFamily, "cuStreamQuery", U::kQuery},
    {kDrv, M::kFamily, "cuEventQuery", U::kQuery},
    // Events and stream waits.
    {kRt, M::kPrefix, "cudaEventRecord", U::kEventRecord},  // also ...WithFlags
    {kRt, M::kFamily, "cudaStreamWaitEvent", U::kStreamWait},
    {kDrv, M::kPrefix, "cuEventRecord", U::kEventRecord},
    {kDrv, M::kFamily, "cuStreamWaitEvent", U::kStreamWait},
    // Allocation (implicit synchronization) and host allocation / registration.
    {kRt, M::kPrefix, "cudaMalloc", U::kAlloc},  // cudaMalloc, ...Host, ...Managed, ...Pitch, ...Async
    {kRt, M::kPrefix, "cudaFree", U::kAlloc},    // cudaFree, ...Host, ...Array, ...Async
    {kRt, M::kFamily, "cudaHostAlloc", U::kAlloc},
    {kRt, M::kFamily, "cudaHostRegister", U::kAlloc},
    {kRt, M::kFamily, "cudaHostUnregister", U::kAlloc},
    {kDrv, M::kPrefix, "cuMemAlloc", U::kAlloc},  // cuMemAlloc, ...Host, ...Managed, ...Pitch, ...Async
    {kDrv, M::kPrefix, "cuMemFree", U::kAlloc},
    {kDrv, M::kFamily, "cuMemHostAlloc", U::kAlloc},
    {kDrv, M::kFamily, "cuMemHostRegister", U::kAlloc},
    {kDrv, M::kFamily, "cuMemHostUnregister", U::kAlloc},
    // Streams.
    {kRt, M::kPrefix, "cudaStreamCreate", U::kStream},  // ...WithFlags, ...WithPriority
    {kRt, M::kFamily, "cudaStreamDestroy", U::kStream},
    {kDrv, M::kPrefix, "cuStreamCreate", U::kStream},
    {kDrv, M::kFamily, "cuStreamDestroy", U::kStream},
    // NCCL orders its streams and proxies with stream memory operations.
    {kDrv, M::kPrefix, "cuStreamWaitValue", U::kMemOp},
    {kDrv, M::kPrefix, "cuStreamWriteValue", U::kMemOp},
    {kDrv, M::kFamily, "cuStreamBatchMemOp", U::kMemOp},
    {kRt, M::kFamily, "cudaDeviceReset", U::kReset},
};

bool Matches(const ApiRule& r, std::string_view name) {
  const std::string_view base(r.name);
  if (name.substr(0, base.size()) != base) return false;
  if (r.match == ApiMatch::kPrefix || name.size() == base.size()) return true;
  return name[base.size()] == '_';  // a suffix: _v2, _ptsz, _ptds, _v2_ptsz
}

}  // namespace

std::string_view ToString(ApiUse use) {
  switch (use) {
    case ApiUse::kLaunch: return "launch";
    case ApiUse::kCopy: return "copy";
    case ApiUse::kSet: return "memset";
    case ApiUse::kSync: return "sync";
    case ApiUse::kQuery: return "query";
    case ApiUse::kEventRecord: return "event-record";
    case ApiUse::kStreamWait: return "stream-wait";
    case ApiUse::kAlloc: return "alloc";
    case ApiUse::kStream: return "stream";
    case ApiUse::kMemOp: return "memop";
    case ApiUse::kReset: return "reset";
  }
  return "?";
}

const ApiRule* ApiRules(int* count) {
  *count = static_cast<int>(sizeof(kRules) / sizeof(kRules[0]));
  return kRules;
}

const ApiRule* MatchApi(bool driver, std::string_view name) {
  for (const ApiRule& r : kRules)
    if (r.driver == driver && Matches(r, name)) return &r;
  return nullptr;
}

SyncRole SyncRoleOf(bool driver, std::string_view name, bool* per_thread) {
  *per_thread = name.size() > 5 && (name.substr(name.size() - 5) == "_ptsz" || name.substr(name.size() - 5) == "_ptds");
  std::string_view base = *per_thread ? name.substr(0, name.size() - 5) : name;
  if (driver && base.size() > 3 && base.substr(base.size() - 3) == "_v2") base = base.substr(0, base.size() - 3);
  struct Entry {
    const char* runtime;
    const char* driver;
    SyncRole role;
  };
  static constexpr Entry kEntries[] = {
      {"cudaEventRecord", "cuEventRecord", SyncRole::kEventRecord},
      {"cudaEventRecordWithFlags", "cuEventRecordWithFlags", SyncRole::kEventRecord},
      {"cudaStreamWaitEvent", "cuStreamWaitEvent", SyncRole::kStreamWait},
      {"cudaEventSynchronize", "cuEventSynchronize", SyncRole::kEventSync},
      {"cudaStreamSynchronize", "cuStreamSynchronize", SyncRole::kStreamSync},
      {"cudaDeviceSynchronize", "cuCtxSynchronize", SyncRole::kContextSync},
      {"cudaThreadSynchronize", "", SyncRole::kContextSync},
  };
  for (const Entry& e : kEntries)
    if (base == (driver ? e.driver : e.runtime)) return e.role;
  return SyncRole::kNone;
}

std::string_view StripApiVersion(std::string_view s) {
  const size_t v = s.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= s.size()) return s;
  for (size_t i = v + 2; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return s;
  return s.substr(0, v);
}

}  // namespace overlapscope::cupti
