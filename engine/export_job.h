// Traces of a many-rank job for the viewer, in bounded memory (`overlapscope export --per-rank`).
//
// Every rank file is imported and analyzed once by the per-rank reduction (engine/reduce.h) and,
// while its model is alive, written to OUT_DIR/rank<r>.pftrace (process<i>.pftrace for input
// file i without a rank number), then freed: peak memory is about jobs x one rank's model, as
// for `analyze --per-rank`. A rank whose host's clock the alignment shifts is written again with
// the shift. Then OUT_DIR/overview.pftrace gets only the summary tracks of every rank
// (exporters/perfetto_overview.h: iterations, exposed communication, idle by cause, waiting for
// peers), built from the reduced report and its cross-rank collective instances; its figures are
// the report's (`analyze --per-rank --json`): iterations[] of ranks[].devices[] and
// collectives_across_ranks.instances[].ranks[].wait_ns.
//
// Failure modes (nothing throws): an unreadable input as AnalyzePerRank ("<path>: offset N:
// reason"; JobExport is not returned, some rank files may be written); an output directory or
// file that cannot be created or written: UnavailableError naming it; two input files with the
// same rank number: InvalidArgument naming both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/export.h"
#include "engine/reduce.h"

namespace overlapscope::engine {

struct JobExportOptions {
  ReduceOptions reduce;  // clocks, jobs, memory budget, progress (each_rank is set by ExportJob)
  bool analyze = false;  // draw each rank's own analysis on its trace, as `export --analyze`
};

struct JobExport {
  std::vector<std::string> rank_files;  // in input file order
  int64_t rank_bytes = 0;               // of all rank files
  std::string overview;                 // path of overview.pftrace
  std::vector<std::string> warnings;    // data-loss warnings of the import (the report's)
  PerfettoExport overview_stats;
  int64_t iterations = 0, waits = 0;  // drawn on the overview
  int64_t waits_unplaced = 0;         // waits whose participant matches no rank (not drawn)
  ReduceStats stats;
};

absl::StatusOr<JobExport> ExportJob(const std::vector<std::string>& inputs, const std::string& out_dir,
                                    const JobExportOptions& options);

// True when ExportJob's error is about writing the output (the CLI exits 1), false for input.
bool IsOutputError(const absl::Status& s);

}  // namespace overlapscope::engine
