// The dependency graph of a trace (METRICS.md §8), built once per trace and read by every pass
// that follows dependencies: the critical path and straggler causes walk it backwards, the GPU
// idle causes and sync points read its wait edges, replay and what-if (analyze/replay) run it
// forwards.
//
// Nodes are flat indexes:
//   [0, num_gpu)                 GPU activities (kernels, memcpys, memsets), stream by stream in
//                                Trace::StreamActivities order: a stream's activities are
//                                contiguous, so the stream predecessor of g is g - 1 when
//                                stream_begin(stream(g)) < g;
//   [num_gpu, num_gpu + num_api) host API calls, node = num_gpu + index into Trace::api_calls().
// Edges are typed and each is recorded (both ends linked by the trace: correlation id, event
// record id, Kineto cuda_sync with wait_on_cuda_event_record_corr_id, our captures' event
// records) or inferred (METRICS §8 "inferred edges": a cross-stream wait that the trace does not
// link, placed from the evidence rule; never shown as recorded). The bulk edges (program order,
// stream order, launch: one or two per node) are kept as a flag byte per node and made on the fly
// by Preds; the few cross edges (waits, host releases, peers) are kept twice, by target and by
// source (about 2 bytes a node instead of ~28 for compressed rows of every edge: the build was
// mostly first touches of fresh memory).
//
// Every edge goes forward in recorded time; an edge that would not is not added and is counted
// (GraphStats::backward_edges). Successors are kept only for the kinds that cross lanes
// (CrossSuccs). Forward, per kind:
//   kProgramOrder, inferred kEventWait   from.end <= to.start
//   kStreamOrder, kLaunch                from.start <= to.start (a stream's recorded activities
//                                        can overlap by a clock tick: the edge stays)
//   recorded kEventWait                  from.start < to.start or from.end <= to.start (the
//                                        binding time is min(from.end, to.start))
//   kHostRelease                         from.end <= to.end (the call returned after the work)
//   kPeer                                from.start <= to.end
// Units: *_ns int64 nanoseconds on the trace clock. Never fails: what cannot be joined is counted
// in GraphStats, never guessed.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/types/span.h"
#include "model/trace.h"

