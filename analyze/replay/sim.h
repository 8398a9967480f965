// The simulation graph replay runs (internal to analyze/replay): the dependency graph's nodes
// with their durations and the start/end constraints its edges put on them, after the changes
// were applied (build.cc). Separate from graph::Graph so that changes can rewrite edges and
// tests can build one by hand.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "analyze/replay/zeroed.h"

namespace overlapscope::analyze::replay {

// How an edge constrains its target:
//   kAfterEnd:   start(to) >= end(from) + lag   (stream order, event waits, host program order)
//   kAfterStart: start(to) >= start(from) + lag (a launch call -> its activity: launch latency)
//   kRelease:    end(to)   >= end(from) + lag   (the GPU work a blocking host call waited for)
enum class Dep : uint8_t { kAfterEnd, kAfterStart, kRelease };

// An edge as a builder gives it to EdgeRows: source, kind, lag (ns).
#pragma pack(push, 1)  // 13 bytes, not 16
struct NewEdge {
  int32_t from = -1;
  Dep dep = Dep::kAfterEnd;
  int64_t lag_ns = 0;
};
#pragma pack(pop)
// A lag kept in 32 bits that does not fit them (the graph's or the plan's big-lag list holds it).
constexpr int32_t kBigLag = INT32_MIN;

// Lags that do not fit 32 bits: (index into the edge array, lag ns), sorted by index.
using BigLags = std::vector<std::pair<int64_t, int64_t>>;
// The lag of the i-th edge of an array whose 32-bit lag is `lag` (big: the big lags of that array).
inline int64_t LagOf(int32_t lag, const BigLags& big, int64_t i) {
  if (lag != kBigLag) return lag;
  return std::lower_bound(big.begin(), big.end(), std::make_pair(i, INT64_MIN))->second;
}
// `lag` as kept at index `at` of such an array: itself where it fits 32 bits, else kBigLag with
// (at, lag) appended to `big` (whose caller keeps it sorted by index, as LagOf reads it).
inline int32_t NarrowLag(int64_t lag, int64_t at, BigLags& big) {
  if (lag > INT32_MIN && lag <= INT32_MAX) return static_cast<int32_t>(lag);
  big.emplace_back(at, lag);
  return kBigLag;
}

// Row offsets into the edge arrays: 32 bits (half the pages of 64); Replay() refuses a graph
// whose edges could exceed them (kMaxSimEdges).
using RowOffset = int32_t;
constexpr int64_t kMaxSimEdges = INT32_MAX;

// Per-node values that several simulation graphs of one replay share (the recorded times are
// the same in the replayed graph and a what-if's, and so are the durations and the collective
// groups unless a change scales, removes or unblocks something: one copy, not two, of 28 bytes a
// node). Copies share the values; write them only before the first copy.
template <typename T>
class SharedVector {
 public:
  SharedVector() : v_(std::make_shared<std::vector<T>>()) {}
  SharedVector& operator=(std::vector<T> v) {
    v_ = std::make_shared<std::vector<T>>(std::move(v));
    return *this;
  }
  void assign(size_t n, T x) { *this = std::vector<T>(n, x); }
  T& operator[](size_t i) { return (*v_)[i]; }
  T operator[](size_t i) const { return (*v_)[i]; }
  size_t size() const { return v_->size(); }
  const std::vector<T>& values() const { return *v_; }
  operator const std::vector<T>&() const { return *v_; }  // NOLINT: read as a vector

