// Replay and what-if (METRICS.md §11): every iteration simulated forward on the dependency graph
// (analyze/graph/graph.h) with the recorded durations, then again under user changes.
//
// Replay: a node starts when its last predecessor allows it (a GPU activity: the end of its
// stream predecessor and of the activities it waits for, its launch call's start plus the launch
// latency; a host call: the previous call's end plus the host work between them, as recorded);
// GPU activities keep their recorded durations; a blocking host call ends when the GPU work that
// released it ends (plus what it recorded after the release); a collective matched across ranks
// ends at the last participant's replayed arrival plus its recorded transfer time, so its wait is
// recomputed, not replayed.
//
// What-if: changes (ParseChange) edit the graph (durations scaled, collectives moved to their
// own stream, copy-engine collectives, blocking calls removed, activities removed) and the
// step is simulated again, with and without the contention model (contention.cc).
//
// Late ranks: a rank whose host stalls (a gap before a launch, which no change touches) arrives
// late at the next collective and its peers wait there; the replay keeps that (the wait is
// recomputed from the replayed arrivals, each iteration's IterationReplay::peer_wait_ns says how
// long and for which rank), and so does the prediction. But a change that moves a collective moves
// the wait with it: an async collective is waited for at the next join, often in the next
// iteration, so the stalls land in other iterations than in the replay. A prediction's change to
// the job's step is therefore taken per iteration (predicted against replayed of the same
// iteration) and summarised by its median (engine/replay_job.h SummarizeJob), not as the
// difference of two medians of steps (measured on 4 x H100: a base with rank 3 late in 10 of
// 16 iterations predicted +5.0 % that way where the program gained 3.7 %; docs/RESULTS.md
// "Tenth round: late ranks").
//
// Units: *_ns int64 nanoseconds on the trace clock. Pure: the same inputs give the same result,
// bit for bit. Never fails on a well-formed graph; a dependency cycle (which the graph's builder
// does not produce) is broken at the earliest recorded node and counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analyze/graph/graph.h"
#include "model/trace.h"

