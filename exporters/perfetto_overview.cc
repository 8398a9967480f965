// The overview trace of a many-rank job (perfetto_overview.h): a layout of writer-made slices
// and counters over an empty model, encoded like every other .pftrace.
#include "exporters/perfetto_overview.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "exporters/perfetto_layout.h"

namespace overlapscope::exporters {
namespace {

int32_t Child(Layout* L, uint64_t parent, std::string name, int32_t rank, std::string description,
              TrackSpec::Kind kind = TrackSpec::Kind::kPlain) {
  TrackSpec t;
  t.kind = kind;
  t.parent_uuid = parent;
  t.name = std::move(name);
  t.sibling_rank = rank;
  t.description = std::move(description);
  if (kind == TrackSpec::Kind::kCounter) t.counter_time_ns = true;
  return L->AddTrack(std::move(t));
}

void Slice(Layout* L, int32_t track, int64_t s, int64_t e, ExtraEvent ev) {
  const int32_t idx = L->AddExtra(std::move(ev));
  L->tracks[track].slices.push_back(Item{s, e, idx, Src::kExtra});
}

// A step function: `value(it)` over each iteration, 0 from its end until the next one starts.
// Iterations are sorted by start; an iteration that starts before the previous one ends takes
// over at its start.
template <typename F>
void StepCounter(const std::vector<const OverviewIteration*>& its, F value, TrackSpec* tr) {
  for (size_t k = 0; k < its.size(); ++k) {
    tr->counter_values.push_back({its[k]->start_ns, static_cast<double>(value(*its[k]))});
    if (k + 1 == its.size() || its[k + 1]->start_ns > its[k]->end_ns)
      tr->counter_values.push_back({its[k]->end_ns, 0.0});
  }
}

void AddDevice(const OverviewDevice& d, const std::string& prefix, uint64_t parent, Layout* L) {
  std::vector<const OverviewIteration*> its;
  for (const OverviewIteration& it : d.iterations) its.push_back(&it);
  std::stable_sort(its.begin(), its.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
  if (its.empty()) return;
  const int32_t it_track = Child(L, parent, prefix + "iterations", 0,
                                 "GPU span of each iteration's work with its communication and idle figures");
  for (const OverviewIteration* it : its) {
    ExtraEvent ev{
        absl::StrCat("step ", it->number),
        "overlapscope",
        {{"comm_ns", it->comm_ns}, {"hidden_comm_ns", it->hidden_comm_ns}, {"exposed_comm_ns", it->exposed_comm_ns}}};
    for (const auto& [cause, ns] : it->idle_ns) ev.args.push_back({absl::StrCat("idle_", cause, "_ns"), ns});
    Slice(L, it_track, it->start_ns, it->end_ns, std::move(ev));
  }
  const int32_t ex = Child(L, parent, prefix + "exposed communication", 1,
                           "communication not hidden under compute in each iteration (ns), 0 between iterations",
                           TrackSpec::Kind::kCounter);
  StepCounter(
      its, [](const OverviewIteration& it) { return it.exposed_comm_ns; }, &L->tracks[ex]);
  // One counter per cause that has idle time in some iteration, in the report's cause order.
  std::vector<std::string> causes;
  for (const OverviewIteration* it : its)
    for (const auto& [cause, ns] : it->idle_ns)
      if (ns != 0 && std::find(causes.begin(), causes.end(), cause) == causes.end()) causes.push_back(cause);
  int32_t rank = 10;
  for (const OverviewIteration& it : d.iterations)  // report order of the causes
    for (const auto& [cause, ns] : it.idle_ns) {
      if (std::find(causes.begin(), causes.end(), cause) == causes.end()) continue;
      causes.erase(std::find(causes.begin(), causes.end(), cause));
      const int32_t tr = Child(L, parent, absl::StrCat(prefix, "idle: ", cause), rank++,
                               absl::StrCat("GPU idle time in gaps caused by ", cause,
                                            " in each iteration (ns; METRICS §4), 0 between iterations"),
                               TrackSpec::Kind::kCounter);
      const std::string c = cause;
      StepCounter(
          its,
          [&c](const OverviewIteration& x) {
            for (const auto& [k, v] : x.idle_ns)
              if (k == c) return v;
            return int64_t{0};
          },
          &L->tracks[tr]);
    }
}

void AddRank(const OverviewRank& r, int64_t pid, Layout* L) {
  TrackSpec pt;
  pt.kind = TrackSpec::Kind::kProcess;
  pt.pid = pid;
  pt.name = r.host.empty() ? r.label : absl::StrCat(r.label, " · ", r.host);
  pt.explicit_child_order = true;
  if (r.pid >= 0) pt.description = absl::StrCat("OS pid ", r.pid);
  const uint64_t uuid = L->tracks.size() + 1;
  L->AddTrack(std::move(pt));
  for (const OverviewDevice& d : r.devices)
    AddDevice(d, r.devices.size() > 1 ? absl::StrCat("GPU ", d.ordinal, " · ") : std::string(), uuid, L);
  if (r.waits.empty()) return;
  const int32_t wt = Child(L, uuid, "waiting for peers", 2,
                           "part of each collective spent waiting for the last rank to arrive (wait_ns)");
  for (const OverviewWait& w : r.waits) {
    ExtraEvent ev{absl::StrCat("waiting for ", w.last.empty() ? std::string("the last rank") : w.last),
                  "overlapscope",
                  {{"wait_ns", w.wait_ns}, {"skew_ns", w.skew_ns}, {"instance", w.instance}, {"collective", w.op}}};
    if (!w.communicator.empty()) ev.args.push_back({"communicator", w.communicator});
    if (w.sequence >= 0) ev.args.push_back({"sequence", w.sequence});
    Slice(L, wt, w.arrival_ns, w.arrival_ns + w.wait_ns, std::move(ev));
  }
}

// TracePacket.timestamp is unsigned: a job with times before 0 is shifted so the earliest is 0.
int64_t ShiftFor(const Layout& L) {
  int64_t lo = std::numeric_limits<int64_t>::max();
  for (const TrackSpec& t : L.tracks) {
    for (const Item& it : t.slices) lo = std::min(lo, it.start_ns);
    for (const auto& [ts, v] : t.counter_values) lo = std::min(lo, ts);
  }
  return lo < 0 ? -lo : 0;
}

}  // namespace

absl::StatusOr<PerfettoStats> EncodeOverview(std::vector<OverviewRank> ranks, const ByteSink& sink) {
  Layout L;
  for (size_t i = 0; i < ranks.size(); ++i) {
    AddRank(ranks[i], static_cast<int64_t>(i) + 1, &L);
    ranks[i] = OverviewRank{};
  }
  const int64_t shift = ShiftFor(L);
  if (shift != 0)
    for (TrackSpec& t : L.tracks) {
      for (Item& it : t.slices) it.start_ns += shift, it.end_ns += shift;
      for (auto& cv : t.counter_values) cv.first += shift;
    }
  const model::Trace empty;
  L.Finish(empty);
  auto st = EncodeLayout(empty, L, sink);
  if (st.ok()) st->time_shift_ns = shift;
  return st;
}

absl::StatusOr<PerfettoStats> WriteOverview(std::vector<OverviewRank> ranks, const std::string& path) {
  PerfettoStats st;
  auto s = WriteFile(
      path, [&](const ByteSink& sink) { return EncodeOverview(std::move(ranks), sink); }, &st);
  if (!s.ok()) return s;
  return st;
}

}  // namespace overlapscope::exporters
