// pageable-async-copy: an async copy from or to pageable host memory, which blocks the host for
// the whole copy (the blocked interval says so: BlockReason::kPageableCopy).
#include "absl/strings/str_format.h"
#include "analyze/findings/finding_rule.h"

namespace overlapscope::analyze::findings {
namespace {

class PageableAsyncCopy : public FindingRule {
 public:
  std::string_view kind() const override { return "pageable-async-copy"; }
  void Find(const FindingInputs& in, std::vector<Emitted>* out) const override {
    const model::Trace& t = in.t;
    for (size_t i = 0; i < in.blocking.intervals.size(); ++i) {
      const BlockedInterval& b = in.blocking.intervals[i];
      if (b.reason != BlockReason::kPageableCopy) continue;
      Finding fd = FindingOfBlocked(kind(), in, static_cast<int32_t>(i));
      fd.message =
          absl::StrFormat("%s at %s on %s (%s) copies pageable host memory: the host blocked %s", t.str(b.call),
                          in.At(b.start_ns), in.Thread(b.thread), in.Stream(b.stream), in.Us(fd.cost_ns));
      fd.advice = absl::StrFormat("use pinned host memory (%s / tensor.pin_memory()) so the copy runs asynchronously",
                                  IsHipCall(t, b.call) ? "hipHostMalloc" : "cudaMallocHost");
      out->push_back({std::move(fd), static_cast<int32_t>(i)});
    }
  }
};

}  // namespace

const FindingRule& rule_10_pageable_async_copy() {
  static const PageableAsyncCopy rule;
  return rule;
}

}  // namespace overlapscope::analyze::findings
