// Internal to engine/: what a Session and an Analysis hold.
#pragma once

#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/clock_align.h"
#include "engine/analysis.h"
#include "engine/session.h"
#include "model/trace.h"
#include "report/report.h"

namespace overlapscope::engine {

struct Session::State {
  model::Trace trace;
  std::vector<std::string> inputs, files;
  analyze::ClockAlignment alignment;  // status kNotEvaluated unless aligned at Load
};

struct Analysis::State {
  Session session;  // keeps the trace alive
  AnalyzeOptions options;
  analyze::AnalysisResult result;
  report::Report report;
};

// The analyze layer's options of the engine's (rules compiled, groups parsed): InvalidArgument
// naming a bad rule or group.
absl::StatusOr<analyze::AnalyzeOptions> ToAnalyzeOptions(const AnalyzeOptions& o);

}  // namespace overlapscope::engine
