// Rendering of a replay result (engine-internal): text, Markdown and JSON (schema
// overlapscope.replay/1, docs/report-schema.md "Replay"). The replay error comes first in every
// form; a prediction over a rank whose replay error exceeds 5 % is flagged next to its number.
#pragma once

#include <string>
#include <vector>

#include "analyze/replay/replay.h"
#include "engine/analysis.h"
#include "model/trace.h"

namespace overlapscope::engine {

// Above this |replay error| (fraction), a prediction says it is not to be trusted.
inline constexpr double kReplayErrorFlag = 0.05;

std::string RenderReplay(const model::Trace& t, const std::vector<std::string>& inputs,
                         const analyze::replay::ReplayResult& r, ReportFormat format);

}  // namespace overlapscope::engine
