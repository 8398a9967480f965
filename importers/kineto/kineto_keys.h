// The vocabulary of Kineto / PyTorch-profiler Chrome JSON: event keys, arg keys and categories
// the importer understands, plus the small decoders of names (memcpy kinds, sync kinds, dtype
// sizes). Classification is by length and bytes (no hashing) because it runs for every key.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "model/api_names.h"
#include "model/types.h"

namespace overlapscope::import {

enum class EventKey : uint8_t { kOther, kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs, kId, kIgnored };
EventKey ClassifyOtherEventKey(std::string_view k);  // the rare keys, by table
inline EventKey ClassifyEventKey(std::string_view k) {
  // The keys of every event ("ph", "cat", "name", "pid", "tid", "ts", "dur", "args") by hand:
  // this runs ~8 times per event.
  const char* s = k.data();
  switch (k.size()) {
    case 2:
      if (s[0] == 'p' && s[1] == 'h') return EventKey::kPh;
      if (s[0] == 't' && s[1] == 's') return EventKey::kTs;
      if (s[0] == 'i' && s[1] == 'd') return EventKey::kId;
      break;
    case 3:
      if (s[0] == 'c' && s[1] == 'a' && s[2] == 't') return EventKey::kCat;
      if (s[0] == 'p' && s[1] == 'i' && s[2] == 'd') return EventKey::kPid;
      if (s[0] == 't' && s[1] == 'i' && s[2] == 'd') return EventKey::kTid;
      if (s[0] == 'd' && s[1] == 'u' && s[2] == 'r') return EventKey::kDur;
      break;
    case 4:
      if (s[0] == 'n' && s[1] == 'a' && s[2] == 'm' && s[3] == 'e') return EventKey::kName;
      if (s[0] == 'a' && s[1] == 'r' && s[2] == 'g' && s[3] == 's') return EventKey::kArgs;
      break;
    default: break;
  }
  return ClassifyOtherEventKey(k);
}

// The first n bytes of s as a little-endian word (n <= 8), for QuickEventKey's compares.
constexpr uint64_t KeyWord(const char* s, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
  return v;
}

// The keys of every event, read straight from the bytes after the opening quote at q when the
// key is one of them written plainly (the closing quote right after it): sets *key and *after
// (past the closing quote) and returns true. False for anything else (another key, an escape,
// the window's end): the caller takes ParseString and ClassifyEventKey. Reads the 8 bytes after
// q, which the window's padding (scan::kPad) keeps readable.
inline bool QuickEventKey(const char* q, EventKey* key, const char** after) {
  uint64_t w;
  std::memcpy(&w, q + 1, sizeof w);
  const uint64_t w3 = w & 0xFFFFFFu, w4 = w & 0xFFFFFFFFu, w5 = w & 0xFFFFFFFFFFu;
  EventKey k;
  int n;
  if (w3 == KeyWord("ph\"", 3)) {
    k = EventKey::kPh, n = 2;
  } else if (w3 == KeyWord("ts\"", 3)) {
    k = EventKey::kTs, n = 2;
  } else if (w3 == KeyWord("id\"", 3)) {
    k = EventKey::kId, n = 2;
  } else if (w4 == KeyWord("pid\"", 4)) {
    k = EventKey::kPid, n = 3;
  } else if (w4 == KeyWord("tid\"", 4)) {
    k = EventKey::kTid, n = 3;
  } else if (w4 == KeyWord("cat\"", 4)) {
    k = EventKey::kCat, n = 3;
  } else if (w4 == KeyWord("dur\"", 4)) {
    k = EventKey::kDur, n = 3;
  } else if (w5 == KeyWord("name\"", 5)) {
    k = EventKey::kName, n = 4;
  } else if (w5 == KeyWord("args\"", 5)) {
    k = EventKey::kArgs, n = 4;
  } else {
    return false;
  }
  *key = k;
  *after = q + n + 2;
  return true;
}

// Args the importer keeps (kUnknown: counted in SourceStats::unknown_args; kIgnored: known
// Kineto args with no use in the model, skipped without counting).
enum class ArgKey : uint8_t {
  kUnknown,
  kIgnored,
  kDevice,
  kStream,
  kCorrelation,
  kExternalId,
  kBytes,
  kGrid,
  kBlock,
  kRegisters,
  kSharedMemory,
  kCollectiveName,
  kInNelems,
  kOutNelems,
  kGroupSize,
  kDtype,
  kPgName,
  kSeq,
  kWaitOnStream,
  kWaitEventRecordCorr,
  kWaitEventId,
  kName,       // metadata: process_name / thread_name
  kLabels,     // metadata: process_labels
  kInputDims,  // cpu_op "Input Dims" (record_shapes): kept as the value's JSON text
  kCount
};
ArgKey ClassifyArgKey(std::string_view k);

// The args most events carry, read from the bytes after the opening quote at q when written
// plainly (the closing quote right after): "External id", "correlation", "cbid", "stream",
// "device", "context", "queued", "Ev Idx", "Record function id". Sets *key (what
// ClassifyArgKey gives) and *after (past the closing quote) and returns true; false for anything
// else, where the caller takes ParseString and ClassifyArgKey. Compares by branches on whole
// words, so the key's end is predicted, not computed from a vector search. Reads the 24 bytes
// after q: the window's padding keeps them readable, and its NUL sentinel (the padding is zero)
// stops a match at the window's end.
inline bool QuickArgKey(const char* q, ArgKey* key, const char** after) {
  // Three words loaded apart (not one 24-byte copy to the stack, which the compares would then
  // read back through memory).
  uint64_t w[3];
  std::memcpy(&w[0], q + 1, 8);
  std::memcpy(&w[1], q + 9, 8);
  std::memcpy(&w[2], q + 17, 8);
  constexpr uint64_t kMask4 = 0xFFFFFFFFu, kMask5 = 0xFFFFFFFFFFu, kMask7 = 0xFFFFFFFFFFFFFFu;
  ArgKey k;
  int n;
  if (w[0] == KeyWord("External", 8) && (w[1] & kMask4) == KeyWord(" id\"", 4)) {
    k = ArgKey::kExternalId, n = 11;
  } else if (w[0] == KeyWord("correlat", 8) && (w[1] & kMask4) == KeyWord("ion\"", 4)) {
    k = ArgKey::kCorrelation, n = 11;
  } else if ((w[0] & kMask5) == KeyWord("cbid\"", 5)) {
    k = ArgKey::kIgnored, n = 4;
  } else if ((w[0] & kMask7) == KeyWord("stream\"", 7)) {
    k = ArgKey::kStream, n = 6;
  } else if ((w[0] & kMask7) == KeyWord("device\"", 7)) {
    k = ArgKey::kDevice, n = 6;
  } else if (w[0] == KeyWord("context\"", 8) || (w[0] & kMask7) == KeyWord("queued\"", 7) ||
             (w[0] & kMask7) == KeyWord("Ev Idx\"", 7)) {
    k = ArgKey::kIgnored, n = w[0] == KeyWord("context\"", 8) ? 7 : 6;
  } else if (w[0] == KeyWord("Record f", 8) && w[1] == KeyWord("unction ", 8) &&
             (w[2] & 0xFFFFFFu) == KeyWord("id\"", 3)) {
    k = ArgKey::kIgnored, n = 18;
  } else {
    return false;
  }
  *key = k;
  *after = q + n + 2;
  return true;
}
std::string_view ArgKeyName(ArgKey k);  // the JSON spelling, for skip reasons
const char* BadArgReason(ArgKey k);     // "bad arg value: <spelling>", a string that lives forever

// Categories of every Kineto schema since PyTorch 1.8: the 2021 names ("Kernel", "Memcpy",
// "Memset", "Runtime", "Operator", "User", "gpu_user_Annotation") map to the same kinds as
// today's ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cpu_op",
// "gpu_user_annotation"). Flow arrows: CPU-to-GPU links "ac2g" (2022-), "async_cpu_to_gpu" and
// "async_gpu" (2021-22), "async" (PyTorch 1.8); forward-backward "fwdbwd" / "fwd_bwd".
enum class Category : uint8_t {
  kNone,  // no "cat" key
  kUnknown,
  kKernel,
  kGpuMemcpy,
  kGpuMemset,
  kCudaRuntime,
  kCudaDriver,
  kCudaSync,
  kCpuOp,
  kUserAnnotation,
  kGpuUserAnnotation,
  kPythonFunction,
  kLaunchFlow,  // CPU-to-GPU flow arrows (ids are correlation ids)
  kOtherFlow,   // forward-backward flow arrows
  kOverhead,
  kTrace,
  kIgnoredKnown,      // known, no use in the analyses: cuda_profiler_range, cuda_event, external_correlation
  kOtherAccelerator,  // XPU, MTIA, HPU, Glow, PrivateUse1, HCCL activity: not analyzed, counted as data loss
  kCount
};
Category ClassifyCategory(std::string_view c);
std::string_view CategoryName(Category c);  // the canonical (current) spelling
// True when an unknown category's name suggests GPU or runtime activity ("my_gpu_kernel").
bool LooksLikeDeviceCategory(std::string_view c);
// GPU activities, runtime calls, host ranges: which import statistic a skipped event counts in.
bool IsGpuCategory(Category c);
bool IsRuntimeCategory(Category c);
bool IsHostCategory(Category c);

// An id written as a string by old Kineto versions: "4242" (PyTorch 1.8 thread ids),
// "stream 7", "stream 7 user", "stream 7 annotations" (2021 GPU rows), "0x7f2a" (HIP stream
// handles). False for anything else ("Spans", "Traces", "").
bool ParseIdString(std::string_view s, int64_t* v);
// ROCm async operations that roctracer-era Kineto (2021-2023) wrote with category "kernel":
// "CopyHostToDevice", "CopyDeviceToHost", "CopyDeviceToDevice", "CopyHostToHost" (and "...2D")
// are copies, "FillBuffer" a memset. 0: a kernel, 1: a copy (*kind set), 2: a memset.
int RocmAsyncOpKind(std::string_view name, model::MemcpyKind* kind);

// "Memcpy DtoH (Device -> Pinned)" -> kind and memory kinds; unknown parts stay kUnknown.
void ParseMemcpyName(std::string_view name, model::MemcpyKind* kind, model::MemoryKind* src, model::MemoryKind* dst);
// "Memset (Device)" -> memory kind.
model::MemoryKind ParseMemsetName(std::string_view name);
model::MemoryKind ParseMemoryKind(std::string_view s);
// Kineto cuda_sync names ("Stream Wait Event", "Event Sync", "Stream Sync", "Context Sync").
model::SyncKind ParseSyncKind(std::string_view name);
// Bytes per element of a PyTorch dtype name as NCCL kernels record it ("Half", "Float", ...);
// 0 when unknown.
int DtypeBytes(std::string_view dtype);
// 1 for async copy/memset APIs, 0 for synchronous ones, -1 for other calls (kernel launches,
// graph launches): cudaMemcpyAsync -> 1, cudaMemcpy -> 0, cuMemcpyDtoHAsync_v2 -> 1,
// hipMemcpyWithStream -> 0 (model/api_names.h decides).
int8_t CopyApiIsAsync(std::string_view api_name);

}  // namespace overlapscope::import
