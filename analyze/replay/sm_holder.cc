#include "analyze/replay/sm_holder.h"

#include <algorithm>
#include <utility>

#include "analyze/graph/device_sms.h"
#include "analyze/replay/residency.h"

namespace overlapscope::analyze::replay {

void SmHolders::Index() {
  indexed_ = true;
  by_device_.resize(t_.devices().size());
  std::vector<std::vector<std::pair<int64_t, graph::NodeId>>> by_dev(t_.devices().size());
  for (graph::NodeId u = 0; u < g_.num_gpu(); ++u)
    if (a_.device[u] >= 0 && g_.Ref(u).kind == model::GpuKind::kKernel)
      by_dev[a_.device[u]].push_back({g_.StartNs(u), u});
  for (size_t d = 0; d < by_dev.size(); ++d) {
    std::sort(by_dev[d].begin(), by_dev[d].end());
    DeviceKernels& ix = by_device_[d];
    int64_t m = INT64_MIN;
    for (const auto& [st, u] : by_dev[d]) {
      ix.start.push_back(st);
      ix.node.push_back(u);
      ix.max_end.push_back(m = std::max(m, g_.EndNs(u)));
    }
  }
}

graph::NodeId SmHolders::HolderOf(graph::NodeId v) {
  const model::GpuRef r = g_.Ref(v);
  const model::DeviceId d = a_.device[v];
  if (r.kind != model::GpuKind::kKernel || d < 0) return -1;
  if (!indexed_) Index();
  const DeviceKernels& ix = by_device_[d];
  const BlockFootprint mine = FootprintOfKernel(t_.kernels()[r.index]);
  const int32_t sms = graph::DeviceSmCount(t_, d);
  const int64_t at = g_.StartNs(v);
  auto it = std::lower_bound(ix.start.begin(), ix.start.end(), at);
  for (auto j = it - ix.start.begin() - 1; j >= 0 && ix.max_end[j] > at; --j) {
    const graph::NodeId k = ix.node[j];
    if (g_.EndNs(k) <= at || g_.Stream(k) == g_.Stream(v)) continue;
    const BlockFootprint holder = FootprintOfKernel(t_.kernels()[g_.Ref(k).index]);
    if (FitsBeside(holder, mine) || sms - SmsOccupied(holder, sms) >= SmsOccupied(mine, sms)) continue;
    return k;
  }
  return -1;
}

}  // namespace overlapscope::analyze::replay
