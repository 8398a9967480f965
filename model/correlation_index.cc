#include "model/correlation_index.h"

#include <algorithm>
#include <mutex>

#include "base/run_all.h"

namespace overlapscope::model {

CorrelationIndex::CorrelationIndex(const std::vector<ApiCall>& calls, const std::vector<ProcessId>& process_of_call,
                                   size_t processes, int threads) {
  per_process_.resize(processes);
  std::vector<int64_t> count(processes, 0);
  // Each process's id range and count: in ranges of calls at once, combined (min, max, sum).
  constexpr size_t kChunk = size_t{1} << 15;
  std::mutex mu;
  base::ParallelFor(threads, calls.size(), kChunk, [&](size_t lo_i, size_t hi_i) {
    std::vector<PerProcess> part(processes);
    std::vector<int64_t> n(processes, 0);
    for (size_t i = lo_i; i < hi_i; ++i) {
      if (calls[i].correlation_id == kNoCorrelation) continue;
      PerProcess& pp = part[static_cast<size_t>(process_of_call[i])];
      pp.lo = std::min(pp.lo, calls[i].correlation_id);
      pp.hi = std::max(pp.hi, calls[i].correlation_id);
      ++n[static_cast<size_t>(process_of_call[i])];
    }
    std::lock_guard<std::mutex> lock(mu);
    for (size_t p = 0; p < processes; ++p) {
      per_process_[p].lo = std::min(per_process_[p].lo, part[p].lo);
      per_process_[p].hi = std::max(per_process_[p].hi, part[p].hi);
      count[p] += n[p];
    }
  });
  size_t with_calls = 0, sparse_one = processes;
  for (size_t p = 0; p < processes; ++p) {
    PerProcess& pp = per_process_[p];
    // The span in uint64: ids from a hostile file may span more than INT64_MAX.
    const uint64_t span = static_cast<uint64_t>(pp.hi) - static_cast<uint64_t>(pp.lo);
    const bool dense = count[p] > 0 && span < static_cast<uint64_t>(4 * count[p] + 1024);
    with_calls += count[p] > 0;
    if (dense)
      pp.table.assign(static_cast<size_t>(pp.hi - pp.lo + 1), kNone);
    else if (count[p] > 0)
      pp.sparse.reserve(static_cast<size_t>(count[p])), sparse_one = p;
  }
  if (with_calls == 1 && sparse_one < processes) {
    // One process, sparse ids (one rank's trace): its entries in call order, in ranges at once.
    base::ParallelAppend(threads, calls.size(), kChunk, &per_process_[sparse_one].sparse,
                         [&](size_t lo_i, size_t hi_i, std::vector<std::pair<int64_t, int32_t>>* out) {
                           for (size_t i = lo_i; i < hi_i; ++i)
                             if (calls[i].correlation_id != kNoCorrelation)
                               out->push_back({calls[i].correlation_id, static_cast<int32_t>(i)});
                         });
  } else {
    for (size_t i = 0; i < calls.size(); ++i) {
      const int64_t c = calls[i].correlation_id;
      if (c == kNoCorrelation) continue;
      PerProcess& pp = per_process_[static_cast<size_t>(process_of_call[i])];
      if (!pp.table.empty()) {
        int32_t& slot = pp.table[static_cast<size_t>(c - pp.lo)];
        if (slot == kNone)
          slot = static_cast<int32_t>(i);
        else
          ++duplicates_;
      } else {
        pp.sparse.push_back({c, static_cast<int32_t>(i)});
      }
    }
  }
  for (PerProcess& pp : per_process_) {
    if (pp.sparse.empty()) continue;
    // (id, call index) order puts the first call of each id first; later ones are duplicates.
    // Calls come by start time, and ids mostly grow with it: often sorted already.
    if (!std::is_sorted(pp.sparse.begin(), pp.sparse.end())) std::sort(pp.sparse.begin(), pp.sparse.end());
    size_t out = 0;
    for (size_t i = 0; i < pp.sparse.size(); ++i) {
      if (out > 0 && pp.sparse[out - 1].first == pp.sparse[i].first) {
        ++duplicates_;
        continue;
      }
      pp.sparse[out++] = pp.sparse[i];
    }
    pp.sparse.resize(out);
    BuildBuckets(pp);
  }
}

void CorrelationIndex::BuildBuckets(PerProcess& pp) {
  // The span in uint64 (ids from a hostile file may span more than INT64_MAX); the smallest
  // power of two that leaves at most one bucket per two entries (and at least one bucket).
  const uint64_t span = static_cast<uint64_t>(pp.hi) - static_cast<uint64_t>(pp.lo);
  const uint64_t most = std::max<uint64_t>(pp.sparse.size() / 2, 1);
  int shift = 0;
  while (shift < 63 && (span >> shift) >= most) ++shift;
  pp.shift = shift;
  const size_t buckets = static_cast<size_t>(span >> shift) + 1;
  pp.bucket.assign(buckets + 1, 0);
  // bucket[b]: the first entry of bucket b or later (entries are sorted by id, so by bucket).
  size_t e = 0;
  for (size_t b = 0; b <= buckets; ++b) {
    while (e < pp.sparse.size() &&
           (static_cast<uint64_t>(pp.sparse[e].first) - static_cast<uint64_t>(pp.lo)) >> shift < b)
      ++e;
    pp.bucket[b] = static_cast<uint32_t>(e);
  }
}

int32_t CorrelationIndex::FindSparse(const PerProcess& pp, int64_t correlation_id) {
  // lo <= correlation_id <= hi (Find checked): its bucket exists.
  const size_t b =
      static_cast<size_t>((static_cast<uint64_t>(correlation_id) - static_cast<uint64_t>(pp.lo)) >> pp.shift);
  const auto first = pp.sparse.begin() + pp.bucket[b], last = pp.sparse.begin() + pp.bucket[b + 1];
  auto it = std::lower_bound(first, last, correlation_id,
                             [](const std::pair<int64_t, int32_t>& e, int64_t c) { return e.first < c; });
  return it != last && it->first == correlation_id ? it->second : kNone;
}

}  // namespace overlapscope::model
