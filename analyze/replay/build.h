// From the dependency graph to the simulation graph (internal to analyze/replay): what every
// node is (NodeAttrs), which nodes each change touches (ChangeEffects), and the SimGraph with the
// changes applied (BuildSim).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "analyze/graph/graph.h"
#include "analyze/replay/replay.h"
#include "analyze/replay/sim.h"
#include "analyze/replay/zeroed.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

// Per node of the graph (GPU nodes first, then host calls, graph.h's numbering). What the graph
// and the trace hold per node already (names, collectives, threads) is read from them,
// not copied (at 10 M nodes every 4-byte copy was ~9 k fresh pages): both outlive the attributes.
struct NodeAttrs {
  int32_t num_gpu = 0;
  // device, cls and iteration: GPU nodes only (num_gpu entries).
  std::vector<model::DeviceId> device;           // kNone: no stream or device known
  std::vector<GpuClass> cls;                     // as ReplayInputs' classes
  std::vector<int32_t> iteration;                // index into ReplayInputs::iterations
  std::vector<model::ProcessId> device_process;  // per device of the trace: its process
  // Set by CollectAttrs: the graph's GPU names and collectives, the trace's calls and collectives.
  absl::Span<const model::StringId> gpu_name;
  absl::Span<const model::CollectiveId> gpu_coll;
  absl::Span<const model::ApiCall> calls;
  absl::Span<const model::Collective> collectives;

  // GPU node v's process (of its device; kNone: none known).
  model::ProcessId ProcessOf(int32_t v) const { return device[v] >= 0 ? device_process[device[v]] : model::kNone; }
  // Activity or call name.
  model::StringId Name(int32_t v) const { return v < num_gpu ? gpu_name[v] : calls[v - num_gpu].name; }
  model::ThreadId ThreadOf(int32_t host_call) const { return calls[host_call - num_gpu].thread; }
  // The collective node v carries (null: none; host calls carry none).
  const model::Collective* CollectiveOf(int32_t v) const {
    if (v >= num_gpu) return nullptr;
    const model::CollectiveId c = gpu_coll[v];
    return c >= 0 && static_cast<size_t>(c) < collectives.size() ? &collectives[c] : nullptr;
  }
  bool CarriesCollective(int32_t v) const { return CollectiveOf(v) != nullptr; }
  model::StringId Op(int32_t v) const {  // of the collective carried; 0 otherwise
    const model::Collective* c = CollectiveOf(v);
    return c != nullptr ? c->op : 0;
  }
  model::StringId Communicator(int32_t v) const {  // likewise
    const model::Collective* c = CollectiveOf(v);
    return c != nullptr ? c->communicator : 0;
  }
};
// InvalidArgument when the inputs' vectors are not parallel to the trace's.
absl::StatusOr<NodeAttrs> CollectAttrs(const model::Trace& t, const graph::Graph& g, const ReplayInputs& in);

// Which nodes the changes touch, per node. Zeroed: the pages of nodes no change touches are
// never written (a change usually matches a few nodes of millions).
struct ChangeEffects {
  ZeroedVector<double> scale;  // duration factor; 0 for 1 (unchanged): read it with Scale()
  ZeroedVector<uint8_t> removed, moved, copy_engine, nosync, deferred;
  ZeroedVector<int32_t> join_change;  // moved nodes: the async change (index) that moved them
  std::vector<int64_t> matches;       // per change: nodes it matched
  int64_t changed_nodes = 0;
  // Whether any node is scaled, removed, made nosync, put on copy engines, deferred, moved: where
  // none is, their arrays are never read (a read of an untouched page faults too, if more cheaply).
  bool any_scale = false, any_removed = false, any_nosync = false, any_copy_engine = false, any_deferred = false,
       any_moved = false;

  double Scale(int32_t v) const { return any_scale && scale[v] != 0 ? scale[v] : 1.0; }
  bool Removed(int32_t v) const { return any_removed && removed[v]; }
  bool NoSync(int32_t v) const { return any_nosync && nosync[v]; }
  bool CopyEngine(int32_t v) const { return any_copy_engine && copy_engine[v]; }
  bool Deferred(int32_t v) const { return any_deferred && deferred[v]; }
};
ChangeEffects MatchChanges(const model::Trace& t, const NodeAttrs& a, const std::vector<Change>& changes);

// What the simulation graphs of one replay (the replayed one and a what-if's) share, computed
// once from the graph: the recorded times and durations of its nodes (an end never before its
// start), what its launches say and its collective groups. A graph whose changes alter
// durations or groups keeps its own copy of those.
struct SimShared {
  SharedTimes start, dur;               // per node; dur: the recorded end - start (never below 0)
  std::vector<uint8_t> launch_binding;  // per GPU node: its launch bound its start (true latency)
  std::vector<uint8_t> has_launch;      // per GPU node: 0 for an activity without a launch call
  std::vector<int64_t> median_latency;  // per device: of the launches that bound their start
  std::vector<std::pair<graph::NodeId, graph::NodeId>> peers;  // (from, to) of every peer edge
  // The collective groups of every peer edge (per node, -1: none), as SimGraph::group.
  SharedVector<int32_t> group;
  int32_t num_groups = 0;
};
SimShared ShareOf(const model::Trace& t, const graph::Graph& g);

// The simulation graph of `g` with `fx` applied (nullptr: as recorded). Adds to `counts` what
// it joined (groups, unmatched collectives) and the fallbacks it took (none when `strict`).
// `shared` (or null: computed here): ShareOf(t, g), whose arrays the graph shares.
SimGraph BuildSim(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
                  const ChangeEffects* fx, bool strict, ReplayCounts* counts, const SimShared* shared = nullptr);

}  // namespace overlapscope::analyze::replay
