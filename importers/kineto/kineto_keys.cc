#include "importers/kineto/kineto_keys.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace overlapscope::import {
namespace {

using model::MemcpyKind;
using model::MemoryKind;
using model::SyncKind;

// An open-addressing table keyed by (length, first 8 bytes); the rest is compared only for
// longer words. Built once at startup; a lookup is a hash, usually one probe and no memcmp.
template <typename E>
class WordTable {
 public:
  WordTable(std::initializer_list<std::pair<std::string_view, E>> words, E missing) : missing_(missing) {
    for (const auto& [w, e] : words) {
      size_t h = Hash(Head(w.data(), w.size()), w.size());
      while (slots_[h].len != 0) h = (h + 1) & (kSlots - 1);
      slots_[h] = Slot{Head(w.data(), w.size()), static_cast<uint32_t>(w.size()), e, w.data()};
    }
  }
  E Find(std::string_view s) const {
    if (s.empty()) return missing_;
    const uint64_t head = Head(s.data(), s.size());
    for (size_t h = Hash(head, s.size());; h = (h + 1) & (kSlots - 1)) {
      const Slot& slot = slots_[h];
      if (slot.len == 0) return missing_;
      if (slot.len == s.size() && slot.head == head &&
          (s.size() <= 8 || std::memcmp(slot.text + 8, s.data() + 8, s.size() - 8) == 0))
        return slot.value;
    }
  }

