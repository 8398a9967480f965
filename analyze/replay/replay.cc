// Replay(): the recorded schedule replayed, then the changed graph predicted with and without
// contention (replay.h).
#include "analyze/replay/replay.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <future>
#include <optional>
#include <thread>
#include <utility>

#include "analyze/replay/both.h"
#include "analyze/replay/build.h"
#include "analyze/replay/contention.h"
#include "analyze/replay/contention_rounds.h"
#include "analyze/replay/measure.h"
#include "analyze/replay/sim.h"

namespace overlapscope::analyze::replay {
namespace {

void CountGraph(const graph::Graph& g, ReplayCounts& c) {
  const graph::GraphStats& st = g.stats();
  c.nodes = g.num_nodes();
  for (int k = 0; k < graph::kEdgeKinds; ++k) {
    c.edges_recorded += st.recorded[k];
    c.edges_inferred += st.inferred[k];
  }
  c.waits_unresolved = st.waits_unresolved;
  c.waits_ambiguous = st.waits_ambiguous;
  c.gpu_without_launch = st.gpu_without_launch;
  c.syncs_without_release = st.syncs_without_release;
}

void Summarize(ReplayResult& r) {
  std::vector<double> errs;
  for (const IterationReplay& it : r.iterations) {
    if (it.measured.step_ns > 0) errs.push_back(std::abs(it.replay_error));
  }
  if (errs.empty()) return;
  std::sort(errs.begin(), errs.end());
  const size_t n = errs.size();
  r.median_abs_error = n % 2 == 1 ? errs[n / 2] : (errs[n / 2 - 1] + errs[n / 2]) / 2;
  r.worst_abs_error = errs.back();
}

// The measured and replayed figures of iteration i (ir: its entry, filled here).
void ReplayedFigures(const model::Trace& t, const ReplayInputs& in, const NodeAttrs& a, const IterationNodes& idx,
                     int32_t i, const SimGraph& base, const Schedule& replayed, IterationReplay& ir) {
  const IterationWindow& w = in.iterations[i];
  ir.process = w.process;
  ir.number = w.number;
  if (w.process >= 0 && w.process < static_cast<int32_t>(t.processes().size())) ir.rank = t.processes()[w.process].rank;
  ir.measured = MeasureRecorded(idx, i, a, base);
  ir.replayed = MeasureStep(idx, i, a, replayed.start, replayed.end);
  ir.replayed.path = WalkPath(idx, i, a, base, replayed);
  // Who the rank waited for longest (the late ranks of a base, named beside a prediction).
  if (const PeerWait pw = LongestPeerWait(idx, i, base, replayed); pw.peer >= 0) {
    ir.peer_wait_ns = pw.wait_ns;
    const model::ProcessId p = a.ProcessOf(pw.peer);
    if (p >= 0 && p < static_cast<int32_t>(t.processes().size())) ir.late_peer_rank = t.processes()[p].rank;
  }
  if (ir.measured.step_ns > 0)
    ir.replay_error = static_cast<double>(ir.replayed.step_ns - ir.measured.step_ns) / ir.measured.step_ns;
}

}  // namespace

absl::StatusOr<ReplayResult> Replay(const model::Trace& t, const graph::Graph& g, const ReplayInputs& in,
                                    const ReplayOptions& o) {
  // The simulation graph holds at most the graph's edges, one fallback or thread edge per node
  // and under a change up to three per restreamed activity and a join per waiter (at most an
  // edge or a node each): its 32-bit row offsets must hold them.
  int64_t graph_edges = 0;
  for (int k = 0; k < graph::kEdgeKinds; ++k) graph_edges += g.stats().recorded[k] + g.stats().inferred[k];
  if (2 * graph_edges + 5 * int64_t{g.num_nodes()} > kMaxSimEdges)
    return absl::ResourceExhaustedError("replay: the dependency graph is too large to simulate (over 2^31 edges)");
  // What the replayed graph and the prediction's share (one copy of the recorded times, the
  // launches' facts) beside the attributes: both only read the graph. The changes' matches and the
  // GPU nodes per iteration follow the attributes on their thread (the shared arrays take about as
  // long), off both simulations' paths.
  SimShared shared;
  absl::StatusOr<NodeAttrs> attrs;
  std::optional<ChangeEffects> fx;
  const int32_t iters = static_cast<int32_t>(in.iterations.size());
  // The GPU nodes per iteration: the replay's, and the prediction's where a change removes nodes
  // (else the same).
  IterationNodes idx;
  std::vector<int32_t> kept;  // the iterations with GPU work
  std::vector<IterationReplay> its;
  auto group = [&] {
    idx = GroupByIteration(*attrs, iters, nullptr);
    for (int32_t i = 0; i < iters; ++i) {
      if (idx.off[i] != idx.off[i + 1]) kept.push_back(i);  // else no GPU work in this iteration
    }
    its.resize(kept.size());
  };
  BothAtOnce([&] { shared = ShareOf(t, g); },
             [&] {
               attrs = CollectAttrs(t, g, in);
               if (!attrs.ok()) return;
               if (!o.changes.empty()) fx = MatchChanges(t, *attrs, o.changes);
               group();
             });
  if (!attrs.ok()) return attrs.status();
  const NodeAttrs& a = *attrs;
  ReplayResult r;
  r.strict = o.strict;
  CountGraph(g, r.counts);
  std::optional<SimGraph> sim;
  std::optional<Schedule> pred, pred_c;
  bool contention_ran = false;
  std::optional<IterationNodes> own_idx_pred;
  const IterationNodes* idx_pred = &idx;
  // The prediction's figures without contention are computed in chunks by whichever thread is
  // free once the uncontended schedule is known: the replay's thread (done with its own
  // figures while the contention model runs) and the prediction's (after that model).
  std::atomic<size_t> next_chunk{0};
  auto predicted_chunks = [&] {
    constexpr size_t kChunk = 256;
    for (size_t lo; (lo = next_chunk.fetch_add(kChunk)) < kept.size();) {
      for (size_t k = lo; k < std::min(kept.size(), lo + kChunk); ++k) {
        its[k].predicted = MeasureStep(*idx_pred, kept[k], a, pred->start, pred->end);
        its[k].predicted->path = WalkPath(*idx_pred, kept[k], a, *sim, *pred);
      }
    }
  };
  // The per-node arrays of the prediction's plan and its first schedule's times, filled on the
  // replay's thread (after the replay's graph, ahead of their use: that thread has time to
  // spare, the prediction's has not). Where the replay's thread is late (a machine that leaves
  // the process one core), the prediction makes its own rather than wait for it.
  Handoff<PlanBuffers> pred_plan;
  Handoff<Schedule> pred_initial;
  Handoff<Schedule> replayed_done;  // the replay's schedule, for the contention rounds
  std::promise<bool> pred_ready;    // true once `pred` and `idx_pred` are set; false: failed before
  bool pred_signalled = false;      // (the prediction's thread only)
  auto predict = [&] {
    ReplayCounts scratch;
    sim = BuildSim(t, g, a, o.changes, &*fx, o.strict, &scratch, &shared);
    PlanBuffers plan_buffers = pred_plan.Take().value_or(PlanBuffers{});  // empty: fresh arrays
    // Kept for the contention rounds: one plan for all runs. Its start counts take the graph's
    // row offsets, read no more once the plan is built.
    const Simulation what_if(*sim, &plan_buffers, &sim->pred_off);
    // The graph's rows, read no more, give the first schedule its bindings.
    Schedule initial = ScheduleFromRows(*sim, pred_initial.Take().value_or(Schedule{}));
    pred = what_if.Run(sim->dur, nullptr, &initial);
    if (fx->any_removed) {
      own_idx_pred = GroupByIteration(a, iters, &fx->removed);
      idx_pred = &*own_idx_pred;
    }
    pred_signalled = true;
    pred_ready.set_value(true);
    if (o.contention) {
      pred_c = WithContention(t, g, a, *sim, what_if, *pred, *fx, in, o, replayed_done, r);
      contention_ran = true;
    }
    replayed_done.Take();  // unused (or claimed, so that the replay's thread frees it): not kept
    predicted_chunks();
  };
  // The prediction runs on a second thread beside the replay (same result either way: they
  // share read-only inputs, buffers handed over before their first write and figures each
  // thread writes apart).
  std::exception_ptr failed;
  std::thread side;
  if (!o.changes.empty()) {
    side = std::thread([&] {
      try {
        predict();
      } catch (...) {
        failed = std::current_exception();
        if (!pred_signalled) pred_ready.set_value(false);
      }
    });
  }
  ReplayCounts counts = r.counts;
  SimGraph base;
  // A replay alone makes its own plan arrays and first schedule's times on the second core while
  // this one builds the graph (that core is idle then): their pages (~57 k at 10 M nodes, fresh
  // each call) are faulted in off the replay's path. The schedule's bindings take the graph's
  // rows once the plan is built (ScheduleFromRows).
  PlanBuffers own_plan;
  Schedule own_initial;
  if (side.joinable()) {
    base = BuildSim(t, g, a, {}, nullptr, o.strict, &counts, &shared);
    pred_plan.Offer([&] { return PlanBuffersFor(g.num_nodes()); });
    pred_initial.Offer([&] { return InitialTimes(g.num_nodes()); });
  } else {
    BothAtOnce(
        [&] {
          own_plan = PlanBuffersFor(g.num_nodes());
          own_initial = InitialTimes(g.num_nodes());
        },
        [&] { base = BuildSim(t, g, a, {}, nullptr, o.strict, &counts, &shared); });
  }
  Schedule replayed;
  {
    const Simulation run(base, &own_plan, &base.pred_off);  // its plan freed after the run
    Schedule initial = ScheduleFromRows(base, std::move(own_initial));
    replayed = run.Run(base.dur, nullptr, &initial);
  }
  // The figures of the recorded and replayed schedules per iteration with GPU work: on this
  // thread while the prediction runs, else in two halves at once.
  const size_t half = kept.size() / 2;
  auto replayed_part = [&](size_t lo, size_t hi) {
    for (size_t k = lo; k < hi; ++k) ReplayedFigures(t, in, a, idx, kept[k], base, replayed, its[k]);
  };
  const int64_t cycles_broken = replayed.cycles_broken;
  if (side.joinable()) {
    replayed_part(0, kept.size());
    // The replay's graph and schedule are read no more (a what-if keeps the prediction's
    // schedule): given back here while the prediction still runs, the schedule's arrays to the
    // contention rounds where they have not started their first run yet.
    base = SimGraph{};
    replayed_done.Offer([&] { return std::move(replayed); });
    replayed = Schedule{};
    if (pred_ready.get_future().get()) predicted_chunks();
    side.join();
  } else {
    BothAtOnce([&] { replayed_part(half, kept.size()); }, [&] { replayed_part(0, half); });
  }
  if (failed) std::rethrow_exception(failed);
  const ContentionModel model = r.contention_model;
  const int64_t contention_nodes = r.contention_nodes;
  r.last_round.shapes_recorded = !t.op_shapes().empty();
  r.counts = counts;
  r.counts.cycles_broken = cycles_broken;
  r.contention_model = model;
  r.contention_nodes = contention_nodes;
  if (fx) {
    r.counts.changed_nodes = fx->changed_nodes;
    r.change_matches = fx->matches;
    for (const Change& c : o.changes) r.changes.push_back(c.text);
  }
  if (pred) {
    // The uncontended figures are done (predicted_chunks); those with contention here.
    auto contended_part = [&](size_t lo, size_t hi) {
      for (size_t k = lo; k < hi; ++k) {
        IterationReplay& ir = its[k];
        ir.predicted_contention = MeasureStep(*idx_pred, kept[k], a, pred_c->start, pred_c->end);
        ir.predicted_contention->path = WalkPath(*idx_pred, kept[k], a, *sim, *pred_c);
      }
    };
    if (pred_c) {
      BothAtOnce([&] { contended_part(half, kept.size()); }, [&] { contended_part(0, half); });
    } else if (contention_ran) {
      for (IterationReplay& ir : its) ir.predicted_contention = ir.predicted;  // the model changed nothing
    }
  }
  r.iterations = std::move(its);
  Summarize(r);
  if (o.keep_schedule) {  // moved out: the schedules are not needed any more
    Schedule& s = pred_c ? *pred_c : pred ? *pred : replayed;
    r.schedule.start_ns = std::move(s.start);
    r.schedule.end_ns = std::move(s.end);
    if (pred && fx && fx->any_moved) {
      const size_t n = std::min(fx->moved.size(), static_cast<size_t>(g.num_gpu()));
      for (size_t v = 0; v < n; ++v) {
        if (fx->moved[v]) r.schedule.moved.push_back(static_cast<graph::NodeId>(v));
      }
    }
  }
  // What a what-if leaves (about 1 GB at 10 M nodes) given back on two threads at once. A replay
  // alone frees as it returns, on one thread (a second one there saved nothing measurable).
  if (pred) {
    BothAtOnce(
        [&] {
          sim.reset();
          pred.reset();
          pred_c.reset();
          own_idx_pred.reset();
          fx.reset();
        },
        [&] {
          attrs = NodeAttrs{};
          shared = SimShared{};
          idx = IterationNodes{};
        });
  }
  return r;
}

}  // namespace overlapscope::analyze::replay
