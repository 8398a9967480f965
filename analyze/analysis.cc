#include "analyze/analysis.h"

#include <algorithm>
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

// Critical path and straggler causes (METRICS §8, one shared index): they read the classes,
// iterations, blocking and cross-rank results.
absl::Status PathsAndConcurrency(const model::Trace& trace, const Context& ctx, const graph::Graph& g,
                                 const AnalyzeOptions& options, AnalysisResult& r) {
  PathInputs in;
  in.graph = &g;
  in.gpu.kernel_cls = ctx.kernel_cls, in.gpu.memcpy_cls = ctx.memcpy_cls, in.gpu.memset_cls = ctx.memset_cls;
  in.iterations = &r.iterations, in.blocking = &r.blocking, in.cross_rank = &r.cross_rank;
  in.windows = r.windows;
  PathAndConcurrencyOptions o;
  o.critical_path.top_n = options.top_n;
  o.critical_path.keep_segments = options.keep_path_segments;
  o.stragglers.top_n = options.top_n;
  o.threads = options.threads;
  o.paths = options.critical_path;
  o.concurrency_too = false;  // AnalyzeAll ran it beside the graph
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
  base::PhaseSpan prep_("prepare context");
  if (auto s = PrepareContext(ctx, &r.classes); !s.ok()) return s;
  // Overlap, HTA's figures, blocking, launch statistics and the collectives across ranks only
  // read the context or the model: they run at once on up to --threads threads. The
  // dependency graph (METRICS §8) needs the host syncs' releases and the collectives' last
  // arrivals; the idle causes, sync points and paths read it. With one thread everything runs
  // in this order.
  base::RunAll(options.threads, {[&] {
                                   base::PhaseSpan s_("overlap");
                                   ComputeOverlap(ctx, &r.overlap);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("hta");
                                   if (ctx.opt.hta_both_filters)
                                     ComputeHtaCompat(ctx, &r.hta, &r.hta_other, &r.hta_step_names);
                                   else
                                     ComputeHtaCompat(ctx, &r.hta);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("blocking");
                                   ComputeBlocking(ctx, &r.blocking);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("launch");
                                   ComputeLaunchStats(ctx, &r.launch);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("cross rank");
                                   r.cross_rank = AnalyzeCrossRank(trace);
                                 }});
  base::PhaseLog("analyses, parallel part");
  // The graph, the idle gaps and the transfer/wait split read only those results (and write
  // their own): at once, too.
  graph::Graph g;
  base::RunAll(options.threads, {[&] {
                                   base::PhaseSpan s_("graph");
                                   graph::GraphInputs in = MakeGraphInputs(r.blocking, r.cross_rank);
                                   in.threads = options.threads;
                                   g = graph::BuildGraph(trace, in);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("idle");
                                   ComputeIdle(ctx, r.blocking, &r.idle, &r.gaps, &r.windows);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("comm wait");
                                   if (options.comm_wait_split) ComputeCommWait(trace, r.cross_rank, &r.overlap);
                                 }});
  base::PhaseLog("dependency graph, idle");
  // The gaps' wait causes and the sync points (which do not read the gaps) at once.
  // Stream concurrency (classes and iterations only) goes with the shorter of them: the paths
  // after them run their index alone.
  absl::Status conc_status;
  base::RunAll(options.threads, {[&] {
                                   {
                                     base::PhaseSpan s_("wait causes");
                                     AddWaitCauses(g, &r.gaps);
                                   }
                                   base::PhaseSpan s_("concurrency");
                                   conc_status = Concurrency(trace, ctx, options, &r.concurrency);
                                 },
                                 [&] {
                                   {
                                     base::PhaseSpan s_("sync points");
                                     ComputeSyncPoints(ctx, r.blocking, r.overlap, &g, &r.sync);
                                   }
                                   base::PhaseSpan s_("wait sources");
                                   AddWaitSources(g, &r.sync);
                                 }});
  if (!conc_status.ok()) return conc_status;
  r.iterations = std::move(ctx.iters);
  r.dependency_graph = g.stats();
  r.dependency_graph_by_process = g.process_stats();
  base::PhaseLog("idle, sync points");
  if (auto s = PathsAndConcurrency(trace, ctx, g, options, r); !s.ok()) return s;
  base::PhaseLog("paths, concurrency");
  {
    base::PhaseSpan s_("summaries");
    Summaries(trace, r);
  }
  return r;
}

}  // namespace overlapscope::analyze