 private:
  std::shared_ptr<std::vector<T>> v_;
};
using SharedTimes = SharedVector<int64_t>;

struct SimGraph {
  int32_t num_nodes = 0;
  int32_t num_gpu = 0;  // nodes [0, num_gpu) are GPU activities, the rest host calls
  // Recorded times: each node's start and duration (its end: RecEnd; no array of ends, which
  // would be ~9 k more fresh pages at 10 M nodes).
  SharedTimes rec_start, rec_dur;
  int64_t RecEnd(int32_t v) const { return rec_start[v] + rec_dur[v]; }
  SharedTimes dur;  // duration to replay (nodes without release/group)
  // Host calls with release edges end at max(start + tail, end(release) + lag): (node, tail)
  // sorted by node, for the calls that have a tail (none: 0). A list, not an array a node:
  // releases are a few calls in every page of nodes, and such an array was ~9 k fresh pages a
  // graph at 10 M nodes.
  std::vector<std::pair<int32_t, int64_t>> release_tails;
  void SetReleaseTail(int32_t v, int64_t tail);
  int64_t ReleaseTail(int32_t v) const;  // by binary search (tests and builders: runs use the plan's)
  // Collectives matched across ranks: the group (index) of each node or -1, and its transfer
  // time: it ends at max(own start, last member's start) + transfer.
  SharedVector<int32_t> group;
  ZeroedVector<int64_t> transfer;
  int32_t num_groups = 0;
  // Predecessor edges, compressed rows, one array per field: edge i, i in [pred_off[n],
  // pred_off[n+1]), comes from node pred_from[i], of kind pred_dep[i], with lag Lag(i) (9 bytes an
  // edge: at 10 M nodes every byte an edge is ~15 MB of fresh pages). The rows are read only to
  // build a simulation's plan; after that their arrays (the same types as a schedule's bindings)
  // can serve a run's schedule (ScheduleFromRows) instead of fresh ones.
  std::vector<RowOffset> pred_off;
  std::vector<int32_t> pred_from;
  std::vector<int32_t> pred_lag;  // kBigLag: in big_lags
  std::vector<Dep> pred_dep;
  BigLags big_lags;                                                         // usually empty
  int64_t Lag(int64_t i) const { return LagOf(pred_lag[i], big_lags, i); }  // of edge i, ns
  int64_t num_edges() const { return static_cast<int64_t>(pred_from.size()); }

  // Sizes every per-node vector for n nodes (no edges).
  void Resize(int32_t n, int32_t gpu);
  // The same without the rows (pred_off, pred_from, ...), for a caller whose EdgeRows::Finish()
  // sets them, and without rec_start / rec_dur / dur / group unless `times` (a caller that shares
  // them leaves them).
  void ResizeNodes(int32_t n, int32_t gpu, bool times = true);
};

// Builds the compressed rows of a SimGraph: Next(v) for v = 0, 1, ... in order with Append() of
// v's edges after it; Add() for edges to any node (merged by Finish()).
class EdgeRows {
 public:
  // Room for n nodes' rows and about `edges` edges (a hint: more may be appended).
  void Reserve(int32_t n, int64_t edges, int64_t added);
  void Next(int32_t v) {
    while (static_cast<int32_t>(off_.size()) <= v) off_.push_back(static_cast<RowOffset>(from_.size()));
  }
  void Append(const NewEdge& e) { Push(e); }
  void Add(int32_t to, const NewEdge& e) { pending_.push_back({to, e}); }
  // Called once every Add() is done and before the first Next(): where the Add()ed edges fall
  // into few runs of non-decreasing targets (a restreamed stream's order, then the joins, in
  // node order), AppendAdded(v) appends v's right after its in-order edges, so that Finish()
  // has nothing to merge; else they wait for Finish(). Either way the rows are the same.
  void InlineAdded();
  // After v's in-order edges: v's Add()ed edges when InlineAdded() took them (else nothing).
  void AppendAdded(int32_t v) {
    for (size_t r = 0; r < run_next_.size(); ++r) {
      // A run's targets never decrease: the edges of v are at its cursor.
      for (size_t& i = run_next_[r]; i < run_end_[r] && pending_[i].to == v; ++i) Push(pending_[i].e);
    }
  }
  // Fills g's rows (a node's in-order edges first, then its Add()ed ones in order).
  // The Add()ed edges not appended inline are merged into the in-order rows in place (no second
  // copy of the rows: at 10 M nodes every fresh buffer costs its page faults).
  void Finish(SimGraph& g);

