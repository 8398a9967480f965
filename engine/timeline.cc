// engine::IterationTimelines (engine/timeline.h).
#include "engine/timeline.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "analyze/analysis.h"
#include "engine/session_state.h"
#include "model/trace.h"

namespace overlapscope::engine {
namespace {

// Class of each (kind, name) from the classification summary.
using ClassKey = std::pair<int, model::StringId>;

struct Window {
  model::ProcessId process;
  int64_t start_ns, end_ns;
};

template <typename V>
void Collect(const model::Trace& t, const V& acts, model::GpuKind kind, const std::map<ClassKey, std::string>& cls,
             const Window& w, std::map<std::pair<int64_t, int64_t>, report::TimelineRow>* rows) {
  for (const auto& a : acts) {
    if (a.end_ns <= w.start_ns || a.start_ns >= w.end_ns) continue;
    if (a.device < 0 || static_cast<size_t>(a.device) >= t.devices().size()) continue;
    const model::Device& dev = t.devices()[a.device];
    if (dev.process != w.process) continue;
    const int64_t stream =
        (a.stream >= 0 && static_cast<size_t>(a.stream) < t.streams().size()) ? t.streams()[a.stream].native_id : -1;
    report::TimelineRow& row = (*rows)[{dev.ordinal, stream}];
    if (row.label.empty()) row.label = absl::StrCat("GPU ", dev.ordinal, " stream ", stream);
    auto c = cls.find({static_cast<int>(kind), a.name});
    row.slices.push_back({a.start_ns, a.end_ns, c == cls.end() ? "compute" : c->second, std::string(t.str(a.name))});
  }
}

// Keeps the longest `max_slices` slices of the timeline.
void Limit(report::RankTimeline* tl, size_t max_slices) {
  size_t n = 0;
  for (const auto& r : tl->rows) n += r.slices.size();
  if (n <= max_slices) return;
  std::vector<int64_t> d;
  for (const auto& r : tl->rows)
    for (const auto& s : r.slices) d.push_back(s.end_ns - s.start_ns);
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(max_slices - 1), d.end(), std::greater<>());
  const int64_t cut = d[max_slices - 1];
  size_t kept = 0;
  for (auto& r : tl->rows) {
    auto keep = [&](const report::TimelineSlice& s) { return s.end_ns - s.start_ns >= cut && kept++ < max_slices; };
    std::vector<report::TimelineSlice> out;
    for (const auto& s : r.slices)
      if (keep(s)) out.push_back(s);
    r.slices = std::move(out);
  }
  tl->dropped = static_cast<int64_t>(n - kept);
}

}  // namespace

std::vector<report::RankTimeline> IterationTimelines(const Analysis& analysis, size_t max_slices) {
  std::vector<report::RankTimeline> out;
  const model::Trace& t = analysis.session().trace();
  const analyze::AnalysisResult& res = analysis.result();
  std::map<ClassKey, std::string> cls;
  for (const analyze::ClassExplanation& e : res.classes.names)
    cls[{static_cast<int>(e.kind), e.name}] = std::string(analyze::ToString(e.cls));
  for (const report::RankReport& rk : analysis.report().ranks) {
    bool found = false;
    const int64_t number = report::MedianIterationNumber(rk, &found);
    if (!found) continue;
    report::RankTimeline tl{rk.label, number, INT64_MAX, INT64_MIN, {}, 0};
    for (const report::DeviceReport& d : rk.devices)
      for (const report::IterationOverlap& it : d.iterations)
        if (it.iteration == number) {
          tl.start_ns = std::min(tl.start_ns, it.gpu_start_ns);
          tl.end_ns = std::max(tl.end_ns, it.gpu_end_ns);
        }
    model::ProcessId process = model::kNone;
    for (size_t p = 0; p < t.processes().size(); ++p)
      if (t.processes()[p].pid == rk.pid) process = static_cast<model::ProcessId>(p);
    if (process == model::kNone || tl.start_ns >= tl.end_ns) continue;
    const Window w{process, tl.start_ns, tl.end_ns};
    std::map<std::pair<int64_t, int64_t>, report::TimelineRow> rows;
    Collect(t, t.kernels(), model::GpuKind::kKernel, cls, w, &rows);
    Collect(t, t.memcpys(), model::GpuKind::kMemcpy, cls, w, &rows);
    Collect(t, t.memsets(), model::GpuKind::kMemset, cls, w, &rows);
    for (auto& [key, row] : rows) tl.rows.push_back(std::move(row));
    Limit(&tl, max_slices);
    out.push_back(std::move(tl));
  }
  return out;
}

}  // namespace overlapscope::engine
