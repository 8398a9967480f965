// The indexes the evidence rule's search reads (graph_builder.h BuildInferIndexes,
// BuildThreadCalls, BuildThreadOps), built at once before the search (graph_infer.cc).
#include <algorithm>
#include <vector>

#include "analyze/graph/graph_builder.h"
#include "base/run_all.h"

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

// In ranges of the calls at once: each range counts its calls per thread, the counts give each
// range its place in every thread's list, then each range writes its calls there. The lists are
// those of one pass in call order, at any thread count.
void GraphBuilder::BuildThreadCalls() {
  const auto& calls = t_.api_calls();
  const size_t nt = t_.threads().size(), n = calls.size();
  const size_t parts = std::max<size_t>(
      1, std::min<size_t>(static_cast<size_t>(std::max(in_.threads, 1)), n / std::max<size_t>(in_.min_chunk, 1)));
  auto on_thread = [&](size_t i) { return calls[i].thread != kNone && static_cast<size_t>(calls[i].thread) < nt; };
  // at[k][th]: first the count of range k's calls on thread th, then their place in its list.
  std::vector<std::vector<size_t>> at(parts, std::vector<size_t>(nt, 0)), wat(parts, std::vector<size_t>(nt, 0));
  base::ParallelFor(in_.threads, parts, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      for (size_t i = n * k / parts; i < n * (k + 1) / parts; ++i)
        if (on_thread(i)) {
          ++at[k][calls[i].thread];
          if (calls[i].semantic == model::ApiSemantic::kStreamWait) ++wat[k][calls[i].thread];
        }
  });
  thread_calls_.assign(nt, {});
  thread_waits_.assign(nt, {});
  for (size_t th = 0; th < nt; ++th) {
    size_t total = 0, wtotal = 0;
    for (size_t k = 0; k < parts; ++k) {
      const size_t c = at[k][th], w = wat[k][th];
      at[k][th] = total, wat[k][th] = wtotal;
      total += c, wtotal += w;
    }
    thread_calls_[th].resize(total);
    thread_waits_[th].resize(wtotal);
  }
  base::ParallelFor(in_.threads, parts, 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      for (size_t i = n * k / parts; i < n * (k + 1) / parts; ++i)
        if (on_thread(i)) {
          const model::ThreadId th = calls[i].thread;
          thread_calls_[th][at[k][th]++] = static_cast<int32_t>(i);
          if (calls[i].semantic == model::ApiSemantic::kStreamWait)
            thread_waits_[th][wat[k][th]++] = static_cast<int32_t>(i);
        }
  });
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
