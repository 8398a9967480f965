// Analysis tracks of the .pftrace: what overlapscope analyze found, drawn beside the events it
// is about (see docs/perfetto.md).
#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze/analysis.h"
#include "analyze/findings/finding_rule.h"
#include "exporters/perfetto_layout.h"

namespace overlapscope::exporters {
namespace {

using model::kNone;

// Names as METRICS.md writes them (kept here so the exporter does not depend on the order in
// which the analyses' ToString() implementations land).
constexpr const char* kGapCauseNames[] = {"host-blocked", "launch-bound", "dependency", "unknown"};
constexpr const char* kBlockReasonNames[] = {"stream sync", "event sync",          "device sync",     "sync memcpy",
                                             "sync memset", "pageable async copy", "sync record only"};

std::string Pct(double ratio) { return absl::StrFormat("%.1f%%", 100.0 * ratio); }

std::string_view GpuName(const model::Trace& t, model::GpuRef r) { return t.str(t.NameOf(r)); }

// Returns the ordinal of a child track of `parent` named `name`, creating it on first use.
int32_t Child(Layout* L, std::vector<int32_t>& slot, size_t i, int32_t parent, std::string name, int32_t rank,
              std::string description, TrackSpec::Kind kind = TrackSpec::Kind::kPlain) {
  if (slot[i] == kNone) {
    TrackSpec t;
    t.kind = kind;
    t.parent_uuid = L->tracks[parent].uuid;
    t.name = std::move(name);
    t.sibling_rank = rank;
    t.description = std::move(description);
    slot[i] = L->AddTrack(std::move(t));
  }
  return slot[i];
}

// An id of the analysed trace that has a track here (an analysis of another trace is ignored
// rather than read out of bounds).
bool Valid(int32_t id, const std::vector<int32_t>& tracks) {
  return id >= 0 && static_cast<size_t>(id) < tracks.size() && tracks[id] != kNone;
}

void AddSlice(Layout* L, int32_t track, int64_t s, int64_t e, ExtraEvent ev) {
  const int32_t idx = L->AddExtra(std::move(ev));
  L->tracks[track].slices.push_back(Item{s, e, idx, Src::kExtra});
}

}  // namespace

DrawnAnalysis DrawnAnalysis::Of(const analyze::AnalysisResult& r) {
  return DrawnAnalysis{r.overlap, r.gaps, &r.cross_rank, r.blocking.intervals, r.sync.findings, &r.critical_path};
}

void AddAnalysisTracks(const model::Trace& t, const DrawnAnalysis& a, Layout* L) {
  if (a.critical_path != nullptr) AddCriticalPathTracks(t, *a.critical_path, L);  // perfetto_critical_path.cc
  const size_t nd = t.devices().size();
  std::vector<int32_t> exposed(nd, kNone), iters(nd, kNone), counter(nd, kNone), idle(nd, kNone);

  for (const analyze::DeviceOverlap& d : a.overlap) {
    if (!Valid(d.device, L->device_group)) continue;
    const int32_t group = L->device_group[d.device];
    std::string whole = absl::StrCat("whole trace: communication ", d.whole.comm_ns, " ns, hidden ",
                                     d.whole.hidden_comm_ns, " ns, exposed ", d.whole.exposed_comm_ns, " ns");
    if (d.whole.overlap_ratio) absl::StrAppend(&whole, ", overlap ", Pct(*d.whole.overlap_ratio));
    if (!d.exposed_comm.empty()) {
      const int32_t tr = Child(L, exposed, d.device, group, "exposed communication", -30,
                               "communication not hidden under compute on this GPU (M \\ C); " + whole);
      for (const analyze::Interval& iv : d.exposed_comm)
        AddSlice(L, tr, iv.start_ns, iv.end_ns,
                 ExtraEvent{"exposed communication", "overlapscope", {{"duration_ns", iv.length()}}});
    }
    for (const analyze::IterationOverlap& it : d.iterations) {
      const int32_t tr = Child(L, iters, d.device, group, "iterations", -20,
                               "GPU span of each iteration's work with its overlap figures; " + whole);
      const auto& s = it.stats;
      ExtraEvent ev{absl::StrCat("step ", it.number,
                                 s.overlap_ratio ? absl::StrCat(": ", Pct(*s.overlap_ratio), " of comm hidden")
                                                 : std::string(": no communication")),
                    "overlapscope",
                    {{"comm_ns", s.comm_ns},
                     {"hidden_comm_ns", s.hidden_comm_ns},
                     {"exposed_comm_ns", s.exposed_comm_ns},
                     {"compute_ns", s.compute_ns},
                     {"contention_ns", s.contention_ns},
                     {"net_overlap_gain_ns", s.net_overlap_gain_ns}}};
      if (s.overlap_ratio) ev.args.push_back({"overlap_ratio", *s.overlap_ratio});
      AddSlice(L, tr, it.gpu_start_ns, it.gpu_end_ns, std::move(ev));
      if (s.overlap_ratio) {
        const int32_t ct = Child(L, counter, d.device, group, "overlap %", -10,
                                 "share of the iteration's communication hidden under compute, from the "
                                 "start of the iteration's GPU work",
                                 TrackSpec::Kind::kCounter);
        if (L->tracks[ct].counter_unit.empty()) L->tracks[ct].counter_unit.push_back('%');
        L->tracks[ct].counter_values.push_back({it.gpu_start_ns, 100.0 * *s.overlap_ratio});
      }
    }
  }
  for (int32_t ct : counter) {
    if (ct == kNone) continue;
    auto& v = L->tracks[ct].counter_values;
    std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  }

  for (const analyze::IdleGap& g : a.gaps) {
    if (!Valid(g.device, L->device_group)) continue;
    const int32_t tr = Child(L, idle, g.device, L->device_group[g.device], "idle gaps", -5,
                             "intervals with no kernel, copy or memset on this GPU, named by their cause");
    const char* cause = kGapCauseNames[static_cast<int>(g.cause)];
    ExtraEvent ev{absl::StrCat("idle: ", cause),
                  "overlapscope",
                  {{"cause", std::string(cause)}, {"duration_ns", g.duration_ns()}}};
    ev.args.push_back({"ended by", std::string(GpuName(t, g.ended_by))});
    if (g.launch_call != kNone)
      ev.args.push_back({"launch call", std::string(t.str(t.api_calls()[g.launch_call].name))});
    if (g.thread != kNone) ev.args.push_back({"thread", t.threads()[g.thread].tid});
    AddSlice(L, tr, g.start_ns, g.end_ns, std::move(ev));
  }

  // Collectives across ranks (METRICS.md §6): on each rank's GPU, from its own arrival (when its
  // stream reached the collective, analyze/collective_arrival.h) to the last rank's arrival.
  std::vector<int32_t> peer_waits(nd, kNone);
  const analyze::CrossRankResult empty;
  const analyze::CrossRankResult& x = a.cross_rank != nullptr ? *a.cross_rank : empty;
  for (const analyze::CollectiveInstance& ci : x.instances) {
    for (const analyze::CollectiveParticipant& p : ci.ranks) {
      if (p.wait_ns <= 0 || p.collective < 0 || static_cast<size_t>(p.collective) >= t.collectives().size()) continue;
      const model::DeviceId dev = t.collectives()[p.collective].device;
      if (!Valid(dev, L->device_group)) continue;
      const int32_t tr = Child(L, peer_waits, dev, L->device_group[dev], "waiting for peers", -25,
                               "part of each collective spent waiting for the last rank to arrive");
      const std::string last = ci.last >= 0 && static_cast<size_t>(ci.last) < x.participants.size()
                                   ? x.participants[ci.last].label
                               : ci.last_rank >= 0 ? absl::StrCat("rank ", ci.last_rank)
                                                   : std::string("the last rank");
      ExtraEvent ev{absl::StrCat("waiting for ", last),
                    "overlapscope",
                    {{"wait_ns", p.wait_ns}, {"skew_ns", ci.skew_ns}, {"collective", std::string(t.str(ci.op))}}};
      if (ci.sequence >= 0) ev.args.push_back({"sequence", ci.sequence});
      if (ci.busbw_gbps) ev.args.push_back({"busbw_gbps", *ci.busbw_gbps});
      ev.args.push_back({"arrival", std::string(analyze::ToString(p.arrival_source))});
      AddSlice(L, tr, p.arrival_ns, p.arrival_ns + p.wait_ns, std::move(ev));
    }
  }

  std::vector<int32_t> blocked(t.threads().size(), kNone);
  for (const analyze::BlockedInterval& b : a.blocked) {
    if (!Valid(b.thread, L->thread_track)) continue;
    const int32_t tr = Child(L, blocked, b.thread, L->thread_track[b.thread], "blocked on GPU", 100,
                             "intervals in which this thread waited for the GPU");
    ExtraEvent ev{absl::StrCat("blocked: ", AV(t.str(b.call))),
                  "overlapscope",
                  {{"reason", std::string(kBlockReasonNames[static_cast<int>(b.reason)])},
                   {"duration_ns", b.duration_ns()},
                   {"device_busy_ns", b.device_busy_ns},
                   {"device_idle_ns", b.device_idle_ns}}};
    if (b.final_sync)
      ev.args.push_back(
          {"final sync", std::string("yes: the program's last device-wide sync, not counted as blocking")});
    if (b.stream != kNone) ev.args.push_back({"stream", t.streams()[b.stream].native_id});
    if (b.released_by) ev.args.push_back({"released by", std::string(GpuName(t, *b.released_by))});
    AddSlice(L, tr, b.start_ns, b.end_ns, std::move(ev));
  }

  std::vector<int32_t> findings(t.processes().size(), kNone);
  for (const analyze::Finding& f : a.findings) {
    if (!Valid(f.process, L->process_track)) continue;
    const int32_t tr = Child(L, findings, f.process, L->process_track[f.process], "findings", -100,
                             "what overlapscope suggests changing, at the call it is about");
    ExtraEvent ev{std::string(f.kind),
                  "overlapscope",
                  {{"what", analyze::findings::UnmarkTimes(f.message, t.start_ns())},
                   {"change", analyze::findings::UnmarkTimes(f.advice, t.start_ns())},
                   {"cost_ns", f.cost_ns}}};
    if (f.call) ev.args.push_back({"call", std::string(t.str(f.call))});
    if (f.thread != kNone) ev.args.push_back({"thread", t.threads()[f.thread].tid});
    if (f.stream != kNone) ev.args.push_back({"stream", t.streams()[f.stream].native_id});
    const int32_t idx = L->AddExtra(std::move(ev));
    L->tracks[tr].instants.push_back(Item{f.time_ns, f.time_ns, idx, Src::kExtra});
  }
  for (int32_t tr : findings)
    if (tr != kNone)
      std::stable_sort(L->tracks[tr].instants.begin(), L->tracks[tr].instants.end(),
                       [](const Item& x, const Item& y) { return x.start_ns < y.start_ns; });
}

}  // namespace overlapscope::exporters
