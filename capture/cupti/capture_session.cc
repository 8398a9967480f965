// CaptureSession: the in-process face of the collector (collector.h); see capture_session.h.
#include "capture/cupti/capture_session.h"

#include <unistd.h>

#include <cstdlib>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "capture/cupti/collector.h"
#include "capture/cupti/spill_format.h"

namespace overlapscope::cupti {

int64_t NowNs() { return internal::RealtimeNs(); }
std::string CuptiLibraryPath() { return internal::CuptiLibraryPath(); }

absl::StatusOr<std::unique_ptr<CaptureSession>> CaptureSession::Start(const CaptureOptions& options) {
  if (const char* inj = std::getenv("OVERLAPSCOPE_INJECTED"); inj && *inj == '1')
    return absl::FailedPreconditionError(
        "this process already runs under the overlapscope injection library (overlapscope profile); "
        "its capture covers this session's work");
  if (internal::CollectorActive()) return absl::FailedPreconditionError("a capture is already active in this process");
  std::string path = options.spill_path;
  if (path.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    path = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/overlapscope-", ::getpid(), "-", NowNs(), ".ovspill");
  }
  if (options.nvtx && !std::getenv("NVTX_INJECTION64_PATH")) {
    // NVTX looks for its injection at its first call; before that, pointing it at libcupti
    // routes NVTX ranges into the MARKER activity records.
    const std::string cupti = internal::CuptiLibraryPath();
    if (!cupti.empty()) ::setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 0);
  }
  internal::CollectorConfig c;
  c.spill_path = path;
  c.buffer_bytes = options.buffer_bytes;
  c.max_buffers = options.max_buffers;
  c.driver_api = options.driver_api;
  c.nvtx = options.nvtx;
  c.rank = options.rank >= 0 ? options.rank : internal::RankFromEnv();
  c.world_size = options.world_size >= 0 ? options.world_size : internal::WorldSizeFromEnv();
  c.crash_handlers = false;  // the host program owns its signals; Stop()/~CaptureSession flush
  if (std::string err = internal::StartCollector(c); !err.empty())
    return absl::InternalError(absl::StrCat("CUPTI capture: ", err));
  internal::RecordDeviceNames();
  return std::unique_ptr<CaptureSession>(new CaptureSession(path, options.keep_spill_file || !options.spill_path.empty()));
}

absl::StatusOr<model::Trace> CaptureSession::Stop() {
  if (stopped_) return absl::FailedPreconditionError("CaptureSession::Stop called twice");
  stopped_ = true;
  if (std::string err = internal::StopCollector(internal::EndReason::kStop); !err.empty())
    return absl::InternalError(absl::StrCat("CUPTI capture: ", err));
  auto trace = ReadSpillFiles({path_});
  if (!keep_) ::unlink(path_.c_str());
  return trace;
}

CaptureSession::~CaptureSession() {
  if (stopped_) return;
  internal::StopCollector(internal::EndReason::kStop);
  if (!keep_) ::unlink(path_.c_str());
}

}  // namespace overlapscope::cupti
