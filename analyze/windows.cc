// The analysis windows of each process (windows.h).
#include <algorithm>
#include <utility>

#include "analyze/context.h"

namespace overlapscope::analyze {
bool Context::InWindows(model::ProcessId p, int64_t start_ns, int64_t end_ns) const {
  if (!Windowed(p)) return true;
  for (int32_t i = process_windows[p].first; i < process_windows[p].second; ++i) {
    const WindowFigures& w = windows[i];
    if (start_ns < w.end_ns && end_ns > w.start_ns) return true;
    if (start_ns == end_ns && start_ns >= w.start_ns && start_ns < w.end_ns) return true;
  }
  return false;
}

void PrepareWindows(Context& ctx) {
  const model::Trace& t = ctx.t;
  const size_t np = t.processes().size();
  ctx.process_windows.assign(np, {0, 0});
  ctx.windows.clear();
  if (t.windows().empty()) return;
  // Per process: every GPU activity as (start, end, launch call start or INT64_MAX).
  struct Act {
    int64_t start, end, launch;
    model::GpuKind kind;
  };
  std::vector<std::vector<Act>> acts(np);
  auto collect = [&](const auto& v, const std::vector<int32_t>& launch, model::GpuKind kind) {
    for (size_t i = 0; i < v.size(); ++i) {
      const int64_t l = launch[i] != model::kNone ? t.api_calls()[launch[i]].start_ns : INT64_MAX;
      acts[t.ProcessOfDevice(v[i].device)].push_back({v[i].start_ns, v[i].end_ns, l, kind});
    }
  };
  collect(t.kernels(), ctx.kernel_launch, model::GpuKind::kKernel);
  collect(t.memcpys(), ctx.memcpy_launch, model::GpuKind::kMemcpy);
  collect(t.memsets(), ctx.memset_launch, model::GpuKind::kMemset);
  for (auto& v : acts) std::sort(v.begin(), v.end(), [](const Act& a, const Act& b) { return a.start < b.start; });

  size_t wi = 0;
  const auto& cw = t.windows();  // sorted by (process, start)
  for (size_t p = 0; p < np; ++p) {
    ctx.process_windows[p].first = static_cast<int32_t>(ctx.windows.size());
    for (; wi < cw.size() && cw[wi].process == static_cast<model::ProcessId>(p); ++wi) {
      const model::CaptureWindow& c = cw[wi];
      WindowFigures w;
      w.process = c.process, w.index = c.index, w.trigger = c.trigger, w.name = c.name;
      w.capture_start_ns = c.start_ns, w.capture_end_ns = c.end_ns;
      w.start_ns = c.start_ns;
      const int64_t next = wi + 1 < cw.size() && cw[wi + 1].process == c.process ? cw[wi + 1].start_ns : INT64_MAX;
      const std::vector<Act>& a = acts[p];
      // Activities that started inside the capture window (before the next one opened).
      auto lo = std::lower_bound(a.begin(), a.end(), c.start_ns, [](const Act& x, int64_t s) { return x.start < s; });
      auto hi =
          std::lower_bound(lo, a.end(), std::min(c.end_ns, next), [](const Act& x, int64_t s) { return x.start < s; });
      int64_t end = c.end_ns;
      for (auto it = lo; it != hi; ++it) end = std::max(end, std::min(it->end, next));
      if (c.trigger == model::WindowTrigger::kProcess && lo != hi) {
        // No capture range: the figures start with the first kernel (at its launch call, which
        // runs before it), or with the first GPU activity when the process ran no kernel. Copies
        // before the first kernel are start-up too: a PyTorch program uploads its weights, then
        // spends seconds loading modules and building things before it computes (measured:
        // docs/PERFORMANCE.md), and none of that is an idle GPU waiting for a blocked host.
        auto first = std::find_if(lo, hi, [](const Act& x) { return x.kind == model::GpuKind::kKernel; });
        if (first == hi) first = lo;
        w.start_ns = std::max(c.start_ns, std::min(first->start, first->launch));
        w.startup_excluded_ns = w.start_ns - c.start_ns;
        lo = std::lower_bound(lo, hi, w.start_ns, [](const Act& x, int64_t s) { return x.start < s; });
      }
      w.end_ns = std::max(end, w.start_ns);
      for (auto it = lo; it != hi; ++it) {
        w.kernels += it->kind == model::GpuKind::kKernel;
        w.memcpys += it->kind == model::GpuKind::kMemcpy;
        w.memsets += it->kind == model::GpuKind::kMemset;
      }
      ctx.windows.push_back(w);
    }
    ctx.process_windows[p].second = static_cast<int32_t>(ctx.windows.size());
  }
}

}  // namespace overlapscope::analyze
