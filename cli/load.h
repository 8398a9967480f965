// Loading traces for the subcommands: expands directories, shows progress on a terminal,
// and turns import errors into the documented exit code (kExitBadInput).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/clock_align.h"
#include "model/trace.h"

namespace overlapscope::cli {

// Imports `paths` (files or directories, one file per rank). On failure prints
// "overlapscope <cmd>: <path>: offset N: reason" to stderr, sets *exit_code and returns nullopt.
std::optional<model::Trace> LoadTracesOrReport(const std::string& command, const std::vector<std::string>& paths,
                                               int* exit_code);

// --align-clocks for analyze/info: parses MODE ("off", "auto", "on"; empty = auto), estimates the
// per-host clock offsets of *trace (analyze/clock_align.h) and, when an offset is to be applied,
// replaces *trace by the shifted copy. On a bad MODE prints a usage error, sets *exit_code and
// returns false.
bool AlignClocksOrReport(const std::string& command, const std::string& mode, model::Trace* trace,
                         analyze::ClockAlignment* alignment, int* exit_code);

// Files of `dir` whose names end in `suffix` (e.g. ".ovspill"), as "dir/name", sorted by name
// (rank0, rank1, ... then pid files); empty when there are none or dir cannot be read.
std::vector<std::string> FilesEndingIn(const std::string& dir, const std::string& suffix);

// True when stdout/stderr is a terminal (progress lines go to stderr only then).
bool StderrIsTerminal();

}  // namespace overlapscope::cli
