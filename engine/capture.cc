#include "engine/capture.h"

#include <unistd.h>

#include "importers/ovspill/spill_reader.h"

namespace overlapscope::engine {

absl::StatusOr<model::Trace> StopCapture(cupti::CaptureSession& session) {
  absl::StatusOr<cupti::CaptureFiles> files = session.Stop();
  if (!files.ok()) return files.status();
  import::SpillReadOptions read;
  read.nccl_next_to_spill = false;
  read.nccl_plugin_file = files->nccl_plugin_file;
  read.nccl.window_start_ns = files->start_ns;
  read.nccl.window_end_ns = files->stop_ns;
  absl::StatusOr<model::Trace> trace = import::ReadSpillFiles({files->spill_path}, read);
  if (files->delete_spill_after_read) ::unlink(files->spill_path.c_str());
  return trace;
}

absl::StatusOr<Session> StopCaptureSession(cupti::CaptureSession& session, const std::string& label) {
  absl::StatusOr<model::Trace> trace = StopCapture(session);
  if (!trace.ok()) return trace.status();
  return Session::FromTrace(std::move(trace).value(), {label});
}

}  // namespace overlapscope::engine
