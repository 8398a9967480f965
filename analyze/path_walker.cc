// PathWalker: one backward walk along binding dependencies (critical_path.h).
#include "analyze/path_walker.h"

#include <algorithm>
#include <climits>

namespace overlapscope::analyze {

using model::GpuRef;
using model::kNone;

namespace {

void Emit(std::vector<PathSegment>* out, const PathSegment& s) {
  if (s.end_ns > s.start_ns) out->push_back(s);
}

}  // namespace

model::CollectiveId PathWalker::CollectiveOf(int32_t g) const { return ix_.coll_[g]; }

int64_t PathWalker::LaunchReady(int32_t api, int32_t g) const {
  const model::ApiCall& call = t_.api_calls()[api];
  // A collective is called when NCCL's range around the call starts (collective_arrival.h (a)).
  if (ix_.nccl_.empty() || call.thread == kNone || static_cast<size_t>(call.thread) >= ix_.nccl_.size() ||
      CollectiveOf(g) == kNone)
    return call.start_ns;
  const auto& v = ix_.nccl_[call.thread];
  auto it = std::upper_bound(v.begin(), v.end(), std::pair<int64_t, int64_t>{call.start_ns, INT64_MAX});
  for (int k = 0; it != v.begin() && k < 64; ++k) {
    --it;
    if (it->second >= call.end_ns) return it->first;
  }
  return call.start_ns;
}

PathWalker::Pred PathWalker::BindingPred(int32_t g, int64_t c, PathCounts* counts) const {
  Pred best;
  // Candidates in increasing preference on ties: launch, event waits, stream predecessor.
  auto offer = [&](Pred p) {
    if (p.ready > c) {
      ++counts->backward_edges;
      return;
    }
    if (best.kind == Pred::kNone || p.ready >= best.ready) best = p;
  };
  int32_t api = ix_.launch_[g];
  if (api != kNone && t_.api_calls()[api].thread == kNone) api = kNone;  // no lane to continue on
  if (api != kNone)
    offer({Pred::kLaunch, LaunchReady(api, g), kNone, api});
  else
    ++counts->gpu_without_launch;
  const model::StreamId s = ix_.stream_[g];
  const int32_t prev = g > ix_.off_[s] ? g - 1 : kNone;
  // Cross-stream waits (recorded and inferred) from the dependency graph, whose GPU nodes are
  // the flat indexes; waits it could not place are counted.
  if (ix_.waits_into_[g]) counts->unresolved_waits += ix_.graph_->UnresolvedWaits(g);
  for (const graph::Edge& e : ix_.waits_into_[g] ? ix_.graph_->Preds(g) : graph::PredRange()) {
    if (e.kind != graph::EdgeKind::kEventWait) continue;
    const int32_t rec = e.from;
    if (ix_.start_[rec] >= c && ix_.end_[rec] > c) {
      ++counts->backward_edges;
      continue;
    }
    offer({Pred::kWait, std::min(ix_.end_[rec], c), rec, kNone});
  }
  if (prev != kNone) {
    if (ix_.start_[prev] >= c && ix_.end_[prev] > c)
      ++counts->backward_edges;
    else
      offer({Pred::kStream, std::min(ix_.end_[prev], c), prev, kNone});
  }
  return best;
}

void PathWalker::EmitGap(model::ThreadId th, model::ProcessId p, int64_t lo, int64_t hi,
                         std::vector<PathSegment>* out) const {
  // Covered parts are named by the innermost range around their middle; the rest is untraced.
  const PathIndex::ThreadRanges& tr = ix_.ranges_[th];
  const auto& cov = tr.cover.intervals();
  auto it = std::upper_bound(cov.begin(), cov.end(), hi, [](int64_t v, const Interval& iv) { return v < iv.start_ns; });
  int64_t cursor = hi;
  auto piece = [&](int64_t a, int64_t b, PathCategory cat, model::StringId name) {
    PathSegment s;
    s.start_ns = a, s.end_ns = b, s.category = cat, s.process = p, s.thread = th, s.name = name;
    Emit(out, s);
  };
  while (cursor > lo && it != cov.begin()) {
    --it;
    if (it->end_ns <= lo) break;
    if (it->end_ns < cursor) piece(std::max(it->end_ns, lo), cursor, PathCategory::kHostUntraced, 0);
    const int64_t a = std::max(it->start_ns, lo), b = std::min(it->end_ns, cursor);
    if (b > a) {
      // Innermost range containing the middle: the last starting at or before it, then up.
      const int64_t mid = a + (b - a) / 2;
      const auto& idx = tr.idx;
      const auto& ranges = t_.ranges();
      auto r =
          std::upper_bound(idx.begin(), idx.end(), mid, [&](int64_t v, int32_t i) { return v < ranges[i].start_ns; });
      int32_t k = static_cast<int32_t>(r - idx.begin()) - 1;
      while (k != kNone && ranges[idx[k]].end_ns <= mid) k = tr.parent[k];
      piece(a, b, PathCategory::kHostLaunch, k == kNone ? 0 : ranges[idx[k]].name);
    }
    cursor = a;
  }
  if (cursor > lo) piece(lo, cursor, PathCategory::kHostUntraced, 0);
}

void PathWalker::EmitHost(model::ThreadId th, model::ProcessId p, int64_t lo, int64_t hi,
                          std::vector<PathSegment>* out) const {
  const auto& calls = ix_.calls_[th];
  const auto& all = t_.api_calls();
  auto it =
      std::upper_bound(calls.begin(), calls.end(), hi, [&](int64_t v, int32_t i) { return v <= all[i].start_ns; });
  int64_t cursor = hi;
  while (cursor > lo && it != calls.begin()) {
    --it;
    const model::ApiCall& c = all[*it];
    if (c.end_ns <= lo) break;
    if (c.end_ns < cursor) EmitGap(th, p, std::max(c.end_ns, lo), cursor, out);
    const int64_t a = std::max(c.start_ns, lo), b = std::min(c.end_ns, cursor);
    PathSegment s;
    s.start_ns = a, s.end_ns = b, s.category = PathCategory::kHostLaunch, s.process = p, s.thread = th;
    s.api_call = *it, s.name = c.name;
    Emit(out, s);
    cursor = std::min(cursor, a);
  }
  if (cursor > lo) EmitGap(th, p, lo, cursor, out);
}

}  // namespace overlapscope::analyze
