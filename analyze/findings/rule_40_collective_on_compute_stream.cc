// collective-on-compute-stream: a collective on a stream that also carries at least 10% of its
// device's compute time cannot overlap with that compute; its cost is its exposed time.
#include "absl/strings/str_format.h"
#include "analyze/findings/finding_rule.h"

namespace overlapscope::analyze::findings {
namespace {

class CollectiveOnComputeStream : public FindingRule {
 public:
  std::string_view kind() const override { return "collective-on-compute-stream"; }
  void Find(const FindingInputs& in, std::vector<Emitted>* out) const override {
    const model::Trace& t = in.t;
    const std::vector<int64_t>& stream_compute = in.stream_compute_ns;
    for (const DeviceOverlap& dv : in.overlap) {
      const int64_t device_compute = DeviceComputeNs(in, dv.device);
      for (const CollectiveOverlap& co : dv.collectives) {
        if (!OnComputeStream(in, dv, co)) continue;
        Finding fd = FindingOfCollective(kind(), in, co);
        fd.message = absl::StrFormat(
            "%s at %s runs on %s, which also runs %.0f%% of the device's compute: it cannot overlap with it (%s "
            "exposed)",
            t.str(co.name), in.At(co.start_ns), in.Stream(co.stream),
            100.0 * static_cast<double>(stream_compute[co.stream]) / static_cast<double>(device_compute),
            in.Us(fd.cost_ns));
        fd.message += PeerWaitNote(in, co);
        fd.advice =
            "issue the collective asynchronously on its own stream (async_op=True, wait() just before the "
            "result is used) and give the compute independent work to do meanwhile";
        out->push_back({std::move(fd), model::kNone});
      }
    }
  }
};

}  // namespace

const FindingRule& rule_40_collective_on_compute_stream() {
  static const CollectiveOnComputeStream rule;
  return rule;
}

}  // namespace overlapscope::analyze::findings
