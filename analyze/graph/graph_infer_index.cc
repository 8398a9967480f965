// The indexes the evidence rule's search reads (graph_builder.h BuildInferIndexes,
// BuildThreadCalls, BuildThreadOps), built at once before the search (graph_infer.cc).
#include <algorithm>
#include <vector>

#include "analyze/graph/graph_builder.h"

namespace overlapscope::analyze::graph {

using model::kNone;

void GraphBuilder::BuildInferIndexes() {
  const auto& calls = t_.api_calls();
  call_node_.assign(calls.size(), kNone);
  for (NodeId n = 0; n < g_.num_gpu(); ++n)
    if (launch_[n] != kNone) call_node_[launch_[n]] = std::max(call_node_[launch_[n]], n);
  dev_streams_.assign(t_.devices().size(), {});
  for (size_t s = 0; s < t_.streams().size(); ++s)
    if (model::DeviceId d = t_.streams()[s].device; d != kNone && static_cast<size_t>(d) < dev_streams_.size())
      dev_streams_[d].push_back(static_cast<model::StreamId>(s));
}

void GraphBuilder::BuildThreadCalls() {
  const auto& calls = t_.api_calls();
  thread_calls_.assign(t_.threads().size(), {});
  thread_waits_.assign(t_.threads().size(), {});
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].thread != kNone && static_cast<size_t>(calls[i].thread) < thread_calls_.size()) {
      thread_calls_[calls[i].thread].push_back(static_cast<int32_t>(i));
      if (calls[i].semantic == model::ApiSemantic::kStreamWait)
        thread_waits_[calls[i].thread].push_back(static_cast<int32_t>(i));
    }
}

void GraphBuilder::BuildThreadOps() {
  thread_ops_.assign(t_.threads().size(), {});
  for (const model::Range& r : t_.ranges())
    if (r.kind == model::RangeKind::kCpuOp && r.thread != kNone && static_cast<size_t>(r.thread) < thread_ops_.size())
      thread_ops_[r.thread].push_back({r.start_ns, r.end_ns});
  for (auto& v : thread_ops_)
    if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
}

}  // namespace overlapscope::analyze::graph
