#include "engine/session.h"

#include <exception>
#include <new>

#include "absl/strings/str_cat.h"
#include "analyze/clock_align.h"
#include "base/phase_log.h"
#include "base/run_all.h"
#include "base/status_macros.h"
#include "engine/session_state.h"
#include "importers/import_any.h"
#include "importers/kineto/mapped_file.h"
#include "model/trace_builder.h"

namespace overlapscope::engine {
namespace {

analyze::ClockAlignMode ToAnalyze(ClockAlign m) {
  switch (m) {
    case ClockAlign::kOff: return analyze::ClockAlignMode::kOff;
    case ClockAlign::kOn: return analyze::ClockAlignMode::kOn;
    case ClockAlign::kAuto: break;
  }
  return analyze::ClockAlignMode::kAuto;
}

absl::StatusOr<Session> LoadOrThrow(const std::vector<std::string>& inputs, const LoadOptions& options) {
  if (inputs.empty()) return absl::InvalidArgumentError("no trace given");
  import::ImportAnyOptions io;
  io.kineto.threads = options.threads;
  io.spill.nccl.window_start_ns = options.nccl_window_start_ns;
  io.spill.nccl.window_end_ns = options.nccl_window_end_ns;
  if (options.progress)
    io.progress = [&options](const import::ImportProgress& p) {
      options.progress(LoadProgress{p.file, p.files, p.path, p.done_bytes, p.total_bytes});
    };
  model::TraceBuilder builder;
  ASSIGN_OR_RETURN(import::ExpandedInputs in, import::ImportInto(inputs, io, builder));
  auto state = std::make_shared<Session::State>();
  state->inputs = inputs;
  state->files = std::move(in.files);
  // The clocks are aligned while the trace is finalized: the offsets are estimated from the
  // collectives and added to every event before its one sort (model::ClockShift).
  model::FinalizeOptions finalize;
  finalize.clock_shift = analyze::ClockAlignmentShift(ToAnalyze(options.align_clocks), &state->alignment);
  finalize.threads = base::ThreadsOrCores(options.threads);
  base::PhaseLog("import");
  ASSIGN_OR_RETURN(state->trace, std::move(builder).Finalize(finalize));
  base::PhaseLog("finalize");
  return Session(std::move(state));
}

}  // namespace

absl::StatusOr<ClockAlign> ParseClockAlign(std::string_view s) {
  ASSIGN_OR_RETURN(analyze::ClockAlignMode m, analyze::ParseClockAlignMode(s));
  switch (m) {
    case analyze::ClockAlignMode::kOff: return ClockAlign::kOff;
    case analyze::ClockAlignMode::kOn: return ClockAlign::kOn;
    case analyze::ClockAlignMode::kAuto: break;
  }
  return ClockAlign::kAuto;
}

const std::vector<std::string>& Session::inputs() const { return s_->inputs; }
const std::vector<std::string>& Session::files() const { return s_->files; }
const analyze::ClockAlignment& Session::clock_alignment() const { return s_->alignment; }
std::string Session::clock_summary() const { return analyze::DescribeClockAlignment(s_->alignment); }
const model::Trace& Session::trace() const { return s_->trace; }
std::vector<std::string> Session::import_warnings() const {
  std::vector<std::string> out;
  for (const model::ImportWarning& w : model::ImportWarnings(s_->trace.sources())) out.push_back(w.message);
  return out;
}

Session Session::FromTrace(model::Trace trace, std::vector<std::string> inputs,
                           const analyze::ClockAlignment* alignment_or_null) {
  auto state = std::make_shared<State>();
  state->trace = std::move(trace);
  state->inputs = std::move(inputs);
  if (alignment_or_null != nullptr) state->alignment = *alignment_or_null;
  return Session(std::move(state));
}

bool MapInputFiles() { return import::EnableMappedReads(); }

absl::StatusOr<Session> Load(const std::vector<std::string>& inputs, const LoadOptions& options) {
  try {  // no exception leaves the engine
    return LoadOrThrow(inputs, options);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while loading the traces");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("loading the traces failed: ", e.what()));
  }
}

}  // namespace overlapscope::engine
