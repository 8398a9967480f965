// PathWalker::Walk: the state machine of one backward walk (critical_path.h).
#include <algorithm>
#include <climits>
#include <optional>

#include "analyze/graph/device_sms.h"
#include "analyze/path_walker.h"

namespace overlapscope::analyze {

using model::GpuRef;
using model::kNone;

namespace {

PathCategory GpuCategory(ActivityClass c) {
  switch (c) {
    case ActivityClass::kCompute: return PathCategory::kCompute;
    case ActivityClass::kComm: return PathCategory::kComm;
    case ActivityClass::kMemory: return PathCategory::kMemory;
    case ActivityClass::kSync: break;  // a GPU-side wait is waiting, not work
  }
  return PathCategory::kGpuGap;
}

PathSegment Seg(int64_t a, int64_t b, PathCategory cat, model::ProcessId p) {
  PathSegment x;
  x.start_ns = a, x.end_ns = b, x.category = cat, x.process = p;
  return x;
}

// The least of a launch's share of a gap, when twice the stream's launch latency is smaller or
// unknown: well above a launch's usual 5-30 us (HTA counts those as launch overhead too), well
// below the milliseconds an activity can sit behind unrecorded work.
constexpr int64_t kLaunchSlackNs = 100'000;

// Zero-length segments are left out: they carry no time.
void Push(const PathSegment& x, std::vector<PathSegment>* out) {
  if (x.end_ns > x.start_ns) out->push_back(x);
}

}  // namespace

WalkOutcome PathWalker::Walk(const WalkStart& s, absl::Span<const int64_t> floor, bool follow_peers,
                             std::vector<PathSegment>* out, PathCounts* counts) const {
  Cursor cur{s.mode, s.mode == WalkStart::kHost ? kNone : ix_.Flat(s.gpu), s.thread, s.t};
  // Guard: states visited at the current cursor time (a walk must move back in time, or at
  // least not return to a state at the same time; only zero-length nodes can tempt it).
  std::vector<Cursor> at_t;
  int64_t last_t = INT64_MAX;
  for (;;) {
    if (cur.t < last_t) {
      last_t = cur.t;
      at_t.clear();
    }
    for (const Cursor& v : at_t)
      if (v.Same(cur)) {
        ++counts->guard_stops;
        return {PathStop::kGuard, cur.t};
      }
    at_t.push_back(cur);
    const std::optional<WalkOutcome> stop = cur.mode == WalkStart::kHost
                                                ? HostStep(cur, floor, out, counts)
                                                : GpuStep(cur, floor, follow_peers, out, counts);
    if (stop) return *stop;
  }
}

// On a host thread: the time back to the blocked interval containing the cursor (or the last
// one before it) is host work; a blocked interval is host-blocked time back to the GPU activity
// that released it (the walk goes on from that activity's end), or to its start when nothing is
// known to have released it.
std::optional<WalkOutcome> PathWalker::HostStep(Cursor& cur, absl::Span<const int64_t> floor,
                                                std::vector<PathSegment>* out, PathCounts* counts) const {
  const model::ThreadId th = cur.thread;
  const model::ProcessId p = t_.ProcessOfThread(th);
  const int64_t f = floor[p];
  if (cur.t <= f) return WalkOutcome{PathStop::kReachedStart, f};
  const auto& bl = ix_.blocked_[th];
  const auto& iv = ix_.in_.blocking->intervals;
  // The blocking interval containing the cursor (start < t <= end), else the last before it.
  auto it = std::lower_bound(bl.begin(), bl.end(), cur.t, [&](int32_t i, int64_t v) { return iv[i].start_ns < v; });
  const BlockedInterval* b = nullptr;
  int32_t bi = kNone;
  int64_t prev_end = INT64_MIN;
  if (it != bl.begin()) {
    bi = *(it - 1);
    if (iv[bi].end_ns >= cur.t)
      b = &iv[bi];
    else
      prev_end = iv[bi].end_ns;
  }
  if (b == nullptr) {
    const int64_t lo = std::max(prev_end, f);
    EmitHost(th, p, lo, cur.t, out);
    cur.t = lo;
    if (lo <= f) return WalkOutcome{PathStop::kReachedStart, f};
    return std::nullopt;
  }
  int32_t rel = ix_.event_release_[bi];
  if (rel == kNone && b->released_by) rel = ix_.Flat(*b->released_by);
  const bool has_rel = rel != kNone;
  PathSegment x = Seg(0, cur.t, PathCategory::kHostBlocked, p);
  x.thread = th, x.api_call = b->api_call, x.name = b->call;
  const int64_t rel_end = has_rel ? ix_.end_[rel] : INT64_MIN;
  if (has_rel && rel_end > b->start_ns && rel_end <= cur.t) {
    x.start_ns = std::max(rel_end, f);
    Push(x, out);
    if (rel_end <= f) return WalkOutcome{PathStop::kReachedStart, f};
    cur = {WalkStart::kGpuEnd, rel, kNone, rel_end};
    return std::nullopt;
  }
  if (!has_rel) ++counts->syncs_without_release;
  x.start_ns = std::max(b->start_ns, f);
  Push(x, out);
  cur.t = x.start_ns;
  if (cur.t <= f) return WalkOutcome{PathStop::kReachedStart, f};
  return std::nullopt;
}

// On a GPU activity: its work (from its end mode: back to where its last peer arrived, for a
// collective's first carrier), then the gap before it back to what made it runnable (the
// binding predecessor: the previous activity of its stream, a stream wait's recorder, or its
// launch call, where the walk goes on).
std::optional<WalkOutcome> PathWalker::GpuStep(Cursor& cur, absl::Span<const int64_t> floor, bool follow_peers,
                                               std::vector<PathSegment>* out, PathCounts* counts) const {
  const int32_t g = cur.g;
  const model::StreamId st = ix_.stream_[g];
  const model::ProcessId p = ix_.stream_proc_[st];
  const int64_t f = floor[p];
  const int64_t start = ix_.start_[g];
  int64_t c = std::min(cur.t, start);
  if (cur.mode == WalkStart::kGpuEnd) {
    bool crossed = false;
    if (std::optional<WalkOutcome> stop = GpuWork(cur, f, follow_peers, out, &crossed)) return stop;
    if (crossed) return std::nullopt;
    c = start;
  }
  // What made `a` runnable by c.
  const Pred pr = BindingPred(g, c, counts);
  if (pr.kind == Pred::kNone) {
    ++counts->no_predecessor_stops;
    return WalkOutcome{PathStop::kNoPredecessor, c};
  }
  // Held back by another stream's kernel that filled the device: the path goes on through it (its
  // work up to g's start is on the path), after the moment between its end and g's start.
  if (const int32_t h = graph::SmHolderAt(t_, *ix_.graph_, g, pr.ready, c); h != kNone) {
    ++counts->sm_holders;
    const int64_t held_until = std::min(c, ix_.end_[h]);
    PathSegment after = Seg(std::max(held_until, f), c, PathCategory::kGpuGap, p);
    after.stream = st, after.gpu = ix_.Ref(g);
    Push(after, out);
    if (held_until <= f) return WalkOutcome{PathStop::kReachedStart, f};
    cur = {WalkStart::kGpuEnd, h, kNone, held_until};
    return std::nullopt;
  }
  PathSegment gap = Seg(std::max(pr.ready, f), c, PathCategory::kGpuGap, p);
  gap.stream = st, gap.gpu = ix_.Ref(g);
  if (pr.kind == Pred::kLaunch) {
    // The GPU waited for the host for the launch's usual latency at most: an activity that
    // starts much later than that after its launch, with nothing recorded holding it (a NCCL
    // kernel kept out by a GEMM holding every SM), was not waiting for the host; the rest of the
    // gap stays unexplained (GPU gaps).
    const int64_t host_until = std::min(c, pr.ready + std::max(kLaunchSlackNs, 2 * ix_.graph_->LaunchLatencyNs(st)));
    if (host_until < c) {
      PathSegment rest = gap;
      rest.start_ns = std::max(host_until, f);
      Push(rest, out);
      gap.end_ns = rest.start_ns;
    }
    gap.category = PathCategory::kGpuWaitHost;
    gap.api_call = pr.api;
    gap.thread = t_.api_calls()[pr.api].thread;
    gap.name = t_.api_calls()[pr.api].name;
  }
  Push(gap, out);
  if (pr.ready <= f) return WalkOutcome{PathStop::kReachedStart, f};
  if (pr.kind == Pred::kLaunch)
    cur = {WalkStart::kHost, kNone, t_.api_calls()[pr.api].thread, pr.ready};
  else
    cur = {WalkStart::kGpuEnd, pr.gpu, kNone, pr.ready};
  return std::nullopt;
}

// The work of GPU activity cur.g back from the cursor. A collective's first carrier begins its
// work when the last participant arrives: before that it waited for peers, which is the last
// peer's path (follow_peers: the cursor moves to that peer's arrival, *crossed) or a kWaitPeers
// segment.
std::optional<WalkOutcome> PathWalker::GpuWork(Cursor& cur, int64_t f, bool follow_peers, std::vector<PathSegment>* out,
                                               bool* crossed) const {
  const int32_t g = cur.g;
  const model::StreamId st = ix_.stream_[g];
  const model::ProcessId p = ix_.stream_proc_[st];
  const int64_t start = ix_.start_[g];
  int64_t split = start;
  const model::CollectiveId coll = ix_.any_peer_ ? CollectiveOf(g) : kNone;
  const PathIndex::PeerDep* dep = nullptr;
  if (coll != kNone && ix_.peer_[coll].last != kNone && ix_.peer_[coll].last != coll) {
    const auto carriers = t_.CollectiveActivities(coll);
    if (!carriers.empty() && ix_.Flat(carriers.front()) == g) {
      dep = &ix_.peer_[coll];
      split = std::clamp(dep->last_arrival, start, std::max(start, cur.t));
    }
  }
  PathSegment x = Seg(std::max(split, f), cur.t, GpuCategory(ix_.cls_[g]), p);
  x.stream = st, x.gpu = ix_.Ref(g), x.name = ix_.name_[g];
  Push(x, out);
  if (split <= f) return WalkOutcome{PathStop::kReachedStart, f};
  if (split > start) {
    if (follow_peers) {
      const auto q = t_.CollectiveActivities(dep->last);
      if (!q.empty()) {
        cur = {WalkStart::kGpuArrival, ix_.Flat(q.front()), kNone, split};
        *crossed = true;
        return std::nullopt;
      }
    }
    PathSegment w = Seg(std::max(start, f), split, PathCategory::kWaitPeers, p);
    w.stream = st, w.gpu = x.gpu, w.name = x.name;
    Push(w, out);
    if (start <= f) return WalkOutcome{PathStop::kReachedStart, f};
  }
  return std::nullopt;
}

}  // namespace overlapscope::analyze
