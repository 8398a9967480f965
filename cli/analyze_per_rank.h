// `analyze --per-rank` (and --jobs, --memory-budget): the report of a many-rank job through the
// engine's per-rank reduction (engine/reduce.h), with progress on a terminal.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/args.h"
#include "engine/analysis.h"

namespace overlapscope::cli {

// "8G", "512M", "1.5GiB", "4096" (bytes): binary units K, M, G, T with an optional "iB"/"B".
absl::StatusOr<int64_t> ParseBytesOption(const std::string& flag, const std::string& text);

// True when the command line asks for the per-rank reduction.
bool WantsPerRank(const ParsedArgs& args);

// True (after saying why on stderr) when nothing asked for it but one model of the whole job
// would not fit the memory budget (engine::EstimateJob against engine::DefaultMemoryBudget), and
// nothing on the command line needs one model (--trace, --html, --explain-classes,
// --critical-path).
bool AutoPerRank(const ParsedArgs& args);

// Runs it and prints the report like `analyze`; returns the exit code.
int RunAnalyzePerRank(const ParsedArgs& args, const engine::AnalyzeOptions& options,
                      const engine::RenderOptions& render, engine::ReportFormat format,
                      const std::vector<std::string>& gates);

}  // namespace overlapscope::cli
