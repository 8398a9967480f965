// Loading traces for the subcommands through the engine: shows progress on a terminal and turns
// errors into the documented exit codes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "engine/session.h"

namespace overlapscope::cli {

// engine::Load of `paths` (files or directories, one file per rank) with the clocks aligned as
// `align` says ("off", "auto", "on"; empty = auto). On failure prints
// "overlapscope <cmd>: <path>: offset N: reason" (or the usage error of a bad `align`) to stderr,
// sets *exit_code (kExitBadInput, kExitUsage) and returns nullopt.
// `progress`: show the reading progress on a terminal (off when two loads run at once).
// `threads`: parser threads per file (engine::LoadOptions::threads; 0: the machine's cores).
std::optional<engine::Session> LoadOrReport(const std::string& command, const std::vector<std::string>& paths,
                                            const std::string& align, int* exit_code, bool progress = true,
                                            int threads = 0);

// The --threads N flag of analyze, info, export, diff and replay: threads that read each trace file and
// run the analyses (1: one thread, today's order; the output is the same at any count).
FlagSpec ThreadsFlag();
// --threads (1..256); absent: the machine's cores (std::thread::hardware_concurrency, at least
// 1). On a bad value prints the usage error, sets *exit_code to kExitUsage and returns nullopt.
std::optional<int> ParseThreadsOrReport(const std::string& command, const ParsedArgs& args, int* exit_code);

// --strict for analyze/info/export: when the session has data-loss warnings (part of the input
// was not understood; engine::Session::import_warnings), prints them to stderr, sets *exit_code
// to kExitBadInput and returns false. Without --strict and with `print_always` (export, whose
// output carries no report) it prints them and returns true.
bool StrictCheckOrReport(const std::string& command, const engine::Session& session, bool strict, bool print_always,
                         int* exit_code);

// Parses --align-clocks (empty = auto); on a bad value prints the usage error, sets *exit_code
// and returns nullopt.
std::optional<engine::ClockAlign> ParseAlignOrReport(const std::string& command, const std::string& align,
                                                     int* exit_code);

// Files of `dir` whose names end in `suffix` (e.g. ".ovspill"), as "dir/name", sorted by name
// (rank0, rank1, ... then pid files); empty when there are none or dir cannot be read.
std::vector<std::string> FilesEndingIn(const std::string& dir, const std::string& suffix);

// True when stderr is a terminal (progress lines go to stderr only then).
bool StderrIsTerminal();

}  // namespace overlapscope::cli
