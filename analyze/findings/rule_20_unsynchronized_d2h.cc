// unsynchronized-d2h: an async device-to-host copy into pinned memory with no later covering
// sync on its thread (an event sync, a sync of its stream or of any stream, a non-final device
// sync) before its iteration ends (outside iterations: before the trace ends): the host may read
// the buffer before the copy landed.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "analyze/context.h"
#include "analyze/findings/finding_rule.h"
#include "analyze/strings.h"

namespace overlapscope::analyze::findings {
namespace {

class UnsynchronizedD2H : public FindingRule {
 public:
  std::string_view kind() const override { return "unsynchronized-d2h"; }
  void Find(const FindingInputs& in, std::vector<Emitted>* out) const override {
    const model::Trace& t = in.t;
    for (size_t i = 0; i < t.memcpys().size(); ++i) {
      const model::Memcpy& m = t.memcpys()[i];
      if (!IsDtoH(t, m) || !IsPinnedDst(t, m) || IsPageable(t, m)) continue;
      const int32_t call = t.memcpy_launches()[i];
      if (call == model::kNone) continue;
      const model::ApiCall& a = t.api_calls()[call];
      if (m.is_async == 0 || (m.is_async < 0 && a.semantic != model::ApiSemantic::kCopyAsync)) continue;
      const int32_t it = IterationAt(in.iters, t.ProcessOfThread(a.thread), a.start_ns);
      if (Covered(in, a, m, in.IterationEnd(it))) continue;
      Finding fd;
      fd.kind = kind();
      fd.time_ns = a.start_ns;
      fd.end_ns = m.end_ns;
      fd.process = t.ProcessOfThread(a.thread);
      fd.thread = a.thread;
      fd.stream = m.stream;
      fd.call = a.name;
      fd.api_call = call;
      fd.iteration = it;
      fd.message = absl::StrFormat(
          "%s at %s on %s (%s): device-to-host copy of %d bytes into pinned memory with no later event, stream or "
          "device synchronization on that thread%s: the host may read stale data",
          t.str(a.name), in.At(a.start_ns), in.Thread(a.thread), in.Stream(m.stream), m.bytes,
          it == model::kNone ? "" : " in its iteration");
      fd.advice =
          absl::StrFormat("record an event after the copy and call event.synchronize() (%s) before reading the buffer",
                          IsHipCall(t, a.name) ? "hipEventSynchronize" : "cudaEventSynchronize");
      out->push_back({std::move(fd), model::kNone});
    }
  }

 private:
  // A sync on the copy's thread, after the copy call and before `deadline`, that waits for it.
  static bool Covered(const FindingInputs& in, const model::ApiCall& a, const model::Memcpy& m, int64_t deadline) {
    const auto& list = in.blocked_by_thread[a.thread];
    auto pos = std::lower_bound(list.begin(), list.end(), a.end_ns,
                                [&](int32_t x, int64_t v) { return in.blocking.intervals[x].start_ns < v; });
    for (; pos != list.end() && in.blocking.intervals[*pos].start_ns < deadline; ++pos) {
      const BlockedInterval& b = in.blocking.intervals[*pos];
      const SyncPointKind k = in.points[*pos].kind;
      if (k == SyncPointKind::kEventSync) return true;
      if (k == SyncPointKind::kStreamSync && (b.stream == model::kNone || b.stream == m.stream)) return true;
      if (k == SyncPointKind::kDeviceSync && !b.final_sync) return true;
    }
    return false;
  }
};

}  // namespace

const FindingRule& rule_20_unsynchronized_d2h() {
  static const UnsynchronizedD2H rule;
  return rule;
}

}  // namespace overlapscope::analyze::findings
