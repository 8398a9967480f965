// Internal to the JSON renderer: the sections of METRICS §8-9 (render_json_paths.cc).
#pragma once

#include <optional>

#include "nlohmann/json.hpp"
#include "report/render_json_deferred.h"
#include "report/report.h"

namespace overlapscope::report {

// An optional as JSON: its value, or null when absent (never NaN, never a default).
template <typename T>
nlohmann::ordered_json JsonOpt(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// Appends "critical_path", "straggler_causes" and "stream_concurrency" to the document; the
// per-iteration arrays of stream concurrency go to `deferred` when it is not null.
void AppendPathsJson(const Report& r, nlohmann::ordered_json* doc, DeferredArrays* deferred = nullptr);

}  // namespace overlapscope::report
