// Runs the passes the critical path and straggler analyses read (classes, launch calls,
// iterations, host blocking, collectives across ranks) the way AnalyzeAll does, and hands out
// their PathInputs.
#pragma once

#include <memory>
#include <string>

#include "analyze/analysis.h"
#include "analyze/context.h"
#include "analyze/cross_rank.h"
#include "analyze/path_inputs.h"
#include "gtest/gtest.h"

namespace overlapscope::analyze::testing {

class Prepared {
 public:
  explicit Prepared(const model::Trace& t, const std::string& marker = "ProfilerStep#") {
    opt_.iteration_marker = marker;
    ctx_ = std::make_unique<Context>(t, opt_);
    EXPECT_TRUE(PrepareContext(*ctx_, &summary_).ok());
    ComputeBlocking(*ctx_, &blocking_);
    cross_ = AnalyzeCrossRank(t);
    in_.gpu.kernel_cls = ctx_->kernel_cls;
    in_.gpu.memcpy_cls = ctx_->memcpy_cls;
    in_.gpu.memset_cls = ctx_->memset_cls;
    in_.iterations = &ctx_->iters;
    in_.blocking = &blocking_;
    in_.cross_rank = &cross_;
  }
  const PathInputs& in() const { return in_; }
  const CrossRankResult& cross() const { return cross_; }
  const BlockingResult& blocking() const { return blocking_; }
  const Context& ctx() const { return *ctx_; }

 private:
  AnalyzeOptions opt_;
  std::unique_ptr<Context> ctx_;
  ClassificationSummary summary_;
  BlockingResult blocking_;
  CrossRankResult cross_;
  PathInputs in_;
};

}  // namespace overlapscope::analyze::testing
