#include "model/gpu_by_corr.h"

#include <algorithm>
#include <utility>

#include "base/no_init.h"
#include "base/parallel_sort.h"
#include "base/phase_log.h"
#include "base/run_all.h"

namespace overlapscope::model {
namespace {

// One activity's place in the index; `pos` (its index in `all`) makes every key unique, so any
// sort gives the order of one.
struct CorrKey {
  int64_t corr;
  int32_t process;
  uint32_t pos;
};

bool operator<(const CorrKey& a, const CorrKey& b) {
  return a.process != b.process ? a.process < b.process : a.corr != b.corr ? a.corr < b.corr : a.pos < b.pos;
}

}  // namespace

void BuildGpuByCorrelationIndex(const Trace& t, const std::vector<GpuRef>& all, int threads,
                                std::vector<std::pair<int32_t, int64_t>>* keys, std::vector<GpuRef>* refs,
                                size_t min_chunk) {
  keys->clear();
  refs->clear();
  // The keys of each range of `all` counted, then written at the range's offset: `all`'s order,
  // as one pass appends them.
  const std::vector<size_t> bounds = base::RangeBounds(threads, all.size(), min_chunk);
  const size_t parts = bounds.size() - 1;
  std::vector<size_t> at(parts + 1, 0);
  base::ParallelFor(threads, parts, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      for (size_t i = bounds[k]; i < bounds[k + 1]; ++i) at[k + 1] += t.CorrelationOf(all[i]) != kNoCorrelation;
  });
  for (size_t k = 0; k < parts; ++k) at[k + 1] += at[k];
  std::vector<CorrKey, base::NoInit<CorrKey>> corr(at.back());  // written in ranges at once
  std::vector<uint8_t> sorted_part(parts, 1);
  base::ParallelFor(threads, parts, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k) {
      size_t o = at[k];
      for (size_t i = bounds[k]; i < bounds[k + 1]; ++i) {
        const int64_t c = t.CorrelationOf(all[i]);
        if (c == kNoCorrelation) continue;
        corr[o] = {c, t.devices()[t.streams()[t.StreamOf(all[i])].device].process, static_cast<uint32_t>(i)};
        if (o > at[k] && corr[o] < corr[o - 1]) sorted_part[k] = 0;
        ++o;
      }
    }
  });
  // Sorted only where a range, or a range's first key against the previous one's last, is out of
  // order (one process whose correlation ids grow with time needs no sort).
  bool sorted = std::all_of(sorted_part.begin(), sorted_part.end(), [](uint8_t s) { return s != 0; });
  for (size_t k = 1; k < parts && sorted; ++k)
    if (at[k] > 0 && at[k] < corr.size() && corr[at[k]] < corr[at[k] - 1]) sorted = false;
  // The index's vectors sized (zeroed: the Trace's own) beside the sort.
  {
    base::PhaseSpan s_(sorted ? "gc size (sorted)" : "gc sort, size");
    base::RunAll(threads, {[&] {
                             if (!sorted)
                               base::ParallelSort(
                                   threads, corr, [](const CorrKey& a, const CorrKey& b) { return a < b; }, min_chunk);
                           },
                           [&] { keys->resize(corr.size()); }, [&] { refs->resize(corr.size()); }});
  }
  base::PhaseSpan s_("gc index");
  base::ParallelFor(threads, corr.size(), min_chunk, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      (*keys)[i] = {corr[i].process, corr[i].corr};
      (*refs)[i] = all[corr[i].pos];
    }
  });
}

}  // namespace overlapscope::model
