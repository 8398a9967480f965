// CaptureSession — records what runs on the GPU (kernels, copies, memsets, syncs, CUDA events)
// and what the host does around it (runtime/driver API calls, NVTX ranges, CUPTI overhead) in
// the calling process, through the CUPTI activity API, into a spill file (.ovspill).
//
// Usage (in-process, e.g. the workloads): capture/ knows no trace model, so reading the files
// back is the engine's job (engine/capture.h):
//   ASSIGN_OR_RETURN(auto session, cupti::CaptureSession::Start());
//   ... CUDA work ...
//   ASSIGN_OR_RETURN(model::Trace trace, engine::StopCapture(*session));
//
// Clock: every timestamp (host and GPU) is CLOCK_REALTIME in ns (registered once per process
// with cuptiActivityRegisterTimestampCallback), so traces of several processes on one host share
// one time axis and line up with PyTorch profiler traces taken on that host. Use NowNs() for
// host-side timings that must line up with the capture.
//
// Memory: CUPTI fills a bounded pool of activity buffers; each completed buffer is encoded at
// once into the compact spill file (spill_format.h) and the buffer is reused, so a run with
// 10 M kernels never holds 10 M records in RAM during capture.
// Records CUPTI had to drop (pool exhausted) are counted in SourceStats::dropped_records.
//
// Stop() expects the GPU work to be finished (synchronize first): records of work still running
// are flushed without end times and counted as skipped.
//
// NCCL: when NCCL's profiler plugin (libnccl-profiler-overlapscope.so, loaded through
// NCCL_PROFILER_PLUGIN) records into $OVERLAPSCOPE_NCCL_DIR, Stop() flushes it and names its
// file, so that the reader merges the collectives this process started during the session
// (communicator, sequence, algorithm, ...). SetNcclPluginEnv() sets both variables; it must run
// before the first NCCL communicator of the process is created.
//
// Failure modes: Start() fails (FailedPrecondition) when a session or the injection library is
// already active in this process (under `overlapscope profile` the injection captures the whole
// process already) (CUPTI activity state is process-wide), and (Internal) when a
// CUPTI call fails, e.g. no libcupti or a driver too old. A session that is destroyed without Stop() stops capture and
// deletes its temporary spill file. Only one session per process at a time; Start/Stop from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace overlapscope::cupti {

struct CaptureOptions {
  // Spill file to write (must not exist; it is kept). Empty: a temporary file under $TMPDIR
  // (or /tmp), deleted by Stop() unless keep_spill_file is set.
  std::string spill_path;
  bool keep_spill_file = false;
  // Activity buffer pool: `buffer_bytes` per buffer, at most `max_buffers` alive at once.
  // When all are in use CUPTI drops records, and they are counted (dropped_records).
  int64_t buffer_bytes = 4 << 20;
  int32_t max_buffers = 64;
  // Record the CUDA driver API too (cu* calls: Triton/NCCL launches). By default only the calls
  // the analyses read are recorded (capture/cupti/api_table.h), and a driver call made inside a
  // recorded runtime call is not recorded again.
  bool driver_api = true;
  // Record every runtime and driver API call (like `profile --api=all`); costs a record per call.
  bool all_api_calls = false;
  // NVTX ranges (MARKER). In-process this works only if NVTX was not used before Start():
  // Start() sets NVTX_INJECTION64_PATH to libcupti when it is unset.
  bool nvtx = true;
  // Rank/world size written into the trace's Process; kNone: read RANK / WORLD_SIZE (and the
  // LOCAL_RANK / OMPI_COMM_WORLD_* variants) from the environment.
  int32_t rank = -1;
  int32_t world_size = -1;
};

// What a stopped session leaves: the files to read and the session's time window.
struct CaptureFiles {
  std::string spill_path;
  bool delete_spill_after_read = false;  // a temporary spill file (CaptureOptions::spill_path empty)
  std::string nccl_plugin_file;          // this process's .ovnccl file, "" when NCCL's plugin wrote none
  int64_t start_ns = 0, stop_ns = 0;     // CLOCK_REALTIME ns: Start() returned .. Stop() was called
};

class CaptureSession {
 public:
  // Starts capturing in this process. See the header comment for failure modes.
  static absl::StatusOr<std::unique_ptr<CaptureSession>> Start(const CaptureOptions& options = {});

  // Flushes CUPTI and NCCL's plugin and stops capture; the files then hold everything recorded
  // since Start(). Call once; a second call fails with FailedPrecondition.
  absl::StatusOr<CaptureFiles> Stop();

  // Path of the spill file being written (useful with keep_spill_file).
  const std::string& spill_path() const { return path_; }

  ~CaptureSession();
  CaptureSession(const CaptureSession&) = delete;
  CaptureSession& operator=(const CaptureSession&) = delete;

 private:
  CaptureSession(std::string path, bool keep, int64_t start_ns)
      : path_(std::move(path)), keep_(keep), start_ns_(start_ns) {}
  std::string path_;
  bool keep_ = false;
  int64_t start_ns_ = 0;  // when Start() returned: the NCCL plugin records of the session begin here
  bool stopped_ = false;
};

// Points NCCL at the profiler plugin for this process: sets NCCL_PROFILER_PLUGIN to `plugin`
// (or, when empty, to $OVERLAPSCOPE_NCCL_PLUGIN or libnccl-profiler-overlapscope.so next to
// the running binary or in the build tree) and OVERLAPSCOPE_NCCL_DIR to `dir` (created; empty:
// a fresh directory under $TMPDIR). Leaves a user's own NCCL_PROFILER_PLUGIN alone. Returns
// "" when set, else why not (plugin not found, user's plugin set, directory not creatable).
std::string SetNcclPluginEnv(const std::string& dir = "", const std::string& plugin = "");

// Where libnccl-profiler-overlapscope.so is: $OVERLAPSCOPE_NCCL_PLUGIN, next to the running
// binary, <binary dir>/../capture/cupti/, <binary dir>/../lib/; "" when not found.
std::string FindNcclPlugin();

// CLOCK_REALTIME in ns: the clock of every capture timestamp.
int64_t NowNs();

// Path of the libcupti.so this process loaded ("" if unknown). `overlapscope profile` sets
// NVTX_INJECTION64_PATH to it so NVTX ranges of the profiled program reach CUPTI.
std::string CuptiLibraryPath();

}  // namespace overlapscope::cupti
