// collective-starved-of-sms: a collective kernel on its own stream that could have started (its
// latest dependency — launch, stream predecessor, event wait — was done) at least 50 µs before it
// did, while a compute kernel of another stream of its GPU whose grid fills the device (one block
// per SM or more: a persistent cuBLAS GEMM) ran: it waited for SMs, and started only as that
// kernel ended or reached its last wave. The overlap the program asked for did not happen, and no
// dependency is to blame (H100's matmul + all-gather of BACKGROUND §3 on PyTorch's NCCL stream).
// Cost: the time it was held while the compute kernel ran, at most its exposed time.
// Collectives on a compute stream are collective-on-compute-stream's.
#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "analyze/findings/finding_rule.h"
#include "analyze/graph/device_sms.h"
#include "analyze/graph/graph.h"

namespace overlapscope::analyze::findings {
namespace {

using graph::EdgeKind;
using graph::NodeId;

// When GPU node n could have started: the latest of its launch call's start, its stream
// predecessor's end and the ends of the activities it waits for (recorded or inferred edges).
int64_t ReadyNs(const graph::Graph& g, NodeId n) {
  int64_t ready = INT64_MIN;
  for (const graph::Edge& e : g.Preds(n)) {
    if (e.kind == EdgeKind::kLaunch)
      ready = std::max(ready, g.StartNs(e.from));
    else if (e.kind == EdgeKind::kStreamOrder || e.kind == EdgeKind::kEventWait)
      ready = std::max(ready, g.EndNs(e.from));
  }
  return ready;
}

class CollectiveStarvedOfSms : public FindingRule {
 public:
  std::string_view kind() const override { return "collective-starved-of-sms"; }
  void Find(const FindingInputs& in, std::vector<Emitted>* out) const override {
    if (in.graph == nullptr) return;
    const graph::Graph& g = *in.graph;
    const std::vector<uint8_t> computes = ComputeStreams(in);
    ForEachCollective(in, out, [&](const DeviceOverlap& dv, const CollectiveOverlap& co, std::vector<Emitted>* o) {
      Look(in, g, computes, dv, co, o);
    });
  }

 private:
  // The finding of collective co, if it was held out of the SMs.
  void Look(const FindingInputs& in, const graph::Graph& g, const std::vector<uint8_t>& computes,
            const DeviceOverlap& dv, const CollectiveOverlap& co, std::vector<Emitted>* out) const {
    if (co.stream == model::kNone || OnComputeStream(in, dv, co)) return;
    const NodeId n = g.GpuNode(co.first_activity);
    if (n == model::kNone) return;
    const int64_t ready = ReadyNs(g, n), c = g.StartNs(n);
    const NodeId h = graph::SmHolderAt(in.t, g, n, ready, c);
    if (h == model::kNone || !computes[g.Stream(h)]) return;
    const int64_t held = std::min(c, g.EndNs(h)) - std::max(ready, g.StartNs(h));
    if (held < graph::kSmHoldMinNs) return;
    out->push_back({Make(in, co, g, h, ready, held), model::kNone});
  }

  Finding Make(const FindingInputs& in, const CollectiveOverlap& co, const graph::Graph& g, NodeId h, int64_t ready,
               int64_t held) const {
    const model::Trace& t = in.t;
    Finding fd = FindingOfCollective(kind(), in, co);
    const int64_t exposed = fd.cost_ns;
    fd.cost_ns = std::min(held, exposed);
    const model::Kernel& k = t.kernels()[g.Ref(h).index];
    fd.message = absl::StrFormat(
        "%s on %s could start at %s but started at %s, as `%s` on %s (%d blocks: every SM of the GPU) %s: it waited "
        "%s for SMs and overlapped %.0f%% (%s exposed)",
        t.str(co.name), in.Stream(co.stream), in.At(ready), in.At(co.start_ns), t.str(t.NameOf(g.Ref(h))),
        in.Stream(g.Stream(h)), int64_t{k.grid.x} * k.grid.y * k.grid.z,
        g.EndNs(h) > co.start_ns ? "reached its last wave" : "ended", in.Us(held),
        co.overlap_ratio ? 100 * *co.overlap_ratio : 0.0, in.Us(exposed));
    fd.message += PeerWaitNote(in, co);
    fd.advice =
        "take the collective off the SMs or leave it some: copy engines take none (NCCL's zero-CTA path with "
        "symmetric memory, or an all-gather by cudaMemcpyBatchAsync); a GEMM that leaves SMs free (an SM count "
        "target / carve-out) lets it run beside; a higher-priority stream for the collective places its blocks "
        "first when both kernels are ready at once";
    return fd;
  }
};

}  // namespace

const FindingRule& rule_70_collective_starved_of_sms() {
  static const CollectiveStarvedOfSms rule;
  return rule;
}

}  // namespace overlapscope::analyze::findings
