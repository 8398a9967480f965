// Internal to the JSON renderer: the sections of METRICS §8-9 (render_json_paths.cc).
#pragma once

#include "nlohmann/json.hpp"
#include "report/report.h"

namespace overlapscope::report {

// Appends "critical_path", "straggler_causes" and "stream_concurrency" to the document.
void AppendPathsJson(const Report& r, nlohmann::ordered_json* doc);

}  // namespace overlapscope::report