 private:
  static constexpr size_t kSlots = 256;
  struct Slot {
    uint64_t head = 0;
    uint32_t len = 0;
    E value{};
    const char* text = nullptr;
  };
  static uint64_t Head(const char* s, size_t n) {
    uint64_t v = 0;
    if (n >= 8) {
      std::memcpy(&v, s, 8);
    } else {
      for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
    }
    return v;
  }
  static size_t Hash(uint64_t head, size_t n) {
    return static_cast<size_t>(((head * 0x9E3779B97F4A7C15ull) >> 56) ^ (n * 37)) & (kSlots - 1);
  }
  Slot slots_[kSlots];
  E missing_;
};

const WordTable<EventKey> kEventKeys({{"ph", EventKey::kPh},
                                      {"cat", EventKey::kCat},
                                      {"name", EventKey::kName},
                                      {"pid", EventKey::kPid},
                                      {"tid", EventKey::kTid},
                                      {"ts", EventKey::kTs},
                                      {"dur", EventKey::kDur},
                                      {"args", EventKey::kArgs},
                                      {"id", EventKey::kId},
                                      {"bp", EventKey::kIgnored},
                                      {"s", EventKey::kIgnored},
                                      {"cname", EventKey::kIgnored},
                                      {"tts", EventKey::kIgnored},
                                      {"scope", EventKey::kIgnored}},
                                     EventKey::kOther);

constexpr std::string_view kArgNames[] = {"(unknown)",
                                          "(ignored)",
                                          "device",
                                          "stream",
                                          "correlation",
                                          "External id",
                                          "bytes",
                                          "grid",
                                          "block",
                                          "registers per thread",
                                          "shared memory",
                                          "Collective name",
                                          "In msg nelems",
                                          "Out msg nelems",
                                          "Group size",
                                          "dtype",
                                          "Process Group Name",
                                          "Seq",
                                          "wait_on_stream",
                                          "wait_on_cuda_event_record_corr_id",
                                          "wait_on_cuda_event_id",
                                          "name",
                                          "labels",
                                          "Input Dims"};
static_assert(std::size(kArgNames) == static_cast<size_t>(ArgKey::kCount));

constexpr std::string_view kCategoryNames[] = {
    "<none>",      "<unknown>", "kernel",   "gpu_memcpy",      "gpu_memset",          "cuda_runtime",
    "cuda_driver", "cuda_sync", "cpu_op",   "user_annotation", "gpu_user_annotation", "python_function",
    "ac2g",        "fwdbwd",    "overhead", "Trace",           "(ignored)",           "(other accelerator)"};
static_assert(std::size(kCategoryNames) == static_cast<size_t>(Category::kCount));

const WordTable<Category> kCategories({{"kernel", Category::kKernel},
                                       {"gpu_memcpy", Category::kGpuMemcpy},
                                       {"gpu_memset", Category::kGpuMemset},
                                       {"cuda_runtime", Category::kCudaRuntime},
                                       {"cuda_driver", Category::kCudaDriver},
                                       {"cuda_sync", Category::kCudaSync},
                                       {"cpu_op", Category::kCpuOp},
                                       {"user_annotation", Category::kUserAnnotation},
                                       {"gpu_user_annotation", Category::kGpuUserAnnotation},
                                       {"python_function", Category::kPythonFunction},
                                       {"overhead", Category::kOverhead},
                                       {"Trace", Category::kTrace},
                                       // PyTorch 1.8-1.10 (2021) spellings.
                                       {"Kernel", Category::kKernel},
                                       {"Memcpy", Category::kGpuMemcpy},
                                       {"Memset", Category::kGpuMemset},
                                       {"Runtime", Category::kCudaRuntime},
                                       {"Operator", Category::kCpuOp},
                                       {"User", Category::kGpuUserAnnotation},
                                       {"gpu_user_Annotation", Category::kGpuUserAnnotation},
                                       // Flow arrows of every version.
                                       {"ac2g", Category::kLaunchFlow},
                                       {"async_cpu_to_gpu", Category::kLaunchFlow},
                                       {"async_gpu", Category::kLaunchFlow},
                                       {"async", Category::kLaunchFlow},
                                       {"fwdbwd", Category::kOtherFlow},
                                       {"fwd_bwd", Category::kOtherFlow},
                                       // Known, not used.
                                       {"cuda_profiler_range", Category::kIgnoredKnown},
                                       {"cuda_event", Category::kIgnoredKnown},
                                       {"external_correlation", Category::kIgnoredKnown},
                                       {"cpu_instant_event", Category::kIgnoredKnown},
                                       // Other accelerators (ActivityType names).
                                       {"glow_runtime", Category::kOtherAccelerator},
                                       {"mtia_runtime", Category::kOtherAccelerator},
                                       {"mtia_ccp_events", Category::kOtherAccelerator},
                                       {"mtia_insight", Category::kOtherAccelerator},
                                       {"mtia_counters", Category::kOtherAccelerator},
                                       {"hpu_op", Category::kOtherAccelerator},
                                       {"xpu_runtime", Category::kOtherAccelerator},
                                       {"xpu_driver", Category::kOtherAccelerator},
                                       {"xpu_sync", Category::kOtherAccelerator},
                                       {"xpu_scope_profiler", Category::kOtherAccelerator},
                                       {"privateuse1_runtime", Category::kOtherAccelerator},
                                       {"privateuse1_driver", Category::kOtherAccelerator},
                                       {"collective_comm", Category::kOtherAccelerator},
                                       {"hardware_counters", Category::kOtherAccelerator}},
                                      Category::kUnknown);

}  // namespace

