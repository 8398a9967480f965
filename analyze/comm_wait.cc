#include "analyze/comm_wait.h"

#include <algorithm>

#include "analyze/interval_set.h"

namespace overlapscope::analyze {
namespace {

// The wait intervals of one participant: each carrying activity before the last arrival.
IntervalSet WaitOf(const model::Trace& t, model::CollectiveId c, int64_t last_arrival_ns) {
  std::vector<Interval> v;
  for (const model::GpuRef& g : t.CollectiveActivities(c)) {
    const int64_t s = t.StartNs(g), e = std::min(t.EndNs(g), last_arrival_ns);
    if (s < e) v.push_back({s, e});
  }
  return IntervalSet::FromUnsorted(std::move(v));
}

}  // namespace

void ComputeCommWait(const model::Trace& t, const CrossRankResult& cross, std::vector<DeviceOverlap>* overlap) {
  std::vector<int32_t> index_of(t.devices().size(), -1);  // device -> index into *overlap
  for (size_t i = 0; i < overlap->size(); ++i) {
    const model::DeviceId d = (*overlap)[i].device;
    if (d >= 0 && static_cast<size_t>(d) < index_of.size()) index_of[d] = static_cast<int32_t>(i);
  }
  // Each collective's entry in its device's list (CollectiveOverlap::exposed_wait_ns), and each
  // device's exposed slices, made once.
  std::vector<std::pair<int32_t, int32_t>> entry(t.collectives().size(), {-1, -1});
  for (size_t i = 0; i < overlap->size(); ++i)
    for (size_t j = 0; j < (*overlap)[i].collectives.size(); ++j)
      if (const model::CollectiveId c = (*overlap)[i].collectives[j].collective;
          c >= 0 && static_cast<size_t>(c) < entry.size())
        entry[c] = {static_cast<int32_t>(i), static_cast<int32_t>(j)};
  std::vector<IntervalSet> exposed(overlap->size());
  for (size_t i = 0; i < overlap->size(); ++i) exposed[i] = IntervalSet::FromSortedByStart((*overlap)[i].exposed_comm);
  std::vector<std::vector<Interval>> wait(overlap->size());
  // Per device, per participant that arrived last: the wait intervals it caused.
  std::vector<std::vector<std::vector<Interval>>> by_last(overlap->size());
  for (const CollectiveInstance& inst : cross.instances) {
    if (inst.ranks.size() < 2) continue;
    int64_t last_arrival = inst.ranks.front().arrival_ns;
    for (const CollectiveParticipant& p : inst.ranks) last_arrival = std::max(last_arrival, p.arrival_ns);
    for (const CollectiveParticipant& p : inst.ranks) {
      if (p.collective < 0 || static_cast<size_t>(p.collective) >= t.collectives().size()) continue;
      const model::DeviceId d = t.collectives()[p.collective].device;
      if (d < 0 || static_cast<size_t>(d) >= index_of.size() || index_of[d] < 0) continue;
      const int32_t i = index_of[d];
      (*overlap)[i].wait.known = true;
      const IntervalSet w = WaitOf(t, p.collective, last_arrival);
      if (w.empty()) continue;
      if (const auto [ei, ej] = entry[p.collective]; ei == i) {
        CollectiveOverlap& co = (*overlap)[ei].collectives[ej];
        for (const Interval& iv : w.intervals()) co.exposed_wait_ns += exposed[i].CoveredIn(iv.start_ns, iv.end_ns);
        if (co.exposed_wait_ns > 0 && inst.last >= 0 && static_cast<size_t>(inst.last) < cross.participants.size())
          co.waited_for_rank = cross.participants[inst.last].rank;
      }
      wait[i].insert(wait[i].end(), w.intervals().begin(), w.intervals().end());
      if (inst.last >= 0 && static_cast<size_t>(inst.last) < cross.participants.size() && inst.last != p.participant) {
        if (by_last[i].empty()) by_last[i].resize(cross.participants.size());
        by_last[i][inst.last].insert(by_last[i][inst.last].end(), w.intervals().begin(), w.intervals().end());
      }
    }
  }
  for (size_t i = 0; i < overlap->size(); ++i) {
    DeviceOverlap& d = (*overlap)[i];
    if (!d.wait.known) continue;
    // On M only: the hidden and exposed slices of the device's communication.
    const IntervalSet w = IntervalSet::FromUnsorted(std::move(wait[i]));
    const IntervalSet m =
        IntervalSet::FromSortedByStart(d.hidden_comm).Union(IntervalSet::FromSortedByStart(d.exposed_comm));
    d.wait.hidden_wait_ns = w.IntersectLength(IntervalSet::FromSortedByStart(d.hidden_comm));
    d.wait.exposed_wait_ns = w.IntersectLength(IntervalSet::FromSortedByStart(d.exposed_comm));
    d.wait.comm_wait_ns = d.wait.hidden_wait_ns + d.wait.exposed_wait_ns;
    // Each late participant's share, merged like the total (overlapping waits for one peer count
    // once; waits for two peers at the same moment count for both).
    for (size_t p = 0; p < by_last[i].size(); ++p) {
      if (by_last[i][p].empty()) continue;
      const int64_t ns = IntervalSet::FromUnsorted(std::move(by_last[i][p])).IntersectLength(m);
      if (ns > 0) d.wait.waited_for.push_back({static_cast<int32_t>(p), ns});
    }
    std::stable_sort(d.wait.waited_for.begin(), d.wait.waited_for.end(),
                     [](const WaitedFor& a, const WaitedFor& b) { return a.wait_ns > b.wait_ns; });
  }
}

}  // namespace overlapscope::analyze
