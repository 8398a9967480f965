#include "analyze/iteration_clamp.h"

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include "base/no_init.h"
#include "base/run_all.h"

namespace overlapscope::analyze {
namespace {

// An activity whose launch call is not in the trace was launched before the recorded steps (the
// profiler's warm-up), after them, or its launch record was lost; its own start is a fair guess
// only while the host keeps pace with the GPU. Where the host runs ahead (the usual case: torch
// enqueues a step in a fraction of its GPU time), the warm-up steps' backlog runs during the host
// ranges of later recorded steps and the guess mixes it into them. A stream runs its work in launch
// order, so such an activity was launched after the launched activity before it on its stream and
// before the one after it: its iteration is clamped between theirs. With no launched activity
// before it and the next one launched in its process's first recorded step, it predates the
// recorded steps: no iteration. Only streams that hold such activities are sorted.
// 16 bytes (the slots' pages are most of the step's cost): the activity's start, its index and
// kind (0 kernels, 1 memcpys, 2 memsets), whether its launch call is in the trace.
struct Slot {
  int64_t start_ns;
  uint32_t index;
  uint8_t kind;
  bool launched;
};
static_assert(sizeof(Slot) == 16);

// The iteration of a slot's activity (IterationAssignment's vectors, by kind).
struct SlotIterations {
  int32_t* of[3];
  int32_t& operator()(const Slot& x) const { return of[x.kind][x.index]; }
};
using Slots = std::vector<Slot, base::NoInit<Slot>>;

constexpr size_t kKinds = 3;  // kernels, memcpys, memsets: the order of ties on a stream

// Where the slots go: runs[st * 3 + kind] is where stream st's run of that kind starts (the last
// entry: the total); for each kind, its activities cut into ranges (bounds) and, per range r and
// stream st, first[r * streams + st]: where that range writes its first slot of the stream (the
// stable order of one pass over the kinds in turn).
struct SlotPlan {
  size_t streams = 0;
  std::vector<size_t> runs;
  std::array<std::vector<size_t>, kKinds> bounds, first;
  // Per kind, range and stream: 0 where the range's slots of the stream are out of start order.
  std::array<std::vector<uint8_t>, kKinds> in_order;
};

// Counts per range and (stream, kind), in ranges at once; then the prefix sums give each range's
// place.
template <typename Marked>
SlotPlan PlanSlots(const model::Trace& t, size_t streams, Marked marked, int threads, size_t min_chunk) {
  SlotPlan p;
  p.streams = streams;
  std::vector<std::function<void()>> tasks;
  auto count = [&](const auto& v, size_t kind) {
    p.bounds[kind] = base::RangeBounds(threads, v.size(), min_chunk);
    const size_t ranges = p.bounds[kind].size() - 1;
    p.first[kind].assign(ranges * streams, 0);
    p.in_order[kind].assign(ranges * streams, 1);
    for (size_t r = 0; r < ranges; ++r)
      tasks.emplace_back([&p, &v, &marked, kind, r, streams] {
        size_t* c = p.first[kind].data() + r * streams;
        for (size_t i = p.bounds[kind][r]; i < p.bounds[kind][r + 1]; ++i)
          if (marked(v[i].stream)) ++c[v[i].stream];
      });
  };
  count(t.kernels(), 0);
  count(t.memcpys(), 1);
  count(t.memsets(), 2);
  base::RunAll(threads, tasks);
  p.runs.assign(streams * kKinds + 1, 0);
  for (size_t kind = 0; kind < kKinds; ++kind)
    for (size_t r = 0; r + 1 < p.bounds[kind].size(); ++r)
      for (size_t st = 0; st < streams; ++st) p.runs[st * kKinds + kind + 1] += p.first[kind][r * streams + st];
  for (size_t i = 1; i < p.runs.size(); ++i) p.runs[i] += p.runs[i - 1];
  for (size_t kind = 0; kind < kKinds; ++kind)
    for (size_t st = 0; st < streams; ++st) {
      size_t at = p.runs[st * kKinds + kind];
      for (size_t r = 0; r + 1 < p.bounds[kind].size(); ++r) {
        size_t& f = p.first[kind][r * streams + st];
        const size_t n = f;
        f = at;
        at += n;
      }
    }
  return p;
}

// Each range writes its slots at the places PlanSlots gave it, at once, noting where a stream's
// slots come out of start order.
template <typename Marked>
void FillSlots(const model::Trace& t, Marked marked, SlotPlan& p, Slots& s, int threads) {
  std::vector<std::function<void()>> tasks;
  auto fill = [&](const auto& v, size_t kind, const std::vector<int32_t>& launch) {
    for (size_t r = 0; r + 1 < p.bounds[kind].size(); ++r)
      tasks.emplace_back([&p, &s, &v, &launch, &marked, kind, r] {
        std::vector<size_t> at(p.first[kind].begin() + static_cast<std::ptrdiff_t>(r * p.streams),
                               p.first[kind].begin() + static_cast<std::ptrdiff_t>((r + 1) * p.streams));
        uint8_t* in_order = p.in_order[kind].data() + r * p.streams;
        for (size_t i = p.bounds[kind][r]; i < p.bounds[kind][r + 1]; ++i) {
          if (!marked(v[i].stream)) continue;
          const auto st = static_cast<size_t>(v[i].stream);
          size_t& o = at[st];
          s[o] = {v[i].start_ns, static_cast<uint32_t>(i), static_cast<uint8_t>(kind), launch[i] != model::kNone};
          if (o > p.first[kind][r * p.streams + st] && s[o].start_ns < s[o - 1].start_ns) in_order[st] = 0;
          ++o;
        }
      });
  };
  fill(t.kernels(), 0, t.kernel_launches());
  fill(t.memcpys(), 1, t.memcpy_launches());
  fill(t.memsets(), 2, t.memset_launches());
  base::RunAll(threads, tasks);
}

// Whether the run of (stream, kind) is in start order: within each range, and where a range's
// first slot follows the previous range's last.
bool RunInOrder(const SlotPlan& p, const Slots& s, size_t st, size_t kind) {
  const size_t b = p.runs[st * kKinds + kind];
  for (size_t r = 0; r + 1 < p.bounds[kind].size(); ++r) {
    const size_t f = p.first[kind][r * p.streams + st];
    if (!p.in_order[kind][r * p.streams + st]) return false;
    if (f > b && f < s.size() && f < p.runs[st * kKinds + kind + 1] && s[f].start_ns < s[f - 1].start_ns) return false;
  }
  return true;
}

// Each stream's runs (each in start order) merged stably at once, by rank: a slot's place in its
// stream is its index in its run plus, for each other run of the stream, how many of that run's
// slots come before it (an earlier kind's with a start not after its own, a later kind's with an
// earlier start: the order of std::merge's rounds in kind order). Each range of a run finds
// those counts by a binary search at its first slot, then walks on; every slot is written once.
void MergeByRank(const SlotPlan& p, Slots& s, int threads, size_t min_chunk) {
  auto by_start = [](const Slot& x, const Slot& y) { return x.start_ns < y.start_ns; };
  Slots out(s.size());
  std::vector<std::function<void()>> tasks;
  auto merge = [&](size_t st, size_t kind, size_t lo, size_t hi) {
    const size_t* run = p.runs.data() + st * kKinds;  // run[y]: where kind y's run starts
    size_t cur[kKinds] = {};
    for (size_t y = 0; y < kKinds; ++y) {
      const auto yb = s.begin() + static_cast<std::ptrdiff_t>(run[y]);
      const auto ye = s.begin() + static_cast<std::ptrdiff_t>(run[y + 1]);
      if (y != kind)
        cur[y] = static_cast<size_t>(
            (y < kind ? std::upper_bound(yb, ye, s[lo], by_start) : std::lower_bound(yb, ye, s[lo], by_start)) -
            s.begin());
    }
    for (size_t i = lo; i < hi; ++i) {
      size_t pos = run[0] + (i - run[kind]);
      for (size_t y = 0; y < kKinds; ++y) {
        if (y == kind) continue;
        size_t& c = cur[y];
        while (c < run[y + 1] && (s[c].start_ns < s[i].start_ns || (y < kind && s[c].start_ns == s[i].start_ns))) ++c;
        pos += c - run[y];
      }
      out[pos] = s[i];
    }
  };
  for (size_t st = 0; st < p.streams; ++st)
    for (size_t kind = 0; kind < kKinds; ++kind) {
      const size_t b = p.runs[st * kKinds + kind], e = p.runs[st * kKinds + kind + 1];
      const std::vector<size_t> rb = base::RangeBounds(threads, e - b, min_chunk);
      for (size_t r = 0; r + 1 < rb.size(); ++r)
        if (rb[r + 1] > rb[r])
          tasks.emplace_back([&merge, st, kind, lo = b + rb[r], hi = b + rb[r + 1]] { merge(st, kind, lo, hi); });
    }
  base::RunAll(threads, tasks);
  s = std::move(out);
}

// The activities of the marked streams ordered by (stream, start), ties in the order kernels,
// memcpys, memsets, each by index: what a stable sort of them in that order gives. A stable
// counting sort by stream in ranges (PlanSlots, FillSlots), then each stream's three runs (each
// in start order: the model's vectors are sorted by time; a run that is not is sorted stably
// first) merged stably: on one thread stream by stream (std::inplace_merge), else by rank
// (MergeByRank). `bounds` gets each stream's first slot (and the total last).
Slots SlotsByStream(const model::Trace& t, const std::vector<uint8_t>& mark, int threads, size_t min_chunk,
                    std::vector<size_t>* bounds) {
  const size_t ns = mark.size();
  auto marked = [&](model::StreamId st) { return st >= 0 && static_cast<size_t>(st) < ns && mark[st]; };
  SlotPlan p = PlanSlots(t, ns, marked, threads, min_chunk);
  Slots s(p.runs.back());
  FillSlots(t, marked, p, s, threads);
  auto by_start = [](const Slot& x, const Slot& y) { return x.start_ns < y.start_ns; };
  auto at = [&](size_t k) { return s.begin() + static_cast<std::ptrdiff_t>(p.runs[k]); };
  // Runs out of start order sorted stably on their own, at once.
  std::vector<size_t> unsorted;
  for (size_t st = 0; st < ns; ++st)
    for (size_t kind = 0; kind < kKinds; ++kind)
      if (!RunInOrder(p, s, st, kind)) unsorted.push_back(st * kKinds + kind);
  base::ParallelFor(threads, unsorted.size(), 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k) std::stable_sort(at(unsorted[k]), at(unsorted[k] + 1), by_start);
  });
  if (threads <= 1) {
    for (size_t st = 0; st < ns; ++st) {
      std::inplace_merge(at(st * kKinds), at(st * kKinds + 1), at(st * kKinds + 2), by_start);
      std::inplace_merge(at(st * kKinds), at(st * kKinds + 2), at(st * kKinds + 3), by_start);
    }
  } else {
    MergeByRank(p, s, threads, min_chunk);
  }
  bounds->resize(ns + 1);
  for (size_t st = 0; st <= ns; ++st) (*bounds)[st] = p.runs[st * kKinds];
  return s;
}

