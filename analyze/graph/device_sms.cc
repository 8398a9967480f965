#include "analyze/graph/device_sms.h"

#include <algorithm>
#include <string_view>

namespace overlapscope::analyze::graph {

int DeviceSmCount(const model::Trace& t, model::DeviceId d) {
  if (d < 0 || d >= static_cast<model::DeviceId>(t.devices().size())) return 132;
  const std::string_view n = t.str(t.devices()[d].name);
  if (n.find("A100") != n.npos || n.find("A800") != n.npos) return 108;
  if (n.find("B200") != n.npos) return 148;
  return 132;
}

bool GridFillsDevice(const model::Trace& t, const model::Kernel& k) {
  const int64_t blocks = int64_t{k.grid.x} * k.grid.y * k.grid.z;
  return blocks > 0 && blocks >= DeviceSmCount(t, k.device);
}

NodeId SmHolderAt(const model::Trace& t, const Graph& g, NodeId n, int64_t ready, int64_t c) {
  if (ready == INT64_MIN || c - ready < kSmHoldMinNs) return model::kNone;
  if (!g.IsGpu(n) || g.Ref(n).kind != model::GpuKind::kKernel) return model::kNone;
  // Without its grid (a trace that records none) nothing can be said of whose SMs it needed; and
  // the check spares the searches below where no kernel carries one.
  const model::Dim3& grid = t.kernels()[g.Ref(n).index].grid;
  if (int64_t{grid.x} * grid.y * grid.z <= 0) return model::kNone;
  const model::StreamId own = g.Stream(n);
  const model::DeviceId dev = t.streams()[own].device;
  if (dev == model::kNone) return model::kNone;
  NodeId best = model::kNone;
  for (const model::StreamId s : g.DeviceStreams(dev)) {
    if (s == own) continue;
    // The stream's last activity starting before c: its activities run in order, so it is the
    // one that can still be running at c.
    NodeId lo = g.StreamBegin(s), hi = g.StreamEnd(s);
    while (lo < hi) {
      const NodeId mid = lo + (hi - lo) / 2;
      if (g.StartNs(mid) < c)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == g.StreamBegin(s)) continue;
    const NodeId k = lo - 1;
    if (g.EndNs(k) + kSmHoldAfterEndNs < c || g.StartNs(k) > c - kSmHoldMinNs) continue;
    const model::GpuRef r = g.Ref(k);
    if (r.kind != model::GpuKind::kKernel || !GridFillsDevice(t, t.kernels()[r.index])) continue;
    if (best == model::kNone || g.EndNs(k) > g.EndNs(best)) best = k;
  }
  return best;
}

}  // namespace overlapscope::analyze::graph
