#include "model/correlation_index.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <mutex>

#include "base/parallel_sort.h"
#include "base/run_all.h"

namespace overlapscope::model {

namespace {

// Whether v is sorted, its ranges checked at once.
bool SortedInRanges(int threads, const std::vector<std::pair<int64_t, int32_t>>& v) {
  const std::vector<size_t> bounds = base::RangeBounds(threads, v.size(), size_t{1} << 15);
  std::vector<uint8_t> sorted(bounds.size() - 1, 1);
  base::ParallelFor(threads, sorted.size(), 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)  // each range with the element before it
      sorted[k] = std::is_sorted(v.begin() + static_cast<std::ptrdiff_t>(bounds[k] > 0 ? bounds[k] - 1 : 0),
                                 v.begin() + static_cast<std::ptrdiff_t>(bounds[k + 1]));
  });
  return std::all_of(sorted.begin(), sorted.end(), [](uint8_t s) { return s != 0; });
}

// Drops the entries whose id equals the one before (v sorted: the first call of each id is
// kept); returns how many. Each range counts what it keeps, then copies it to its place.
int64_t DropDuplicates(int threads, std::vector<std::pair<int64_t, int32_t>>& v) {
  const std::vector<size_t> bounds = base::RangeBounds(threads, v.size(), size_t{1} << 15);
  const size_t parts = bounds.size() - 1;
  auto kept = [&v](size_t i) { return i == 0 || v[i].first != v[i - 1].first; };
  std::vector<size_t> at(parts + 1, 0);
  base::ParallelFor(threads, parts, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      for (size_t i = bounds[k]; i < bounds[k + 1]; ++i) at[k + 1] += kept(i);
  });
  for (size_t k = 0; k < parts; ++k) at[k + 1] += at[k];
  if (at[parts] == v.size()) return 0;
  std::vector<std::pair<int64_t, int32_t>> out(at[parts]);
  base::ParallelFor(threads, parts, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k) {
      size_t o = at[k];
      for (size_t i = bounds[k]; i < bounds[k + 1]; ++i)
        if (kept(i)) out[o++] = v[i];
    }
  });
  const int64_t dropped = static_cast<int64_t>(v.size() - out.size());
  v = std::move(out);
  return dropped;
}

// The buckets of a sorted sparse list (CorrelationIndex::PerProcess: its shift and bucket
// offsets for ids in [lo, hi]), in ranges of entries at once.
void FillBuckets(int threads, const std::vector<std::pair<int64_t, int32_t>>& sparse, int64_t lo, int64_t hi,
                 int* shift_out, std::vector<uint32_t>* bucket) {
  // The span in uint64 (ids from a hostile file may span more than INT64_MAX); the smallest
  // power of two that leaves at most one bucket per two entries (and at least one bucket).
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  const uint64_t most = std::max<uint64_t>(sparse.size() / 2, 1);
  int shift = 0;
  while (shift < 63 && (span >> shift) >= most) ++shift;
  *shift_out = shift;
  const size_t buckets = static_cast<size_t>(span >> shift) + 1;
  bucket->assign(buckets + 1, 0);
  // bucket[b]: the first entry of bucket b or later (entries are sorted by id, so by bucket):
  // entry e sets the buckets after its predecessor's up to its own, in ranges of entries at
  // once (each bucket set once); those after the last entry's get the entry count.
  const size_t n = sparse.size();
  auto bucket_of = [&sparse, lo, shift](size_t e) {
    return static_cast<size_t>((static_cast<uint64_t>(sparse[e].first) - static_cast<uint64_t>(lo)) >> shift);
  };
  base::ParallelFor(threads, n, size_t{1} << 15, [&](size_t e0, size_t e1) {
    for (size_t e = e0; e < e1; ++e) {
      const size_t first = e == 0 ? 0 : bucket_of(e - 1) + 1, own = bucket_of(e);
      for (size_t b = first; b <= own; ++b) (*bucket)[b] = static_cast<uint32_t>(e);
    }
  });
  for (size_t b = n == 0 ? 0 : bucket_of(n - 1) + 1; b <= buckets; ++b) (*bucket)[b] = static_cast<uint32_t>(n);
}

}  // namespace

CorrelationIndex::CorrelationIndex(const std::vector<ApiCall>& calls, const std::vector<ProcessId>& process_of_call,
                                   size_t processes, int threads) {
  per_process_.resize(processes);
  const std::vector<size_t> bounds = base::RangeBounds(threads, calls.size(), kChunk);
  std::vector<std::vector<int64_t>> part_count;
  const std::vector<int64_t> count = ScanRanges(calls, process_of_call, threads, bounds, &part_count);
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
  if (with_calls == 1 && sparse_one < processes)
    FillOneSparse(calls, threads, bounds, part_count, sparse_one);
  else
    FillInOrder(calls, process_of_call);
  for (PerProcess& pp : per_process_) {
    if (pp.sparse.empty()) continue;
    // (id, call index) order puts the first call of each id first; later ones are duplicates.
    // Calls come by start time, and ids mostly grow with it: often sorted already. The pairs
    // are unique (one per call), so the parallel sort gives std::sort's order.
    if (!SortedInRanges(threads, pp.sparse)) base::ParallelSort(threads, pp.sparse, std::less<>(), kChunk);
    duplicates_ += DropDuplicates(threads, pp.sparse);
    FillBuckets(threads, pp.sparse, pp.lo, pp.hi, &pp.shift, &pp.bucket);
  }
}

std::vector<int64_t> CorrelationIndex::ScanRanges(const std::vector<ApiCall>& calls,
                                                  const std::vector<ProcessId>& process_of_call, int threads,
                                                  const std::vector<size_t>& bounds,
                                                  std::vector<std::vector<int64_t>>* part_count) {
  // Each process's id range and count: in ranges of calls at once, combined (min, max, sum);
  // each range's counts kept (where its entries go in a sparse list).
  const size_t processes = per_process_.size(), parts = bounds.size() - 1;
  std::vector<int64_t> count(processes, 0);
  part_count->assign(parts, {});
  std::mutex mu;
  base::ParallelFor(threads, parts, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k) {
      std::vector<PerProcess> part(processes);
      std::vector<int64_t>& n = (*part_count)[k];
      n.assign(processes, 0);
      for (size_t i = bounds[k]; i < bounds[k + 1]; ++i) {
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
    }
  });
  return count;
}

void CorrelationIndex::FillOneSparse(const std::vector<ApiCall>& calls, int threads, const std::vector<size_t>& bounds,
                                     const std::vector<std::vector<int64_t>>& part_count, size_t p) {
  // One process, sparse ids (one rank's trace): its entries in call order, each range's
  // written at once at its place.
  const size_t parts = bounds.size() - 1;
  PerProcess& pp = per_process_[p];
  std::vector<size_t> at(parts + 1, 0);
  for (size_t k = 0; k < parts; ++k) at[k + 1] = at[k] + static_cast<size_t>(part_count[k][p]);
  pp.sparse.resize(at[parts]);
  base::ParallelFor(threads, parts, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k) {
      size_t out = at[k];
      for (size_t i = bounds[k]; i < bounds[k + 1]; ++i)
        if (calls[i].correlation_id != kNoCorrelation)
          pp.sparse[out++] = {calls[i].correlation_id, static_cast<int32_t>(i)};
    }
  });
}

void CorrelationIndex::FillInOrder(const std::vector<ApiCall>& calls, const std::vector<ProcessId>& process_of_call) {
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
