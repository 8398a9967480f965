// blocking-d2h-before-independent-work: the host waited for a device-to-host copy it had just
// launched, then launched more GPU work in the same iteration. The trace cannot show data
// dependence; work launched right after the wait is the candidate to launch before it.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "analyze/context.h"
#include "analyze/findings/finding_rule.h"

namespace overlapscope::analyze::findings {
namespace {

class BlockingD2HBeforeIndependentWork : public FindingRule {
 public:
  std::string_view kind() const override { return "blocking-d2h-before-independent-work"; }
  void Find(const FindingInputs& in, std::vector<Emitted>* out) const override {
    const model::Trace& t = in.t;
    for (size_t i = 0; i < in.blocking.intervals.size(); ++i) {
      const BlockedInterval& b = in.blocking.intervals[i];
      const int64_t bytes = WaitedD2HBytes(in, b, in.points[i].kind);
      if (bytes == kNoD2H) continue;
      // GPU work the thread launched after the wait, in the same iteration.
      const auto& launches = in.launches_by_thread[b.thread];
      const int64_t deadline = in.IterationEnd(b.iteration);
      auto pos = std::lower_bound(launches.begin(), launches.end(), b.end_ns,
                                  [&](int32_t x, int64_t v) { return t.api_calls()[x].start_ns < v; });
      int64_t after = 0, after_gpu_ns = 0;
      for (; pos != launches.end() && t.api_calls()[*pos].start_ns < deadline; ++pos) {
        ++after;
        for (model::GpuRef r : t.GpuByCorrelation(b.process, t.api_calls()[*pos].correlation_id))
          after_gpu_ns += t.EndNs(r) - t.StartNs(r);
      }
      if (after == 0) continue;
      Finding fd = FindingOfBlocked(kind(), in, static_cast<int32_t>(i));
      fd.message = absl::StrFormat(
          "%s at %s on %s blocked %s waiting for a device-to-host copy (%d bytes); afterwards the thread launched "
          "%d more GPU operations (%s of GPU time)%s",
          t.str(b.call), in.At(b.start_ns), in.Thread(b.thread), in.Us(fd.cost_ns), bytes, after, in.Us(after_gpu_ns),
          b.iteration == model::kNone ? "" : " in the same iteration");
      fd.advice =
          "if that work does not need the copied value, launch it before waiting: copy with "
          "non_blocking=True, record an event, and synchronize on the event just before the value is used";
      out->push_back({std::move(fd), static_cast<int32_t>(i)});
    }
  }

 private:
  static constexpr int64_t kNoD2H = INT64_MIN;

  // The bytes of the device-to-host copy the host waited for in `b` (-1 when unknown), or kNoD2H:
  // a synchronous or pageable copy that was a D2H, or a stream/event/device sync right after a
  // launch call whose work included a D2H copy (on the awaited stream, if known).
  static int64_t WaitedD2HBytes(const FindingInputs& in, const BlockedInterval& b, SyncPointKind k) {
    const model::Trace& t = in.t;
    if (k == SyncPointKind::kDeviceSync && b.final_sync) return kNoD2H;
    if (b.reason == BlockReason::kSyncMemcpy || b.reason == BlockReason::kPageableCopy) {
      if (b.released_by && b.released_by->kind == model::GpuKind::kMemcpy &&
          IsDtoH(t, t.memcpys()[b.released_by->index]))
        return t.memcpys()[b.released_by->index].bytes;
      return kNoD2H;
    }
    if (k != SyncPointKind::kStreamSync && k != SyncPointKind::kEventSync && k != SyncPointKind::kDeviceSync)
      return kNoD2H;
    const auto& launches = in.launches_by_thread[b.thread];
    auto pos = std::lower_bound(launches.begin(), launches.end(), b.start_ns,
                                [&](int32_t x, int64_t v) { return t.api_calls()[x].start_ns < v; });
    if (pos == launches.begin()) return kNoD2H;
    int64_t bytes = kNoD2H;
    const model::ApiCall& last = t.api_calls()[*(pos - 1)];
    for (model::GpuRef r : t.GpuByCorrelation(b.process, last.correlation_id))
      if (r.kind == model::GpuKind::kMemcpy && IsDtoH(t, t.memcpys()[r.index]) &&
          (b.stream == model::kNone || t.StreamOf(r) == b.stream))
        bytes = t.memcpys()[r.index].bytes;
    return bytes;
  }
};

}  // namespace

const FindingRule& rule_30_blocking_d2h_before_independent_work() {
  static const BlockingD2HBeforeIndependentWork rule;
  return rule;
}

}  // namespace overlapscope::analyze::findings
