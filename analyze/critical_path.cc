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

}  // namespace

CriticalPathResult AnalyzeCriticalPath(const model::Trace& t, const PathInputs& in, const CriticalPathOptions& opt) {
  PathIndex ix(t, in);
  return CriticalPathOn(ix, opt);
}

CriticalPathResult CriticalPathOn(const PathIndex& ix, const CriticalPathOptions& opt) {
  const model::Trace& t = ix.trace();
  const PathInputs& in = ix.inputs();
  CriticalPathResult res;
  const size_t np = t.processes().size();
  PathWalker walker(ix);
  const IterationAssignment& ia = *in.iterations;
  const auto& its = ia.iterations;

  // Groups of iterations by number (ProfilerStep#N on every rank); per iteration its last node.
  std::map<int64_t, std::vector<int32_t>> groups;
  std::vector<EndNode> it_end(its.size());
  for (const Iteration& it : its) {
    groups[it.number].push_back(it.index);
    WalkStart s;
    s.mode = WalkStart::kHost, s.thread = it.thread, s.t = it.end_ns;
    if (it.thread != kNone) Offer(it_end[it.index], it.end_ns, s);
  }
  auto scan = [&](model::GpuKind kind, const auto& acts, const std::vector<int32_t>& of) {
    for (size_t i = 0; i < acts.size(); ++i) {
      if (of[i] == kNone || acts[i].end_ns <= it_end[of[i]].t) continue;
      WalkStart s;
      s.mode = WalkStart::kGpuEnd, s.gpu = {kind, static_cast<int32_t>(i)}, s.t = acts[i].end_ns;
      it_end[of[i]] = {s.t, s};
    }
  };
  scan(model::GpuKind::kKernel, t.kernels(), ia.kernel_iteration);
  scan(model::GpuKind::kMemcpy, t.memcpys(), ia.memcpy_iteration);
  scan(model::GpuKind::kMemset, t.memsets(), ia.memset_iteration);

  std::vector<int64_t> whole_first;
  std::vector<EndNode> whole_last;
  if (its.empty()) {
    WholeTraceBounds(t, &whole_first, &whole_last);
    // Own captures: from the process's first capture window on, its start-up left out.
    std::vector<int64_t> first_window(np, INT64_MAX);
    for (const WindowFigures& w : in.windows)
      if (w.process >= 0 && static_cast<size_t>(w.process) < np)
        first_window[w.process] = std::min(first_window[w.process], w.start_ns);
    for (size_t p = 0; p < np; ++p)
      if (whole_first[p] != INT64_MAX && first_window[p] != INT64_MAX)
        whole_first[p] = std::max(whole_first[p], first_window[p]);
    groups[-1] = {};
  }

  res.own_total.resize(np);
  for (size_t p = 0; p < np; ++p)
    res.own_total[p].process = static_cast<model::ProcessId>(p), res.own_total[p].rank = t.processes()[p].rank;
  NameSums top_all(t.strings().size()), top_it(t.strings().size());
  std::vector<PathSegment> segs;
  std::vector<int64_t> floor(np, INT64_MIN);
  std::vector<EndNode> ends(np);
  std::vector<PathComposition> by_proc(np);
  std::vector<uint8_t> touched(np);
  for (const auto& [number, members] : groups) {
    IterationPath ip;
    ip.number = number;
    // Floors and ends per process: its own iteration, else the group's earliest start.
    if (its.empty()) {
      for (size_t p = 0; p < np; ++p) floor[p] = whole_first[p] == INT64_MAX ? INT64_MIN : whole_first[p];
      ends = whole_last;
    } else {
      int64_t lo = INT64_MAX;
      for (int32_t i : members) lo = std::min(lo, its[i].start_ns);
      std::fill(floor.begin(), floor.end(), lo);
      std::fill(ends.begin(), ends.end(), EndNode{});
      for (int32_t i : members) {
        floor[its[i].process] = its[i].start_ns;
        if (it_end[i].t > ends[its[i].process].t) ends[its[i].process] = it_end[i];
      }
    }
    // Each process's own path, then the job's from the last node of all.
    int32_t last_p = kNone;
    top_it.Clear();
    for (size_t p = 0; p < np; ++p) {
      if (ends[p].t == INT64_MIN) continue;
      if (last_p == kNone || ends[p].t > ends[last_p].t) last_p = static_cast<int32_t>(p);
      segs.clear();
      RankPath rp;
      rp.process = static_cast<model::ProcessId>(p);
      rp.rank = t.processes()[p].rank;
      rp.end_ns = ends[p].t;
      WalkOutcome o = walker.Walk(ends[p].start, floor, false, &segs, &res.counts);
      rp.start_ns = o.start_ns;
      rp.stop = o.stop;
      Tally(segs, &rp.composition, nullptr, nullptr, nullptr);
      res.own_total[p].composition.Add(rp.composition);
      ip.own.push_back(rp);
    }
    if (last_p == kNone) continue;
    segs.clear();
    std::fill(by_proc.begin(), by_proc.end(), PathComposition{});
    std::fill(touched.begin(), touched.end(), 0);
    WalkOutcome o = walker.Walk(ends[last_p].start, floor, true, &segs, &res.counts);
    ip.start_ns = o.start_ns;
    ip.end_ns = ends[last_p].t;
    ip.stop = o.stop;
    ip.end_process = last_p;
    Tally(segs, &ip.total, &by_proc, &touched, &top_it);
    for (size_t p = 0; p < np; ++p) {
      if (!touched[p]) continue;
      RankPath rp;
      rp.process = static_cast<model::ProcessId>(p);
      rp.rank = t.processes()[p].rank;
      rp.composition = by_proc[p];
      ip.on_rank.push_back(rp);
    }
    for (const NameSums::Entry& e : top_it.entries())
      for (int c = 0; c < kPathCategories; ++c)
        if (e.segments[c] > 0) top_all.Add(e.name, static_cast<PathCategory>(c), e.ns[c], e.segments[c]);
    ip.top = TopOf(top_it, opt.top_n);
    res.total.Add(ip.total);
    if (opt.keep_segments) ip.segments.assign(segs.rbegin(), segs.rend());
    res.iterations.push_back(std::move(ip));
  }
  res.top = TopOf(top_all, opt.top_n);
  return res;
}

}  // namespace overlapscope::analyze