// What the whole stream's passes carry into a range of its slots: the iteration of the first
// launched slot after it (next, next_launched: whether there is one) and of the last launched slot
// with an iteration before it (prev), and whether any launched slot comes before it.
struct Seed {
  int32_t next = model::kNone;
  bool next_launched = false;
  int32_t prev = model::kNone;
  bool any_before = false;
};

// The slots [b, e) of one stream's range seeded by `seed` (the default seed for a whole stream): an
// unlaunched activity's iteration kept within those of the launched ones before and after it on
// the stream. Reads only launched slots and writes only unlaunched ones, so ranges run at once.
template <typename FirstOfProcess>
void ClampRange(const Slots& s, const SlotIterations& it, size_t b, size_t e, const Seed& seed,
                FirstOfProcess first_of_process) {
  std::vector<int32_t, base::NoInit<int32_t>> next(e - b);  // iteration of the next launched slot
  std::vector<uint8_t, base::NoInit<uint8_t>> next_launched(e - b);
  int32_t n = seed.next;
  uint8_t nl = seed.next_launched ? 1 : 0;
  for (size_t i = e; i-- > b;) {
    next[i - b] = n, next_launched[i - b] = nl;
    if (s[i].launched) n = it(s[i]), nl = 1;
  }
  int32_t prev = seed.prev;
  bool any_before = seed.any_before;
  for (size_t i = b; i < e; ++i) {
    if (s[i].launched) {
      any_before = true;
      if (it(s[i]) != model::kNone) prev = it(s[i]);
      continue;
    }
    int32_t& own = it(s[i]);
    const int32_t nx = next[i - b];
    if (!any_before && next_launched[i - b] && nx != model::kNone && first_of_process(nx)) {
      own = model::kNone;
    } else if (own != model::kNone) {
      if (prev != model::kNone && own < prev) own = prev;
      if (nx != model::kNone && own > nx) own = nx;
    } else if (prev != model::kNone && prev == nx) {
      own = prev;
    }
  }
}

