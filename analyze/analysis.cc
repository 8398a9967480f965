#include "analyze/analysis.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "analyze/comm_wait.h"
#include "analyze/context.h"
#include "analyze/graph/graph.h"
#include "analyze/graph_inputs.h"
#include "analyze/path_analyses.h"
#include "base/phase_log.h"
#include "base/run_all.h"
#include "base/run_task_graph.h"
#include "model/bounds.h"

namespace overlapscope::analyze {
namespace {

// The participant a rank's devices waited for longest, summed over its devices.
void WaitedForMost(const AnalysisResult& r, RankSummary* s) {
  std::vector<int64_t> ns(r.cross_rank.participants.size(), 0);
  for (int32_t i : s->devices)
    for (const WaitedFor& w : r.overlap[i].wait.waited_for)
      if (w.participant >= 0 && static_cast<size_t>(w.participant) < ns.size()) ns[w.participant] += w.wait_ns;
  for (size_t p = 0; p < ns.size(); ++p)
    if (ns[p] > s->waited_for_ns) {
      s->waited_for_ns = ns[p];
      s->waited_for = static_cast<int32_t>(p);
    }
}

void Summaries(const model::Trace& t, AnalysisResult& r) {
  for (size_t p = 0; p < t.processes().size(); ++p) {
    RankSummary s;
    s.process = static_cast<model::ProcessId>(p);
    s.rank = t.processes()[p].rank;
    s.pid = t.processes()[p].pid;
    for (size_t i = 0; i < r.overlap.size(); ++i) {
      const DeviceOverlap& d = r.overlap[i];
      if (d.process != s.process) continue;
      s.devices.push_back(static_cast<int32_t>(i));
      s.comm_ns = model::SatAdd(s.comm_ns, d.whole.comm_ns);
      s.hidden_comm_ns = model::SatAdd(s.hidden_comm_ns, d.whole.hidden_comm_ns);
      s.exposed_comm_ns = model::SatAdd(s.exposed_comm_ns, d.whole.exposed_comm_ns);
      s.compute_ns = model::SatAdd(s.compute_ns, d.whole.compute_ns);
      s.contention_ns = model::SatAdd(s.contention_ns, d.whole.contention_ns);
      s.net_overlap_gain_ns = model::SatAdd(s.net_overlap_gain_ns, d.whole.net_overlap_gain_ns);
      if (d.wait.known) {
        s.wait_known = true;
        s.comm_wait_ns = model::SatAdd(s.comm_wait_ns, d.wait.comm_wait_ns);
        s.hidden_wait_ns = model::SatAdd(s.hidden_wait_ns, d.wait.hidden_wait_ns);
        s.exposed_wait_ns = model::SatAdd(s.exposed_wait_ns, d.wait.exposed_wait_ns);
      }
      const DeviceIdle& di = r.idle[i];
      // Sums over devices: each is bounded by its span (model/bounds.h), their sum is not.
      s.gpu_span_ns = model::SatAdd(s.gpu_span_ns, di.span_ns);
      s.gpu_idle_ns = model::SatAdd(s.gpu_idle_ns, di.idle_ns);
      s.gpu_gap_ns = model::SatAdd(s.gpu_gap_ns, di.gap_ns);
      for (int c = 0; c < kGapCauses; ++c) s.gap_cause_ns[c] = model::SatAdd(s.gap_cause_ns[c], di.cause_ns[c]);
    }
    WaitedForMost(r, &s);
    if (s.comm_ns > 0) s.overlap_ratio = static_cast<double>(s.hidden_comm_ns) / static_cast<double>(s.comm_ns);
    if (s.gpu_span_ns > 0) s.gpu_idle_share = static_cast<double>(s.gpu_idle_ns) / static_cast<double>(s.gpu_span_ns);
    for (const HtaCompat& h : r.hta) {
      if (h.process != s.process) continue;
      s.hta_compat_overlap_pct = h.overlap_pct;
      s.hta_wholetrace_overlap_pct = h.wholetrace_overlap_pct;
    }
    const ThreadBlocking* worst = nullptr;
    for (const ThreadBlocking& th : r.blocking.threads) {
      if (th.process != s.process) continue;
      s.blocked_ns = model::SatAdd(s.blocked_ns, th.blocked_ns);
      if (th.blocked_share && (worst == nullptr || th.blocked_ns > worst->blocked_ns ||
                               (th.blocked_ns == worst->blocked_ns && th.active_span_ns > worst->active_span_ns)))
        worst = &th;
    }
    if (worst != nullptr) {
      s.blocked_share = worst->blocked_share;
      s.blocked_thread = worst->thread;
    }
    s.finding_count.assign(FindingKinds().size(), 0);
    s.finding_cost_ns.assign(FindingKinds().size(), 0);
    for (const Finding& f : r.sync.findings) {
      const int32_t k = FindingKindIndex(f.kind);
      if (f.process != s.process || k < 0) continue;
      ++s.finding_count[k];
      s.finding_cost_ns[k] = model::SatAdd(s.finding_cost_ns[k], f.cost_ns);
    }
    r.ranks.push_back(std::move(s));
  }
}

// Stream concurrency (METRICS §9): reads the classes and iterations only.
absl::Status Concurrency(const model::Trace& trace, const Context& ctx, const AnalyzeOptions& options,
                         ConcurrencyResult* out) {
  GpuFacts gpu;
  gpu.kernel_cls = ctx.kernel_cls, gpu.memcpy_cls = ctx.memcpy_cls, gpu.memset_cls = ctx.memset_cls;
  ConcurrencyOptions o;
  o.groups = options.groups;
  absl::StatusOr<ConcurrencyResult> c = AnalyzeStreamConcurrency(trace, gpu, ctx.iters, o);
  if (!c.ok()) return c.status();
  *out = std::move(c).value();
  return absl::OkStatus();
}

// Critical path and straggler causes (METRICS §8, one shared index): they read the graph,
// classes, iterations, blocking, cross-rank results and capture windows.
absl::Status Paths(const model::Trace& trace, const Context& ctx, const graph::Graph& g, const AnalyzeOptions& options,
                   AnalysisResult& r) {
  base::PhaseSpan span("paths");
  PathInputs in;
  in.graph = &g;
  in.gpu.kernel_cls = ctx.kernel_cls, in.gpu.memcpy_cls = ctx.memcpy_cls, in.gpu.memset_cls = ctx.memset_cls;
  in.iterations = &ctx.iters, in.blocking = &r.blocking, in.cross_rank = &r.cross_rank;
  in.windows = r.windows;
  in.threads = options.threads;
  PathAndConcurrencyOptions o;
  o.critical_path.top_n = options.top_n;
  o.critical_path.keep_segments = options.keep_path_segments;
  o.stragglers.top_n = options.top_n;
  o.threads = options.threads;
  o.paths = options.critical_path;
  o.concurrency_too = false;  // AnalyzeAll runs it apart
  PathAnalyses p;
  if (auto s = AnalyzePathsAndConcurrency(trace, in, o, &p, &r.concurrency); !s.ok()) return s;
  r.critical_path = std::move(p.critical_path);
  r.stragglers = std::move(p.stragglers);
  return absl::OkStatus();
}

// What the steps share beside the result: their statuses, the graph and the sync points' runs.
struct Steps {
  absl::Status ctx_status, conc_status, paths_status;
  graph::GraphInputs graph_options;
  std::unique_ptr<graph::GraphStart> graph_start;
  graph::Graph g;
  std::vector<size_t> sync_runs;
  WaitSourceIndex wait_sources;
};

// AnalyzeAll's steps and what each waits for (base::RunTaskGraph; list order: the one-thread
// order). The steps after the context give up when it failed.
std::vector<base::GraphTask> StepTasks(const model::Trace& trace, const AnalyzeOptions& options, Context& ctx,
                                       Steps& st, AnalysisResult& r) {
  st.graph_options.threads = options.threads;
  auto after_ctx = [&st](std::function<void()> f) {
    return [&st, f = std::move(f)] {
      if (st.ctx_status.ok()) f();
    };
  };
  enum : size_t { kCtx, kCross, kGraphStart, kBlocking, kIdle, kOverlap, kHta, kLaunch, kConc, kPoints, kGraph };
  enum : size_t { kCommWait = kGraph + 1, kPaths, kWaitCauses, kWaitSources, kSync };
  std::vector<base::GraphTask> tasks(kSync + 1);
  // The context; beside it the collectives across ranks and the graph's steps that read only
  // the model (nodes, program order, event waits: METRICS §8).
  tasks[kCtx].run = [&] { st.ctx_status = PrepareContext(ctx, &r.classes); };
  tasks[kCross].run = [&] {
    base::PhaseSpan span("cross rank");
    r.cross_rank = AnalyzeCrossRank(trace, nullptr, options.threads);
  };
  tasks[kGraphStart].run = [&] {
    base::PhaseSpan span("graph start");
    st.graph_start = std::make_unique<graph::GraphStart>(trace, st.graph_options);
  };
  // What reads only the context and the model: the host syncs' blocking then the idle gaps,
  // overlap, HTA's figures, launch statistics, stream concurrency (METRICS §9); and the sync
  // points themselves once the blocked intervals are known.
  tasks[kBlocking] = {{kCtx}, after_ctx([&] {
                        base::PhaseSpan span("blocking");
                        ComputeBlocking(ctx, &r.blocking);
                      })};
  tasks[kIdle] = {{kBlocking}, after_ctx([&] {
                    base::PhaseSpan span("idle gaps");
                    ComputeIdle(ctx, r.blocking, &r.idle, &r.gaps, &r.windows);
                  })};
  tasks[kOverlap] = {{kCtx}, after_ctx([&] {
                       base::PhaseSpan span("overlap");
                       ComputeOverlap(ctx, &r.overlap);
                     })};
  tasks[kHta] = {{kCtx}, after_ctx([&] {
                   base::PhaseSpan span("hta");
                   if (ctx.opt.hta_both_filters)
                     ComputeHtaCompat(ctx, &r.hta, &r.hta_other, &r.hta_step_names);
                   else
                     ComputeHtaCompat(ctx, &r.hta);
                 })};
  tasks[kLaunch] = {{kCtx}, after_ctx([&] {
                      base::PhaseSpan span("launch");
                      ComputeLaunchStats(ctx, &r.launch);
                    })};
  tasks[kConc] = {{kCtx}, after_ctx([&] {
                    base::PhaseSpan span("concurrency");
                    st.conc_status = Concurrency(ctx.t, ctx, options, &r.concurrency);
                  })};
  tasks[kPoints] = {{kBlocking}, after_ctx([&] { AddSyncPoints(ctx, r.blocking, &r.sync, &st.sync_runs); })};
  // The rest of the graph (the host syncs' releases and the collectives' last arrivals), and
  // overlap's transfer/wait split (the cross-rank arrivals).
  tasks[kGraph] = {{kCross, kGraphStart, kBlocking}, after_ctx([&] {
                     base::PhaseSpan span("graph finish");
                     st.g = st.graph_start->Finish(MakeGraphInputs(r.blocking, r.cross_rank));
                     st.graph_start.reset();
                   })};
  tasks[kCommWait] = {{kCross, kOverlap}, after_ctx([&] {
                        base::PhaseSpan span("comm wait");
                        if (options.comm_wait_split) ComputeCommWait(trace, r.cross_rank, &r.overlap);
                      })};
  // The paths (graph, blocking, cross rank, windows), the gaps' wait causes (graph), and the
  // sync points' findings (blocking, overlap with its wait split, graph).
  tasks[kPaths] = {{kGraph, kIdle}, after_ctx([&] { st.paths_status = Paths(trace, ctx, st.g, options, r); })};
  tasks[kWaitCauses] = {{kGraph, kIdle}, after_ctx([&] { AddWaitCauses(st.g, &r.gaps); })};
  tasks[kWaitSources] = {{kGraph}, after_ctx([&] {
                           base::PhaseSpan span("wait sources");
                           IndexWaitSources(st.g, &st.wait_sources, options.threads);
                         })};
  tasks[kSync] = {{kPoints, kGraph, kCommWait, kWaitSources}, after_ctx([&] {
                    base::PhaseSpan span("sync points");
                    FindSyncFindings(ctx, r.blocking, r.overlap, &st.g, st.sync_runs, &r.sync);
                    ApplyWaitSources(st.g, st.wait_sources, &r.sync, options.threads);
                  })};
  return tasks;
}

}  // namespace

absl::StatusOr<AnalysisResult> AnalyzeAll(const model::Trace& trace, const AnalyzeOptions& options) {
  AnalysisResult r;
  r.min_gap_ns = options.min_gap_ns;
  if (auto s = CheckGroups(options.groups); !s.ok()) return s;
  Context ctx(trace, options);
  // The steps as a graph of tasks on up to --threads threads (base::RunTaskGraph): each starts
  // once the steps it reads have finished, not at the end of a round, so no step waits for a
  // longer one beside it. Each writes only its own results and reads the model, the context and
  // what the steps it waits for wrote, so the results are the same at any count; with one
  // thread they run in this order.
  Steps st;
  const std::vector<base::GraphTask> tasks = StepTasks(trace, options, ctx, st, r);
  base::RunTaskGraph(options.threads, tasks);
  if (!st.ctx_status.ok()) return st.ctx_status;
  if (!st.conc_status.ok()) return st.conc_status;
  if (!st.paths_status.ok()) return st.paths_status;
  r.iterations = std::move(ctx.iters);
  r.dependency_graph = st.g.stats();
  r.dependency_graph_by_process = st.g.process_stats();
  base::PhaseLog("analyses");
  Summaries(trace, r);
  return r;
}

}  // namespace overlapscope::analyze
