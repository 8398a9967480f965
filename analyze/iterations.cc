#include "analyze/iterations.h"

#include <algorithm>
#include <mutex>

#include "absl/strings/numbers.h"
#include "analyze/strings.h"
#include "base/run_all.h"

namespace overlapscope::analyze {

int32_t IterationAt(const IterationAssignment& a, model::ProcessId process, int64_t ns) {
  const auto& it = a.iterations;
  // Last iteration with (process, start) <= (process, ns).
  auto pos = std::upper_bound(it.begin(), it.end(), std::make_pair(process, ns),
                              [](const std::pair<model::ProcessId, int64_t>& key, const Iteration& x) {
                                return key.first != x.process ? key.first < x.process : key.second < x.start_ns;
                              });
  if (pos == it.begin()) return model::kNone;
  --pos;
  if (pos->process != process || ns >= pos->end_ns) return model::kNone;
  return pos->index;
}

namespace {

// The marker ranges (name starts with `marker`; Python functions and overheads never are), per
// process by start, nested duplicates and overlapping ones dropped; numbered by the name's
// suffix, else by their order in the process.
std::vector<Iteration> FindIterations(const model::Trace& t, const std::string& marker) {
  std::vector<Iteration> out;
  // Names are interned: test each distinct name once.
  std::vector<int8_t> is_marker(t.strings().size(), -1);
  std::vector<Iteration> found;
  for (const model::Range& r : t.ranges()) {
    if (r.kind == model::RangeKind::kPythonFunction || r.kind == model::RangeKind::kOverhead) continue;
    int8_t& m = is_marker[r.name];
    if (m < 0) m = StartsWith(t.str(r.name), marker) ? 1 : 0;
    if (!m) continue;
    Iteration it;
    it.name = r.name;
    it.process = t.ProcessOfThread(r.thread);
    it.thread = r.thread;
    it.start_ns = r.start_ns;
    it.end_ns = r.end_ns;
    int64_t n;
    if (absl::SimpleAtoi(S(t.str(r.name).substr(marker.size())), &n)) it.number = n;
    found.push_back(it);
  }
  std::stable_sort(found.begin(), found.end(), [](const Iteration& x, const Iteration& y) {
    if (x.process != y.process) return x.process < y.process;
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return x.end_ns > y.end_ns;  // outer range first
  });
  int64_t ordinal = 0;
  for (const Iteration& it : found) {
    // Nested duplicates (the same step seen at two levels) collapse into the outer range;
    // a range starting inside the previous one is dropped as well (steps do not overlap).
    if (!out.empty() && out.back().process == it.process && it.start_ns < out.back().end_ns) continue;
    if (out.empty() || out.back().process != it.process) ordinal = 0;
    Iteration x = it;
    x.index = static_cast<int32_t>(out.size());
    if (x.number < 0) x.number = ordinal;
    ++ordinal;
    out.push_back(x);
  }
  return out;
}

// Iteration of every API call (empty without iterations): sweeps over ranges of the calls
// (sorted by start) at once, each with a cursor per process into its iterations (sorted by start,
// disjoint, so by end too). A cursor only moves forward to the first iteration ending after the
// call's start, which does not depend on where the sweep began: the same at any count.
std::vector<int32_t> CallIterations(const model::Trace& t, const std::vector<Iteration>& its, int threads,
                                    size_t min_chunk) {
  const size_t np = t.processes().size();
  std::vector<size_t> first(np);
  for (size_t p = 0; p < np; ++p)
    first[p] =
        static_cast<size_t>(std::lower_bound(its.begin(), its.end(), static_cast<model::ProcessId>(p),
                                             [](const Iteration& x, model::ProcessId q) { return x.process < q; }) -
                            its.begin());
  std::vector<int32_t> call_iteration(its.empty() ? 0 : t.api_calls().size(), model::kNone);
  if (its.empty()) return call_iteration;
  base::ParallelFor(threads, t.api_calls().size(), min_chunk, [&](size_t lo, size_t hi) {
    std::vector<size_t> cursor = first;
    for (size_t i = lo; i < hi; ++i) {
      const model::ApiCall& c = t.api_calls()[i];
      model::ProcessId p = t.ProcessOfThread(c.thread);
      size_t& k = cursor[p];
      while (k < its.size() && its[k].process == p && its[k].end_ns <= c.start_ns) ++k;
      if (k < its.size() && its[k].process == p && its[k].start_ns <= c.start_ns)
        call_iteration[i] = static_cast<int32_t>(k);
    }
  });
  return call_iteration;
}

// An activity whose launch call is not in the trace was launched before the recorded steps (the
// profiler's warm-up), after them, or its launch record was lost; its own start is a fair guess
// only while the host keeps pace with the GPU. Where the host runs ahead (the usual case: torch
// enqueues a step in a fraction of its GPU time), the warm-up steps' backlog runs during the host
// ranges of later recorded steps and the guess mixes it into them. A stream runs its work in launch
// order, so such an activity was launched after the launched activity before it on its stream and
// before the one after it: its iteration is clamped between theirs. With no launched activity
// before it and the next one launched in its process's first recorded step, it predates the
// recorded steps: no iteration. Only streams that hold such activities are sorted.
struct Slot {
  model::StreamId stream;
  int64_t start_ns;
  int32_t* iteration;
  bool launched;
};

// The activities of the marked streams ordered by (stream, start), ties in the order kernels,
// memcpys, memsets, each by index: what a stable sort of them in that order gives. A stable
// counting sort by stream, then each stream's three runs (each in start order: the model's
// vectors are sorted by time) merged stably.
std::vector<Slot> SlotsByStream(const model::Trace& t, IterationAssignment& a, const std::vector<uint8_t>& mark,
                                int threads, std::vector<size_t>* bounds) {
  const size_t ns = mark.size();
  auto marked = [&](model::StreamId st) { return st >= 0 && static_cast<size_t>(st) < ns && mark[st]; };
  // at[st * 3 + kind]: where that stream's run of that kind starts.
  std::vector<size_t> at(ns * 3 + 1, 0);
  auto count = [&](const auto& v, size_t kind) {
    for (const auto& e : v)
      if (marked(e.stream)) ++at[static_cast<size_t>(e.stream) * 3 + kind + 1];
  };
  count(t.kernels(), 0);
  count(t.memcpys(), 1);
  count(t.memsets(), 2);
  for (size_t i = 1; i < at.size(); ++i) at[i] += at[i - 1];
  std::vector<Slot> s(at.back());
  std::vector<size_t> fill(at.begin(), at.end() - 1);
  auto place = [&](const auto& v, size_t kind, const std::vector<int32_t>& launch, std::vector<int32_t>& its) {
    for (size_t i = 0; i < v.size(); ++i)
      if (marked(v[i].stream))
        s[fill[static_cast<size_t>(v[i].stream) * 3 + kind]++] = {v[i].stream, v[i].start_ns, &its[i],
                                                                  launch[i] != model::kNone};
  };
  place(t.kernels(), 0, t.kernel_launches(), a.kernel_iteration);
  place(t.memcpys(), 1, t.memcpy_launches(), a.memcpy_iteration);
  place(t.memsets(), 2, t.memset_launches(), a.memset_iteration);
  auto by_start = [](const Slot& x, const Slot& y) { return x.start_ns < y.start_ns; };
  // Each stream's runs merged on their own: streams at once.
  base::ParallelFor(threads, ns, 1, [&](size_t st0, size_t st1) {
    for (size_t st = st0; st < st1; ++st) {
      const auto b = s.begin() + static_cast<std::ptrdiff_t>(at[st * 3]);
      const auto m1 = s.begin() + static_cast<std::ptrdiff_t>(at[st * 3 + 1]);
      const auto m2 = s.begin() + static_cast<std::ptrdiff_t>(at[st * 3 + 2]);
      const auto e = s.begin() + static_cast<std::ptrdiff_t>(at[st * 3 + 3]);
      if (!std::is_sorted(b, m1, by_start) || !std::is_sorted(m1, m2, by_start) || !std::is_sorted(m2, e, by_start)) {
        std::stable_sort(b, e, by_start);  // not the model's order: sorted as before
        continue;
      }
      std::inplace_merge(b, m1, m2, by_start);
      std::inplace_merge(b, m2, e, by_start);
    }
  });
  bounds->resize(ns + 1);
  for (size_t st = 0; st <= ns; ++st) (*bounds)[st] = at[st * 3];
  return s;
}

// The slots [b, e) of one stream: an unlaunched activity's iteration kept within those of the
// launched ones before and after it on the stream (next, next_launched: scratch per slot).
template <typename FirstOfProcess>
void ClampStream(const std::vector<Slot>& s, size_t b, size_t e, FirstOfProcess first_of_process,
                 std::vector<int32_t>& next, std::vector<uint8_t>& next_launched) {
  for (size_t i = e; i-- > b;) {
    const bool same = i + 1 < e;
    if (same && s[i + 1].launched) {
      next[i] = *s[i + 1].iteration, next_launched[i] = 1;
    } else if (same) {
      next[i] = next[i + 1], next_launched[i] = next_launched[i + 1];
    }
  }
  int32_t prev = model::kNone;
  bool any_before = false;
  for (size_t i = b; i < e; ++i) {
    if (s[i].launched) {
      any_before = true;
      if (*s[i].iteration != model::kNone) prev = *s[i].iteration;
      continue;
    }
    int32_t& own = *s[i].iteration;
    if (!any_before && next_launched[i] && next[i] != model::kNone && first_of_process(next[i])) {
      own = model::kNone;
    } else if (own != model::kNone) {
      if (prev != model::kNone && own < prev) own = prev;
      if (next[i] != model::kNone && own > next[i]) own = next[i];
    } else if (prev != model::kNone && prev == next[i]) {
      own = prev;
    }
  }
}

// Each stream's slots are clamped on their own (the passes below restart at each stream), so
// the streams are taken at once on up to `threads` threads: the same result at any count.
void ClampByStreamOrder(const model::Trace& t, IterationAssignment& a, int threads) {
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
  const std::vector<Slot> s = SlotsByStream(t, a, mark, threads, &bounds);
  const std::vector<Iteration>& its = a.iterations;
  auto first_of_process = [&](int32_t k) { return k == 0 || its[k - 1].process != its[k].process; };
  std::vector<int32_t> next(s.size(), model::kNone);  // iteration of the next launched slot (same stream)
  std::vector<uint8_t> next_launched(s.size(), 0);
  base::ParallelFor(threads, bounds.size() - 1, 1, [&](size_t st0, size_t st1) {
    for (size_t st = st0; st < st1; ++st)
      ClampStream(s, bounds[st], bounds[st + 1], first_of_process, next, next_launched);
  });
}

}  // namespace

IterationAssignment AssignIterations(const model::Trace& t, const std::string& marker, int threads, size_t min_chunk) {
  IterationAssignment a;
  a.marker = marker;
  if (!marker.empty()) a.iterations = FindIterations(t, marker);
  const std::vector<int32_t> call_iteration = CallIterations(t, a.iterations, threads, min_chunk);
  // An activity is in the iteration of its launch call (the model's join, Trace::LaunchOf), else
  // in the one its start lies in, within the bounds its stream's order sets (ClampByStreamOrder).
  // In ranges at once, each range's counts summed after.
  std::mutex mu;
  auto assign = [&](const auto& v, const std::vector<int32_t>& launch, std::vector<int32_t>& out) {
    out.assign(v.size(), model::kNone);
    base::ParallelFor(threads, v.size(), min_chunk, [&](size_t lo, size_t hi) {
      int64_t by_launch = 0, by_start = 0;
      for (size_t i = lo; i < hi; ++i) {
        if (launch[i] != model::kNone) {
          ++by_launch;
          if (!a.iterations.empty()) out[i] = call_iteration[launch[i]];
        } else {
          ++by_start;
          if (!a.iterations.empty()) out[i] = IterationAt(a, t.ProcessOfDevice(v[i].device), v[i].start_ns);
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      a.by_launch_call += by_launch;
      a.by_own_start += by_start;
    });
  };
  assign(t.kernels(), t.kernel_launches(), a.kernel_iteration);
  assign(t.memcpys(), t.memcpy_launches(), a.memcpy_iteration);
  assign(t.memsets(), t.memset_launches(), a.memset_iteration);
  if (!a.iterations.empty() && a.by_own_start > 0) ClampByStreamOrder(t, a, threads);
  for (const auto* v : {&a.kernel_iteration, &a.memcpy_iteration, &a.memset_iteration})
    a.outside += std::count(v->begin(), v->end(), model::kNone);
  return a;
}

}  // namespace overlapscope::analyze
