// Capture, analysis and output of `overlapscope run`: one CUPTI session per workload mode
// (workloads::CaptureHooks), analyzed through the engine, summarized on stdout and, with
// an output directory, written as DIR/<workload>-<mode>/{trace.pftrace, report.json, report.txt} with
// the raw capture beside them (capture.ovspill, the NCCL plugin's nccl.<pid>.ovnccl).
//
// Failure modes: a capture that cannot start or stop, an analysis error, or an output file that
// cannot be written come back as Status from the hooks (the workload then reports that mode as
// failed). Only built with CUPTI and the workloads (OVERLAPSCOPE_HAVE_WORKLOADS).
#pragma once

#if defined(OVERLAPSCOPE_HAVE_WORKLOADS)

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/engine.h"
#include "report/report.h"
#include "workloads/workload.h"

namespace overlapscope::cli {

class RunCapture {
 public:
  // `out_dir` empty: nothing is written. Sets NVTX_INJECTION64_PATH (when unset) so NVTX ranges
  // of NCCL and of the workload reach CUPTI, and (iters > 0, OVERLAPSCOPE_NO_NCCL_PLUGIN unset)
  // NCCL_PROFILER_PLUGIN / OVERLAPSCOPE_NCCL_DIR (cupti::SetNcclPluginEnv): must run before the
  // workload creates its first NCCL communicator.
  // Summaries go to `out` (stdout; stderr when stdout carries JSON).
  // `full_report`: print the whole text report of every mode, not only the summary lines.
  RunCapture(std::string workload, std::string out_dir, int iters, FILE* out, bool full_report = false);
  ~RunCapture();  // removes the NCCL plugin's temporary directory, if it made one
  workloads::CaptureHooks Hooks();
  // The per-mode summaries printed so far (also printed as they happen).
  const std::string& text() const { return text_; }

 private:
  absl::Status Begin(const std::string& mode);
  std::string ModeDir(const std::string& mode) const;  // DIR/<workload>-<mode>
  absl::Status End(const std::string& mode);

  std::string workload_, out_dir_;
  int iters_ = 0;
  FILE* out_ = stdout;
  bool full_report_ = false;
  struct Session;
  std::shared_ptr<Session> session_;
  std::string text_;
  std::string nccl_tmp_dir_;  // made by SetNcclPluginEnv for this run; removed at the end
};

// The raw capture `run -o DIR` keeps per mode of one process: DIR/<workload>-<mode>/capture.ovspill
// (with the NCCL plugin's nccl.<pid>.ovnccl beside it), read again by analyze, replay and export.
inline constexpr char kRunSpillName[] = "capture.ovspill";

// Copies this process's NCCL plugin file (OVERLAPSCOPE_NCCL_DIR/nccl.<pid>.ovnccl) into `dir`,
// where the spill reader merges it; the file covers the whole process, the reader keeps the
// collectives of the spill's session window. No plugin file: nothing; a failed copy is silent
// (the capture stays readable, without the plugin's fields).
void KeepNcclPluginCopy(const std::string& dir);

// Writes `content` to `path` (creating parent directories); the error names the path.
absl::Status WriteTextFile(const std::string& path, const std::string& content);

// Environment for in-process capture of `run`, before the workload creates its first NCCL
// communicator: NVTX_INJECTION64_PATH (NVTX ranges to CUPTI) and, when iters > 0 and not
// disabled by OVERLAPSCOPE_NO_NCCL_PLUGIN, the NCCL profiler plugin's variables. Returns the
// temporary plugin directory it made (for the caller to remove at the end), "" otherwise; why
// the plugin is not used is printed to `note_to` (may be null).
std::string PrepareCaptureEnv(int iters, FILE* note_to);

// What the analysis says about one captured mode, a few lines: counts, per GPU (labelled with
// the process's rank when it has one), host blocking and findings per process, and the
// cross-rank line.
std::string ModeSummary(const engine::Analysis& analysis);

// DIR/{report.json, report.txt, trace.pftrace} of one mode (the directory is created).
absl::Status WriteModeOutputs(const std::string& dir, const engine::Analysis& analysis);

// One summary line about the collectives matched across ranks or GPUs (count, unmatched, median
// and max skew); "" when none were matched.
std::string CrossRankSummaryLine(const report::CrossRank& x);

}  // namespace overlapscope::cli

#endif  // OVERLAPSCOPE_HAVE_WORKLOADS
