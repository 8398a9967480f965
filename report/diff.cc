// DiffReports (report/diff.h): matching and comparing two reports. The verdict is in
// diff_verdict.cc, the gates in diff_gates.cc, the renderers in diff_render*.cc.
#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "report/diff_internal.h"
#include "report/gates.h"

namespace overlapscope::report {

std::optional<double> Delta::delta() const {
  if (!base || !test) return std::nullopt;
  return *test - *base;
}
std::optional<double> Delta::relative() const {
  if (!base || !test || *base == 0) return std::nullopt;
  return (*test - *base) / std::fabs(*base);
}

namespace diff_internal {

std::vector<double> Values(const std::map<int64_t, double>& by_iteration) {
  std::vector<double> v;
  for (const auto& [it, x] : by_iteration) v.push_back(x);
  return v;
}

SeriesDelta Series(std::string metric, std::vector<double> base, std::vector<double> test) {
  SeriesDelta s{std::move(metric), std::move(base), std::move(test), {}};
  s.judged = Judge(s.base, s.test);
  return s;
}

}  // namespace diff_internal

using namespace diff_internal;  // NOLINT

std::vector<double> StepTimes(const RankReport& rk) {
  std::map<int64_t, double> step;  // iteration -> max over GPUs
  for (const DeviceReport& d : rk.devices) {
    std::optional<int64_t> prev_end;
    for (const IterationOverlap& it : d.iterations) {
      const int64_t from = prev_end ? std::max(it.gpu_start_ns, *prev_end) : it.gpu_start_ns;
      const double t = static_cast<double>(std::max<int64_t>(0, it.gpu_end_ns - from));
      auto [pos, added] = step.try_emplace(it.iteration, t);
      if (!added) pos->second = std::max(pos->second, t);
      prev_end = std::max(prev_end.value_or(it.gpu_end_ns), it.gpu_end_ns);
    }
  }
  return Values(step);
}

namespace {

std::optional<double> StepTime(const RankReport& rk) {
  std::vector<double> v = StepTimes(rk);
  if (v.empty()) return std::nullopt;
  return MedianOf(v);
}

std::vector<MetricDelta> SummaryDeltas(const RankReport& b, const RankReport& t) {
  std::vector<MetricDelta> out{{"step_time_ns", false, {StepTime(b), StepTime(t)}}};
  auto value = [](const Metric& m) -> std::optional<double> {
    if (m.is_ratio) return m.ratio;
    if (m.absent) return std::nullopt;
    return static_cast<double>(m.integer);
  };
  const std::vector<Metric> bm = SummaryMetrics(b.summary), tm = SummaryMetrics(t.summary);
  for (const Metric& m : tm) {
    if (m.name == "step_time_ns") continue;  // the summary's copy (1.9) of the figure above
    auto it = std::find_if(bm.begin(), bm.end(), [&](const Metric& x) { return x.name == m.name; });
    out.push_back({m.name, m.is_ratio, {it == bm.end() ? std::nullopt : value(*it), value(m)}});
  }
  for (const Metric& m : bm)
    if (m.name != "step_time_ns" &&
        std::none_of(tm.begin(), tm.end(), [&](const Metric& x) { return x.name == m.name; }))
      out.push_back({m.name, m.is_ratio, {value(m), std::nullopt}});
  return out;
}

// Per-iteration figures of a rank, summed over its GPUs: overlap, and idle time by cause (absent
// from reports before 1.7: `has_gaps` false).
struct IterationFigures {
  OverlapFigures f;
  std::vector<NamedValue> gap_ns;  // in the report's cause order
};

void AddTo(std::vector<NamedValue>* v, const NamedValue& x) {
  for (NamedValue& y : *v)
    if (y.name == x.name) {
      y.value += x.value;
      return;
    }
  v->push_back(x);
}
std::map<int64_t, IterationFigures> ByIteration(const RankReport& rk, bool* has_gaps) {
  std::map<int64_t, IterationFigures> m;
  *has_gaps = false;
  for (const DeviceReport& d : rk.devices)
    for (const IterationOverlap& it : d.iterations) {
      IterationFigures& x = m[it.iteration];
      x.f.comm_ns += it.stats.comm_ns;
      x.f.hidden_comm_ns += it.stats.hidden_comm_ns;
      x.f.exposed_comm_ns += it.stats.exposed_comm_ns;
      x.f.compute_ns += it.stats.compute_ns;
      x.f.contention_ns += it.stats.contention_ns;
      for (const NamedValue& g : it.gap_ns) AddTo(&x.gap_ns, g);
      *has_gaps = *has_gaps || !it.gap_ns.empty();
    }
  return m;
}

std::vector<double> Column(const std::map<int64_t, IterationFigures>& m, const std::string& k) {
  std::vector<double> v;
  for (const auto& [it, x] : m) {
    const OverlapFigures& f = x.f;
    if (k == "comm_ns")
      v.push_back(static_cast<double>(f.comm_ns));
    else if (k == "hidden_comm_ns")
      v.push_back(static_cast<double>(f.hidden_comm_ns));
    else if (k == "exposed_comm_ns")
      v.push_back(static_cast<double>(f.exposed_comm_ns));
    else if (k == "compute_ns")
      v.push_back(static_cast<double>(f.compute_ns));
    else if (k == "contention_ns")
      v.push_back(static_cast<double>(f.contention_ns));
    else if (k == "overlap_ratio" && f.comm_ns > 0)
      v.push_back(static_cast<double>(f.hidden_comm_ns) / static_cast<double>(f.comm_ns));
  }
  return v;
}

// Gap time of `cause` per iteration (0 where the iteration had none of it).
std::vector<double> GapColumn(const std::map<int64_t, IterationFigures>& m, const std::string& cause) {
  std::vector<double> v;
  for (const auto& [it, x] : m) {
    double ns = 0;
    for (const NamedValue& g : x.gap_ns)
      if (g.name == cause) ns = static_cast<double>(g.value);
    v.push_back(ns);
  }
  return v;
}

// The rank's own critical path length per iteration (METRICS §8), in iteration order.
std::vector<double> CriticalPathColumn(const Report& r, const RankReport& rk) {
  std::vector<double> v;
  for (const IterationCriticalPath& it : r.critical_path.per_iteration) {
    if (!it.iteration) continue;  // a whole-trace path (no iterations)
    for (const RankPath& own : it.own)
      if (rk.rank ? own.rank == rk.rank : own.label == rk.label) {
        v.push_back(static_cast<double>(own.composition.length_ns));
        break;
      }
  }
  return v;
}

std::vector<SeriesDelta> IterationSeries(const Report& br, const RankReport& b, const Report& tr, const RankReport& t) {
  bool b_gaps = false, t_gaps = false;
  const auto bi = ByIteration(b, &b_gaps), ti = ByIteration(t, &t_gaps);
  std::vector<SeriesDelta> out{Series("step_time_ns", StepTimes(b), StepTimes(t))};
  for (const char* m : {"comm_ns", "hidden_comm_ns", "exposed_comm_ns", "overlap_ratio", "compute_ns", "contention_ns"})
    out.push_back(Series(m, Column(bi, m), Column(ti, m)));
  if (b_gaps && t_gaps) {
    std::vector<std::string> causes;
    for (const auto* side : {&bi, &ti})
      for (const auto& [it, x] : *side)
        for (const NamedValue& g : x.gap_ns)
          if (std::find(causes.begin(), causes.end(), g.name) == causes.end()) causes.push_back(g.name);
    for (const std::string& c : causes) out.push_back(Series("gap_" + c + "_ns", GapColumn(bi, c), GapColumn(ti, c)));
  }
  std::vector<double> bc = CriticalPathColumn(br, b), tc = CriticalPathColumn(tr, t);
  if (!bc.empty() || !tc.empty()) out.push_back(Series("critical_path_ns", std::move(bc), std::move(tc)));
  return out;
}

// Index of the base rank matching test rank `t`: same rank id; else (neither has one) the same
// first GPU; else the same position.
std::optional<size_t> MatchRank(const Report& base, const RankReport& t, size_t t_index, std::vector<bool>* used,
                                std::string* by) {
  auto first_gpu = [](const RankReport& r) -> std::optional<int64_t> {
    if (r.devices.empty()) return std::nullopt;
    return r.devices.front().device;
  };
  auto take = [&](size_t i, const char* how) {
    *by = how;
    (*used)[i] = true;
    return std::optional<size_t>(i);
  };
  for (size_t i = 0; i < base.ranks.size(); ++i)
    if (!(*used)[i] && t.rank && base.ranks[i].rank == t.rank) return take(i, "rank");
  if (t.rank) return std::nullopt;
  for (size_t i = 0; i < base.ranks.size(); ++i)
    if (!(*used)[i] && !base.ranks[i].rank && first_gpu(t) && first_gpu(base.ranks[i]) == first_gpu(t))
      return take(i, "gpu");
  if (t_index < base.ranks.size() && !(*used)[t_index] && !base.ranks[t_index].rank) return take(t_index, "order");
  return std::nullopt;
}

}  // namespace

ReportDiff DiffReports(const Report& base, const Report& test, const DiffInfo& info) {
  ReportDiff d;
  for (const ImportWarning& w : base.warnings) d.warnings.push_back("BASE: " + w.message);
  for (const ImportWarning& w : test.warnings) d.warnings.push_back("TEST: " + w.message);
  d.base_inputs = base.inputs;
  d.test_inputs = test.inputs;
  d.base_schema_version = info.base_schema_version;
  d.test_schema_version = info.test_schema_version;
  d.base_iterations = base.iterations.count;
  d.test_iterations = test.iterations.count;
  std::vector<bool> used(base.ranks.size(), false);
  std::vector<std::pair<const RankReport*, const RankReport*>> pairs;
  for (size_t i = 0; i < test.ranks.size(); ++i) {
    const RankReport& t = test.ranks[i];
    std::string by;
    std::optional<size_t> b = MatchRank(base, t, i, &used, &by);
    if (!b) {
      d.only_in_test.push_back(t.label);
      continue;
    }
    const RankReport& br = base.ranks[*b];
    d.ranks.push_back({t.label, t.rank, by, SummaryDeltas(br, t), IterationSeries(base, br, test, t)});
    pairs.push_back({&br, &t});
  }
  for (size_t i = 0; i < base.ranks.size(); ++i)
    if (!used[i]) d.only_in_base.push_back(base.ranks[i].label);
  d.kernels = DiffKernels(base, test, &d.top_kernels_limited);
  d.classes = DiffClasses(base, test);
  d.collectives = DiffCollectives(base, test);
  d.verdict = BuildVerdict(base, test, pairs, d);
  return d;
}

}  // namespace overlapscope::report