 private:
#pragma pack(push, 1)  // 17 bytes, not 24
  struct Pending {
    int32_t to;
    NewEdge e;
  };
#pragma pack(pop)
  // e's lag as kept at index `at` of the rows (into big_ when it does not fit 32 bits).
  int32_t Narrow(const NewEdge& e, size_t at) { return NarrowLag(e.lag_ns, static_cast<int64_t>(at), big_); }
  void Push(const NewEdge& e) {
    lag_.push_back(Narrow(e, from_.size()));
    from_.push_back(e.from);
    dep_.push_back(e.dep);
  }
  // e at index `at` of the rows.
  void Put(size_t at, const NewEdge& e) {
    from_[at] = e.from;
    dep_[at] = e.dep;
    lag_[at] = Narrow(e, at);
  }
  std::vector<RowOffset> off_;
  std::vector<int32_t> from_, lag_;  // the in-order rows (SimGraph::pred_from, pred_lag, pred_dep)
  std::vector<Dep> dep_;
  BigLags big_;  // of the rows
  std::vector<Pending> pending_;
  std::vector<size_t> run_next_, run_end_;  // InlineAdded(): per run, its cursor and end
  bool added_inline_ = false;               // InlineAdded() took them
};

// A start constraint added for one run: start(to) >= end(from) + lag (kAfterEnd) or
// start(from) + lag (kAfterStart).
// For the contention model's waits for SMs (contention.h): what a wait for a persistent GEMM's
// blocks made of its last tile round.
enum class LastRoundWait : uint8_t {
  kNone,     // not a wait for a persistent (one-wave) kernel
  kInRound,  // starts in the kernel's last tile round (a negative lag on its end)
  kOutside,  // rounds known, but the collective does not fit the freed SMs or gets nothing done there
  kNoShape,  // rounds unknown (no record_shapes shape for its op, or no tile in its name): its end
};

struct ExtraEdge {
  int32_t from = -1, to = -1;
  Dep dep = Dep::kAfterEnd;
  int64_t lag_ns = 0;
  LastRoundWait last_round = LastRoundWait::kNone;
};

// How a node's start or end was bound in the schedule (for the backward walk).
struct Schedule {
  std::vector<int64_t> start, end;
  std::vector<int32_t> bind_start;  // the predecessor that set start, -1: none (recorded start)
  std::vector<Dep> bind_dep;        // its edge kind
  std::vector<int32_t> bind_end;    // the release source or the last-arriving group member, -1
  int64_t cycles_broken = 0;
};

// Forward list scheduling over the start/end events of every node with a ready queue (each event
// fires once all its constraints are known). O(nodes + edges). Deterministic.
// The plan's per-node arrays (successor offsets and constraint counts) with their initial
// values, made ahead for a graph of n nodes: filled on one thread for a Simulation built on
// another, they take their page faults off that one.
struct PlanBuffers {
  std::vector<RowOffset> off;         // n + 1 zeros
  std::vector<int32_t> cnt_s, cnt_e;  // n zeros (or none: see Simulation), n ones
};
PlanBuffers PlanBuffersFor(int32_t n);

class Simulation {
 public:
  // Successors and counts, once per graph (g outlives it). `buffers` (or null): PlanBuffersFor()
  // this graph's node count, taken instead of fresh arrays (PlanBuffersFor makes no start
  // counts: they come from `row_offsets`, or else a fresh array). `row_offsets` (or null):
  // &g.pred_off, whose storage the plan takes for its start counts; g's rows are then fit only
  // for ScheduleFromRows.
  explicit Simulation(const SimGraph& g, PlanBuffers* buffers = nullptr, std::vector<RowOffset>* row_offsets = nullptr);
  ~Simulation();
  // One run with these durations (per node; nodes in groups and with releases ignore theirs).
  // `extra` (or null): start constraints beside the graph's (kAfterEnd / kAfterStart only: a
  // kernel that waits for SMs another kernel holds, contention.h). The first run takes the
  // plan's counts; later ones count again into the previous run's buffers (no fresh pages).
  // Not for two threads at once.
  // `initial` (or null): a schedule of this graph's node count before its first event (every time
  // unset, nothing bound: ScheduleFromRows, ResetSchedule), made ahead (its pages touched on
  // another thread or already): this run takes it instead of filling fresh arrays.
  Schedule Run(const std::vector<int64_t>& dur, const std::vector<ExtraEdge>* extra = nullptr,
               Schedule* initial = nullptr) const;
  struct Plan;

 private:
  const SimGraph& g_;
  std::unique_ptr<Plan> plan_;
  mutable bool counts_taken_ = false;
  mutable std::vector<int32_t> spare_s_, spare_e_;  // the last run's count buffers
};
Schedule Simulate(const SimGraph& g);  // Simulation(g).Run(g.dur)
// The start and end times of a run's schedule before its first event (every time unset), for n
// nodes, made ahead for ScheduleFromRows(): made on one thread for a run on another, it takes its
// page faults off that one.
Schedule InitialTimes(int32_t n);
// A run's schedule before its first event (every time unset, nothing bound) for a run of a
// Simulation built on g, whose rows (read no more once its plan is built) give their arrays to
// the schedule's bindings: no fresh pages for those where the graph holds at least as many edges
// as nodes. `times`: InitialTimes(g.num_nodes) or a Schedule whose times are filled here. Leaves
// g without rows (a second Simulation on g needs them: build it before).
Schedule ScheduleFromRows(SimGraph& g, Schedule times);
// Gives `s` the values of a schedule before its first event in its own arrays: a schedule no
// longer read becomes the `initial` of the next run without fresh pages (240 MB at 10 M nodes).
void ResetSchedule(int32_t n, Schedule& s);

}  // namespace overlapscope::analyze::replay
