// CorrelationIndex — the API call of each (process, correlation id), built once per trace at
// TraceBuilder::Finalize() and shared by every reader (analyses, exporters). Correlation ids are
// unique only within a process.
//
// Correlation ids of one process are usually dense (CUPTI and Kineto number calls one by one),
// so a process whose id range is at most 4 × its call count + 1024 gets a direct table (one
// int32 per id in the range); other processes get a sorted (id, call) list searched by binary
// search within buckets of ids. When a source has duplicate ids, the first call by start time wins (calls are indexed
// in api_calls() order, which is by start); duplicates are counted.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "model/events.h"

namespace overlapscope::model {

class CorrelationIndex {
 public:
  CorrelationIndex() = default;
  // `process_of_call[i]` is the process of api_calls[i]; calls without a correlation id are
  // left out.
  // `threads`: for the passes over the calls (the same index at any count).
  CorrelationIndex(const std::vector<ApiCall>& api_calls, const std::vector<ProcessId>& process_of_call,
                   size_t processes, int threads = 1);

  // Index into api_calls() of the call with this correlation id in process p, or kNone.
  int32_t Find(ProcessId p, int64_t correlation_id) const {
    if (p < 0 || static_cast<size_t>(p) >= per_process_.size()) return kNone;
    const PerProcess& pp = per_process_[static_cast<size_t>(p)];
    if (correlation_id < pp.lo || correlation_id > pp.hi) return kNone;
    if (!pp.table.empty()) return pp.table[static_cast<size_t>(correlation_id - pp.lo)];
    return FindSparse(pp, correlation_id);
  }
  // Calls whose (process, correlation id) an earlier call already had.
  int64_t duplicates() const { return duplicates_; }

 private:
  struct PerProcess {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    std::vector<int32_t> table;                       // dense: call per id in [lo, hi]
    std::vector<std::pair<int64_t, int32_t>> sparse;  // else: (id, call), sorted by id
    // Sparse: ids in [lo, hi] cut into buckets of 2^shift ids, about one per two entries;
    // bucket b's entries are sparse[bucket[b], bucket[b + 1]). A lookup searches its bucket
    // only, not the whole list (a binary search over a million entries misses the cache at
    // every step).
    int shift = 0;
    std::vector<uint32_t> bucket;
  };
  static constexpr size_t kChunk = size_t{1} << 15;  // calls per range of the parallel passes
  static int32_t FindSparse(const PerProcess& pp, int64_t correlation_id);
  // The constructor's steps. ScanRanges: each process's [lo, hi] set, its call count returned,
  // each range's counts per process in part_count. FillOneSparse: process p, the one with calls
  // (sparse ids), its entries in call order, ranges at once. FillInOrder: every other layout,
  // in call order (a dense table keeps the first call of an id, later ones counted).
  std::vector<int64_t> ScanRanges(const std::vector<ApiCall>& calls, const std::vector<ProcessId>& process_of_call,
                                  int threads, const std::vector<size_t>& bounds,
                                  std::vector<std::vector<int64_t>>* part_count);
  void FillOneSparse(const std::vector<ApiCall>& calls, int threads, const std::vector<size_t>& bounds,
                     const std::vector<std::vector<int64_t>>& part_count, size_t p);
  void FillInOrder(const std::vector<ApiCall>& calls, const std::vector<ProcessId>& process_of_call);
  std::vector<PerProcess> per_process_;
  int64_t duplicates_ = 0;
};

}  // namespace overlapscope::model
