// `overlapscope run` command-line checks that need no GPU (label gpu with the rest of this
// binary): help text for MPI and the straggler options, usage errors of the delay options, and
// what happens under an MPI launcher's environment for d2h (with and without MPI in the build).
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

// OVERLAPSCOPE_BINARY_DIR comes with the capture test programs (tests/CMakeLists.txt).
#if defined(OVERLAPSCOPE_BINARY_DIR)
namespace overlapscope::workloads_test {
namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr
};

Result RunCmd(const std::string& env, const std::string& args) {
  const std::string cmd = env + " " OVERLAPSCOPE_BINARY_DIR "/cli/overlapscope run " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

TEST(WorkloadCli, HelpNamesMpiAndStragglerOptions) {
  Result r = RunCmd("", "--help");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("mpirun -np N overlapscope run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--delay-rank R"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--delay-us US"), std::string::npos) << r.out;
}

TEST(WorkloadCli, DelayOptionsAreUsageErrors) {
  Result half = RunCmd("", "matmul-allgather --delay-rank 1");
  EXPECT_EQ(half.code, 64) << half.out;
  EXPECT_NE(half.out.find("go together"), std::string::npos) << half.out;
  Result d2h = RunCmd("", "d2h --delay-rank 0 --delay-us 5");
  EXPECT_EQ(d2h.code, 64) << d2h.out;
  EXPECT_NE(d2h.out.find("d2h runs no collectives"), std::string::npos) << d2h.out;
}

TEST(WorkloadCli, MpiLauncherEnvironmentIsSeen) {
  // Open MPI's variable without mpirun: the d2h check comes before MPI_Init.
  Result r = RunCmd("OMPI_COMM_WORLD_SIZE=2", "d2h --no-capture");
#if defined(OVERLAPSCOPE_HAVE_MPI)
  EXPECT_EQ(r.code, 64) << r.out;
  EXPECT_NE(r.out.find("d2h is a one-GPU workload"), std::string::npos) << r.out;
#else
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("built without MPI"), std::string::npos) << r.out;
#endif
  EXPECT_NE(r.out.find("OMPI_COMM_WORLD_SIZE=2"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace overlapscope::workloads_test
#endif  // OVERLAPSCOPE_BINARY_DIR
