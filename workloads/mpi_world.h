// The MPI side of the workloads: one rank per process under `mpirun -np N overlapscope run ...`.
// A thin wrapper so that no other file includes <mpi.h> and the build works without MPI
// (OVERLAPSCOPE_HAVE_MPI undefined: CompiledIn() is false and Init() fails with a message that
// says how to get an MPI build).
//
// Threads: MPI is initialized with MPI_THREAD_FUNNELED; every call below must come from the
// thread that called Init() (RankGroup runs the rank's work on that thread under MPI).
//
// Failure modes: Init() fails when MPI is not compiled in or MPI_Init fails; the collectives
// return Internal with the MPI error string. Abort() ends every rank of the job (exit 1) and is
// what a rank calls when a peer may be waiting for it inside an NCCL collective.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace overlapscope::workloads::mpi {

// What the environment says about an MPI launcher. Pure (env is passed in), so it is testable.
struct LaunchEnv {
  bool launched = false;
  std::string evidence;  // e.g. "OMPI_COMM_WORLD_SIZE=2": the variable that gave it away
  int world_size = -1;   // from the environment when it says (else -1)
};
// Looks at OMPI_COMM_WORLD_SIZE (Open MPI), PMIX_RANK (PMIx: Open MPI 4/5, Slurm), PMI_RANK /
// PMI_SIZE (MPICH Hydra), MV2_COMM_WORLD_SIZE (MVAPICH2), in that order.
LaunchEnv DetectLaunch(const std::function<const char*(const char*)>& getenv_fn);
LaunchEnv DetectLaunch();  // from the process environment

bool CompiledIn();  // built with MPI (OVERLAPSCOPE_HAVE_MPI)
bool Active();      // Init() succeeded and Finalize() not yet called

absl::Status Init();  // idempotent
void Finalize();      // no-op unless Active()
[[noreturn]] void Abort(int code);

int Rank();
int Size();
int LocalRank();  // rank among the processes of this host (MPI_COMM_TYPE_SHARED)
int LocalSize();
std::string Hostname();

absl::Status Barrier();
// Every rank's string, indexed by rank (MPI_Allgather of lengths + MPI_Allgatherv).
absl::StatusOr<std::vector<std::string>> AllGather(const std::string& mine);
// `bytes` bytes from `root` to every rank.
absl::Status Broadcast(void* data, int bytes, int root);

// Runs every rank's local status through AllGather so that all ranks return the same result:
// OK when every rank is OK, else the joined "rank R: message" lines of the failed ranks with the
// code of the first failed rank. Used wherever ranks must agree on going on or stopping.
absl::Status Agree(const absl::Status& local);

}  // namespace overlapscope::workloads::mpi
