#include "analyze/iterations.h"

#include <algorithm>
#include <mutex>

#include "absl/strings/numbers.h"
#include "analyze/iteration_clamp.h"
#include "analyze/strings.h"
#include "base/phase_log.h"
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
// suffix, else by their order in the process. The names are tested once each (interned), then the
// ranges scanned, both in ranges of at least `min_chunk` at once (ParallelAppend: found in the
// one-thread order).
std::vector<Iteration> FindIterations(const model::Trace& t, const std::string& marker, int threads, size_t min_chunk) {
  std::vector<Iteration> out;
  std::vector<uint8_t> is_marker(t.strings().size());
  base::ParallelFor(threads, is_marker.size(), min_chunk, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) is_marker[i] = StartsWith(t.str(static_cast<model::StringId>(i)), marker);
  });
  std::vector<Iteration> found;
  base::ParallelAppend(threads, t.ranges().size(), min_chunk, &found,
                       [&](size_t lo, size_t hi, std::vector<Iteration>* v) {
                         for (size_t i = lo; i < hi; ++i) {
                           const model::Range& r = t.ranges()[i];
                           if (r.kind == model::RangeKind::kPythonFunction || r.kind == model::RangeKind::kOverhead ||
                               !is_marker[r.name])
                             continue;
                           Iteration it;
                           it.name = r.name;
                           it.process = t.ProcessOfThread(r.thread);
                           it.thread = r.thread;
                           it.start_ns = r.start_ns;
                           it.end_ns = r.end_ns;
                           int64_t n;
                           if (absl::SimpleAtoi(S(t.str(r.name).substr(marker.size())), &n)) it.number = n;
                           v->push_back(it);
                         }
                       });
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

}  // namespace

IterationAssignment AssignIterations(const model::Trace& t, const std::string& marker, int threads, size_t min_chunk) {
  IterationAssignment a;
  a.marker = marker;
  {
    base::PhaseSpan s_("it markers");
    if (!marker.empty()) a.iterations = FindIterations(t, marker, threads, min_chunk);
  }
  std::vector<int32_t> call_iteration;
  {
    base::PhaseSpan s_("it calls");
    call_iteration = CallIterations(t, a.iterations, threads, min_chunk);
  }
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
  {
    base::PhaseSpan s_("it activities");
    assign(t.kernels(), t.kernel_launches(), a.kernel_iteration);
    assign(t.memcpys(), t.memcpy_launches(), a.memcpy_iteration);
    assign(t.memsets(), t.memset_launches(), a.memset_iteration);
  }
  if (!a.iterations.empty() && a.by_own_start > 0) {
    base::PhaseSpan s_("it clamp");
    ClampByStreamOrder(t, a, threads, min_chunk);
  }
  for (const auto* v : {&a.kernel_iteration, &a.memcpy_iteration, &a.memset_iteration})
    a.outside += std::count(v->begin(), v->end(), model::kNone);
  return a;
}

}  // namespace overlapscope::analyze
