// Critical path per iteration (METRICS §8): where each walk starts and stops, and what lies on it.
#include "analyze/critical_path.h"

#include <algorithm>
#include <climits>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "analyze/name_sums.h"
#include "analyze/path_walker.h"

namespace overlapscope::analyze {

using model::GpuRef;
using model::kNone;

std::string_view ToString(PathCategory c) {
  switch (c) {
    case PathCategory::kCompute: return "compute";
    case PathCategory::kComm: return "comm";
    case PathCategory::kMemory: return "memory";
    case PathCategory::kHostLaunch: return "host_launch";
    case PathCategory::kHostUntraced: return "host_untraced";
    case PathCategory::kHostBlocked: return "host_blocked";
    case PathCategory::kGpuWaitHost: return "gpu_wait_host";
    case PathCategory::kGpuGap: return "gpu_gap";
    case PathCategory::kWaitPeers: return "wait_peers";
  }
  return "?";
}

std::string_view ToString(PathStop s) {
  switch (s) {
    case PathStop::kReachedStart: return "reached-start";
    case PathStop::kNoPredecessor: return "no-predecessor";
    case PathStop::kGuard: return "guard";
  }
  return "?";
}

int64_t PathComposition::Total() const {
  int64_t s = 0;
  for (int64_t x : ns) s += x;
  return s;
}

void PathComposition::Add(const PathComposition& o) {
  for (int i = 0; i < kPathCategories; ++i) ns[i] += o.ns[i];
}

namespace {

// Where a walk ends (its last node) on one process for one iteration group.
struct EndNode {
  int64_t t = INT64_MIN;
  WalkStart start;
};

void Offer(EndNode& e, int64_t t, const WalkStart& s) {
  if (t > e.t) e = {t, s};
}

void Tally(const std::vector<PathSegment>& segs, PathComposition* total, std::vector<PathComposition>* by_proc,
           std::vector<uint8_t>* touched, NameSums* top) {
  for (const PathSegment& s : segs) {
    const int64_t len = s.end_ns - s.start_ns;
    const int c = static_cast<int>(s.category);
    total->ns[c] += len;
    if (by_proc != nullptr && s.process != kNone) {
      (*by_proc)[s.process].ns[c] += len;
      (*touched)[s.process] = 1;
    }
    if (top != nullptr) top->Add(s.name, s.category, len);
  }
}

std::vector<PathActivity> TopOf(const NameSums& m, size_t n) {
  std::vector<PathActivity> v;
  for (const NameSums::Entry& e : m.entries())
    for (int c = 0; c < kPathCategories; ++c)
      if (e.segments[c] > 0) v.push_back({e.name, static_cast<PathCategory>(c), e.ns[c], e.segments[c]});
  auto by_time = [](const PathActivity& a, const PathActivity& b) {
    if (a.ns != b.ns) return a.ns > b.ns;
    if (a.category != b.category) return a.category < b.category;
    return a.name < b.name;
  };
  if (v.size() > n) {
    std::partial_sort(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n), v.end(), by_time);
    v.resize(n);
  } else {
    std::sort(v.begin(), v.end(), by_time);
  }
  return v;
}

// Per process: the earliest event (the floor of a whole-trace walk) and its last node.
void WholeTraceBounds(const model::Trace& t, std::vector<int64_t>* first, std::vector<EndNode>* last) {
  const size_t np = t.processes().size();
  first->assign(np, INT64_MAX);
  last->assign(np, EndNode{});
  for (const model::ApiCall& a : t.api_calls()) {
    if (a.thread == kNone) continue;
    const model::ProcessId p = t.ProcessOfThread(a.thread);
    (*first)[p] = std::min((*first)[p], a.start_ns);
    WalkStart s;
    s.mode = WalkStart::kHost, s.thread = a.thread, s.t = a.end_ns;
    Offer((*last)[p], a.end_ns, s);
  }
  for (size_t d = 0; d < t.devices().size(); ++d) {
    const model::ProcessId p = t.devices()[d].process;
    for (GpuRef r : t.DeviceActivities(static_cast<model::DeviceId>(d))) {
      (*first)[p] = std::min((*first)[p], t.StartNs(r));
      WalkStart s;
      s.mode = WalkStart::kGpuEnd, s.gpu = r, s.t = t.EndNs(r);
      Offer((*last)[p], s.t, s);
    }
  }
}

// The critical path of every iteration group, in steps: the groups and each iteration's last
// node (Groups), the floors and ends of a whole-trace walk when there are no iterations
// (WholeTrace), per group the floors and ends per process (Bounds), each process's own path
// (OwnPaths) and the job's path across ranks from the last node of all (JobPath).
class CriticalPathRun {
 public:
  CriticalPathRun(const PathIndex& ix, const CriticalPathOptions& opt)
      : t_(ix.trace()),
        in_(ix.inputs()),
        opt_(opt),
        np_(t_.processes().size()),
        walker_(ix),
        its_(in_.iterations->iterations),
        top_all_(t_.strings().size()),
        top_it_(t_.strings().size()),
        floor_(np_, INT64_MIN),
        ends_(np_),
        by_proc_(np_),
        touched_(np_) {}

