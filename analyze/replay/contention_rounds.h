// Internal to analyze/replay: the contention model's rounds for Replay() (replay.cc). A round
// computes the factors and SM waits of the current schedule (contention.h), then runs the
// simulation again with them; it stops when a round changes nothing, after kContentionRounds.
// Fills r's contention counts, last-round counts and model name. Fails on nothing.
#pragma once

#include <optional>

#include "analyze/graph/graph.h"
#include "analyze/replay/both.h"
#include "analyze/replay/build.h"
#include "analyze/replay/contention.h"
#include "analyze/replay/replay.h"
#include "analyze/replay/sim.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

// Rounds of the contention model: simulate, slow what now overlaps, simulate again.
inline constexpr int kContentionRounds = 3;

// The predicted schedule under contention: simulate, slow what now overlaps, simulate again, until
// the factors settle (at most kContentionRounds).
// nullopt: the model changed nothing (the schedule is `first`). `run`: the simulation of `sim`
// that gave `first` (its plan serves every round). `replayed`: the replay's schedule, once read no
// more (the same node count): the first round that simulates runs in its arrays if it came.
std::optional<Schedule> WithContention(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a,
                                       const SimGraph& sim, const Simulation& run, const Schedule& first,
                                       const ChangeEffects& fx, const ReplayInputs& in, const ReplayOptions& o,
                                       Handoff<Schedule>& replayed, ReplayResult& r);

}  // namespace overlapscope::analyze::replay
