#include "engine/export.h"

#include <exception>
#include <new>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/session_state.h"
#include "exporters/chrome_writer.h"
#include "exporters/perfetto_writer.h"

namespace overlapscope::engine {
namespace {

template <typename F>
auto NoThrow(const std::string& path, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": out of memory while exporting"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(path, ": export failed: ", e.what()));
  }
}

// The process of session.files()[only_file] (each file is one process, in reading order).
absl::StatusOr<model::ProcessId> OnlyProcess(const Session& session, const std::string& path,
                                             const ExportOptions& options) {
  if (options.only_file < 0) return model::kNone;
  if (static_cast<size_t>(options.only_file) >= session.files().size() ||
      static_cast<size_t>(options.only_file) >= session.trace().processes().size())
    return absl::InvalidArgumentError(absl::StrCat(path, ": no input file ", options.only_file, " in the session"));
  return static_cast<model::ProcessId>(options.only_file);
}

}  // namespace

absl::StatusOr<TraceFormat> TraceFormatFromPath(const std::string& path) {
  for (const char* e : {".pftrace", ".perfetto-trace", ".pb"})
    if (absl::EndsWith(path, e)) return TraceFormat::kPerfetto;
  for (const char* e : {".json", ".json.gz"})
    if (absl::EndsWith(path, e)) return TraceFormat::kChrome;
  return absl::InvalidArgumentError(
      absl::StrCat("cannot tell the format from '", path, "': use .pftrace, .json or .json.gz"));
}

absl::StatusOr<PerfettoExport> ExportPerfetto(const Session& session, const std::string& path,
                                              const ExportOptions& options) {
  if (options.analysis != nullptr && options.analysis->session().state() != session.state())
    return absl::InvalidArgumentError(absl::StrCat(path, ": the analysis drawn in is of another session"));
  ASSIGN_OR_RETURN(model::ProcessId only, OnlyProcess(session, path, options));
  return NoThrow(path, [&]() -> absl::StatusOr<PerfettoExport> {
    exporters::PerfettoStats st;
    exporters::PerfettoOptions po;
    po.only_process = only;
    RETURN_IF_ERROR(exporters::WritePerfetto(
        session.trace(), options.analysis != nullptr ? &options.analysis->result() : nullptr, path, &st, po));
    PerfettoExport out;
    out.packets = st.packets;
    out.tracks = st.tracks;
    out.lane_tracks = st.lane_tracks;
    out.slices = st.slices;
    out.instants = st.instants;
    out.counter_samples = st.counter_samples;
    out.flows = st.flows;
    out.bytes = st.bytes;
    out.time_shift_ns = st.time_shift_ns;
    return out;
  });
}

absl::StatusOr<ChromeExport> ExportChrome(const Session& session, const std::string& path,
                                          const ExportOptions& options) {
  ASSIGN_OR_RETURN(model::ProcessId only, OnlyProcess(session, path, options));
  return NoThrow(path, [&]() -> absl::StatusOr<ChromeExport> {
    ASSIGN_OR_RETURN(exporters::ChromeStats st, exporters::WriteChrome(session.trace(), path, only));
    ChromeExport out;
    out.files = std::move(st.files);
    out.events = st.events;
    out.bytes = st.bytes;
    out.file_bytes = st.file_bytes;
    out.not_written = st.not_written;
    out.nvtx_as_user_annotation = st.nvtx_as_user_annotation;
    return out;
  });
}

}  // namespace overlapscope::engine
