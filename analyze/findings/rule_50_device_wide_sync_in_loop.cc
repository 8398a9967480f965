// device-wide-sync-in-loop: a device-wide sync (not the program's final one) inside every
// iteration of a process with at least two iterations.
#include "absl/strings/str_format.h"
#include "analyze/findings/finding_rule.h"

namespace overlapscope::analyze::findings {
namespace {

class DeviceWideSyncInLoop : public FindingRule {
 public:
  std::string_view kind() const override { return "device-wide-sync-in-loop"; }
  void Find(const FindingInputs& in, std::vector<Emitted>* out) const override {
    const model::Trace& t = in.t;
    const auto& its = in.iters.iterations;
    std::vector<int64_t> iter_count(t.processes().size(), 0);
    for (const Iteration& it : its) ++iter_count[it.process];
    std::vector<uint8_t> has_sync(its.size(), 0);
    std::vector<int32_t> candidates;
    for (size_t i = 0; i < in.blocking.intervals.size(); ++i) {
      const BlockedInterval& b = in.blocking.intervals[i];
      if (in.points[i].kind != SyncPointKind::kDeviceSync || b.final_sync || b.iteration == model::kNone) continue;
      has_sync[b.iteration] = 1;
      candidates.push_back(static_cast<int32_t>(i));
    }
    std::vector<int64_t> with_sync(t.processes().size(), 0);
    for (size_t i = 0; i < its.size(); ++i) with_sync[its[i].process] += has_sync[i];
    for (int32_t i : candidates) {
      const BlockedInterval& b = in.blocking.intervals[i];
      if (iter_count[b.process] < 2 || with_sync[b.process] != iter_count[b.process]) continue;
      Finding fd = FindingOfBlocked(kind(), in, i);
      fd.stream = model::kNone;  // a device-wide sync waits on no single stream
      fd.message = absl::StrFormat(
          "%s at %s on %s (iteration %d) waits for every stream of the device, in each of "
          "the %d iterations; blocked %s",
          t.str(b.call), in.At(b.start_ns), in.Thread(b.thread), its[b.iteration].number, iter_count[b.process],
          in.Us(fd.cost_ns));
      fd.advice = "synchronize only what the host needs (an event or one stream), or drop the sync from the loop";
      out->push_back({std::move(fd), i});
    }
  }
};

}  // namespace

const FindingRule& rule_50_device_wide_sync_in_loop() {
  static const DeviceWideSyncInLoop rule;
  return rule;
}

}  // namespace overlapscope::analyze::findings
