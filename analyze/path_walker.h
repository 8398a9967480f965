// Internal to analyze/: the backward walk that the critical path (critical_path.h) and the
// straggler causes (straggler_causes.h) share, and the indexes it needs, built once per trace.
//
// A walk starts at a node (the end of a GPU activity, or a host thread at a time) and moves back
// in time along binding dependencies (critical_path.h says which), emitting the path's segments
// in descending time, until the cursor reaches the floor of the process it is on (the start of
// its iteration, or of a straggler window). Each step is O(log n); a walk costs O(its segments).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "analyze/critical_path.h"
#include "analyze/graph/graph.h"
#include "analyze/interval_set.h"
#include "analyze/path_inputs.h"
#include "analyze/straggler_causes.h"
#include "model/trace.h"

namespace overlapscope::analyze {

class PathIndex {
 public:
  PathIndex(const model::Trace& t, const PathInputs& in);
  PathIndex(const PathIndex&) = delete;
  PathIndex& operator=(const PathIndex&) = delete;

  const model::Trace& trace() const { return t_; }
  const PathInputs& inputs() const { return in_; }
  // The host side of the index as text, one line per thread (its blocked intervals, outermost
  // calls, ranges with their parents, their union, NCCL ranges): for tests that compare builds.
  std::string HostIndexText() const;

 private:
  friend class PathWalker;
  // GPU activities are addressed by a flat index: the streams' activities (Trace::
  // StreamActivities) one stream after the other, so a stream predecessor is the index before
  // and the walk reads contiguous arrays instead of the per-kind event records.
  int32_t Flat(model::GpuRef r) const { return flat_[static_cast<int>(r.kind)][r.index]; }
  model::GpuRef Ref(int32_t g) const { return ref_[g]; }

  // Activities of a recording stream by correlation, with the one that ends last so far (event
  // syncs: the work an event record covers).
  struct Recorded {
    std::vector<int64_t> corr;
    std::vector<int32_t> last;  // flat index of the argmax end over corr[0..i]
  };
  // Host ranges of one thread (iteration markers excluded), sorted by start, with the enclosing
  // range of each (kNone at top level) and their union.
  struct ThreadRanges {
    std::vector<int32_t> idx;     // into Trace::ranges()
    std::vector<int32_t> parent;  // position in idx, kNone at top level
    IntervalSet cover;
  };
  struct PeerDep {
    int64_t last_arrival = INT64_MIN;
    model::CollectiveId last = model::kNone;  // the last participant's collective
  };

  void IndexWaits();
  void IndexBlocked();
  void IndexCalls();   // calls_, in ranges of the calls
  void IndexRanges();  // ranges_, in ranges of Trace::ranges()
  void IndexNccl();
  void IndexCollectives();
  // The activity the recording stream `rs` had enqueued last (ending last) before the record
  // with correlation `rec_corr`; false when nothing was.
  int32_t RecorderBefore(model::StreamId rs, int64_t rec_corr) const;  // flat index or kNone

