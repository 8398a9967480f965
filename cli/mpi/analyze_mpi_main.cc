// overlapscope-analyze-mpi: `overlapscope analyze` under an MPI launcher (cli/analyze_mpi.h).
// MPI_Init, then RunAnalyze with g_mpi_world set; the gather sends each process's reduced ranks
// to process 0 as one message stream: a status (0 ok, else an error message), the count, then per
// rank its file index and bytes (in pieces below 1 GiB: MPI counts are int).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/analyze_mpi.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace overlapscope::cli {
namespace {

constexpr int kTag = 15;
constexpr int64_t kPiece = int64_t{1} << 30;

void SendBytes(const std::string& s, int to) {
  const int64_t n = static_cast<int64_t>(s.size());
  MPI_Send(&n, 1, MPI_INT64_T, to, kTag, MPI_COMM_WORLD);
  for (int64_t off = 0; off < n; off += kPiece)
    MPI_Send(s.data() + off, static_cast<int>(std::min(kPiece, n - off)), MPI_CHAR, to, kTag, MPI_COMM_WORLD);
}

std::string RecvBytes(int from) {
  int64_t n = 0;
  MPI_Recv(&n, 1, MPI_INT64_T, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::string s(static_cast<size_t>(n), '\0');
  for (int64_t off = 0; off < n; off += kPiece)
    MPI_Recv(s.data() + off, static_cast<int>(std::min(kPiece, n - off)), MPI_CHAR, from, kTag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  return s;
}

// Each rank's bytes go from the sender's ReducedRanks to process 0's one at a time: neither side
// holds more than one reduced rank in memory.
absl::StatusOr<std::shared_ptr<engine::ReducedRanks>> Gather(
    int rank, int size, absl::StatusOr<std::shared_ptr<engine::ReducedRanks>> mine) {
  if (rank != 0) {
    std::vector<int64_t> files;
    if (mine.ok()) files = (*mine)->files();
    SendBytes(mine.ok() ? std::string() : std::string(mine.status().message()) + " ", 0);
    const int64_t count = static_cast<int64_t>(files.size());
    MPI_Send(&count, 1, MPI_INT64_T, 0, kTag, MPI_COMM_WORLD);
    for (int64_t f : files) {
      absl::StatusOr<std::string> bytes = (*mine)->Get(f);
      const int64_t file = bytes.ok() ? f : -1;  // -1: process 0 reports the rank missing
      MPI_Send(&file, 1, MPI_INT64_T, 0, kTag, MPI_COMM_WORLD);
      SendBytes(bytes.ok() ? *bytes : std::string(), 0);
    }
    return std::shared_ptr<engine::ReducedRanks>();
  }
  absl::Status first = mine.status();
  std::shared_ptr<engine::ReducedRanks> all;
  if (mine.ok()) {
    all = std::move(mine).value();
  } else {
    auto fresh = engine::ReducedRanks::Create();
    if (!fresh.ok()) first = fresh.status();
    if (fresh.ok()) all = std::move(fresh).value();
  }
  for (int from = 1; from < size; ++from) {  // every message is received, even after an error
    const std::string err = RecvBytes(from);
    if (!err.empty() && first.ok()) first = absl::InvalidArgumentError(err.substr(0, err.size() - 1));
    int64_t count = 0;
    MPI_Recv(&count, 1, MPI_INT64_T, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int64_t i = 0; i < count; ++i) {
      int64_t file = -1;
      MPI_Recv(&file, 1, MPI_INT64_T, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const std::string bytes = RecvBytes(from);
      if (file >= 0 && all != nullptr && first.ok())
        if (absl::Status s = all->Put(file, bytes); !s.ok()) first = s;
    }
  }
  if (!first.ok()) return first;
  return all;
}

}  // namespace
}  // namespace overlapscope::cli

int main(int argc, char** argv) {
  namespace cli = overlapscope::cli;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::fprintf(stderr, "overlapscope analyze: MPI_Init failed\n");
    return cli::kExitError;
  }
  cli::MpiWorld world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  world.gather = [&world](absl::StatusOr<std::shared_ptr<overlapscope::engine::ReducedRanks>> mine) {
    return cli::Gather(world.rank, world.size, std::move(mine));
  };
  cli::g_mpi_world = &world;
  // argv: overlapscope-analyze-mpi analyze ARGS... (as the main binary was called).
  const int rc = argc >= 2 ? cli::RunAnalyze(argc - 2, argv + 2) : cli::kExitUsage;
  MPI_Finalize();
  return rc;
}
