// Per-rank reduction: the report of a many-rank job in memory bounded by a few ranks' models.
//
// Each rank file is imported, analyzed and reduced to its report parts (report/build.h:
// RankReport, GlobalPartial, its stream-concurrency devices) plus a compact record of its
// collectives (process, devices, streams, every collective with its arrival estimated on the
// rank's own events: what METRICS §6 matching and clock alignment need), then its model is freed.
// Ranks run on `jobs` threads, largest files first, admitted while the estimated models in
// flight fit `memory_budget_bytes` (one rank always runs, whatever its size). The records are
// then gathered into a collectives-only trace on which clock alignment, cross-rank matching and
// the straggler summary run as in the whole-model path; ranks of a host that the alignment
// shifts are reduced a second time with the offset applied at import (a timestamp shift is not
// neutral for HTA's µs rounding, so shifting a finished report would not be exact).
//
// The report is the same (the same JSON bytes) as Analyze(Load(inputs)) with
// AnalyzeOptions::critical_path = false: the job's critical path and the straggler causes
// (METRICS §8) cross ranks at collectives and need every rank's events at once, so they stay on
// the whole-model path (report paths_skipped says so). One input file: the whole-model path,
// critical path included. tests/engine/reduce_test.cc compares the bytes on every multi-rank
// input of tests/data and on generated jobs (bench/gen_multirank_job).
//
// Failure modes: as Load and Analyze (the first failing file by input order; "<path>: offset N:
// reason"); InvalidArgument for jobs < 0 or a negative budget. Nothing throws.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/analysis.h"
#include "engine/session.h"
#include "report/report.h"

namespace overlapscope::engine {

// Where a reduction stands (called after each rank, from a worker thread, serialized).
struct ReduceProgress {
  int64_t ranks_done = 0, ranks_total = 0;
  int64_t bytes_done = 0, bytes_total = 0;  // input file bytes (compressed for .gz)
  double seconds = 0;                       // since the reduction started
};

struct ReduceOptions {
  ClockAlign align_clocks = ClockAlign::kAuto;
  int jobs = 0;                                         // ranks reduced at once; 0: the machine's hardware threads
  int64_t memory_budget_bytes = 0;                      // estimated models in flight; 0: DefaultMemoryBudget()
  std::function<void(const ReduceProgress&)> progress;  // may be empty
};

// Half of the physical memory (sysconf), 4 GiB when it cannot be read.
int64_t DefaultMemoryBudget();
// A rank's expected peak while it is imported and analyzed, from its file: the JSON bytes
// (a .gz file's from its gzip trailer, at least 4x the compressed size) times the measured
// ratio of peak resident memory to JSON size (docs/PERFORMANCE.md, "per-rank reduction").
int64_t EstimatedRankBytes(const std::string& path);

struct ReduceStats {
  int64_t ranks = 0, bytes = 0;
  int jobs = 0;
  int64_t memory_budget_bytes = 0;
  int64_t max_in_flight_bytes = 0;  // largest sum of estimates admitted at once
  int64_t reduced_again = 0;        // ranks reduced a second time with a clock offset
};

struct ReducedReport {
  report::Report report;
  ReduceStats stats;
};

absl::StatusOr<ReducedReport> AnalyzePerRank(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                             const ReduceOptions& reduce = {});

// Across processes (MPI, engine/reduce_mpi.h): process `part` of `parts` reduces its share of
// the files (every parts-th by decreasing size) to bytes; one process gathers every share and
// assembles the report, the same as AnalyzePerRank's. Ranks of a host the clock alignment shifts
// are reduced again by the assembling process. All processes must see the same files.
struct ReducedRank {
  int64_t file = 0;   // index into the expanded inputs (directories expanded, sorted)
  std::string bytes;  // the reduced rank (a versioned JSON)
};
absl::StatusOr<std::vector<ReducedRank>> ReduceShare(const std::vector<std::string>& inputs,
                                                     const AnalyzeOptions& options, const ReduceOptions& reduce,
                                                     int part, int parts);
absl::StatusOr<ReducedReport> AssembleShares(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                             const ReduceOptions& reduce, std::vector<ReducedRank> ranks);

}  // namespace overlapscope::engine