  const model::Trace& t_;
  const PathInputs& in_;
  // The dependency graph whose event-wait edges (recorded and inferred) the walks follow: the
  // caller's (PathInputs::graph), else one built here. Its GPU nodes are the flat indexes.
  std::optional<graph::Graph> own_graph_;
  const graph::Graph* graph_ = nullptr;
  // Views of the graph's per-node arrays (the flat index is the graph's GPU node).
  absl::Span<const int32_t> flat_[3];          // per kind, per activity: its flat index
  absl::Span<const int32_t> off_;              // per stream: its first flat index (size streams + 1)
  absl::Span<const int64_t> start_, end_;      // per flat index
  absl::Span<const model::StreamId> stream_;   // per flat index
  absl::Span<const model::GpuRef> ref_;        // per flat index
  absl::Span<const int32_t> launch_;           // per flat index: Trace::LaunchOf
  absl::Span<const model::StringId> name_;     // per flat index
  std::vector<ActivityClass> cls_;             // per flat index
  std::vector<model::CollectiveId> coll_;      // per flat index: the collective a comm activity carries
  std::vector<model::ProcessId> stream_proc_;  // per stream: its process
  bool any_peer_ = false;                      // some collective waited for a peer
  std::vector<Recorded> recorded_;             // by recording stream of event syncs (filled for those only)
  std::vector<std::vector<int32_t>> blocked_;  // per thread: BlockingResult::intervals indexes by start
  std::vector<std::vector<int32_t>> calls_;    // per thread: outermost API calls by start
  std::vector<ThreadRanges> ranges_;           // per thread
  std::vector<std::vector<std::pair<int64_t, int64_t>>> nccl_;  // per thread: NCCL-domain ranges
  std::vector<PeerDep> peer_;                                   // per collective (first carriers only matter)
  // Event syncs: the release (recorder, flat index) per BlockingResult interval when the event's
  // record is known, else kNone.
  std::vector<int32_t> event_release_;
  std::vector<uint8_t> waits_into_;  // per flat index: an event-wait edge or unresolved waits into it
};

// Where a walk begins.
struct WalkStart {
  enum Mode : uint8_t {
    kGpuEnd,      // inside GPU activity `gpu`, at `t` (normally its end)
    kGpuArrival,  // just before GPU activity `gpu`: what made it runnable by `t`
    kHost,        // host thread `thread` at `t`
  } mode = kHost;
  model::GpuRef gpu;
  model::ThreadId thread = model::kNone;
  int64_t t = 0;
};

struct WalkOutcome {
  PathStop stop = PathStop::kReachedStart;
  int64_t start_ns = 0;  // where the path begins (the cursor when the walk stopped)
};

class PathWalker {
 public:
  explicit PathWalker(const PathIndex& ix) : ix_(ix), t_(ix.t_) {}
  // floor: per process, the time below which the walk stops. follow_peers: cross ranks at
  // collectives (else a collective's wait for its last peer is a kWaitPeers segment).
  WalkOutcome Walk(const WalkStart& s, absl::Span<const int64_t> floor, bool follow_peers,
                   std::vector<PathSegment>* out, PathCounts* counts) const;

 private:
  struct Pred {
    enum Kind : uint8_t { kNone, kStream, kWait, kLaunch } kind = kNone;
    int64_t ready = INT64_MIN;
    int32_t gpu = model::kNone;  // flat index
    int32_t api = model::kNone;
  };
  // Where the walk is: a host thread at t, or GPU activity g (flat index) in a WalkStart mode.
  struct Cursor {
    WalkStart::Mode mode = WalkStart::kHost;
    int32_t g = model::kNone;  // GPU modes: flat index of the activity
    model::ThreadId thread = model::kNone;
    int64_t t = 0;
    bool Same(const Cursor& o) const {
      return mode == o.mode && (mode == WalkStart::kHost ? thread == o.thread : g == o.g);
    }
  };
  // One step of the walk from `cur` (moved back in time, segments appended to out): the
  // outcome when the walk stops there, nullopt to go on from the moved cursor.
  std::optional<WalkOutcome> HostStep(Cursor& cur, absl::Span<const int64_t> floor, std::vector<PathSegment>* out,
                                      PathCounts* counts) const;
  std::optional<WalkOutcome> GpuStep(Cursor& cur, absl::Span<const int64_t> floor, bool follow_peers,
                                     std::vector<PathSegment>* out, PathCounts* counts) const;
  std::optional<WalkOutcome> GpuWork(Cursor& cur, int64_t f, bool follow_peers, std::vector<PathSegment>* out,
                                     bool* crossed) const;
  Pred BindingPred(int32_t g, int64_t c, PathCounts* counts) const;
  int64_t LaunchReady(int32_t api, int32_t g) const;
  // Host time [lo, hi) on thread th, split into API calls, recorded ops and untraced time.
  void EmitHost(model::ThreadId th, model::ProcessId p, int64_t lo, int64_t hi, std::vector<PathSegment>* out) const;
  void EmitGap(model::ThreadId th, model::ProcessId p, int64_t lo, int64_t hi, std::vector<PathSegment>* out) const;
  // The collective activity g carries when it is a comm activity (kNone otherwise, and memsets).
  model::CollectiveId CollectiveOf(int32_t g) const;

  const PathIndex& ix_;
  const model::Trace& t_;
};

// The analyses on an index built by the caller (AnalyzePaths shares one between them).
CriticalPathResult CriticalPathOn(const PathIndex& ix, const CriticalPathOptions& opt);
StragglerResult StragglerCausesOn(const PathIndex& ix, const StragglerOptions& opt);

}  // namespace overlapscope::analyze
