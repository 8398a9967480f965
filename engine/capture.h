// In-process capture for the engine's clients (the `run` workloads, the Python front end, GPU
// tests): stops a cupti::CaptureSession and reads what it wrote into a model::Trace. capture/
// writes files and knows no trace model; the importers read them; this joins the two.
//
// Failure modes: whatever CaptureSession::Stop() reports (capture not stopped cleanly), then
// the reader's errors naming the spill file, byte offset and reason. A temporary spill file is
// deleted in every case.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "capture/cupti/capture_session.h"
#include "engine/session.h"
#include "model/trace.h"

namespace overlapscope::engine {

// Stops `session` and reads its spill file, merging the NCCL plugin records of this process that
// started within the session's window.
absl::StatusOr<model::Trace> StopCapture(cupti::CaptureSession& session);

// The same, as a Session to analyze and export like a loaded one (`label` names its input in
// the report, e.g. "overlapscope run all-to-all --mode async"). One process: no clock to align.
absl::StatusOr<Session> StopCaptureSession(cupti::CaptureSession& session, const std::string& label);

}  // namespace overlapscope::engine
