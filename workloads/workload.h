// What every built-in workload shares: how a run is captured (CaptureHooks), what it hands back
// (WorkloadResult: the printed table, named figures, and errors), and the table formatting.
//
// Errors: a workload returns a Status only when it cannot start (no GPU, bad options, NCCL
// init). Failures of single modes (a library error, a validation mismatch) land in
// WorkloadResult::errors so the other modes still report; any error means exit status 1.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace overlapscope::workloads {

// Capture of each mode: after a mode's timed run, begin(mode) is called on the main thread, the
// mode runs `iters` more iterations (each an NVTX range "ProfilerStep#i"), then end(mode).
struct CaptureHooks {
  int iters = 0;  // 0: no captured run
  std::function<absl::Status(const std::string& mode)> begin;
  std::function<absl::Status(const std::string& mode)> end;
};

struct WorkloadResult {
  std::string workload;
  std::string device;  // e.g. "NVIDIA H200 x2, NCCL 2.28.3 (built against 2.28.9)"
  std::string config;  // shapes, sizes, iterations
  std::string ranks;   // "2 threads (one process)" or "2 processes (MPI)"
  int nranks = 0;
  std::string table;                      // the human-readable timing table
  std::map<std::string, double> figures;  // e.g. "sequential_ms", "overlap_efficiency"
  std::vector<std::string> notes;         // facts worth printing (e.g. which all-to-all API ran)
  std::vector<std::string> errors;        // failed modes and validation failures
  bool ok() const { return errors.empty(); }
  double Get(const std::string& key, double fallback = -1) const {
    auto it = figures.find(key);
    return it == figures.end() ? fallback : it->second;
  }
};

// Common run parameters.
struct RunParams {
  int gpus = 0;  // 0: all visible GPUs
  int warmup = 5;
  int iters = 20;
  int nccl_max_ctas = 0;  // > 0: ncclConfig_t::maxCTAs of the default communicator
  double timeout_s = 300;
  // GEMMs back to back before the first measured phase, so every phase sees the clocks the GPU
  // holds under sustained load (a cold GPU boosts higher for the first tens of ms).
  int burn_in_ms = 500;
  int cublas_workspace_mb = 32;  // GroupOptions::cublas_workspace_mb
  // Straggler injection (matmul-allgather, all-to-all): rank `delay_rank` runs a one-block GPU
  // spin kernel of `delay_us` µs on a collective's stream right before every collective, in the
  // timed and the captured phases. -1 / 0: none.
  int delay_rank = -1;
  int64_t delay_us = 0;
  bool mpi = false;  // one rank per process (mpi::Init() done by the caller); else one thread per GPU
};

// InvalidArgument when the delay options do not fit `nranks` (rank out of range, negative µs).
absl::Status CheckDelay(const RunParams& p, int nranks);
// "straggler: rank 1 spins 500 µs ..." for the notes.
std::string DelayNote(const RunParams& p);

// "%-30s %10.3f ms" rows and friends, so every workload prints alike.
std::string Row(const std::string& label, double ms, const std::string& extra = "");
// (t_seq - t_ovl) / (t_seq - ideal) per METRICS.md §7; absent when t_seq <= ideal.
std::optional<double> OverlapEfficiency(double t_seq, double t_ovl, double ideal);
std::string FormatEfficiency(std::optional<double> e);

}  // namespace overlapscope::workloads