namespace overlapscope::analyze::graph {

using NodeId = int32_t;

enum class EdgeKind : uint8_t {
  kProgramOrder,  // API call -> the next outermost API call of the same thread (host work between)
  kStreamOrder,   // GPU activity -> the next activity on its stream
  kLaunch,        // launch/copy/memset call -> the activity it enqueued (correlation id; a graph
                  // launch -> every kernel of that launch)
  kEventWait,     // GPU activity (the last one the recording stream had enqueued before the
                  // event record) -> the first activity enqueued on the waiting stream after
                  // the stream wait
  kHostRelease,   // GPU activity -> the blocking host call (METRICS §3) its completion released
  kPeer,          // collective: the last-arriving participant's first carrying activity -> each
                  // other participant's first carrying activity (METRICS §6 arrivals)
};
inline constexpr int kEdgeKinds = 6;
// "program-order", "stream-order", "launch", "event-wait", "host-release", "peer"
std::string_view ToString(EdgeKind k);

struct Edge {
  NodeId from = model::kNone, to = model::kNone;
  EdgeKind kind = EdgeKind::kStreamOrder;
  bool inferred = false;
};

// One cross-stream wait edge with what placed it: the stream-wait call (and its sync record
// when recorded). Graph::waits() lists them in the order they were added.
struct WaitEdge {
  NodeId from = model::kNone, to = model::kNone;  // GPU nodes: the awaited activity, the waiting one
  int32_t api_call = model::kNone;  // the stream-wait call (index into Trace::api_calls()), kNone if unknown
  int32_t sync = model::kNone;      // recorded: its index into Trace::syncs(); kNone when inferred
  bool inferred = false;
};

// Declared counts of what the builder joined, inferred or could not join (like the import
// statistics: every output prints them, recorded and inferred apart).
struct GraphStats {
  int64_t recorded[kEdgeKinds] = {};  // edges by kind, recorded
  int64_t inferred[kEdgeKinds] = {};  // edges by kind, inferred (only kEventWait today)
  int64_t waits_recorded = 0;         // cross-stream waits the trace links (cuda_sync / capture)
  int64_t waits_inferred = 0;         // placed by the evidence rule
  // Of waits_inferred, placed by the host's call order alone (graph_infer.cc): the wait did not
  // hold its activity back, or several streams' activities ended within the bound, and the
  // thread's last launch before the wait call names the source.
  int64_t waits_inferred_by_order = 0;
  int64_t waits_ambiguous = 0;        // evidence with several candidate sources: not taken
  int64_t waits_unresolved = 0;       // a stream-wait call (or record) with no source found
  int64_t gpu_without_launch = 0;     // activities whose launch call is not in the trace
  int64_t syncs_without_release = 0;  // blocking calls with no GPU activity that released them
  int64_t backward_edges = 0;         // candidate edges whose source lies after their target
  // Evidence of a wait (a stream-wait call between the launches of an activity and of its stream
  // predecessor) where the activity was not delayed (it started within the bound after both its
  // predecessor's end and its launch) and no source was found: nothing to place, not unresolved.
  int64_t waits_not_delayed = 0;
  int64_t waits_already_complete = 0;  // recorded waits on a record with nothing enqueued before it
  // Recorded waits whose record the trace does not give (the waiting activity is known, the
  // source is placed by the evidence rule and counted inferred, ambiguous or unresolved).
  int64_t waits_recorded_without_source = 0;
};

// a += b, field by field.
void AddStats(GraphStats& a, const GraphStats& b);

// What the builder needs from the passes before it, as plain views (the graph sees the model
// only; analyze/ fills these from cpu_blocking and cross_rank).
struct HostRelease {
  int32_t api_call = model::kNone;  // index into Trace::api_calls() of the blocking call
  model::GpuRef released_by;        // the GPU activity whose completion released it (index kNone: none)
  // Index into Trace::syncs() of the call's sync record, kNone if none: an event sync whose
  // record is known is released by the recorded work instead of `released_by`.
  int32_t sync = model::kNone;
};
struct GraphInputs {
  std::vector<HostRelease> host_releases;
  std::vector<std::vector<model::CollectiveId>> peer_participants;  // per matched instance
  std::vector<model::CollectiveId> peer_last;                       // per matched instance
  // Evidence rule bound (METRICS §8): an inferred wait's target starts within
  // max(min_bound_ns, the stream's launch latency) after its source ends.
  int64_t infer_min_bound_ns = 20'000;
  bool infer_waits = true;         // false: recorded waits only (tests compare the two)
  bool use_recorded_waits = true;  // false: ignore the trace's wait records (tests: infer on a
                                   // trace that has them and compare with what was recorded)
  // The evidence rule's searches run on up to this many threads (the graph is the same at any
  // count: they only read; the edges are added in activity order on the calling thread).
  int threads = 1;
  // The fewest activities or syncs one thread's range of a search holds (tests set 1 to split
  // small traces).
  int min_chunk = 1024;
};

// The predecessors of one node (Graph::Preds): at most two bulk edges held here, then a view of
// the node's cross edges. Cheap to copy; iterate it, do not keep it past the graph.
class PredRange {
 public:
  class Iterator {
   public:
    Iterator(const PredRange* r, size_t i) : r_(r), i_(i) {}
    const Edge& operator*() const { return i_ < r_->nbulk_ ? r_->bulk_[i_] : r_->cross_[i_ - r_->nbulk_]; }
    const Edge* operator->() const { return &**this; }
    Iterator& operator++() { return ++i_, *this; }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const PredRange* r_;
    size_t i_;
  };
  PredRange() = default;
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }
  size_t size() const { return nbulk_ + cross_.size(); }
  bool empty() const { return size() == 0; }

 private:
  friend class Graph;
  Edge bulk_[2];
  size_t nbulk_ = 0;
  absl::Span<const Edge> cross_;
};

