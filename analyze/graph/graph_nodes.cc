// The GPU nodes of BuildGraph (graph_builder.h SizeNodes, AddGpuNodes): the nodes' vectors
// sized, then filled in ranges of nodes with their stream-order and launch flags.
#include <algorithm>
#include <mutex>
#include <vector>

#include "analyze/graph/graph_builder.h"
#include "base/run_all.h"

namespace overlapscope::analyze::graph {

using model::GpuRef;
using model::kNone;

void GraphBuilder::SizeNodes() {
  const model::Trace& t = t_;
  const size_t ns = t.streams().size();
  g_.num_api_ = static_cast<int32_t>(t.api_calls().size());
  g_.api_ = t.api_calls().data();
  // Nodes in stream order, each stream's activities in their order: node n of stream s is
  // activity n - stream_off_[s] of StreamActivities(s). Activities without a stream are not in
  // StreamActivities; they stay out of the graph (GpuNode gives kNone for them).
  g_.stream_off_.assign(ns + 1, 0);
  for (size_t s = 0; s < ns; ++s)
    g_.stream_off_[s + 1] =
        g_.stream_off_[s] + static_cast<NodeId>(t.StreamActivities(static_cast<model::StreamId>(s)).size());
  // Per device, its streams with nodes (SmHolderAt looks at a device's streams only).
  const size_t nd = t.devices().size();
  g_.device_stream_off_.assign(nd + 1, 0);
  auto device_of = [&](size_t s) -> size_t {
    const model::DeviceId d = t.streams()[s].device;
    return d >= 0 && static_cast<size_t>(d) < nd && g_.stream_off_[s + 1] > g_.stream_off_[s] ? static_cast<size_t>(d)
                                                                                              : nd;
  };
  for (size_t s = 0; s < ns; ++s)
    if (const size_t d = device_of(s); d < nd) ++g_.device_stream_off_[d + 1];
  for (size_t d = 0; d < nd; ++d) g_.device_stream_off_[d + 1] += g_.device_stream_off_[d];
  g_.device_streams_.resize(static_cast<size_t>(g_.device_stream_off_[nd]));
  {
    std::vector<int32_t> fill(g_.device_stream_off_.begin(), g_.device_stream_off_.end() - 1);
    for (size_t s = 0; s < ns; ++s)
      if (const size_t d = device_of(s); d < nd) g_.device_streams_[fill[d]++] = static_cast<model::StreamId>(s);
  }
  // The node vectors (~40 bytes a node, 40-50 MB on the 500 MB trace: their pages are faulted in
  // as they are zeroed) each on its own at once: a serial step at the start of the graph's chain.
  const size_t total = static_cast<size_t>(g_.stream_off_[ns]);
  base::RunAll(
      in_.threads,
      {[&] { g_.flat_[0].assign(t.kernels().size(), kNone); }, [&] { g_.flat_[1].assign(t.memcpys().size(), kNone); },
       [&] { g_.flat_[2].assign(t.memsets().size(), kNone); }, [&] { g_.gpu_ref_.resize(total); },
       [&] { g_.gpu_stream_.resize(total); }, [&] { g_.gpu_name_.resize(total); }, [&] { g_.gpu_coll_.resize(total); },
       [&] { g_.start_.resize(total); }, [&] { g_.end_.resize(total); }, [&] { launch_.resize(total); },
       // the GPU nodes' flags, then the calls'
       [&] { bulk_.assign(total + t.api_calls().size(), 0); }});
}

void GraphBuilder::AddGpuNodes() {
  const model::Trace& t = t_;
  const size_t ns = t.streams().size();
  const size_t total = static_cast<size_t>(g_.stream_off_[ns]);
  // The bulk edges of the nodes are made here, while their times are at hand, and counted per
  // stream (graph.h's forward rule for kStreamOrder and kLaunch: from.start <= to.start): in
  // ranges of nodes at once, each range's counts per stream summed after.
  enum { kStreamEdges, kLaunchEdges, kBackward, kWithoutLaunch, kCounts };
  std::vector<std::vector<int64_t>> counts;
  std::mutex mu;
  base::ParallelFor(
      in_.threads, total, static_cast<size_t>(std::max(1, in_.min_chunk)) * 16, [&](size_t lo, size_t hi) {
        std::vector<int64_t> c(ns * kCounts, 0);
        size_t s = static_cast<size_t>(
                       std::upper_bound(g_.stream_off_.begin(), g_.stream_off_.end(), static_cast<NodeId>(lo)) -
                       g_.stream_off_.begin()) -
                   1;
        for (size_t n = lo; n < hi; ++n) {
          while (static_cast<size_t>(g_.stream_off_[s + 1]) <= n) ++s;
          const NodeId begin = g_.stream_off_[s];
          const absl::Span<const GpuRef> acts = t.StreamActivities(static_cast<model::StreamId>(s));
          const GpuRef r = acts[n - static_cast<size_t>(begin)];
          const int64_t start = t.StartNs(r);
          const int32_t call = t.LaunchOf(r);
          int64_t* k = &c[s * kCounts];
          uint8_t bulk = 0;
          if (static_cast<NodeId>(n) > begin && t.StartNs(acts[n - static_cast<size_t>(begin) - 1]) <= start) {
            bulk |= kBulkStream;
            ++k[kStreamEdges];
          } else if (static_cast<NodeId>(n) > begin) {
            ++k[kBackward];
          }
          if (call == kNone) {
            ++k[kWithoutLaunch];
          } else if (g_.api_[call].start_ns <= start) {
            bulk |= kBulkLaunch;
            ++k[kLaunchEdges];
          } else {
            ++k[kBackward];
          }
          g_.flat_[static_cast<int>(r.kind)][r.index] = static_cast<NodeId>(n);
          g_.gpu_ref_[n] = r;
          g_.gpu_stream_[n] = static_cast<model::StreamId>(s);
          // The name and collective ride along: the activity's record was just read for its times.
          g_.gpu_name_[n] = t.NameOf(r);
          g_.gpu_coll_[n] = t.CollectiveOf(r);
          g_.start_[n] = start;
          g_.end_[n] = t.EndNs(r);
          launch_[n] = call;
          bulk_[n] = bulk;
        }
        std::lock_guard<std::mutex> lock(mu);
        counts.push_back(std::move(c));
      });
  for (size_t s = 0; s < ns; ++s) {
    GraphStats& st = ProcessStats(stream_proc_[s]);
    for (const std::vector<int64_t>& c : counts) {
      st.recorded[static_cast<int>(EdgeKind::kStreamOrder)] += c[s * kCounts + kStreamEdges];
      st.recorded[static_cast<int>(EdgeKind::kLaunch)] += c[s * kCounts + kLaunchEdges];
      st.backward_edges += c[s * kCounts + kBackward];
      st.gpu_without_launch += c[s * kCounts + kWithoutLaunch];
    }
  }
}

}  // namespace overlapscope::analyze::graph
