// Import statistics and their warnings, as every output shows them (the report, `info`): a
// source's declared statistics (model/import_stats.h) and the data-loss warnings that come first
// in every output (model::ImportWarnings). One place, so that no output can leave them out or
// word them differently (the wording itself: report/render.h, WarningsText / WarningsMarkdown).
#pragma once

#include <string>
#include <vector>

#include "model/source_stats.h"
#include "model/trace.h"
#include "nlohmann/json.hpp"
#include "report/report.h"

namespace overlapscope::report {

// model::ImportWarnings of the trace as the report holds them (empty when nothing was lost).
std::vector<ImportWarning> ImportWarningsOf(const model::Trace& t);

// [{ "name", "severity", "effect", "count", "description", "details": {detail: count} }, ...]
// for every statistic of `src` with a count, in table order.
nlohmann::json StatsJson(const model::SourceStats& src);
// Text lines of StatsJson (indented four spaces).
std::string StatsText(const nlohmann::json& stats);

// [{ "source", "stat", "severity", "count", "message" }, ...] (the report's "warnings").
nlohmann::json WarningsJson(const model::Trace& t);
// WarningsText of that JSON (for `info`, which renders from its JSON document).
std::string WarningsTextOfJson(const nlohmann::json& warnings);

// --strict: true when the trace has any data-loss warning (the CLI then exits 2).
bool HasImportWarnings(const model::Trace& t);

}  // namespace overlapscope::report
