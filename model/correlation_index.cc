#include "model/correlation_index.h"

#include <algorithm>

namespace overlapscope::model {

CorrelationIndex::CorrelationIndex(const std::vector<ApiCall>& calls, const std::vector<ProcessId>& process_of_call,
                                   size_t processes) {
  per_process_.resize(processes);
  std::vector<int64_t> count(processes, 0);
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].correlation_id == kNoCorrelation) continue;
    PerProcess& pp = per_process_[static_cast<size_t>(process_of_call[i])];
    pp.lo = std::min(pp.lo, calls[i].correlation_id);
    pp.hi = std::max(pp.hi, calls[i].correlation_id);
    ++count[static_cast<size_t>(process_of_call[i])];
  }
  for (size_t p = 0; p < processes; ++p) {
    PerProcess& pp = per_process_[p];
    // The span in uint64: ids from a hostile file may span more than INT64_MAX.
    const uint64_t span = static_cast<uint64_t>(pp.hi) - static_cast<uint64_t>(pp.lo);
    const bool dense = count[p] > 0 && span < static_cast<uint64_t>(4 * count[p] + 1024);
    if (dense)
      pp.table.assign(static_cast<size_t>(pp.hi - pp.lo + 1), kNone);
    else if (count[p] > 0)
      pp.sparse.reserve(static_cast<size_t>(count[p]));
  }
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
  }
}

int32_t CorrelationIndex::FindSparse(const PerProcess& pp, int64_t correlation_id) {
  auto it = std::lower_bound(pp.sparse.begin(), pp.sparse.end(), correlation_id,
                             [](const std::pair<int64_t, int32_t>& e, int64_t c) { return e.first < c; });
  return it != pp.sparse.end() && it->first == correlation_id ? it->second : kNone;
}

}  // namespace overlapscope::model
