// A device's per-iteration element, as a tree and as text (render_json_iteration.h).
#include "report/render_json_iteration.h"

#include "report/render_json_paths.h"
#include "report/render_json_text.h"

namespace overlapscope::report {

using ojson = nlohmann::ordered_json;

ojson FiguresJson(const OverlapFigures& s) {
  ojson j;
  j["comm_ns"] = s.comm_ns;
  j["hidden_comm_ns"] = s.hidden_comm_ns;
  j["exposed_comm_ns"] = s.exposed_comm_ns;
  j["overlap_ratio"] = JsonOpt(s.overlap_ratio);
  j["no_communication"] = s.comm_ns == 0;
  j["compute_ns"] = s.compute_ns;
  j["compute_share_overlapped"] = JsonOpt(s.compute_share_overlapped);
  j["contention_ns"] = s.contention_ns;
  j["net_overlap_gain_ns"] = s.net_overlap_gain_ns;
  j["overlapped_compute_instances"] = s.overlapped_compute_instances;
  j["contention_unknown_instances"] = s.contention_unknown_instances;
  j["activities"] = s.activities;
  return j;
}

ojson IterationJson(const IterationOverlap& io) {
  ojson x;
  x["iteration"] = io.iteration;
  x["gpu_start_ns"] = io.gpu_start_ns;
  x["gpu_end_ns"] = io.gpu_end_ns;
  x["cpu_start_ns"] = io.cpu_start_ns;
  x["cpu_end_ns"] = io.cpu_end_ns;
  x.update(FiguresJson(io.stats));
  ojson gaps = ojson::object();
  for (const NamedValue& g : io.gap_ns) gaps[g.name] = g.value;
  x["gap_ns"] = gaps;
  return x;
}

void AppendIterationText(const IterationOverlap& io, size_t indent, std::string* out) {
  const OverlapFigures& s = io.stats;
  ObjectText x(indent, out);
  x.Int("iteration", io.iteration)
      .Int("gpu_start_ns", io.gpu_start_ns)
      .Int("gpu_end_ns", io.gpu_end_ns)
      .Int("cpu_start_ns", io.cpu_start_ns)
      .Int("cpu_end_ns", io.cpu_end_ns)
      .Int("comm_ns", s.comm_ns)
      .Int("hidden_comm_ns", s.hidden_comm_ns)
      .Int("exposed_comm_ns", s.exposed_comm_ns)
      .OptDouble("overlap_ratio", s.overlap_ratio)
      .Bool("no_communication", s.comm_ns == 0)
      .Int("compute_ns", s.compute_ns)
      .OptDouble("compute_share_overlapped", s.compute_share_overlapped)
      .Int("contention_ns", s.contention_ns)
      .Int("net_overlap_gain_ns", s.net_overlap_gain_ns)
      .Int("overlapped_compute_instances", s.overlapped_compute_instances)
      .Int("contention_unknown_instances", s.contention_unknown_instances)
      .Int("activities", s.activities);
  ObjectText gaps = x.Object("gap_ns");
  // As the tree's `gaps[name] = value`: a name given twice keeps its first place and its last
  // value (a handful of causes: the quadratic look-up is the cheap one).
  const std::vector<NamedValue>& g = io.gap_ns;
  for (size_t i = 0; i < g.size(); ++i) {
    bool seen = false;
    for (size_t k = 0; k < i && !seen; ++k) seen = g[k].name == g[i].name;
    if (seen) continue;
    int64_t value = g[i].value;
    for (size_t k = i + 1; k < g.size(); ++k)
      if (g[k].name == g[i].name) value = g[k].value;
    gaps.Int(g[i].name, value);
  }
  gaps.Close();
  x.Close();
}

namespace {

ObjectText& ConcurrencyText(ObjectText& x, const Concurrency& c) {
  return x.Int("concurrent_ns", c.concurrent_ns).Int("a_ns", c.a_ns).Int("b_ns", c.b_ns).OptDouble("share", c.share);
}

}  // namespace

void AppendConcurrencyIterationText(const IterationConcurrency& w, size_t indent, std::string* out) {
  ObjectText x(indent, out);
  x.Int("iteration", w.iteration);
  ArrayText streams = x.Array("streams");
  for (const StreamPair& p : w.pairs.streams) {
    ObjectText e = streams.Object();
    ConcurrencyText(e.OptInt("a", p.a).OptInt("b", p.b), p.c).Close();
  }
  streams.Close();
  ArrayText groups = x.Array("groups");
  for (const GroupPair& p : w.pairs.groups) {
    ObjectText e = groups.Object();
    ConcurrencyText(e.Str("a", p.a).Str("b", p.b), p.c).Close();
  }
  groups.Close();
  x.Close();
}

}  // namespace overlapscope::report
