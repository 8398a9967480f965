#include "analyze/replay/measure.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "analyze/replay/spans.h"

namespace overlapscope::analyze::replay {
namespace {

int64_t Length(const std::vector<Span>& u) {
  int64_t n = 0;
  for (const Span& s : u) n += s.second - s.first;
  return n;
}

// |a \ b| for two merged lists.
int64_t Minus(const std::vector<Span>& a, const std::vector<Span>& b) {
  int64_t out = 0;
  size_t j = 0;
  for (const Span& s : a) {
    int64_t covered = 0;
    while (j < b.size() && b[j].second <= s.first) ++j;
    for (size_t k = j; k < b.size() && b[k].first < s.second; ++k)
      covered += std::min(s.second, b[k].second) - std::max(s.first, b[k].first);
    out += (s.second - s.first) - covered;
  }
  return out;
}

}  // namespace

IterationNodes GroupByIteration(const NodeAttrs& a, int32_t iterations, const ZeroedVector<uint8_t>* skip) {
  IterationNodes idx;
  idx.off.assign(static_cast<size_t>(iterations) + 1, 0);
  auto keep = [&](int32_t v) {
    return a.iteration[v] >= 0 && a.iteration[v] < iterations && (skip == nullptr || !(*skip)[v]) &&
           a.cls[v] != GpuClass::kSync;
  };
  for (int32_t v = 0; v < a.num_gpu; ++v) {
    if (keep(v)) ++idx.off[a.iteration[v] + 1];
  }
  for (int32_t i = 0; i < iterations; ++i) idx.off[i + 1] += idx.off[i];
  idx.nodes.resize(static_cast<size_t>(idx.off.back()));
  std::vector<int64_t> fill(idx.off.begin(), idx.off.end() - 1);
  for (int32_t v = 0; v < a.num_gpu; ++v) {
    if (keep(v)) idx.nodes[fill[a.iteration[v]]++] = v;
  }
  return idx;
}

namespace {

// MergeSpans() in place: sorted, empty spans dropped, overlapping and touching ones joined
// (the buffer keeps its capacity for the next iteration).
void MergeInPlace(std::vector<Span>& v) {
  // A stream's activities come in start order: most lists are sorted already (checking is a
  // fraction of what sorting them again costs).
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
  size_t out = 0;
  for (const Span& s : v) {
    if (s.second <= s.first) continue;
    if (out > 0 && s.first <= v[out - 1].second) {
      v[out - 1].second = std::max(v[out - 1].second, s.second);
    } else {
      v[out++] = s;
    }
  }
  v.resize(out);
}

// Per device of an iteration: its comm and compute intervals. Kept per thread across calls: at
// 10 M nodes MeasureStep runs for every iteration and schedule, and fresh vectors each time
// were a good part of its cost.
struct DeviceSpans {
  model::DeviceId device = model::kNone;
  std::vector<Span> comm, compute;
};

// MeasureStep on the times start[v] and end_of(v).
template <typename EndOf>
StepFigures Measure(const IterationNodes& idx, int32_t it, const NodeAttrs& a, const std::vector<int64_t>& start,
                    EndOf end_of) {
  StepFigures f;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  // Per device: comm and compute intervals (devices of one rank are few).
  thread_local std::vector<DeviceSpans> per_dev;
  size_t devs = 0;
  for (int64_t i = idx.off[it]; i < idx.off[it + 1]; ++i) {
    const int32_t v = idx.nodes[i];
    lo = std::min(lo, start[v]);
    const int64_t end = end_of(v);
    hi = std::max(hi, end);
    if (a.cls[v] != GpuClass::kComm && a.cls[v] != GpuClass::kCompute) continue;
    auto dev = std::find_if(per_dev.begin(), per_dev.begin() + devs,
                            [&](const DeviceSpans& p) { return p.device == a.device[v]; });
    if (dev == per_dev.begin() + devs) {
      if (devs == per_dev.size()) per_dev.emplace_back();
      dev = per_dev.begin() + devs++;
      dev->device = a.device[v];
      dev->comm.clear();
      dev->compute.clear();
    }
    (a.cls[v] == GpuClass::kComm ? dev->comm : dev->compute).push_back({start[v], end});
  }
  if (lo == INT64_MAX) return f;
  f.step_ns = hi - lo;
  for (size_t d = 0; d < devs; ++d) {
    MergeInPlace(per_dev[d].comm);
    MergeInPlace(per_dev[d].compute);
    f.comm_ns += Length(per_dev[d].comm);
    f.exposed_comm_ns += Minus(per_dev[d].comm, per_dev[d].compute);
  }
  return f;
}

}  // namespace

StepFigures MeasureStep(const IterationNodes& idx, int32_t it, const NodeAttrs& a, const std::vector<int64_t>& start,
                        const std::vector<int64_t>& end) {
  return Measure(idx, it, a, start, [&](int32_t v) { return end[v]; });
}

StepFigures MeasureRecorded(const IterationNodes& idx, int32_t it, const NodeAttrs& a, const SimGraph& g) {
  return Measure(idx, it, a, g.rec_start.values(), [&](int32_t v) { return g.RecEnd(v); });
}

namespace {

void AddClipped(int64_t& acc, int64_t from, int64_t to, int64_t lo) {
  from = std::max(from, lo);
  if (to > from) acc += to - from;
}

int64_t& ClassSlot(PathComposition& p, GpuClass c) {
  switch (c) {
    case GpuClass::kCompute: return p.compute_ns;
    case GpuClass::kComm: return p.comm_ns;
    case GpuClass::kMemory: return p.memory_ns;
    case GpuClass::kSync: return p.sync_ns;
  }
  return p.compute_ns;
}

}  // namespace

PeerWait LongestPeerWait(const IterationNodes& idx, int32_t it, const SimGraph& g, const Schedule& s) {
  PeerWait w;
  for (int64_t i = idx.off[it]; i < idx.off[it + 1]; ++i) {
    const int32_t v = idx.nodes[i];
    if (g.group[v] < 0) continue;
    const int32_t b = s.bind_end[v];  // set only where the last member arrived after v
    if (b < 0 || b == v) continue;
    if (const int64_t wait = s.start[b] - s.start[v]; wait > w.wait_ns) w = {wait, b};
  }
  return w;
}

PathComposition WalkPath(const IterationNodes& idx, int32_t it, const NodeAttrs& a, const SimGraph& g,
                         const Schedule& s) {
  PathComposition p;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  int32_t v = -1;
  for (int64_t i = idx.off[it]; i < idx.off[it + 1]; ++i) {
    const int32_t n = idx.nodes[i];
    lo = std::min(lo, s.start[n]);
    if (s.end[n] > hi) {
      hi = s.end[n];
      v = n;
    }
  }
  if (v < 0) return p;
  bool at_end = true;  // walking into v from its end (else from its start)
  int64_t t = hi;      // how far back the path has been accounted
  for (int64_t guard = 0; v >= 0 && t > lo && guard < 4LL * g.num_nodes + 4; ++guard) {
    if (at_end) {
      const int32_t b = s.bind_end[v];
      const bool gpu = v < g.num_gpu;
      if (b >= 0 && g.group[v] >= 0) {  // a collective waiting for its last peer b
        const int64_t last = std::max(s.start[v], s.end[v] - g.transfer[v]);
        AddClipped(p.comm_ns, last, t, lo);
        t = std::min(t, s.start[b]);
        v = b;
        at_end = false;
        continue;
      }
      if (b >= 0) {  // a blocking call released by GPU activity b
        AddClipped(p.blocked_ns, s.end[b], t, lo);
        t = std::min(t, s.end[b]);
        v = b;
        continue;
      }
      AddClipped(gpu ? ClassSlot(p, a.cls[v]) : p.host_ns, s.start[v], t, lo);
      t = std::min(t, s.start[v]);
      at_end = false;
      continue;
    }
    const int32_t from = s.bind_start[v];
    if (from < 0) break;
    const Dep dep = s.bind_dep[v];
    const int64_t at = dep == Dep::kAfterStart ? s.start[from] : s.end[from];
    // Lags: host work between calls and launch latency are host time; a gap between two GPU
    // activities is the front end's switch (idle on the path).
    const bool host_lag = v >= g.num_gpu || from >= g.num_gpu;
    AddClipped(host_lag ? p.host_ns : p.idle_ns, at, t, lo);
    t = std::min(t, at);
    v = from;
    at_end = dep != Dep::kAfterStart;
  }
  if (t > lo) p.idle_ns += t - lo;
  return p;
}

}  // namespace overlapscope::analyze::replay
