// Capture of `overlapscope run` under MPI (one rank per process): every rank captures itself
// in-process (cupti::CaptureSession) into DIR/<workload>-<mode>/rank<R>.ovspill; after all ranks
// stopped (MPI), rank 0 reads every rank's spill file into one multi-process trace (as
// `overlapscope profile` does), analyzes it, prints the summary (with the skew of the collectives
// matched across ranks) and, with an output directory, writes trace.pftrace, report.json and
// report.txt beside the spill files. NCCL's profiler plugin (as in run_capture.h) records into a
// per-rank directory; at the end of each mode every rank copies its plugin file next to its spill
// file, and rank 0 merges the records of the modes' common time window. Without an output directory the spill files go
// to a temporary directory that rank 0 creates and removes: every rank must see it (one host).
//
// Failure modes: every hook's result is agreed on by all ranks (workloads::mpi::Agree), so a
// capture that fails on one rank, or an analysis that fails on rank 0, fails the mode on every
// rank and the workload goes on consistently. Only built with CUPTI and the workloads.
#pragma once

#if defined(OVERLAPSCOPE_HAVE_WORKLOADS)

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "workloads/workload.h"

namespace overlapscope::cli {

class MpiRunCapture {
 public:
  // Sets NVTX_INJECTION64_PATH (when unset) and the NCCL plugin's variables: must run before the
  // workload first calls NCCL.
  MpiRunCapture(std::string workload, std::string out_dir, int iters, FILE* out, bool full_report);
  ~MpiRunCapture();
  // After mpi::Init(): picks the directory (rank 0's temporary one when out_dir is empty).
  absl::Status Init();
  workloads::CaptureHooks Hooks();
  const std::string& text() const { return text_; }  // rank 0's summaries

 private:
  absl::Status Begin(const std::string& mode);
  absl::Status End(const std::string& mode);
  // starts/ends: every rank's session start and stop (CLOCK_REALTIME ns, decimal).
  absl::Status AnalyzeOnRank0(const std::string& mode, const std::string& dir, const std::vector<std::string>& starts,
                              const std::vector<std::string>& ends);

  std::string workload_, out_dir_, base_dir_;
  bool temp_dir_ = false;
  // NCCL profiler plugin: this rank's temporary directory for nccl.<pid>.ovnccl ("" when the
  // plugin is not used or the user named the directory), and the current session's window.
  std::string nccl_tmp_dir_;
  int64_t window_start_ns_ = 0;
  int iters_ = 0;
  FILE* out_ = stdout;
  bool full_report_ = false;
  struct Session;
  std::unique_ptr<Session> session_;
  std::string text_;
};

}  // namespace overlapscope::cli

#endif  // OVERLAPSCOPE_HAVE_WORKLOADS