class Graph {
 public:
  int32_t num_gpu() const { return static_cast<int32_t>(gpu_ref_.size()); }
  int32_t num_api() const { return num_api_; }
  int32_t num_nodes() const { return num_gpu() + num_api_; }
  bool IsGpu(NodeId n) const { return n < num_gpu(); }
  NodeId GpuNode(model::GpuRef r) const { return flat_[static_cast<int>(r.kind)][r.index]; }
  // GpuNode for a reference that may be out of range: kNone then (and for activities without a
  // stream).
  NodeId GpuNodeChecked(model::GpuRef r) const {
    const auto& v = flat_[static_cast<int>(r.kind)];
    return r.index >= 0 && static_cast<size_t>(r.index) < v.size() ? v[r.index] : model::kNone;
  }
  NodeId ApiNode(int32_t api_call) const { return num_gpu() + api_call; }
  int32_t ApiIndex(NodeId n) const { return n - num_gpu(); }
  model::GpuRef Ref(NodeId g) const { return gpu_ref_[g]; }
  model::StreamId Stream(NodeId g) const { return gpu_stream_[g]; }
  // The launch call of GPU node g (index into Trace::api_calls(), Trace::LaunchOf), kNone if none.
  int32_t LaunchCall(NodeId g) const { return launch_[g]; }
  NodeId StreamBegin(model::StreamId s) const { return stream_off_[s]; }
  NodeId StreamEnd(model::StreamId s) const { return stream_off_[s + 1]; }
  // The streams of device d that hold GPU nodes, in increasing id (empty for an unknown device).
  absl::Span<const model::StreamId> DeviceStreams(model::DeviceId d) const {
    if (d < 0 || static_cast<size_t>(d) + 1 >= device_stream_off_.size()) return {};
    return {device_streams_.data() + device_stream_off_[d],
            static_cast<size_t>(device_stream_off_[d + 1] - device_stream_off_[d])};
  }
  // Recorded times of any node (an API node's are read from the trace's calls: the graph must
  // not outlive its trace).
  int64_t StartNs(NodeId n) const { return n < num_gpu() ? start_[n] : api_[n - num_gpu()].start_ns; }
  int64_t EndNs(NodeId n) const { return n < num_gpu() ? end_[n] : api_[n - num_gpu()].end_ns; }

  // In-edges (predecessors) of n, every kind, in edge order of construction: its bulk edge(s)
  // (stream order and launch, or program order) first, then its cross edges in the order added.
  // The bulk edges follow from the layout and are made on the fly, so the range is valid only
  // while the graph lives and is iterated by value (`for (const Edge& e : g.Preds(n))`).
  PredRange Preds(NodeId n) const;
  // Out-edges of n that cross between lanes: event waits, host releases and peers, in edge order
  // of construction. The bulk kinds' successors follow from the layout and are not stored twice
  // (program order: the thread's next outermost call; stream order: n + 1 on its stream; launch:
  // the activities whose Preds hold the launch edge).
  // O(1) for a node without any, else O(log cross edges): they are few beside the bulk ones, so
  // no per-node offsets are kept.
  absl::Span<const Edge> CrossSuccs(NodeId n) const;
  const GraphStats& stats() const { return stats_; }
  // The same counts per process (Trace::processes() order), each edge and wait counted on the
  // process of its target node; stats() is their sum plus targets of no known process.
  const std::vector<GraphStats>& process_stats() const { return process_stats_; }
  // Every kEventWait edge with its call, recorded and inferred (the sync points list them).
  const std::vector<WaitEdge>& waits() const { return waits_; }
  // The per-node arrays as views, for passes that walk GPU activities in the same flat order
  // (analyze/path_walker.h PathIndex) instead of gathering them from the trace again.
  absl::Span<const NodeId> FlatOfKind(model::GpuKind k) const { return flat_[static_cast<int>(k)]; }
  absl::Span<const NodeId> StreamOffsets() const { return stream_off_; }
  absl::Span<const int64_t> GpuStarts() const { return start_; }
  absl::Span<const int64_t> GpuEnds() const { return end_; }
  absl::Span<const model::StreamId> GpuStreams() const { return gpu_stream_; }
  absl::Span<const model::GpuRef> GpuRefs() const { return gpu_ref_; }
  // Per GPU node: its recorded name and the collective it carries (kNone if none), as recorded.
  absl::Span<const model::StringId> GpuNames() const { return gpu_name_; }
  absl::Span<const model::CollectiveId> GpuCollectives() const { return gpu_coll_; }
  absl::Span<const int32_t> LaunchCalls() const { return launch_; }
  // Stream-wait evidence (recorded without a source, or inferred without one) at GPU node g:
  // how many waits enqueued before g could not be placed (PathCounts::unresolved_waits).
  int UnresolvedWaits(NodeId g) const { return unresolved_.empty() ? 0 : unresolved_[g]; }
  // The launch latency of stream s used by the evidence rule (graph_infer.cc): the median of
  // (start - launch call start) over its activities (the first excluded) whose launch started at
  // or after their stream predecessor's end; else its device's other streams' median; 0 when none.
  int64_t LaunchLatencyNs(model::StreamId s) const { return latency_.empty() ? 0 : latency_[s]; }

