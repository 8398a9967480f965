// From the dependency graph to the simulation graph (internal to analyze/replay): what every
// node is (NodeAttrs), which nodes each change touches (ChangeEffects), and the SimGraph with the
// changes applied (BuildSim).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "analyze/graph/graph.h"
#include "analyze/replay/replay.h"
#include "analyze/replay/sim.h"
#include "analyze/replay/zeroed.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

// Per node of the graph (GPU nodes first, then host calls, graph.h's numbering).
struct NodeAttrs {
  int32_t num_gpu = 0;
  // process, device, cls, iteration and blocks: GPU nodes only (num_gpu entries).
  std::vector<model::ProcessId> process;           // of the device
  std::vector<model::DeviceId> device;             // kNone: no stream or device known
  std::vector<model::ThreadId> thread;             // host calls only: ThreadOf()
  std::vector<GpuClass> cls;                       // as ReplayInputs' classes
  std::vector<int32_t> iteration;                  // index into ReplayInputs::iterations
  std::vector<model::StringId> name;               // activity or call name
  ZeroedVector<model::StringId> op, communicator;  // collective carriers; 0 otherwise
  std::vector<int32_t> blocks;                     // kernels: grid x*y*z; 0 otherwise
  ZeroedVector<uint8_t> carries_collective;

  model::ThreadId ThreadOf(int32_t host_call) const { return thread[host_call - num_gpu]; }
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
  // Whether any node is scaled, removed, made nosync, put on copy engines, deferred: where none
  // is, their arrays are never read (a read of an untouched page faults too, if more cheaply).
  bool any_scale = false, any_removed = false, any_nosync = false, any_copy_engine = false, any_deferred = false;

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
  SharedTimes start, dur;               // per node; dur: the recorded end - start
  SharedTimes end;                      // per GPU node (host calls' ends are start + dur)
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
