#include "importers/kineto/kineto_keys.h"

#include <cstring>
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
                                          "labels"};
static_assert(std::size(kArgNames) == static_cast<size_t>(ArgKey::kCount));

constexpr std::string_view kCategoryNames[] = {
    "<none>",      "<unknown>", "kernel", "gpu_memcpy",      "gpu_memset",          "cuda_runtime",
    "cuda_driver", "cuda_sync", "cpu_op", "user_annotation", "gpu_user_annotation", "python_function",
    "ac2g",        "overhead",  "Trace"};
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
                                       {"ac2g", Category::kAc2g},
                                       {"overhead", Category::kOverhead},
                                       {"Trace", Category::kTrace}},
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
      break;
    case 4:
      if (std::memcmp(s, "grid", 4) == 0) return ArgKey::kGrid;
      if (std::memcmp(s, "name", 4) == 0) return ArgKey::kName;
      if (std::memcmp(s, "cbid", 4) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Rank", 4) == 0) return ArgKey::kIgnored;
      break;
    case 5:
      if (std::memcmp(s, "bytes", 5) == 0) return ArgKey::kBytes;
      if (std::memcmp(s, "block", 5) == 0) return ArgKey::kBlock;
      if (std::memcmp(s, "dtype", 5) == 0) return ArgKey::kDtype;
      break;
    case 6:
      if (std::memcmp(s, "device", 6) == 0) return ArgKey::kDevice;
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
      break;
    case 9:
      if (std::memcmp(s, "Python id", 9) == 0) return ArgKey::kIgnored;
      break;
    case 10:
      if (std::memcmp(s, "Group size", 10) == 0) return ArgKey::kGroupSize;
      if (std::memcmp(s, "Input type", 10) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "Input Dims", 10) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "sort_index", 10) == 0) return ArgKey::kIgnored;
      break;
    case 11:
      if (std::memcmp(s, "correlation", 11) == 0) return ArgKey::kCorrelation;
      if (std::memcmp(s, "External id", 11) == 0) return ArgKey::kExternalId;
      break;
    case 12:
      if (std::memcmp(s, "warps per SM", 12) == 0) return ArgKey::kIgnored;
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
      if (std::memcmp(s, "Out msg nelems", 14) == 0) return ArgKey::kOutNelems;
      if (std::memcmp(s, "wait_on_stream", 14) == 0) return ArgKey::kWaitOnStream;
      if (std::memcmp(s, "Out split size", 14) == 0) return ArgKey::kIgnored;
      if (std::memcmp(s, "cuda_sync_kind", 14) == 0) return ArgKey::kIgnored;
      break;
    case 15:
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

int8_t CopyApiIsAsync(std::string_view n) {
  bool copy = n.substr(0, 10) == "cudaMemcpy" || n.substr(0, 10) == "cudaMemset" || n.substr(0, 8) == "cuMemcpy" ||
              n.substr(0, 8) == "cuMemset";
  if (!copy) return -1;
  return n.find("Async") != std::string_view::npos ? 1 : 0;
}

}  // namespace overlapscope::import