EventKey ClassifyOtherEventKey(std::string_view k) { return kEventKeys.Find(k); }
ArgKey ClassifyArgKey(std::string_view k) {
  // The args Kineto writes, by length, then constant-size compares that the compiler turns
  // into a few loads (this runs for every arg of every event). kIgnored: known Kineto args the
  // model has no field for; anything else is kUnknown and counted.
  const char* s = k.data();
  switch (k.size()) {
    case 3:
      if (std::memcmp(s, "Seq", 3) == 0) return ArgKey::kSeq;
      if (std::memcmp(s, "cid", 3) == 0) return ArgKey::kIgnored;  // ROCm call id
      if (std::memcmp(s, "ptr", 3) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "src", 3) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "dst", 3) == 0) return ArgKey::kIgnored;
      break;
    case 4:
      if (std::memcmp(s, "grid", 4) == 0) return ArgKey::kGrid;
      if (std::memcmp(s, "name", 4) == 0) return ArgKey::kName;
      if (std::memcmp(s, "cbid", 4) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Rank", 4) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "kind", 4) == 0) return ArgKey::kIgnored;  // ROCm copy/dispatch kind
      if (std::memcmp(s, "size", 4) == 0) return ArgKey::kIgnored;  // ROCm call's byte count
      break;
    case 5:
      if (std::memcmp(s, "bytes", 5) == 0) return ArgKey::kBytes;
      if (std::memcmp(s, "block", 5) == 0) return ArgKey::kBlock;
      if (std::memcmp(s, "dtype", 5) == 0) return ArgKey::kDtype;
      break;
    case 6:
      if (std::memcmp(s, "device", 6) == 0) return ArgKey::kDevice;
      if (std::memcmp(s, "Device", 6) == 0) return ArgKey::kIgnored;  // PyTorch 1.8 Operator arg
      if (std::memcmp(s, "kernel", 6) == 0) return ArgKey::kIgnored;  // ROCm launch: kernel name
      if (std::memcmp(s, "Kernel", 6) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "stream", 6) == 0) return ArgKey::kStream;
      if (std::memcmp(s, "labels", 6) == 0) return ArgKey::kLabels;
      if (std::memcmp(s, "queued", 6) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Ev Idx", 6) == 0) return ArgKey::kIgnored;
      break;
    case 7:
      if (std::memcmp(s, "context", 7) == 0) return ArgKey::kIgnored;
      break;
    case 8:
      if (std::memcmp(s, "Op count", 8) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "inDevice", 8) == 0) return ArgKey::kDevice;  // peer copies: where it ran
      if (std::memcmp(s, "toDevice", 8) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "event_id", 8) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "grid dim", 8) == 0) return ArgKey::kIgnored;  // ROCm 2021-22
      break;
    case 9:
      if (std::memcmp(s, "Python id", 9) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "inContext", 9) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "toContext", 9) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "block dim", 9) == 0) return ArgKey::kIgnored;
      break;
    case 10:
      if (std::memcmp(s, "Group size", 10) == 0) return ArgKey::kGroupSize;
      if (std::memcmp(s, "Input type", 10) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Input Dims", 10) == 0) return ArgKey::kInputDims;
      if (std::memcmp(s, "sort_index", 10) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "fromDevice", 10) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Input dims", 10) == 0) return ArgKey::kIgnored;  // PyTorch 1.8 Operator args
      if (std::memcmp(s, "Trace name", 10) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Call stack", 10) == 0) return ArgKey::kIgnored;
      break;
    case 11:
      if (std::memcmp(s, "correlation", 11) == 0) return ArgKey::kCorrelation;
      if (std::memcmp(s, "External id", 11) == 0) return ArgKey::kExternalId;
      if (std::memcmp(s, "external id", 11) == 0) return ArgKey::kExternalId;  // 2021 GPU/runtime args
      if (std::memcmp(s, "external ts", 11) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "fromContext", 11) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Input names", 11) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Output dims", 11) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Output type", 11) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "shared size", 11) == 0) return ArgKey::kIgnored;  // ROCm 2021-22
      break;
    case 12:
      if (std::memcmp(s, "warps per SM", 12) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Output names", 12) == 0) return ArgKey::kIgnored;
      break;
    case 13:
      if (std::memcmp(s, "shared memory", 13) == 0) return ArgKey::kSharedMemory;
      if (std::memcmp(s, "In msg nelems", 13) == 0) return ArgKey::kInNelems;
      if (std::memcmp(s, "blocks per SM", 13) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Fwd thread id", 13) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Input Strides", 13) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "In split size", 13) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Python thread", 13) == 0) return ArgKey::kIgnored;
      break;
    case 14:
      if (std::memcmp(s, "correlation id", 14) == 0) return ArgKey::kCorrelation;  // alias (not Kineto's)
      if (std::memcmp(s, "Out msg nelems", 14) == 0) return ArgKey::kOutNelems;
      if (std::memcmp(s, "wait_on_stream", 14) == 0) return ArgKey::kWaitOnStream;
      if (std::memcmp(s, "Out split size", 14) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "cuda_sync_kind", 14) == 0) return ArgKey::kIgnored;
      break;
    case 15:
      if (std::memcmp(s, "Trace iteration", 15) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Extra arguments", 15) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Collective name", 15) == 0) return ArgKey::kCollectiveName;
      if (std::memcmp(s, "Sequence number", 15) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Concrete Inputs", 15) == 0) return ArgKey::kIgnored;
      break;
    case 16:
      if (std::memcmp(s, "Python parent id", 16) == 0) return ArgKey::kIgnored;
      break;
    case 17:
      if (std::memcmp(s, "Global rank start", 17) == 0) return ArgKey::kIgnored;
      break;
    case 18:
      if (std::memcmp(s, "Process Group Name", 18) == 0) return ArgKey::kPgName;
      if (std::memcmp(s, "Record function id", 18) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Global rank stride", 18) == 0) return ArgKey::kIgnored;
      break;
    case 19:
      if (std::memcmp(s, "Process Group Ranks", 19) == 0) return ArgKey::kIgnored;
      break;
    case 20:
      if (std::memcmp(s, "registers per thread", 20) == 0) return ArgKey::kRegisters;
      break;
    case 21:
      if (std::memcmp(s, "wait_on_cuda_event_id", 21) == 0) return ArgKey::kWaitEventId;
      break;
    case 23:
      if (std::memcmp(s, "memory bandwidth (GB/s)", 23) == 0) return ArgKey::kIgnored;
      break;
    case 25:
      if (std::memcmp(s, "est. achieved occupancy %", 25) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Process Group Description", 25) == 0) return ArgKey::kIgnored;
      break;
    case 33:
      if (std::memcmp(s, "wait_on_cuda_event_record_corr_id", 33) == 0) return ArgKey::kWaitEventRecordCorr;
      break;
    default: break;
  }
  return ArgKey::kUnknown;
}
std::string_view ArgKeyName(ArgKey k) { return kArgNames[static_cast<size_t>(k)]; }
const char* BadArgReason(ArgKey k) {
  static const auto* const kReasons = [] {
    auto* r = new std::vector<std::string>();
    for (std::string_view n : kArgNames) r->push_back("bad arg value: " + std::string(n));
    return r;
  }();
  return (*kReasons)[static_cast<size_t>(k)].c_str();
}
Category ClassifyCategory(std::string_view c) { return kCategories.Find(c); }
std::string_view CategoryName(Category c) { return kCategoryNames[static_cast<size_t>(c)]; }

MemoryKind ParseMemoryKind(std::string_view s) {
  if (s == "Pageable") return MemoryKind::kPageable;
  if (s == "Pinned") return MemoryKind::kPinned;
  if (s == "Device") return MemoryKind::kDevice;
  if (s == "Managed") return MemoryKind::kManaged;
  if (s == "Array") return MemoryKind::kArray;
  return MemoryKind::kUnknown;
}

void ParseMemcpyName(std::string_view name, MemcpyKind* kind, MemoryKind* src, MemoryKind* dst) {
  *kind = MemcpyKind::kUnknown;
  *src = *dst = MemoryKind::kUnknown;
  constexpr std::string_view kPrefix = "Memcpy ";
  if (name.substr(0, kPrefix.size()) != kPrefix) return;
  name.remove_prefix(kPrefix.size());
  std::string_view k = name.substr(0, name.find(' '));
  if (k == "HtoD")
    *kind = MemcpyKind::kHtoD;
  else if (k == "DtoH")
    *kind = MemcpyKind::kDtoH;
  else if (k == "DtoD")
    *kind = MemcpyKind::kDtoD;
  else if (k == "HtoH")
    *kind = MemcpyKind::kHtoH;
  else if (k == "PtoP")
    *kind = MemcpyKind::kPtoP;
  size_t open = name.find('('), arrow = name.find(" -> "), close = name.rfind(')');
  if (open == std::string_view::npos || arrow == std::string_view::npos || close == std::string_view::npos ||
      !(open < arrow && arrow < close))
    return;
  *src = ParseMemoryKind(name.substr(open + 1, arrow - open - 1));
  *dst = ParseMemoryKind(name.substr(arrow + 4, close - arrow - 4));
}

MemoryKind ParseMemsetName(std::string_view name) {
  size_t open = name.find('('), close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return MemoryKind::kUnknown;
  return ParseMemoryKind(name.substr(open + 1, close - open - 1));
}

SyncKind ParseSyncKind(std::string_view name) {
  if (name == "Stream Wait Event") return SyncKind::kStreamWaitEvent;
  if (name == "Event Sync") return SyncKind::kEventSync;
  if (name == "Stream Sync") return SyncKind::kStreamSync;
  if (name == "Context Sync") return SyncKind::kContextSync;
  return SyncKind::kUnknown;
}

int DtypeBytes(std::string_view d) {
  static constexpr std::pair<std::string_view, int> kSizes[] = {{"Half", 2},
                                                                {"BFloat16", 2},
                                                                {"Float", 4},
                                                                {"Double", 8},
                                                                {"Int", 4},
                                                                {"Long", 8},
                                                                {"Short", 2},
                                                                {"Char", 1},
                                                                {"Byte", 1},
                                                                {"Bool", 1},
                                                                {"ComplexHalf", 4},
                                                                {"ComplexFloat", 8},
                                                                {"ComplexDouble", 16},
                                                                {"UInt16", 2},
                                                                {"UInt32", 4},
                                                                {"UInt64", 8},
                                                                {"Float8_e4m3fn", 1},
                                                                {"Float8_e5m2", 1},
                                                                {"Float8_e4m3fnuz", 1},
                                                                {"Float8_e5m2fnuz", 1}};
  for (const auto& [n, b] : kSizes)
    if (n == d) return b;
  return 0;
}

bool LooksLikeDeviceCategory(std::string_view c) {
  std::string lower(c);
  for (char& ch : lower) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  for (std::string_view w : {"kernel", "gpu", "cuda", "hip", "rocm", "memcpy", "memset", "runtime", "driver", "sync",
                             "device", "stream", "nccl", "rccl"})
    if (lower.find(w) != std::string::npos) return true;
  return false;
}

bool IsGpuCategory(Category c) {
  return c == Category::kKernel || c == Category::kGpuMemcpy || c == Category::kGpuMemset ||
         c == Category::kGpuUserAnnotation || c == Category::kCudaSync;
}
bool IsRuntimeCategory(Category c) { return c == Category::kCudaRuntime || c == Category::kCudaDriver; }
bool IsHostCategory(Category c) {
  return c == Category::kCpuOp || c == Category::kUserAnnotation || c == Category::kPythonFunction ||
         c == Category::kOverhead;
}

bool ParseIdString(std::string_view s, int64_t* v) {
  if (s.substr(0, 7) == "stream ") {
    s.remove_prefix(7);
    for (std::string_view suffix : {" user", " annotations"})
      if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) s.remove_suffix(suffix.size());
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    if (s.size() > 2 + 15) return false;  // a handle beyond 60 bits is not an id we can keep
    uint64_t x = 0;
    for (char c : s.substr(2)) {
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) return false;
      x = x * 16 + static_cast<uint64_t>(d);
    }
    *v = static_cast<int64_t>(x);
    return true;
  }
  const bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  if (s.empty() || s.size() > 18) return false;
  int64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + (c - '0');
  }
  *v = neg ? -x : x;
  return true;
}

int RocmAsyncOpKind(std::string_view n, MemcpyKind* kind) {
  if (n == "FillBuffer") return 2;
  if (n.substr(0, 4) != "Copy") return 0;
  n.remove_prefix(4);
  if (n.size() > 2 && n.substr(n.size() - 2) == "2D") n.remove_suffix(2);
  if (n == "HostToDevice")
    *kind = MemcpyKind::kHtoD;
  else if (n == "DeviceToHost")
    *kind = MemcpyKind::kDtoH;
  else if (n == "DeviceToDevice")
    *kind = MemcpyKind::kDtoD;
  else if (n == "HostToHost")
    *kind = MemcpyKind::kHtoH;
  else
    return 0;
  return 1;
}

int8_t CopyApiIsAsync(std::string_view n) { return model::CopyIsAsync(model::ClassifyApiCall(n)); }

}  // namespace overlapscope::import
