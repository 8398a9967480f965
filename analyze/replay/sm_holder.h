// Which kernel held the SMs a late kernel waited for (internal to analyze/replay, used by
// build_sim.cc): the replay's explanation of a start later than every recorded predecessor
// allows, from SM residency (residency.h) instead of a fallback.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/graph/graph.h"
#include "analyze/replay/build.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

class SmHolders {
 public:
  SmHolders(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a) : t_(t), g_(g), a_(a) {}
  // The kernel of another stream of v's device running at v's recorded start whose blocks fill
  // every SM and leave no room for v's (not co-resident, fewer SMs free than v occupies); -1 when
  // none (v not a kernel, or nothing such around its start). Indexes the kernels on first use.
  graph::NodeId HolderOf(graph::NodeId v);

 private:
  // Kernels of one device by recorded start, with the running maximum of their ends.
  struct DeviceKernels {
    std::vector<int64_t> start, max_end;
    std::vector<graph::NodeId> node;
  };
  void Index();

  const model::Trace& t_;
  const graph::Graph& g_;
  const NodeAttrs& a_;
  std::vector<DeviceKernels> by_device_;
  bool indexed_ = false;
};

}  // namespace overlapscope::analyze::replay
