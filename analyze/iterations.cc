#include "analyze/iterations.h"

#include <algorithm>

#include "analyze/strings.h"
#include "absl/strings/numbers.h"
#include "analyze/context.h"

namespace overlapscope::analyze {

std::vector<int32_t> LaunchCalls(const model::Trace& t, model::GpuKind kind) {
  auto fill = [&](const auto& v) {
    std::vector<int32_t> out(v.size(), model::kNone);
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].correlation_id == model::kNoCorrelation) continue;
      out[i] = t.ApiCallIndexByCorrelation(t.ProcessOfDevice(v[i].device), v[i].correlation_id);
    }
    return out;
  };
  switch (kind) {
    case model::GpuKind::kKernel: return fill(t.kernels());
    case model::GpuKind::kMemcpy: return fill(t.memcpys());
    case model::GpuKind::kMemset: return fill(t.memsets());
  }
  return {};
}

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

IterationAssignment AssignIterationsWithLaunches(const model::Trace& t, const std::string& marker,
                                                 const std::vector<int32_t>& kernel_launch,
                                                 const std::vector<int32_t>& memcpy_launch,
                                                 const std::vector<int32_t>& memset_launch) {
  IterationAssignment a;
  a.marker = marker;
  if (!marker.empty()) {
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
      if (!a.iterations.empty() && a.iterations.back().process == it.process &&
          it.start_ns < a.iterations.back().end_ns)
        continue;
      if (a.iterations.empty() || a.iterations.back().process != it.process) ordinal = 0;
      Iteration x = it;
      x.index = static_cast<int32_t>(a.iterations.size());
      if (x.number < 0) x.number = ordinal;
      ++ordinal;
      a.iterations.push_back(x);
    }
  }
  auto assign = [&](const auto& v, const std::vector<int32_t>& launch, std::vector<int32_t>& out) {
    out.assign(v.size(), model::kNone);
    for (size_t i = 0; i < v.size(); ++i) {
      model::ProcessId p = t.ProcessOfDevice(v[i].device);
      int64_t at;
      if (launch[i] != model::kNone) {
        at = t.api_calls()[launch[i]].start_ns;
        ++a.by_launch_call;
      } else {
        at = v[i].start_ns;
        ++a.by_own_start;
      }
      out[i] = a.iterations.empty() ? model::kNone : IterationAt(a, p, at);
      if (out[i] == model::kNone) ++a.outside;
    }
  };
  assign(t.kernels(), kernel_launch, a.kernel_iteration);
  assign(t.memcpys(), memcpy_launch, a.memcpy_iteration);
  assign(t.memsets(), memset_launch, a.memset_iteration);
  return a;
}

IterationAssignment AssignIterations(const model::Trace& t, const std::string& marker) {
  return AssignIterationsWithLaunches(t, marker, LaunchCalls(t, model::GpuKind::kKernel),
                                      LaunchCalls(t, model::GpuKind::kMemcpy),
                                      LaunchCalls(t, model::GpuKind::kMemset));
}

}  // namespace overlapscope::analyze
