// Per-rank reduction: the report of a many-rank job in memory bounded by a few ranks' models.
//
// Each rank file is imported, analyzed and reduced to its report parts (report/build.h:
// RankReport, GlobalPartial, its stream-concurrency devices) plus a compact record of its
// collectives (process, devices, streams, every collective with its arrival estimated on the
// rank's own events: what METRICS §6 matching and clock alignment need), then its model is freed.
// Ranks run on `jobs` threads, largest files first, admitted while the estimated models in
// flight fit `memory_budget_bytes` (one rank always runs, whatever its size). The records are
// then gathered into a collectives-only trace on which clock alignment, cross-rank matching and
// the straggler summary run as in the whole-model path; the parts of ranks on a host that the
// alignment shifts are moved by its offset (report/shift_times.h: exact, every per-rank analysis
// is shift-invariant and HTA's µs-rounded figures use the timestamps as recorded), so no rank
// is read twice.
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
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/analysis.h"
#include "engine/session.h"
#include "report/render.h"
#include "report/report.h"

namespace overlapscope::engine {

// Where a reduction stands (called after each rank, from a worker thread, serialized): the
// ranks of this call (ReduceShare: this process's share; under export --per-rank, ranks reduced
// again with a clock offset: a second round counted from 0).
struct ReduceProgress {
  int64_t ranks_done = 0, ranks_total = 0;
  int64_t bytes_done = 0, bytes_total = 0;  // input file bytes (compressed for .gz)
  double seconds = 0;                       // since the reduction started
};

// One rank's imported model and its analysis, while they are alive (engine-internal: defined in
// engine/reduce_internal.h; `export --per-rank` writes each rank's trace from it).
struct RankModel;

struct ReduceOptions {
  ClockAlign align_clocks = ClockAlign::kAuto;
  int jobs = 0;                                         // ranks reduced at once; 0: the machine's hardware threads
  int64_t memory_budget_bytes = 0;                      // estimated models in flight; 0: DefaultMemoryBudget()
  std::function<void(const ReduceProgress&)> progress;  // may be empty
  // Called with each rank's model before it is freed (may be empty): from the worker thread that
  // reduced it, concurrently for different files, and again for a rank reduced a second time with
  // a clock offset. `file` indexes the expanded inputs. An error fails the reduction.
  std::function<absl::Status(int64_t file, const RankModel&)> each_rank;
};

// Half of the physical memory (sysconf), 4 GiB when it cannot be read; OVERLAPSCOPE_MEMORY_BUDGET
// (bytes) instead when set to a positive integer.
int64_t DefaultMemoryBudget();
// A rank's expected peak while it is imported and analyzed, from its file: the JSON bytes
// (a .gz file's from its gzip trailer, at least 4x the compressed size) times the measured
// ratio of peak resident memory to JSON size (docs/PERFORMANCE.md, "per-rank reduction").
int64_t EstimatedRankBytes(const std::string& path);
// What one model of the whole job would take (EstimatedRankBytes summed over the expanded
// inputs) and its rank files: `analyze` switches to the per-rank reduction by itself when the
// model would not fit the memory budget. Fails as Load does on inputs that cannot be expanded.
struct JobEstimate {
  int64_t files = 0, model_bytes = 0;
};
absl::StatusOr<JobEstimate> EstimateJob(const std::vector<std::string>& inputs);

struct ReduceStats {
  int64_t ranks = 0, bytes = 0;
  int jobs = 0;
  int64_t memory_budget_bytes = 0;
  int64_t max_in_flight_bytes = 0;  // largest sum of estimates admitted at once
  int64_t shifted = 0;              // ranks moved by their host's clock offset (their parts shifted, not read again)
  int64_t reduced_again = 0;        // export --per-rank (each_rank): ranks reduced again with their host's offset
};

struct ReducedReport {
  report::Report report;
  ReduceStats stats;
};

// Reduced ranks (each a versioned byte string, engine/reduce_serial.cc) kept in an unlinked
// temporary file under $TMPDIR (else /tmp) from the moment a rank is reduced until the report is
// rendered, so that memory holds a few of them whatever the rank count. Thread-safe. Failure
// modes: Internal naming the file and errno when it cannot be created, written or read;
// NotFound for a rank never put.
class ReducedRanks {
 public:
  static absl::StatusOr<std::shared_ptr<ReducedRanks>> Create();
  ~ReducedRanks();
  ReducedRanks(const ReducedRanks&) = delete;
  ReducedRanks& operator=(const ReducedRanks&) = delete;
  // `file`: index into the expanded inputs (directories expanded, sorted). A second Put of the
  // same file replaces the first (a rank moved by a clock offset, or reduced again with it).
  absl::Status Put(int64_t file, const std::string& bytes);
  absl::StatusOr<std::string> Get(int64_t file) const;
  std::vector<int64_t> files() const;  // those put, in the order first put
  int64_t bytes() const;               // written to the file so far