namespace overlapscope::analyze::replay {

// The classes of METRICS §1 (same order as analyze::ActivityClass, which this layer cannot
// see: the caller converts).
enum class GpuClass : uint8_t { kCompute, kComm, kMemory, kSync };
std::string_view ToString(GpuClass c);

// One iteration of one rank (METRICS §2 iterations): the CPU range that delimits it.
struct IterationWindow {
  model::ProcessId process = model::kNone;
  int64_t number = -1;  // N of ProfilerStep#N (or the ordinal)
  int64_t start_ns = 0, end_ns = 0;
};

// Median duration overlapped / alone of one compute kernel name on one device (METRICS §2
// contention, analyze/overlap.h KernelSlowdown).
struct NameSlowdown {
  model::DeviceId device = model::kNone;
  model::StringId name = 0;
  double slowdown = 1;
  int64_t median_alone_ns = 0;
};

// What replay needs from the passes before it, as plain views (the caller fills them from
// analyze's classification, iterations and overlap).
struct ReplayInputs {
  // Parallel to Trace::kernels() / memcpys() / memsets().
  std::vector<GpuClass> kernel_class, memcpy_class, memset_class;
  std::vector<int32_t> kernel_iteration, memcpy_iteration, memset_iteration;  // index or kNone
  std::vector<IterationWindow> iterations;
  std::vector<NameSlowdown> slowdowns;  // empty: the SM-share model only
};

// One what-if change (METRICS §11), as `--change SPEC` writes it:
//   scale:CLASS=F          durations of class comm|compute|memory times F (F > 0)
//   scale:/REGEX/=F        durations of GPU activities whose name matches times F
//   async:/REGEX/[@/JOIN/] matching collectives on their own stream, issued at the same point;
//                          the issuing stream waits for each before the first later activity
//                          matching JOIN — its name, or the name of a host range (CPU op,
//                          annotation, NVTX) enclosing its launch call, e.g. PyTorch's
//                          record_function (default: the next collective of the same
//                          communicator, else the first activity of the next iteration)
//   prefetch:/REGEX/[@/JOIN/] as async:, but issued at the start of their iteration on their
//                          stream (FSDP's prefetch): after what preceded the iteration there,
//                          launched with the iteration's first activity of that stream — for a
//                          program that computes first and communicates after (sequential ->
//                          overlapped where the overlapped program issues the collective first)
//   ce:/REGEX/             matching collectives on copy engines: they hold no SMs and keep their
//                          recorded transfer time; they still wait for SMs a compute kernel fills
//                          before they start (their own chunk's on-device copy, contention.h)
//   nosync:/CALL-REGEX/    matching blocking host calls wait for nothing (GPU order unchanged)
//   remove:/REGEX/         matching GPU activities take no time
//   defer:/REGEX/          matching GPU activities move after the next compute activity of
//                          their stream that does not match (in the same iteration, else to its
//                          end): a consumer run later, as an async program consumes a
//                          collective after the next layer's GEMM; a collective moved by async:
//                          is still issued after the last activity of its stream not deferred
// REGEX is RE2 syntax, searched anywhere in the name (of the activity; for collectives also the
// collective's op, e.g. "allgather").
enum class ChangeKind : uint8_t { kScaleClass, kScaleName, kAsync, kCopyEngine, kNoSync, kRemove, kDefer };
struct Change {
  ChangeKind kind = ChangeKind::kScaleClass;
  std::string text;  // the spec as given
  GpuClass cls = GpuClass::kCompute;
  std::string regex, join_regex;
  double factor = 1;
  bool prefetch = false;  // async: issued at the start of its iteration (prefetch:)
};
// InvalidArgument "--change 'SPEC': <reason>" on a malformed spec or an invalid regex.
absl::StatusOr<Change> ParseChange(std::string_view spec);

// Where the critical path of an iteration (backward walk over a simulated schedule) spent its
// length, ns. Sums to the step span when the walk covers it.
struct PathComposition {
  int64_t compute_ns = 0, comm_ns = 0, memory_ns = 0, sync_ns = 0;
  int64_t host_ns = 0;     // host calls, host work between calls, launch latency
  int64_t blocked_ns = 0;  // blocking host calls after the GPU released them (return latency)
  int64_t idle_ns = 0;     // nothing on the path (a gap the graph does not explain)
};

// One schedule's figures for one rank and iteration.
struct StepFigures {
  int64_t step_ns = 0;          // span of the iteration's GPU work on the rank
  int64_t comm_ns = 0;          // |∪ comm|
  int64_t exposed_comm_ns = 0;  // |∪ comm \ ∪ compute| (METRICS §2), within the iteration's work
  PathComposition path;
};

struct IterationReplay {
  model::ProcessId process = model::kNone;
  int32_t rank = model::kNone;
  int64_t number = -1;
  StepFigures measured, replayed;
  double replay_error = 0;  // (replayed − measured) / measured; 0 when measured is 0
  // In the replayed schedule: the longest time one of this rank's collectives of the iteration
  // waited for a peer that arrived last (its start to that peer's start), and that peer's rank
  // (kNone: no collective waited, or the peer's process has no rank). A peer's late arrival is what
  // a stall on its host (a gap before a launch the change does not touch) looks like to the others.
  int64_t peer_wait_ns = 0;
  int32_t late_peer_rank = model::kNone;
  // With changes only.
  std::optional<StepFigures> predicted;             // without contention
  std::optional<StepFigures> predicted_contention;  // with the contention model
};

// Which contention model slowed compute that a change made run beside communication.
enum class ContentionModel : uint8_t {
  kNone,            // no compute became overlapped (or no change)
  kTraceSlowdowns,  // the trace's own slowdowns (same names overlapped vs alone), METRICS §2
  kSmShare,         // the SM share held by the communication kernels' grids (wave-quantized)
  kMixed,           // slowdowns where the trace has the name, SM share elsewhere
};
std::string_view ToString(ContentionModel m);

struct ReplayCounts {
  int64_t nodes = 0, edges_recorded = 0, edges_inferred = 0;
  int64_t waits_unresolved = 0, waits_ambiguous = 0;  // from the graph's statistics
  int64_t gpu_without_launch = 0, syncs_without_release = 0;
  int64_t collective_groups = 0;      // collectives whose wait is recomputed across ranks
  int64_t collectives_unmatched = 0;  // carrying activities with no peers: duration as recorded
  int64_t cycles_broken = 0;          // events forced out of a dependency cycle
  // GPU activities delayed by a stream wait the graph could not place (Graph::UnresolvedWaits):
  // they keep their recorded launch latency, however long, so they move only with their launch.
  int64_t pinned_unresolved = 0;
  // GPU activities that started later than every recorded predecessor allows (SMs held by another
  // stream's kernel, a wait without evidence): ordered after the device's activity that ended last
  // before them with the recorded gap, else kept at their recorded distance from the predecessor
  // that bound them last.
  int64_t device_order = 0;
  // GPU kernels that started late inside a kernel of another stream of their device whose blocks
  // fill every SM and leave no room for theirs (SM residency, contention.h): they start at their
  // recorded distance to that kernel's end (so they move with it), in strict mode too.
  int64_t sm_waits = 0;
  int64_t changed_nodes = 0;  // nodes a change touched (all changes)
};

struct ReplayOptions {
  std::vector<Change> changes;
  bool contention = true;  // also run the contention model (predicted_contention)
  int sm_count = 0;        // SMs per GPU for the SM-share model; 0: from the device name
  // No fallbacks: activities behind unresolved waits and starts the graph does not explain are
  // replayed from their predecessors only (shows what the graph alone explains).
  bool strict = false;
  // Keep the predicted schedule (ReplayResult::schedule), for drawing it (--trace).
  bool keep_schedule = false;
};

// Start and end of every node of the graph (graph.h numbering: GPU activities, then host calls)
// in one schedule.
struct NodeTimes {
  std::vector<int64_t> start_ns, end_ns;
  // The GPU nodes an async: or prefetch: change moved to a stream of their own in this schedule
  // (ascending): a drawing puts them on that stream, not on the one they were recorded on.
  std::vector<graph::NodeId> moved;
};

// The contention model's collectives that waited for a persistent GEMM's SMs (contention.h), by
// what its last tile round made of them.
struct LastRoundCounts {
  int64_t in_round = 0;          // started in the GEMM's last round (its shape recorded, room and a rate)
  int64_t outside = 0;           // rounds known; no room in the last round, or no measured gain there: its end
  int64_t no_shape = 0;          // rounds unknown (no record_shapes shape, or no tile in its name): its end
  bool shapes_recorded = false;  // the trace has matrix-product shapes (record_shapes=True)
};

struct ReplayResult {
  std::vector<IterationReplay> iterations;  // by (process, iteration start)
  ReplayCounts counts;
  ContentionModel contention_model = ContentionModel::kNone;
  int64_t contention_nodes = 0;         // compute activities the model slowed
  LastRoundCounts last_round;           // with contention under a change
  std::vector<std::string> changes;     // the specs applied, in order
  std::vector<int64_t> change_matches;  // per change: nodes it matched
  // Summary over iterations: median and worst |replay_error|.
  double median_abs_error = 0, worst_abs_error = 0;
  bool strict = false;  // ReplayOptions::strict
  // With keep_schedule: the predicted schedule (with contention when it ran), else the replayed
  // one when there is no change.
  NodeTimes schedule;
};

// Replays `graph` (built from `trace`) and, when options.changes is not empty, predicts it under
// them. InvalidArgument when a change's regex does not compile or inputs are not parallel to the
// trace's vectors; ResourceExhausted when the simulation's edges could exceed 2^31 (a graph of
// about 250 M nodes, some 100 GB of memory for the replay alone).
absl::StatusOr<ReplayResult> Replay(const model::Trace& trace, const graph::Graph& graph, const ReplayInputs& in,
                                    const ReplayOptions& options);

}  // namespace overlapscope::analyze::replay