  CriticalPathResult Run() {
    Groups();
    if (its_.empty()) WholeTrace();
    res_.own_total.resize(np_);
    for (size_t p = 0; p < np_; ++p)
      res_.own_total[p].process = static_cast<model::ProcessId>(p), res_.own_total[p].rank = t_.processes()[p].rank;
    for (const auto& [number, members] : groups_) {
      IterationPath ip;
      ip.number = number;
      Bounds(members);
      top_it_.Clear();
      const int32_t last_p = OwnPaths(ip);
      if (last_p == kNone) continue;
      JobPath(last_p, ip);
      res_.total.Add(ip.total);
      res_.iterations.push_back(std::move(ip));
    }
    res_.top = TopOf(top_all_, opt_.top_n);
    return std::move(res_);
  }

 private:
  void Groups();
  void WholeTrace();
  void Bounds(const std::vector<int32_t>& members);
  int32_t OwnPaths(IterationPath& ip);
  void JobPath(int32_t last_p, IterationPath& ip);

  const model::Trace& t_;
  const PathInputs& in_;
  const CriticalPathOptions& opt_;
  const size_t np_;
  PathWalker walker_;
  const std::vector<Iteration>& its_;
  CriticalPathResult res_;
  std::map<int64_t, std::vector<int32_t>> groups_;  // iteration number -> its iterations (-1: whole trace)
  std::vector<EndNode> it_end_;                     // per iteration: its last node
  std::vector<int64_t> whole_first_;                // no iterations: per process, its floor
  std::vector<EndNode> whole_last_;                 // no iterations: per process, its last node
  NameSums top_all_, top_it_;
  std::vector<PathSegment> segs_;
  // Per process, for the group being walked: the floor and the last node; the job path's time.
  std::vector<int64_t> floor_;
  std::vector<EndNode> ends_;
  std::vector<PathComposition> by_proc_;
  std::vector<uint8_t> touched_;
};

// Groups of iterations by number (ProfilerStep#N on every rank); per iteration its last node:
// the iteration's host range end, or a later end of GPU work assigned to it.
void CriticalPathRun::Groups() {
  const IterationAssignment& ia = *in_.iterations;
  it_end_.assign(its_.size(), EndNode{});
  for (const Iteration& it : its_) {
    groups_[it.number].push_back(it.index);
    WalkStart s;
    s.mode = WalkStart::kHost, s.thread = it.thread, s.t = it.end_ns;
    if (it.thread != kNone) Offer(it_end_[it.index], it.end_ns, s);
  }
  auto scan = [&](model::GpuKind kind, const auto& acts, const std::vector<int32_t>& of) {
    for (size_t i = 0; i < acts.size(); ++i) {
      if (of[i] == kNone || acts[i].end_ns <= it_end_[of[i]].t) continue;
      WalkStart s;
      s.mode = WalkStart::kGpuEnd, s.gpu = {kind, static_cast<int32_t>(i)}, s.t = acts[i].end_ns;
      it_end_[of[i]] = {s.t, s};
    }
  };
  scan(model::GpuKind::kKernel, t_.kernels(), ia.kernel_iteration);
  scan(model::GpuKind::kMemcpy, t_.memcpys(), ia.memcpy_iteration);
  scan(model::GpuKind::kMemset, t_.memsets(), ia.memset_iteration);
}

// No iterations: one group (-1), the whole trace, each process walked from its last node down
// to its first event; own captures from the process's first capture window on, its start-up
// left out.
void CriticalPathRun::WholeTrace() {
  WholeTraceBounds(t_, &whole_first_, &whole_last_);
  std::vector<int64_t> first_window(np_, INT64_MAX);
  for (const WindowFigures& w : in_.windows)
    if (w.process >= 0 && static_cast<size_t>(w.process) < np_)
      first_window[w.process] = std::min(first_window[w.process], w.start_ns);
  for (size_t p = 0; p < np_; ++p)
    if (whole_first_[p] != INT64_MAX && first_window[p] != INT64_MAX)
      whole_first_[p] = std::max(whole_first_[p], first_window[p]);
  groups_[-1] = {};
}

// Floors and ends per process: its own iteration, else the group's earliest start.
void CriticalPathRun::Bounds(const std::vector<int32_t>& members) {
  if (its_.empty()) {
    for (size_t p = 0; p < np_; ++p) floor_[p] = whole_first_[p] == INT64_MAX ? INT64_MIN : whole_first_[p];
    ends_ = whole_last_;
    return;
  }
  int64_t lo = INT64_MAX;
  for (int32_t i : members) lo = std::min(lo, its_[i].start_ns);
  std::fill(floor_.begin(), floor_.end(), lo);
  std::fill(ends_.begin(), ends_.end(), EndNode{});
  for (int32_t i : members) {
    floor_[its_[i].process] = its_[i].start_ns;
    if (it_end_[i].t > ends_[its_[i].process].t) ends_[its_[i].process] = it_end_[i];
  }
}

// Each process's own path (not crossing to peers at collectives). Returns the process with the
// last node of all (kNone: no process has one), where the job's path starts.
int32_t CriticalPathRun::OwnPaths(IterationPath& ip) {
  int32_t last_p = kNone;
  for (size_t p = 0; p < np_; ++p) {
    if (ends_[p].t == INT64_MIN) continue;
    if (last_p == kNone || ends_[p].t > ends_[last_p].t) last_p = static_cast<int32_t>(p);
    segs_.clear();
    RankPath rp;
    rp.process = static_cast<model::ProcessId>(p);
    rp.rank = t_.processes()[p].rank;
    rp.end_ns = ends_[p].t;
    WalkOutcome o = walker_.Walk(ends_[p].start, floor_, false, &segs_, &res_.counts);
    rp.start_ns = o.start_ns;
    rp.stop = o.stop;
    Tally(segs_, &rp.composition, nullptr, nullptr, nullptr);
    res_.own_total[p].composition.Add(rp.composition);
    ip.own.push_back(rp);
  }
  return last_p;
}

// The job's path: from the last node of all, across ranks at collectives; its composition in
// total and per rank it touched, and its top activities (also summed over all groups).
void CriticalPathRun::JobPath(int32_t last_p, IterationPath& ip) {
  segs_.clear();
  std::fill(by_proc_.begin(), by_proc_.end(), PathComposition{});
  std::fill(touched_.begin(), touched_.end(), 0);
  WalkOutcome o = walker_.Walk(ends_[last_p].start, floor_, true, &segs_, &res_.counts);
  ip.start_ns = o.start_ns;
  ip.end_ns = ends_[last_p].t;
  ip.stop = o.stop;
  ip.end_process = last_p;
  Tally(segs_, &ip.total, &by_proc_, &touched_, &top_it_);
  for (size_t p = 0; p < np_; ++p) {
    if (!touched_[p]) continue;
    RankPath rp;
    rp.process = static_cast<model::ProcessId>(p);
    rp.rank = t_.processes()[p].rank;
    rp.composition = by_proc_[p];
    ip.on_rank.push_back(rp);
  }
  for (const NameSums::Entry& e : top_it_.entries())
    for (int c = 0; c < kPathCategories; ++c)
      if (e.segments[c] > 0) top_all_.Add(e.name, static_cast<PathCategory>(c), e.ns[c], e.segments[c]);
  ip.top = TopOf(top_it_, opt_.top_n);
  if (opt_.keep_segments) ip.segments.assign(segs_.rbegin(), segs_.rend());
}

}  // namespace

CriticalPathResult AnalyzeCriticalPath(const model::Trace& t, const PathInputs& in, const CriticalPathOptions& opt) {
  PathIndex ix(t, in);
  return CriticalPathOn(ix, opt);
}

CriticalPathResult CriticalPathOn(const PathIndex& ix, const CriticalPathOptions& opt) {
  return CriticalPathRun(ix, opt).Run();
}

}  // namespace overlapscope::analyze
