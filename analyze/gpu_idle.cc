// GPU idle gaps (METRICS.md §4), attributed by the activity that ends each gap.
#include <algorithm>

#include "analyze/context.h"

namespace overlapscope::analyze {

std::string_view ToString(GapCause c) {
  switch (c) {
    case GapCause::kHostBlocked: return "host-blocked";
    case GapCause::kLaunchBound: return "launch-bound";
    case GapCause::kDependency: return "dependency";
    case GapCause::kUnknown: return "unknown";
  }
  return "?";
}

void ComputeIdle(const Context& ctx, const BlockingResult& blocking, std::vector<DeviceIdle>* idle,
                 std::vector<IdleGap>* gaps) {
  const model::Trace& t = ctx.t;
  // Blocked intervals per thread, in start order (disjoint per thread).
  std::vector<std::vector<int32_t>> blocked_by_thread(t.threads().size());
  for (size_t i = 0; i < blocking.intervals.size(); ++i)
    blocked_by_thread[blocking.intervals[i].thread].push_back(static_cast<int32_t>(i));
  auto blocked_during = [&](model::ThreadId th, int64_t s, int64_t e) -> int32_t {
    const auto& list = blocked_by_thread[th];
    // First interval ending after s; it blocks the gap when it starts before e.
    auto it = std::upper_bound(list.begin(), list.end(), s,
                               [&](int64_t x, int32_t i) { return x < blocking.intervals[i].end_ns; });
    if (it != list.end() && blocking.intervals[*it].start_ns < e) return *it;
    return model::kNone;
  };

  for (size_t d = 0; d < t.devices().size(); ++d) {
    auto acts = t.DeviceActivities(static_cast<model::DeviceId>(d));
    if (acts.empty()) continue;
    const IntervalSet& busy = ctx.dev[d].busy;
    DeviceIdle di;
    di.device = static_cast<model::DeviceId>(d);
    di.process = t.ProcessOfDevice(di.device);
    if (!busy.empty()) {
      di.span_ns = busy.intervals().back().end_ns - busy.intervals().front().start_ns;
      di.busy_ns = busy.Length();
      di.idle_ns = di.span_ns - di.busy_ns;
    }
    size_t pos = 0;  // cursor into acts (sorted by start); gaps come in time order
    for (const Interval& g : busy.Gaps()) {
      if (g.length() < ctx.opt.min_gap_ns) continue;
      IdleGap gap;
      gap.device = di.device;
      gap.start_ns = g.start_ns;
      gap.end_ns = g.end_ns;
      // The activity that ends the gap starts exactly at its end (first non-sync one).
      const std::vector<Interval>& spans = ctx.act_span[d];
      while (pos < acts.size() && (spans[pos].start_ns < g.end_ns || ctx.Cls(acts[pos]) == ActivityClass::kSync ||
                                   spans[pos].end_ns <= spans[pos].start_ns))
        ++pos;
      if (pos < acts.size()) gap.ended_by = acts[pos];
      gap.iteration = ctx.iters.Of(gap.ended_by);
      gap.launch_call = ctx.LaunchOf(gap.ended_by);
      if (gap.launch_call == model::kNone) {
        gap.cause = GapCause::kUnknown;
      } else {
        const model::ApiCall& call = t.api_calls()[gap.launch_call];
        gap.thread = call.thread;
        if (call.start_ns >= g.start_ns) {
          gap.blocked_interval = blocked_during(call.thread, g.start_ns, g.end_ns);
          gap.cause = gap.blocked_interval != model::kNone ? GapCause::kHostBlocked : GapCause::kLaunchBound;
        } else {
          gap.cause = GapCause::kDependency;
        }
      }
      ++di.gaps;
      di.gap_ns += g.length();
      di.cause_ns[static_cast<int>(gap.cause)] += g.length();
      ++di.cause_count[static_cast<int>(gap.cause)];
      gaps->push_back(gap);
    }
    idle->push_back(di);
  }
}

}  // namespace overlapscope::analyze
