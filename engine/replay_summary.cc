#include "engine/replay_summary.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "engine/median.h"

namespace overlapscope::engine {
namespace {

namespace rp = analyze::replay;

// Medians of step figures and the mean path over `figs`.
rp::StepFigures Combine(const std::vector<const rp::StepFigures*>& figs) {
  rp::StepFigures out;
  std::vector<int64_t> step, comm, exposed;
  for (const rp::StepFigures* f : figs) {
    step.push_back(f->step_ns);
    comm.push_back(f->comm_ns);
    exposed.push_back(f->exposed_comm_ns);
    out.path.compute_ns += f->path.compute_ns;
    out.path.comm_ns += f->path.comm_ns;
    out.path.memory_ns += f->path.memory_ns;
    out.path.sync_ns += f->path.sync_ns;
    out.path.host_ns += f->path.host_ns;
    out.path.blocked_ns += f->path.blocked_ns;
    out.path.idle_ns += f->path.idle_ns;
  }
  out.step_ns = Median(step);
  out.comm_ns = Median(comm);
  out.exposed_comm_ns = Median(exposed);
  const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(figs.size()));
  for (int64_t* p : {&out.path.compute_ns, &out.path.comm_ns, &out.path.memory_ns, &out.path.sync_ns, &out.path.host_ns,
                     &out.path.blocked_ns, &out.path.idle_ns})
    *p /= n;
  return out;
}

}  // namespace

std::vector<ReplayRankSummary> SummarizeRanks(const model::Trace& t, const rp::ReplayResult& r, double flag_above) {
  std::map<model::ProcessId, std::vector<const rp::IterationReplay*>> by_proc;
  for (const rp::IterationReplay& it : r.iterations) by_proc[it.process].push_back(&it);
  std::vector<ReplayRankSummary> out;
  for (const auto& [proc, its] : by_proc) {
    ReplayRankSummary s;
    s.process = proc;
    s.rank = its[0]->rank;
    const int64_t pid = proc >= 0 && proc < static_cast<int32_t>(t.processes().size()) ? t.processes()[proc].pid : -1;
    s.label = s.rank >= 0 ? absl::StrCat("rank ", s.rank) : absl::StrCat("pid ", pid);
    s.iterations = static_cast<int64_t>(its.size());
    std::vector<double> err;
    std::vector<const rp::StepFigures*> m, rep, pr, prc;
    for (const rp::IterationReplay* it : its) {
      err.push_back(it->replay_error);
      s.worst_abs_error = std::max(s.worst_abs_error, std::abs(it->replay_error));
      m.push_back(&it->measured);
      rep.push_back(&it->replayed);
      if (it->predicted) pr.push_back(&*it->predicted);
      if (it->predicted_contention) prc.push_back(&*it->predicted_contention);
    }
    std::vector<double> ch, ch_c;
    for (const rp::IterationReplay* it : its) {
      if (it->replayed.step_ns <= 0) continue;
      const double rep = static_cast<double>(it->replayed.step_ns);
      if (it->predicted) ch.push_back((it->predicted->step_ns - rep) / rep);
      if (it->predicted_contention) ch_c.push_back((it->predicted_contention->step_ns - rep) / rep);
    }
    if (!ch.empty()) s.change = Median(ch);
    if (!ch_c.empty()) s.change_contention = Median(ch_c);
    s.median_error = Median(err);
    s.unreliable = std::abs(s.median_error) > flag_above;
    s.measured = Combine(m);
    s.replayed = Combine(rep);
    if (!pr.empty()) s.predicted = Combine(pr);
    if (!prc.empty()) s.predicted_contention = Combine(prc);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const ReplayRankSummary& a, const ReplayRankSummary& b) {
    return std::make_pair(a.rank, a.process) < std::make_pair(b.rank, b.process);
  });
  return out;
}

}  // namespace overlapscope::engine
