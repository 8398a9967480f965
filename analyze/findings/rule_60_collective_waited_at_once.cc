// collective-waited-at-once (METRICS §5): a collective on its own stream whose completion the
// stream that issued it waits for (an event-wait edge of the dependency graph, recorded or
// inferred, from one of the collective's activities to that stream) before that stream is given
// any other GPU work enqueued after the collective was issued, and with nothing enqueued earlier
// still running there when the collective starts. The issuing stream then idles for the whole
// collective: it cannot overlap, whatever async_op says. Cost: the collective's exposed
// time. Collectives that collective-on-compute-stream reports (on a compute-carrying stream) are
// left to it: one finding per collective.
#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "analyze/findings/finding_rule.h"
#include "analyze/graph/graph.h"

namespace overlapscope::analyze::findings {
namespace {

using graph::EdgeKind;
using graph::NodeId;

// When the work behind GPU activity `g` was enqueued: its launch call's start, else its own start.
int64_t IssuedAt(const model::Trace& t, model::GpuRef g) {
  const int32_t call = t.LaunchOf(g);
  return call != model::kNone ? t.api_calls()[call].start_ns : t.StartNs(g);
}

// The activity of another stream that waits (event-wait edge) for the collective's completion and
// is the first work enqueued on its stream after `issued_ns`; kNone when there is none. The wait
// may name a later activity of the collective's stream (torch.compile issues two all_to_alls back
// to back and waits for both at once): stream order makes it a wait for the collective too, so
// the stream is followed from the collective's last activity to the first one that another stream
// waits for.
NodeId WaitedAtOnce(const FindingInputs& in, const graph::Graph& g, const std::vector<uint8_t>& computes,
                    absl::Span<const model::GpuRef> carriers, model::StreamId own, int64_t issued_ns,
                    int64_t start_ns) {
  const model::Trace& t = in.t;
  NodeId last = model::kNone;
  for (const model::GpuRef& r : carriers) {
    const NodeId n = g.GpuNode(r);
    if (n != model::kNone && g.Stream(n) == own) last = std::max(last, n);
  }
  if (last == model::kNone) return model::kNone;
  constexpr int kMaxFollowed = 64;  // bounded: a wait much later is no wait "at once"
  for (NodeId n = last; n < g.StreamEnd(own) && n < last + kMaxFollowed; ++n) {
    bool waited = false;
    for (const graph::Edge& e : g.CrossSuccs(n)) {
      if (e.kind != EdgeKind::kEventWait || !g.IsGpu(e.to) || g.Stream(e.to) == own) continue;
      // The issuing stream is one that computes: another communication stream that waits (FSDP2's
      // all-gather stream behind its reduce-scatter), or a side stream of small copies (FSDP2's
      // all-gather copy-in stream behind the previous all-gather), is ordering between
      // collectives, not this.
      if (!computes[g.Stream(e.to)]) continue;
      waited = true;
      // The waiting activity was enqueued after the collective, and nothing else was enqueued on
      // its stream in between: the activity before it there was enqueued before the collective.
      if (IssuedAt(t, g.Ref(e.to)) < issued_ns) continue;
      // Work enqueued before the collective that still runs when it starts (a CPU running ahead,
      // as FSDP's prefetch relies on) overlaps it: only a stream left idle is reported.
      const NodeId prev = e.to - 1;
      if (prev >= g.StreamBegin(g.Stream(e.to)) && (IssuedAt(t, g.Ref(prev)) >= issued_ns || g.EndNs(prev) > start_ns))
        continue;
      return e.to;
    }
    if (waited) return model::kNone;  // waited for here, with other work enqueued before the wait
  }
  return model::kNone;
}

class CollectiveWaitedAtOnce : public FindingRule {
 public:
  std::string_view kind() const override { return "collective-waited-at-once"; }
  void Find(const FindingInputs& in, std::vector<Emitted>* out) const override {
    if (in.graph == nullptr) return;
    const std::vector<uint8_t> computes = ComputeStreams(in);
    ForEachCollective(in, out, [&](const DeviceOverlap& dv, const CollectiveOverlap& co, std::vector<Emitted>* o) {
      Look(in, computes, dv, co, o);
    });
  }

 private:
  // The finding of collective co, if the stream that issued it waits for it at once.
  void Look(const FindingInputs& in, const std::vector<uint8_t>& computes, const DeviceOverlap& dv,
            const CollectiveOverlap& co, std::vector<Emitted>* out) const {
    const model::Trace& t = in.t;
    if (co.stream == model::kNone || OnComputeStream(in, dv, co)) return;  // rule 40's
    const model::GpuRef single[] = {co.first_activity};
    const absl::Span<const model::GpuRef> carriers =
        co.collective != model::kNone ? t.CollectiveActivities(co.collective) : absl::Span<const model::GpuRef>(single);
    if (carriers.empty()) return;
    const NodeId waiter =
        WaitedAtOnce(in, *in.graph, computes, carriers, co.stream, IssuedAt(t, co.first_activity), co.start_ns);
    if (waiter == model::kNone) return;
    out->push_back({Make(in, co, *in.graph, waiter), model::kNone});
  }

  Finding Make(const FindingInputs& in, const CollectiveOverlap& co, const graph::Graph& g, NodeId waiter) const {
    const model::Trace& t = in.t;
    Finding fd = FindingOfCollective(kind(), in, co);
    fd.message = absl::StrFormat(
        "%s at %s runs on %s, but %s waits for it before any other GPU work is enqueued there (next activity at %s): "
        "it cannot overlap, whatever async_op says (%s exposed)",
        t.str(co.name), in.At(co.start_ns), in.Stream(co.stream), in.Stream(g.Stream(waiter)), in.At(g.StartNs(waiter)),
        in.Us(fd.cost_ns));
    fd.message += PeerWaitNote(in, co);
    // A host that enqueues the next work only after the collective ended leaves the stream idle
    // by itself: the wait is still there, but moving it alone would not fill the gap.
    const NodeId prev = waiter - 1;
    if (IssuedAt(t, g.Ref(waiter)) >= co.end_ns)
      fd.message += "; the host enqueued that activity only after the collective had ended (host-bound here too)";
    else if (prev >= g.StreamBegin(g.Stream(waiter)) && g.EndNs(prev) <= IssuedAt(t, co.first_activity))
      fd.message +=
          "; that stream had run out of work before the collective was even issued (host-bound here too: overlap "
          "needs the CPU to run ahead, or an explicit prefetch)";
    fd.advice =
        "give the waiting stream independent work between the collective and its wait: issue the next independent "
        "matmul (or other compute) before calling wait() on the async handle; with torch.compile, nothing separates "
        "the collective from its wait_tensor unless independent ops sit between them in the graph or the compiler "
        "moves them apart (torch._inductor.config.reorder_for_compute_comm_overlap)";
    return fd;
  }
};

}  // namespace

const FindingRule& rule_60_collective_waited_at_once() {
  static const CollectiveWaitedAtOnce rule;
  return rule;
}

}  // namespace overlapscope::analyze::findings
