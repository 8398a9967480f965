// `overlapscope run` in the main binary: hands over to overlapscope-run (cli/run_main.cc), found
// next to this executable or through $OVERLAPSCOPE_RUN_BIN. The workloads live in their own
// binary so that info/analyze/export never load cuBLAS and NCCL. When the build has no
// workloads (no CUDA toolkit or NCCL), says so and fails (exit 1; --help still exits 0).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"

namespace overlapscope::cli {

namespace {

std::string RunBinaryPath() {
  if (const char* env = std::getenv("OVERLAPSCOPE_RUN_BIN"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return (self.parent_path() / "overlapscope-run").string();
}

}  // namespace

int RunWorkload(int argc, char** argv) {
  const std::string bin = RunBinaryPath();
  if (bin.empty() || ::access(bin.c_str(), X_OK) != 0) {
    bool help = false;
    for (int i = 0; i < argc; ++i) help |= !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
    std::fprintf(help ? stdout : stderr,
                 "usage: overlapscope run WORKLOAD [options]   (WORKLOAD: matmul-allgather | all-to-all | d2h)\n\n"
                 "This build has no workloads: %s was not built (it needs the CUDA toolkit, CUPTI,\n"
                 "cuBLAS and NCCL at build time).\n",
                 bin.empty() ? "overlapscope-run" : bin.c_str());
    return help ? kExitOk : kExitError;
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>(bin.c_str()));
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  // execv keeps this process's environment: an MPI launcher's variables (OMPI_COMM_WORLD_*,
  // PMIX_*) reach overlapscope-run, which runs one rank per process when it sees them.
  ::execv(bin.c_str(), args.data());
  std::fprintf(stderr, "overlapscope run: cannot start %s: %s\n", bin.c_str(), std::strerror(errno));
  return kExitError;
}

}  // namespace overlapscope::cli
