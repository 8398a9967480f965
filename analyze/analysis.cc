#include "analyze/analysis.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "analyze/comm_wait.h"
#include "analyze/context.h"
#include "analyze/graph/graph.h"
#include "analyze/graph_inputs.h"
#include "analyze/path_analyses.h"
#include "base/phase_log.h"
#include "base/run_all.h"
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

// The context, then what reads only it and the model, at once: the host syncs' blocking then
// the idle gaps, overlap, HTA's figures, launch statistics, stream concurrency (classes and
// iterations: METRICS §9). Each writes its own members of `r`.
absl::Status ContextAnalyses(Context& ctx, const AnalyzeOptions& options, AnalysisResult& r) {
  if (auto s = PrepareContext(ctx, &r.classes); !s.ok()) return s;
  base::PhaseSpan context_span("context analyses");
  absl::Status conc_status;
  base::RunAll(options.threads, {[&] {
                                   base::PhaseSpan span("blocking, idle");
                                   {
                                     base::PhaseSpan blocking_span("blocking");
                                     ComputeBlocking(ctx, &r.blocking);
                                   }
                                   base::PhaseSpan idle_span("idle gaps");
                                   ComputeIdle(ctx, r.blocking, &r.idle, &r.gaps, &r.windows);
                                 },
                                 [&] {
                                   base::PhaseSpan span("overlap");
                                   ComputeOverlap(ctx, &r.overlap);
                                 },
                                 [&] {
                                   base::PhaseSpan span("hta");
                                   if (ctx.opt.hta_both_filters)
                                     ComputeHtaCompat(ctx, &r.hta, &r.hta_other, &r.hta_step_names);
                                   else
                                     ComputeHtaCompat(ctx, &r.hta);
                                 },
                                 [&] {
                                   base::PhaseSpan span("launch");
                                   ComputeLaunchStats(ctx, &r.launch);
                                 },
                                 [&] {
                                   base::PhaseSpan span("concurrency");
                                   conc_status = Concurrency(ctx.t, ctx, options, &r.concurrency);
                                 }});
  return conc_status;
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

}  // namespace

absl::StatusOr<AnalysisResult> AnalyzeAll(const model::Trace& trace, const AnalyzeOptions& options) {
  AnalysisResult r;
  r.min_gap_ns = options.min_gap_ns;
  if (auto s = CheckGroups(options.groups); !s.ok()) return s;
  Context ctx(trace, options);
  // Three rounds of tasks on up to --threads threads; each task writes only its own results and
  // reads the model, the context and what earlier rounds (or earlier steps of its own task)
  // wrote, so the results are the same at any count. With one thread they run in this order.
  // 1. The context, then the analyses that read only it and the model (ContextAnalyses); beside
  //    them the collectives across ranks and the dependency graph's steps that read only the
  //    model (nodes, program order, event waits: METRICS §8).
  absl::Status ctx_status;
  graph::GraphInputs graph_options;
  graph_options.threads = options.threads;
  std::unique_ptr<graph::GraphStart> graph_start;
  base::RunAll(options.threads, {[&] { ctx_status = ContextAnalyses(ctx, options, r); },
                                 [&] {
                                   base::PhaseSpan span("cross rank");
                                   r.cross_rank = AnalyzeCrossRank(trace, nullptr, options.threads);
                                 },
                                 [&] {
                                   base::PhaseSpan span("graph start");
                                   graph_start = std::make_unique<graph::GraphStart>(trace, graph_options);
                                 }});
  if (!ctx_status.ok()) return ctx_status;
  base::PhaseLog("context, analyses, cross rank, graph start");
  // 2. The rest of the graph (the host syncs' releases and the collectives' last arrivals)
  //    beside overlap's transfer/wait split (the cross-rank arrivals).
  graph::Graph g;
  base::RunAll(options.threads, {[&] {
                                   base::PhaseSpan span("graph finish");
                                   g = graph_start->Finish(MakeGraphInputs(r.blocking, r.cross_rank));
                                   graph_start.reset();
                                 },
                                 [&] {
                                   base::PhaseSpan span("comm wait");
                                   if (options.comm_wait_split) ComputeCommWait(trace, r.cross_rank, &r.overlap);
                                 }});
  base::PhaseLog("graph, comm wait");
  // 3. The sync points and their findings (blocking, overlap, graph), the paths (graph,
  //    blocking, cross rank, windows) and the gaps' wait causes (graph).
  absl::Status paths_status;
  base::RunAll(options.threads,
               {[&] {
                  base::PhaseSpan span("sync points");
                  ComputeSyncPoints(ctx, r.blocking, r.overlap, &g, &r.sync);
                  AddWaitSources(g, &r.sync, options.threads);
                },
                [&] { paths_status = Paths(trace, ctx, g, options, r); }, [&] { AddWaitCauses(g, &r.gaps); }});
  if (!paths_status.ok()) return paths_status;
  r.iterations = std::move(ctx.iters);
  r.dependency_graph = g.stats();
  r.dependency_graph_by_process = g.process_stats();
  base::PhaseLog("sync points, paths");
  Summaries(trace, r);
  return r;
}

}  // namespace overlapscope::analyze
