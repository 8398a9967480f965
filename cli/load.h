// Loading traces for the subcommands: expands directories, shows progress on a terminal,
// and turns import errors into the documented exit code (kExitBadInput).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"

namespace overlapscope::cli {

// Imports `paths` (files or directories, one file per rank). On failure prints
// "overlapscope <cmd>: <path>: offset N: reason" to stderr, sets *exit_code and returns nullopt.
std::optional<model::Trace> LoadTracesOrReport(const std::string& command,
                                               const std::vector<std::string>& paths, int* exit_code);

// True when stdout/stderr is a terminal (progress lines go to stderr only then).
bool StderrIsTerminal();

}  // namespace overlapscope::cli
