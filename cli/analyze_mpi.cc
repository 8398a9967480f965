#include "cli/analyze_mpi.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cli/args.h"
#include "cli/commands.h"

namespace overlapscope::cli {

MpiWorld* g_mpi_world = nullptr;

int LauncherWorldSize() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})  // Open MPI; MPICH, Slurm PMI2
    if (const char* s = std::getenv(v); s != nullptr && *s != '\0') return std::max(1, std::atoi(s));
  // srun --mpi=pmix: PMIx names the rank, Slurm the task count.
  if (std::getenv("PMIX_RANK") != nullptr)
    if (const char* s = std::getenv("SLURM_NTASKS"); s != nullptr) return std::max(1, std::atoi(s));
  return 1;
}

int ExecAnalyzeMpi(int argc, char** argv) {
  std::string bin;
  if (const char* env = std::getenv("OVERLAPSCOPE_ANALYZE_MPI_BIN"); env != nullptr && *env != '\0') {
    bin = env;
  } else {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) bin = (self.parent_path() / "overlapscope-analyze-mpi").string();
  }
  if (bin.empty() || ::access(bin.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "overlapscope analyze: started by an MPI launcher (%d processes), but this build has no MPI: "
                 "%s was not built (it needs an MPI C library at build time and OVERLAPSCOPE_MPI=ON); run "
                 "without the launcher, or with --per-rank --jobs N on one host\n",
                 LauncherWorldSize(), bin.empty() ? "overlapscope-analyze-mpi" : bin.c_str());
    return kExitError;
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>(bin.c_str()));
  static char analyze[] = "analyze";
  args.push_back(analyze);
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv(bin.c_str(), args.data());
  std::fprintf(stderr, "overlapscope analyze: cannot start %s: %s\n", bin.c_str(), std::strerror(errno));
  return kExitError;
}

}  // namespace overlapscope::cli