 private:
  ReducedRanks(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;  // for messages (already unlinked)
  mutable std::mutex mu_;
  int64_t end_ = 0;
  std::map<int64_t, std::pair<int64_t, int64_t>> where_;  // file -> (offset, size)
  std::vector<int64_t> order_;
};

// The report of a per-rank reduction held part by part, so that rendering it takes memory
// bounded whatever the rank count: the head (every section; each rank reduced to its label, ids
// and summary, what the gates read; no collective instances) in memory, each rank's part read
// back from ReducedRanks when it is rendered, each matched collective instance built from the
// gathered collective records when it is rendered (report/render.h ReportView).
class PerRankReport {
 public:
  struct State;  // engine/reduce_view.cc
  explicit PerRankReport(std::shared_ptr<State> s) : s_(std::move(s)) {}
  const report::Report& head() const;
  report::ReportView view() const;  // valid while this object is
  // The first failure of view() to produce a part (a reduced rank unreadable): what was rendered
  // is then not the report. OK otherwise.
  absl::Status status() const;
  const ReduceStats& stats() const;
  absl::StatusOr<report::Report> Materialize() const;  // the whole report in memory

 private:
  std::shared_ptr<State> s_;
};

// The report, streamed (what `analyze --per-rank` prints).
absl::StatusOr<PerRankReport> ReducePerRank(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                            const ReduceOptions& reduce = {});
// Renders `view` to `out` in pieces (report/render.h), the same bytes as RenderReport of the
// whole report; Internal when writing fails (a full disk, a closed pipe) or the view failed.
absl::Status WriteReport(const PerRankReport& report, ReportFormat format, const RenderOptions& options,
                         std::FILE* out);

// The whole report in memory (ReducePerRank, then Materialize).
absl::StatusOr<ReducedReport> AnalyzePerRank(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                             const ReduceOptions& reduce = {});

// Across processes (MPI, cli/analyze_mpi.h): process `part` of `parts` reduces its share of the
// files (every parts-th by decreasing size) into a ReducedRanks; one process gathers every
// share's ranks into one ReducedRanks and assembles the report, the same as ReducePerRank's. All
// processes must see the same files.
absl::StatusOr<std::shared_ptr<ReducedRanks>> ReduceShare(const std::vector<std::string>& inputs,
                                                          const AnalyzeOptions& options, const ReduceOptions& reduce,
                                                          int part, int parts);
absl::StatusOr<PerRankReport> AssembleShares(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                             const ReduceOptions& reduce, std::shared_ptr<ReducedRanks> ranks);

// In a training job (python/overlapscope/torch.py): each process reduces its own rank's trace to
// the bytes the per-rank path keeps of it (its report part, global partial and compact collective
// record: engine/reduce_serial.cc's versioned form; tens of KB for a rank's report tables plus
// about 100 bytes per collective), the job gathers them to one process, which assembles the
// job's report from them: the report of ReducePerRank over the ranks' files in that order.
// ReduceRankPart fails as ReducePerRank on one file (and for a directory of several files);
// AssembleParts takes `names` (the ranks' trace paths, for the report's inputs and messages;
// they need not exist here) parallel to `parts`, part i being process i of the job, and fails
// with InvalidArgument on parts that are not such bytes.
absl::StatusOr<std::string> ReduceRankPart(const std::string& path, const AnalyzeOptions& options);
absl::StatusOr<report::Report> AssembleParts(const std::vector<std::string>& names,
                                             const std::vector<std::string>& parts, const AnalyzeOptions& options);

}  // namespace overlapscope::engine