// One range of one stream's slots, [b, e), and its seed.
struct ClampPart {
  size_t stream, b, e;
  Seed seed;
};

// Each stream's slots cut into ranges of at least `min_chunk`, and each range's seed from what
// the ranges before and after it in the stream hold (their launched slots, found at once).
std::vector<ClampPart> ClampParts(const Slots& s, const SlotIterations& it, const std::vector<size_t>& bounds,
                                  int threads, size_t min_chunk) {
  std::vector<ClampPart> parts;
  for (size_t st = 0; st + 1 < bounds.size(); ++st) {
    const std::vector<size_t> rb = base::RangeBounds(threads, bounds[st + 1] - bounds[st], min_chunk);
    for (size_t r = 0; r + 1 < rb.size(); ++r) parts.push_back({st, bounds[st] + rb[r], bounds[st] + rb[r + 1], {}});
  }
  if (parts.size() + 1 == bounds.size()) return parts;  // one range per stream: nothing to seed
  // Per part, its launched slots: the first one's iteration, the last iteration, whether any.
  struct Ends {
    int32_t first = model::kNone, last = model::kNone;
    bool any = false;
  };
  std::vector<Ends> ends(parts.size());
  base::ParallelFor(threads, parts.size(), 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k)
      for (size_t i = parts[k].b; i < parts[k].e; ++i) {
        if (!s[i].launched) continue;
        if (!ends[k].any) ends[k].first = it(s[i]);
        ends[k].any = true;
        if (it(s[i]) != model::kNone) ends[k].last = it(s[i]);
      }
  });
  for (size_t k = 1; k < parts.size(); ++k)
    if (parts[k].stream == parts[k - 1].stream) {
      Seed& x = parts[k].seed;
      x.prev = ends[k - 1].last != model::kNone ? ends[k - 1].last : parts[k - 1].seed.prev;
      x.any_before = ends[k - 1].any || parts[k - 1].seed.any_before;
    }
  for (size_t k = parts.size() - 1; k-- > 0;)
    if (parts[k].stream == parts[k + 1].stream) {
      Seed& x = parts[k].seed;
      x.next_launched = ends[k + 1].any || parts[k + 1].seed.next_launched;
      x.next = ends[k + 1].any ? ends[k + 1].first : parts[k + 1].seed.next;
    }
  return parts;
}

}  // namespace

