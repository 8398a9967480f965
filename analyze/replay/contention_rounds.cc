// WithContention (contention_rounds.h): the contention model's rounds.
#include "analyze/replay/contention_rounds.h"

#include <cmath>
#include <utility>
#include <vector>

namespace overlapscope::analyze::replay {

std::optional<Schedule> WithContention(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a,
                                       const SimGraph& sim, const Simulation& run, const Schedule& first,
                                       const ChangeEffects& fx, const ReplayInputs& in, const ReplayOptions& o,
                                       Handoff<Schedule>& replayed, ReplayResult& r) {
  std::optional<Schedule> cur;
  std::vector<int64_t> dur;                      // copied from sim.dur only once a run needs it
  std::vector<std::pair<int32_t, double>> last;  // the last round's factors (ContentionFactors)
  std::vector<ExtraEdge> waits;                  // accumulated over the rounds
  std::vector<uint8_t> waiting(sim.num_gpu, 0);
  int64_t by_trace = 0, by_sm = 0;
  for (int round = 0; round < kContentionRounds; ++round) {
    ContentionFactors f = ComputeContention(t, g, a, sim, cur ? *cur : first, fx, in.slowdowns, o.sm_count, waiting);
    size_t added = 0;
    for (const ExtraEdge& e : f.waits) {
      if (waiting[e.to]) continue;  // one wait per communication kernel: the first found
      waiting[e.to] = e.last_round == LastRoundWait::kInRound ? kWaitedInLastRound : 1;
      waits.push_back(e);
      ++added;
    }
    if (round > 0 && f.factor == last && added == 0) break;  // settled
    const auto touched = static_cast<int64_t>(f.factor.size());
    by_trace = f.by_trace, by_sm = f.by_sm;
    r.contention_nodes = touched + static_cast<int64_t>(waits.size());
    if (r.contention_nodes == 0 && round == 0) break;  // nothing overlaps differently: the first schedule
    if (dur.empty()) {
      dur = sim.dur;
    } else {
      for (const auto& [v, x] : last) dur[v] = sim.dur[v];  // the last round's factors undone
    }
    for (const auto& [v, x] : f.factor) dur[v] = static_cast<int64_t>(std::llround(sim.dur[v] * x));
    last = std::move(f.factor);
    // The last round's schedule, read no more, or else the replay's: its arrays serve this run
    // (without either, the run fills fresh ones: 25 bytes a node).
    Schedule spare;
    if (cur) {
      spare = std::move(*cur);
    } else if (std::optional<Schedule> from_replay = replayed.Take()) {
      spare = std::move(*from_replay);
    }
    if (static_cast<int32_t>(spare.start.size()) == sim.num_nodes) ResetSchedule(sim.num_nodes, spare);
    cur = run.Run(dur, waits.empty() ? nullptr : &waits, &spare);
  }
  for (const ExtraEdge& e : waits) {
    LastRoundCounts& lr = r.last_round;
    if (e.last_round == LastRoundWait::kInRound) ++lr.in_round;
    if (e.last_round == LastRoundWait::kOutside) ++lr.outside;
    if (e.last_round == LastRoundWait::kNoShape) ++lr.no_shape;
  }
  const bool sm = by_sm > 0 || !waits.empty();  // SM residency decided these
  if (by_trace > 0 && sm)
    r.contention_model = ContentionModel::kMixed;
  else if (by_trace > 0)
    r.contention_model = ContentionModel::kTraceSlowdowns;
  else if (sm)
    r.contention_model = ContentionModel::kSmShare;
  else
    r.contention_model = ContentionModel::kNone;
  return cur;
}

}  // namespace overlapscope::analyze::replay
