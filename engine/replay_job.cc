#include "engine/replay_job.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/median.h"

namespace overlapscope::engine {
namespace {

namespace rp = analyze::replay;
using nlohmann::ordered_json;

std::string Ms(int64_t ns) { return absl::StrFormat("%.3f ms", ns / 1e6); }
std::string Pct(double f) { return absl::StrFormat("%+.2f %%", f * 100); }

// Median of the per-iteration changes of the job's step under `pred` (nullopt without it).
std::optional<double> MedianChange(const std::map<int64_t, std::vector<const rp::IterationReplay*>>& by_it,
                                   std::optional<rp::StepFigures> rp::IterationReplay::*pred) {
  std::vector<double> ch;
  for (const auto& [n, its] : by_it) {
    int64_t replayed = 0, predicted = -1;
    for (const rp::IterationReplay* it : its) {
      replayed = std::max(replayed, it->replayed.step_ns);
      if (it->*pred) predicted = std::max(predicted, (it->*pred)->step_ns);
    }
    if (predicted >= 0 && replayed > 0) ch.push_back(static_cast<double>(predicted - replayed) / replayed);
  }
  if (ch.empty()) return std::nullopt;
  return Median(ch);
}

}  // namespace

ReplayJobSummary SummarizeJob(const rp::ReplayResult& r, double flag_above) {
  ReplayJobSummary j;
  j.median_abs_error = r.median_abs_error;
  j.unreliable = r.median_abs_error > flag_above;
  j.flag_above = flag_above;
  std::map<int64_t, std::vector<const rp::IterationReplay*>> by_it;
  std::map<model::ProcessId, bool> procs;
  for (const rp::IterationReplay& it : r.iterations) {
    by_it[it.number].push_back(&it);
    procs[it.process] = true;
  }
  j.iterations = static_cast<int64_t>(by_it.size());
  j.ranks = static_cast<int32_t>(procs.size());
  std::vector<int64_t> measured, replayed;
  for (const auto& [n, its] : by_it) {
    int64_t m = 0, rep = 0;
    const rp::IterationReplay* waited = nullptr;  // the longest wait for a peer in this iteration
    for (const rp::IterationReplay* it : its) {
      m = std::max(m, it->measured.step_ns);
      rep = std::max(rep, it->replayed.step_ns);
      if (it->peer_wait_ns > 0 && (!waited || it->peer_wait_ns > waited->peer_wait_ns)) waited = it;
    }
    measured.push_back(m);
    replayed.push_back(rep);
    if (waited && waited->peer_wait_ns >= kLateRankShare * rep)
      j.late.push_back({n, waited->late_peer_rank, waited->peer_wait_ns});
  }
  j.measured_step_ns = Median(measured);
  j.replayed_step_ns = Median(replayed);
  j.change = MedianChange(by_it, &rp::IterationReplay::predicted);
  j.change_contention = MedianChange(by_it, &rp::IterationReplay::predicted_contention);
  auto applied = [&](double c) { return static_cast<int64_t>(std::llround(j.replayed_step_ns * (1 + c))); };
  if (j.change) j.predicted_step_ns = applied(*j.change);
  if (j.change_contention) j.predicted_contention_step_ns = applied(*j.change_contention);
  return j;
}

std::string ReplayJobLine(const ReplayJobSummary& job) {
  std::string s =
      absl::StrFormat("Job step (slowest rank per iteration, median of %d iterations): measured %s, replayed %s",
                      job.iterations, Ms(job.measured_step_ns), Ms(job.replayed_step_ns));
  if (job.predicted_step_ns)
    absl::StrAppend(&s, ", predicted ", Ms(*job.predicted_step_ns), " (change ", Pct(*job.change), ")");
  if (job.predicted_contention_step_ns)
    absl::StrAppend(&s, ", with contention ", Ms(*job.predicted_contention_step_ns), " (change ",
                    Pct(*job.change_contention), ")");
  if (job.change && job.unreliable)
    absl::StrAppend(&s, absl::StrFormat(" (replay error %.2f %% > %.0f %%: not reliable)", job.median_abs_error * 100,
                                        job.flag_above * 100));
  if (job.change)
    absl::StrAppend(&s,
                    "; the change is the median of per-iteration changes (predicted against replayed), the predicted "
                    "step the replayed one times 1 + that change");
  if (job.ranks > 1) {
    absl::StrAppend(&s,
                    absl::StrFormat("; iterations with a late rank (a peer waited >= %.0f %% of the step for it): %d",
                                    kLateRankShare * 100, job.late.size()));
    constexpr size_t kNamed = 6;
    for (size_t i = 0; i < job.late.size() && i < kNamed; ++i) {
      const ReplayJobSummary::Late& l = job.late[i];
      absl::StrAppend(&s, i ? ", " : " (", l.iteration, ": ",
                      l.rank >= 0 ? absl::StrCat("rank ", l.rank) : std::string("a rank"), " ", Ms(l.wait_ns));
    }
    if (job.late.size() > kNamed) absl::StrAppend(&s, ", ...");
    if (!job.late.empty()) s += ")";
  }
  return s;
}

ordered_json ReplayJobJson(const ReplayJobSummary& job) {
  ordered_json x = {{"iterations", job.iterations},
                    {"ranks", job.ranks},
                    {"measured_step_ns", job.measured_step_ns},
                    {"replayed_step_ns", job.replayed_step_ns}};
  if (job.predicted_step_ns) {
    x["predicted_step_ns"] = *job.predicted_step_ns;
    x["change"] = *job.change;
  }
  if (job.predicted_contention_step_ns) {
    x["predicted_contention_step_ns"] = *job.predicted_contention_step_ns;
    x["change_contention"] = *job.change_contention;
  }
  x["change_rule"] = "median-of-per-iteration-changes";
  x["unreliable"] = job.unreliable;
  ordered_json late = ordered_json::array();
  for (const ReplayJobSummary::Late& l : job.late)
    late.push_back({{"iteration", l.iteration}, {"rank", l.rank}, {"wait_ns", l.wait_ns}});
  x["late_rank_iterations"] = late;
  return x;
}

}  // namespace overlapscope::engine
