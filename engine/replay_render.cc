#include "engine/replay_render.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze/replay/last_round.h"
#include "engine/replay.h"
#include "engine/replay_job.h"
#include "engine/replay_summary.h"
#include "nlohmann/json.hpp"

namespace overlapscope::engine {
namespace {

namespace rp = analyze::replay;
using nlohmann::ordered_json;

std::string Ms(int64_t ns) { return absl::StrFormat("%.3f ms", ns / 1e6); }
std::string SignedMs(int64_t ns) { return absl::StrFormat("%+.3f ms", ns / 1e6); }
std::string Pct(double f) { return absl::StrFormat("%+.2f %%", f * 100); }
std::string AbsPct(double f) { return absl::StrFormat("%.2f %%", f * 100); }

// Whether a ce: change was given (its copy-engine model is then named in every output).
bool HasCopyEngineChange(const rp::ReplayResult& r) {
  for (const std::string& c : r.changes) {
    if (c.rfind("ce:", 0) == 0) return true;
  }
  return false;
}

ordered_json PathJson(const rp::PathComposition& p) {
  return {{"compute_ns", p.compute_ns}, {"comm_ns", p.comm_ns}, {"memory_ns", p.memory_ns},
          {"sync_ns", p.sync_ns},       {"host_ns", p.host_ns}, {"blocked_ns", p.blocked_ns},
          {"idle_ns", p.idle_ns}};
}

// `walked`: the schedule's critical path was walked. The recorded schedule's is not (replay walks
// the schedules it simulates): null there, never zeros that would read as "0 ns".
ordered_json StepJson(const rp::StepFigures& f, bool walked = true) {
  return {{"step_ns", f.step_ns},
          {"comm_ns", f.comm_ns},
          {"exposed_comm_ns", f.exposed_comm_ns},
          {"critical_path", walked ? PathJson(f.path) : ordered_json(nullptr)}};
}

ordered_json CountsJson(const rp::ReplayCounts& c) {
  return {{"nodes", c.nodes},
          {"edges_recorded", c.edges_recorded},
          {"edges_inferred", c.edges_inferred},
          {"waits_unresolved", c.waits_unresolved},
          {"waits_ambiguous", c.waits_ambiguous},
          {"gpu_without_launch", c.gpu_without_launch},
          {"syncs_without_release", c.syncs_without_release},
          {"collective_groups", c.collective_groups},
          {"collectives_unmatched", c.collectives_unmatched},
          {"cycles_broken", c.cycles_broken},
          {"pinned_unresolved", c.pinned_unresolved},
          {"device_order", c.device_order},
          {"sm_waits", c.sm_waits}};
}

std::string Json(const std::vector<std::string>& inputs, const rp::ReplayResult& r,
                 const std::vector<ReplayRankSummary>& ranks) {
  ordered_json j;
  j["schema"] = std::string(kReplaySchema);
  j["schema_version"] = std::string(kReplaySchemaVersion);
  j["inputs"] = inputs;
  j["replay_error"] = {{"iterations", r.iterations.size()},
                       {"median_abs", r.median_abs_error},
                       {"worst_abs", r.worst_abs_error},
                       {"flag_above", kReplayErrorFlag},
                       {"strict", r.strict}};
  j["graph"] = CountsJson(r.counts);
  ordered_json ch = ordered_json::array();
  for (size_t i = 0; i < r.changes.size(); ++i)
    ch.push_back({{"spec", r.changes[i]}, {"matched", r.change_matches[i]}});
  j["changes"] = ch;
  j["contention_model"] = std::string(rp::ToString(r.contention_model));
  j["contention_activities"] = r.contention_nodes;
  if (HasCopyEngineChange(r)) j["copy_engine_model"] = "recorded-transfer";
  if (!r.changes.empty()) {
    const rp::LastRoundCounts& lr = r.last_round;
    j["last_round"] = {{"in_round", lr.in_round},
                       {"outside", lr.outside},
                       {"no_shape", lr.no_shape},
                       {"shapes_recorded", lr.shapes_recorded}};
  }
  j["job"] = ReplayJobJson(SummarizeJob(r, kReplayErrorFlag));
  ordered_json rs = ordered_json::array();
  for (const ReplayRankSummary& s : ranks) {
    ordered_json x = {{"rank", s.rank},
                      {"label", s.label},
                      {"iterations", s.iterations},
                      {"replay_error_median", s.median_error},
                      {"replay_error_worst_abs", s.worst_abs_error},
                      {"unreliable", s.unreliable},
                      {"measured", StepJson(s.measured, false)},
                      {"replayed", StepJson(s.replayed)}};
    if (s.predicted) {
      x["predicted"] = StepJson(*s.predicted);
      x["predicted_gain_ns"] = s.measured.step_ns - s.predicted->step_ns;
      x["exposed_comm_change_ns"] = s.predicted->exposed_comm_ns - s.replayed.exposed_comm_ns;
      if (s.change) x["predicted_change"] = *s.change;
    }
    if (s.predicted_contention) {
      x["predicted_contention"] = StepJson(*s.predicted_contention);
      x["predicted_gain_contention_ns"] = s.measured.step_ns - s.predicted_contention->step_ns;
      if (s.change_contention) x["predicted_change_contention"] = *s.change_contention;
    }
    rs.push_back(std::move(x));
  }
  j["ranks"] = rs;
  ordered_json its = ordered_json::array();
  for (const rp::IterationReplay& it : r.iterations) {
    ordered_json x = {{"rank", it.rank},
                      {"iteration", it.number},
                      {"measured", StepJson(it.measured, false)},
                      {"replayed", StepJson(it.replayed)},
                      {"replay_error", it.replay_error},
                      {"unreliable", std::abs(it.replay_error) > kReplayErrorFlag}};
    if (it.peer_wait_ns > 0) {
      x["peer_wait_ns"] = it.peer_wait_ns;
      x["late_peer_rank"] = it.late_peer_rank;
    }
    if (it.predicted) x["predicted"] = StepJson(*it.predicted);
    if (it.predicted_contention) x["predicted_contention"] = StepJson(*it.predicted_contention);
    its.push_back(std::move(x));
  }
  j["iterations"] = its;
  return j.dump(2) + "\n";
}

std::string Flag(const ReplayRankSummary& s) {
  return s.unreliable ? absl::StrFormat(" (replay error %s > 5 %%: not reliable)", Pct(s.median_error)) : "";
}

std::string Table(const std::vector<ReplayRow>& rows, bool markdown) {
  std::vector<size_t> w;
  for (const ReplayRow& r : rows) {
    w.resize(std::max(w.size(), r.cells.size()), 0);
    for (size_t i = 0; i < r.cells.size(); ++i) w[i] = std::max(w[i], r.cells[i].size());
  }
  std::string out;
  for (size_t k = 0; k < rows.size(); ++k) {
    const ReplayRow& r = rows[k];
    if (markdown) out += "|";
    for (size_t i = 0; i < r.cells.size(); ++i) {
      if (markdown) {
        absl::StrAppend(&out, " ", r.cells[i], " |");
      } else {
        absl::StrAppend(&out, i ? "  " : "", r.cells[i], std::string(w[i] - r.cells[i].size(), ' '));
      }
    }
    out += "\n";
    if (markdown && k == 0) {
      out += "|";
      for (size_t i = 0; i < r.cells.size(); ++i) out += " --- |";
      out += "\n";
    }
  }
  return out;
}

std::string Readable(const rp::ReplayResult& r, const std::vector<ReplayRankSummary>& ranks, bool md) {
  std::string out = md ? "# overlapscope replay\n\n" : "";
  for (const std::string& l : ReplayHeadLines(r)) absl::StrAppend(&out, md ? "- " : "", l, "\n");
  if (ranks.empty()) return out;
  absl::StrAppend(&out, md ? "\n## Per rank (median over iterations)\n\n" : "\nPer rank (median over iterations):\n",
                  Table(ReplayRankRows(ranks), md));
  for (const ReplayRankSummary& s : ranks) {
    absl::StrAppend(&out, md ? "\n### " : "\n", "Critical path, ", s.label, " (mean per iteration)",
                    md ? "\n\n" : ":\n", Table(ReplayPathRows(s), md));
  }
  return out;
}

// What the persistent GEMMs' last tile round made of the collectives that waited for their SMs
// (analyze/replay/contention.h); empty when none did.
std::string LastRoundLine(const rp::LastRoundCounts& lr) {
  if (lr.in_round + lr.outside + lr.no_shape == 0) return "";
  std::string s = absl::StrFormat(
      "Persistent GEMMs' last tile round: %d collectives start in it (the share of their work measured "
      "beside it: all-gather %.2f, others none), %d wait for the GEMM's end (no room in its last round, or "
      "no gain measured there), %d wait for the end of a GEMM whose rounds are unknown",
      lr.in_round, rp::kAllGatherLastRoundRate, lr.outside, lr.no_shape);
  if (lr.no_shape > 0 && !lr.shapes_recorded)
    absl::StrAppend(&s,
                    " (the trace has no operator shapes: a capture with record_shapes=True would let the model "
                    "start them in the GEMM's last round)");
  return s;
}

}  // namespace

std::vector<std::string> ReplayHeadLines(const rp::ReplayResult& r) {
  std::vector<std::string> l;
  if (r.iterations.empty()) {
    l.push_back("Replay error: no iterations with GPU work (no ProfilerStep#N or --iteration-marker ranges)");
  } else {
    l.push_back(
        absl::StrFormat("Replay error%s: median |error| %s, worst %s over %d iterations (goal: median <= 2 %%, "
                        "worst <= 5 %%)",
                        r.strict ? " (strict: no fallbacks)" : "", AbsPct(r.median_abs_error),
                        AbsPct(r.worst_abs_error), r.iterations.size()));
    // The median can hide a few iterations far off: their count, where there are any.
    const int64_t off = std::count_if(r.iterations.begin(), r.iterations.end(), [](const rp::IterationReplay& it) {
      return std::abs(it.replay_error) > kReplayErrorFlag;
    });
    if (off > 0)
      absl::StrAppendFormat(&l.back(), "; %d of %d iterations replay more than %.0f %% off", off, r.iterations.size(),
                            kReplayErrorFlag * 100);
  }
  const rp::ReplayCounts& c = r.counts;
  l.push_back(
      absl::StrFormat("Graph: %d nodes; edges %d recorded, %d inferred; cross-stream waits %d unresolved, %d "
                      "ambiguous; %d GPU activities without launch call; %d blocking calls without release",
                      c.nodes, c.edges_recorded, c.edges_inferred, c.waits_unresolved, c.waits_ambiguous,
                      c.gpu_without_launch, c.syncs_without_release));
  l.push_back(absl::StrFormat(
      "Collectives: %d instances with waits recomputed across ranks, %d carrying activities "
      "without peers (recorded duration); %d GPU activities behind unresolved waits keep their recorded "
      "gap; %d started later than the graph explains (kept at their recorded distance); %d waited for the SMs "
      "another stream's kernel filled (they follow its end)%s",
      c.collective_groups, c.collectives_unmatched, c.pinned_unresolved, c.device_order, c.sm_waits,
      c.cycles_broken > 0 ? absl::StrFormat("; %d events forced out of cycles", c.cycles_broken) : std::string()));
  if (!r.changes.empty()) {
    std::string s = "Changes:";
    for (size_t i = 0; i < r.changes.size(); ++i)
      absl::StrAppend(&s, i ? "," : "", " ", r.changes[i], " (", r.change_matches[i], " matched)");
    l.push_back(s);
    std::string model = absl::StrFormat(
        "Contention model: %s (%d activities changed: compute slowed or sped up, collectives waiting for SMs)",
        rp::ToString(r.contention_model), r.contention_nodes);
    // The copy-engine model of ce: (analyze/replay/contention.h), said wherever it applies.
    if (HasCopyEngineChange(r))
      absl::StrAppend(&model,
                      "; copy-engine collectives: recorded transfer time, no SMs held while they copy, their own "
                      "chunk's on-device copy waits for SMs");
    l.push_back(model);
    if (std::string lr = LastRoundLine(r.last_round); !lr.empty()) l.push_back(std::move(lr));
  }
  if (!r.iterations.empty()) l.push_back(ReplayJobLine(SummarizeJob(r, kReplayErrorFlag)));
  return l;
}

std::vector<ReplayRow> ReplayRankRows(const std::vector<ReplayRankSummary>& ranks) {
  const bool pred = !ranks.empty() && ranks[0].predicted.has_value();
  const bool pred_c = !ranks.empty() && ranks[0].predicted_contention.has_value();
  std::vector<ReplayRow> rows;
  ReplayRow h{{"rank", "iters", "measured", "replayed", "error"}};
  if (pred) h.cells.insert(h.cells.end(), {"predicted", "gain", "change/iter", "exposed comm"});
  if (pred_c) h.cells.insert(h.cells.end(), {"with contention", "gain", "change/iter"});
  rows.push_back(h);
  for (const ReplayRankSummary& s : ranks) {
    ReplayRow r{
        {s.label, absl::StrCat(s.iterations), Ms(s.measured.step_ns), Ms(s.replayed.step_ns), Pct(s.median_error)}};
    if (pred && s.predicted) {
      r.cells.push_back(Ms(s.predicted->step_ns) + Flag(s));
      r.cells.push_back(SignedMs(s.measured.step_ns - s.predicted->step_ns));
      r.cells.push_back(s.change ? Pct(*s.change) : "-");
      r.cells.push_back(absl::StrCat(Ms(s.replayed.exposed_comm_ns), " -> ", Ms(s.predicted->exposed_comm_ns)));
    }
    if (pred_c && s.predicted_contention) {
      r.cells.push_back(Ms(s.predicted_contention->step_ns) + Flag(s));
      r.cells.push_back(SignedMs(s.measured.step_ns - s.predicted_contention->step_ns));
      r.cells.push_back(s.change_contention ? Pct(*s.change_contention) : "-");
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<ReplayRow> ReplayPathRows(const ReplayRankSummary& s) {
  std::vector<ReplayRow> rows;
  ReplayRow h{{"critical path", "replayed"}};
  if (s.predicted) h.cells.push_back("predicted");
  if (s.predicted_contention) h.cells.push_back("with contention");
  rows.push_back(h);
  auto add = [&](const char* name, int64_t rp::PathComposition::*m) {
    ReplayRow r{{name, Ms(s.replayed.path.*m)}};
    if (s.predicted) r.cells.push_back(Ms(s.predicted->path.*m));
    if (s.predicted_contention) r.cells.push_back(Ms(s.predicted_contention->path.*m));
    rows.push_back(std::move(r));
  };
  add("compute", &rp::PathComposition::compute_ns);
  add("comm", &rp::PathComposition::comm_ns);
  add("memory", &rp::PathComposition::memory_ns);
  add("host", &rp::PathComposition::host_ns);
  add("host blocked", &rp::PathComposition::blocked_ns);
  add("idle", &rp::PathComposition::idle_ns);
  return rows;
}

std::string RenderReplay(const model::Trace& t, const std::vector<std::string>& inputs, const rp::ReplayResult& r,
                         ReportFormat format) {
  const std::vector<ReplayRankSummary> ranks = SummarizeRanks(t, r, kReplayErrorFlag);
  switch (format) {
    case ReportFormat::kJson: return Json(inputs, r, ranks);
    case ReportFormat::kMarkdown: return Readable(r, ranks, true);
    case ReportFormat::kText: break;
  }
  return Readable(r, ranks, false);
}

}  // namespace overlapscope::engine
