// `mpirun -np P overlapscope analyze DIR` (srun under Slurm): the per-rank reduction spread over
// processes. The main binary sees the launcher's environment and hands over to
// overlapscope-analyze-mpi (cli/analyze_mpi_main.cc, built when an MPI C library is found and
// OVERLAPSCOPE_MPI is on), which runs RunAnalyze with a Gather: each process reduces its share of
// the rank files (engine::ReduceShare), process 0 gathers the reduced ranks and writes the report
// (engine::AssembleShares), the same bytes as one process's --per-rank report.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/reduce.h"

namespace overlapscope::cli {

// The MPI world of overlapscope-analyze-mpi; null in the main binary.
struct MpiWorld {
  int rank = 0, size = 1;
  // Every process calls it once with its reduced ranks or its error; process 0 gets every
  // process's ranks (an error of any process: the first, by process), the others an empty store.
  std::function<absl::StatusOr<std::shared_ptr<engine::ReducedRanks>>(
      absl::StatusOr<std::shared_ptr<engine::ReducedRanks>>)>
      gather;
};
extern MpiWorld* g_mpi_world;

// The world size an MPI launcher (mpirun/mpiexec of Open MPI or MPICH, srun with PMI/PMIx) gave
// this process, from its environment; 1 when none.
int LauncherWorldSize();

// In the main binary under a launcher with more than one process: execs overlapscope-analyze-mpi
// (next to this executable, or $OVERLAPSCOPE_ANALYZE_MPI_BIN) with the same arguments; returns
// only on failure (exit code 1 after saying why: e.g. a build without MPI).
int ExecAnalyzeMpi(int argc, char** argv);

}  // namespace overlapscope::cli