 private:
  friend class GraphBuilder;
  int32_t num_api_ = 0;
  std::vector<NodeId> flat_[3];  // per GpuKind, per activity: its node
  std::vector<model::GpuRef> gpu_ref_;
  std::vector<model::StreamId> gpu_stream_;
  std::vector<model::StringId> gpu_name_;
  std::vector<model::CollectiveId> gpu_coll_;
  std::vector<int32_t> launch_;                  // per GPU node: Trace::LaunchOf
  std::vector<NodeId> stream_off_;               // size streams + 1
  std::vector<int32_t> device_stream_off_;       // size devices + 1: device d's in device_streams_
  std::vector<model::StreamId> device_streams_;  // by device, then id
  std::vector<int64_t> start_, end_;             // per GPU node
  const model::ApiCall* api_ = nullptr;          // Trace::api_calls().data()
  // The bulk edges, per node a byte of flags (kBulk*; kBulkCross: the node has cross in-edges),
  // per API call its program-order predecessor (kNone: none). kBulkCrossOut: the node has cross
  // out-edges (CrossSuccs searches only then: the passes ask it of most nodes).
  static constexpr uint8_t kBulkStream = 1, kBulkLaunch = 2, kBulkProgram = 4, kBulkCross = 8, kBulkCrossOut = 16;
  std::vector<uint8_t> bulk_;
  std::vector<int32_t> po_pred_;
  std::vector<Edge> cross_in_;       // the cross edges, stably sorted by `to`
  std::vector<Edge> succ_edges_;     // the cross edges, stably sorted by `from`
  std::vector<uint8_t> unresolved_;  // per GPU node (empty when none)
  std::vector<int64_t> latency_;     // per stream (empty when no wait was inferred)
  GraphStats stats_;
  std::vector<GraphStats> process_stats_;
  std::vector<WaitEdge> waits_;
};

// Builds the graph in O(n log n). Never fails.
Graph BuildGraph(const model::Trace& trace, const GraphInputs& in);

class GraphBuilder;

// BuildGraph in two steps, for a caller that has the host releases and the peers only after the
// model (AnalyzeAll starts the graph beside the context and the collectives across ranks): the
// constructor runs every step that reads only the model and `options` (the nodes, program
// order, recorded and inferred waits; `options`' host_releases and peer lists are not read, and
// `trace` and `options` must outlive the object); Finish adds the host releases and peers of
// `lists` (its other fields are not read) and returns the graph BuildGraph returns for
// `options` with `lists`' lists. Never fails.
class GraphStart {
 public:
  GraphStart(const model::Trace& trace, const GraphInputs& options);
  ~GraphStart();
  GraphStart(const GraphStart&) = delete;
  GraphStart& operator=(const GraphStart&) = delete;
  Graph Finish(const GraphInputs& lists);

 private:
  std::unique_ptr<GraphBuilder> b_;
};

}  // namespace overlapscope::analyze::graph
