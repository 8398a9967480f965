// The vocabulary of Kineto / PyTorch-profiler Chrome JSON: event keys, arg keys and categories
// the importer understands, plus the small decoders of names (memcpy kinds, sync kinds, dtype
// sizes). Classification is by length and bytes (no hashing) because it runs for every key.
#pragma once

#include <cstdint>
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
  kName,    // metadata: process_name / thread_name
  kLabels,  // metadata: process_labels
  kCount
};
ArgKey ClassifyArgKey(std::string_view k);
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