void ClampByStreamOrder(const model::Trace& t, IterationAssignment& a, int threads, size_t min_chunk) {
  std::vector<uint8_t> mark;
  auto note = [&](const auto& v, const std::vector<int32_t>& launch) {
    for (size_t i = 0; i < v.size(); ++i) {
      const model::StreamId st = v[i].stream;
      if (launch[i] != model::kNone || st < 0) continue;
      if (mark.size() <= static_cast<size_t>(st)) mark.resize(static_cast<size_t>(st) + 1, 0);
      mark[st] = 1;
    }
  };
  note(t.kernels(), t.kernel_launches());
  note(t.memcpys(), t.memcpy_launches());
  note(t.memsets(), t.memset_launches());
  if (mark.empty()) return;
  std::vector<size_t> bounds;
  const Slots s = SlotsByStream(t, mark, threads, min_chunk, &bounds);
  const SlotIterations it{{a.kernel_iteration.data(), a.memcpy_iteration.data(), a.memset_iteration.data()}};
  const std::vector<Iteration>& its = a.iterations;
  auto first_of_process = [&](int32_t k) { return k == 0 || its[k - 1].process != its[k].process; };
  const std::vector<ClampPart> parts = ClampParts(s, it, bounds, threads, min_chunk);
  base::ParallelFor(threads, parts.size(), 1, [&](size_t k0, size_t k1) {
    for (size_t k = k0; k < k1; ++k) ClampRange(s, it, parts[k].b, parts[k].e, parts[k].seed, first_of_process);
  });
}

}  // namespace overlapscope::analyze
