// The vocabulary of Kineto / PyTorch-profiler Chrome JSON: event keys, arg keys and categories
// the importer understands, plus the small decoders of names (memcpy kinds, sync kinds, dtype
// sizes). Classification is by length and bytes (no hashing) because it runs for every key.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/types.h"

namespace overlapscope::import {

enum class EventKey : uint8_t { kOther, kPh, kCat, kName, kPid, kTid, kTs, kDur, kArgs, kId, kIgnored };
EventKey ClassifyEventKey(std::string_view k);

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
  kAc2g,
  kOverhead,
  kTrace,
  kCount
};
Category ClassifyCategory(std::string_view c);
std::string_view CategoryName(Category c);

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
// graph launches): cudaMemcpyAsync -> 1, cudaMemcpy -> 0, cuMemcpyDtoHAsync_v2 -> 1.
int8_t CopyApiIsAsync(std::string_view api_name);

}  // namespace overlapscope::import
