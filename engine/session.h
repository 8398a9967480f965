// engine::Session — traces loaded for analysis: every input merged into one model::Trace (one
// process per rank), clocks of several hosts aligned once while the trace was built.
//
// Load() reads any supported input (importers/import_any.h: Kineto .json/.json.gz, .ovspill
// captures with the .ovnccl of their process next to them, directories of either). With
// LoadOptions::align_clocks (auto by default) the per-host clock offsets are estimated from
// matched collectives and added to every timestamp while the trace is finalized (no copy, no
// second pass: analyze/clock_align.h says how the offset is estimated).
//
// A Session is cheap to copy (shared, immutable state) and thread-safe to read. Analyses and
// exports keep the state they need alive.
//
// Failure modes (no exception escapes): NotFound / InvalidArgument / ResourceExhausted whose
// message is "<path>: offset <byte>: <reason>" for an input that cannot be read (the CLI exits
// 2 on any Load error); InvalidArgument for no input at all.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace overlapscope::model {
class Trace;
}
namespace overlapscope::analyze {
struct ClockAlignment;
}

namespace overlapscope::engine {

// --align-clocks: off (timestamps as recorded), auto (align when the trace names >= 2 hosts),
// on (also align processes without a host name, each its own clock domain).
enum class ClockAlign { kOff, kAuto, kOn };
// "off", "auto", "on"; InvalidArgument "--align-clocks 'X': expected off, auto or on".
absl::StatusOr<ClockAlign> ParseClockAlign(std::string_view s);

// Where a long load stands: file `file` (0-based) of `files`, `done_bytes` of `total_bytes` of
// that file read (total_bytes 0 when unknown, e.g. captures: called once per file).
struct LoadProgress {
  int file = 0, files = 0;
  std::string path;
  int64_t done_bytes = 0, total_bytes = 0;
};

struct LoadOptions {
  ClockAlign align_clocks = ClockAlign::kAuto;
  // Parser threads per Kineto file; 0: the machine's cores, at most 32 (a reader thread comes
  // on top). The trace is the same at any count.
  int threads = 0;
  // Called from the loading thread now and then; may be empty.
  std::function<void(const LoadProgress&)> progress;
  // Captures: only NCCL profiler plugin records whose API call started in this window (ns) are
  // merged (a plugin file covers the whole process, a capture may be a part of it).
  int64_t nccl_window_start_ns = INT64_MIN, nccl_window_end_ns = INT64_MAX;
};

class Session {
 public:
  // Inputs as given (they name the report's "inputs"); files actually read (directories
  // expanded), in reading order.
  const std::vector<std::string>& inputs() const;
  const std::vector<std::string>& files() const;
  // How the clocks were aligned (status "not-evaluated" for a session made by FromTrace without
  // an alignment), and its one-line description for reports.
  const analyze::ClockAlignment& clock_alignment() const;
  std::string clock_summary() const;
  // Data-loss warnings of the import (records that were read but not understood, a source whose
  // GPU activity was all lost, a truncated capture), one message each; empty when nothing was
  // lost. Every rendered report starts with them; front ends' --strict fails on them.
  std::vector<std::string> import_warnings() const;

  // The trace model, for code in the engine's layer and below (tests, benchmarks, the C API's
  // implementation); front ends use the engine's functions instead.
  const model::Trace& trace() const;

  // A session over a trace built elsewhere (an in-process capture, tests). `alignment_or_null`:
  // how its clocks were aligned, if they were.
  static Session FromTrace(model::Trace trace, std::vector<std::string> inputs,
                           const analyze::ClockAlignment* alignment_or_null = nullptr);

  struct State;  // defined in session.cc
  explicit Session(std::shared_ptr<const State> state) : s_(std::move(state)) {}
  const std::shared_ptr<const State>& state() const { return s_; }

 private:
  std::shared_ptr<const State> s_;
};

absl::StatusOr<Session> Load(const std::vector<std::string>& inputs, const LoadOptions& options = {});

// For a program that owns its signal handling (the CLI's main(), before any thread starts): from
// now on Load() maps plain .json files into memory instead of copying them (one copy less), and
// installs a SIGBUS handler so that a file cut while mapped fails its load ("the file changed
// size while read") instead of killing the process; other faults keep the handler installed
// before. false where the handler could not be installed (files are then read as before).
// Libraries embedding the engine (the Python module) do not call it. OVERLAPSCOPE_READ=pread
// turns the mapping off again.
bool MapInputFiles();

}  // namespace overlapscope::engine
