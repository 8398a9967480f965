// `overlapscope run` command-line checks that need no GPU (label gpu with the rest of this
// binary): help text for MPI and the straggler options, usage errors of the delay options, the
// all-reduce --impl list (one-shot-push accepted, unknown names refused), and
// what happens under an MPI launcher's environment for d2h (with and without MPI in the build).
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "capture_util.h"
#include "gtest/gtest.h"
#include "workload_util.h"

// OVERLAPSCOPE_BINARY_DIR comes with the capture test programs (tests/CMakeLists.txt).
#if defined(OVERLAPSCOPE_BINARY_DIR)
namespace overlapscope::workloads_test {
namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr
};

Result RunCmd(const std::string& env, const std::string& args) {
  const std::string cmd = env + " " + ::overlapscope::testing::BinaryPath("overlapscope") + " run " + args + " 2>&1";
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

TEST(WorkloadCli, AllReduceImplListNamesOneShotPush) {
  Result help = RunCmd("", "--help");
  EXPECT_NE(help.out.find("nccl, one-shot, two-shot, one-shot-push, nccl-symmetric, or 'all'"), std::string::npos)
      << help.out;
  // An unknown name is a usage error that lists every implementation, checked before the GPUs.
  Result bad = RunCmd("", "all-reduce --impl one-shot-push,one-shot-pull --no-capture");
  EXPECT_EQ(bad.code, 64) << bad.out;
  EXPECT_NE(bad.out.find("unknown --impl 'one-shot-pull' for all-reduce (nccl, one-shot, two-shot, one-shot-push, "
                         "nccl-symmetric, all)"),
            std::string::npos)
      << bad.out;
  // one-shot-push itself is accepted: with one GPU the run stops at the GPU count instead.
  Result one = RunCmd("", "all-reduce --impl one-shot-push --gpus 1 --no-capture");
  EXPECT_EQ(one.code, 1) << one.out;
  EXPECT_NE(one.out.find("all-reduce needs at least 2 GPUs"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("unknown --impl"), std::string::npos) << one.out;
}

TEST(WorkloadCli, AllReduceTimingAndBlocksAreCheckedBeforeTheGpus) {
  Result help = RunCmd("", "--help");
  EXPECT_NE(help.out.find("or graph (the same captured into one CUDA graph"), std::string::npos) << help.out;
  Result bad = RunCmd("", "all-reduce --ar-timing graphs --no-capture");
  EXPECT_EQ(bad.code, 64) << bad.out;
  EXPECT_NE(bad.out.find("--ar-timing must be each, batch or graph, got 'graphs'"), std::string::npos) << bad.out;
  Result blocks = RunCmd("", "all-reduce --ar-blocks 0 --no-capture");
  EXPECT_EQ(blocks.code, 64) << blocks.out;
  EXPECT_NE(blocks.out.find("--ar-blocks must be 1..128, got 0"), std::string::npos) << blocks.out;
  // graph is accepted: with one GPU the run stops at the GPU count instead.
  Result one = RunCmd("", "all-reduce --ar-timing graph --gpus 1 --no-capture");
  EXPECT_EQ(one.code, 1) << one.out;
  EXPECT_NE(one.out.find("all-reduce needs at least 2 GPUs"), std::string::npos) << one.out;
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

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The first number after `pattern` (a regex with one group), or -1.
double Find(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? std::atof(m[1].str().c_str()) : -1;
}

// "Workloads run multi-process too": two MPI ranks, rank 1 late by 500 µs before every
// all-gather. Rank 0 prints the JSON (stdout) and the analysis of both ranks' captures (stderr);
// the skew the ranks timed and the skew the analysis matched must agree within 5 %.
TEST(WorkloadMpi, TwoRanksUnderMpirunAgreeOnSkew) {
  WORKLOAD_REQUIRE_GPUS(2);
#if !defined(OVERLAPSCOPE_HAVE_MPI)
  GTEST_SKIP() << "built without MPI: MPI workload test skipped";
#else
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun on PATH: MPI test skipped";
  const std::string dir = ::overlapscope::testing::FreshDir("workload-mpi");
  const std::string cmd =
      "mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader "
      "--mca btl_vader_single_copy_mechanism none -np 2 " +
      ::overlapscope::testing::BinaryPath("overlapscope") +
      " run matmul-allgather --mode sequential --iters 5 --warmup 2 --capture-iters 5 "
      "--burn-in-ms 100 --delay-rank 1 --delay-us 500 --json >" +
      dir + "/out.json 2>" + dir + "/err.txt";
  const int rc = std::system(cmd.c_str());
  const std::string json = ReadAll(dir + "/out.json"), err = ReadAll(dir + "/err.txt");
  ASSERT_EQ(rc, 0) << json << err;
  EXPECT_NE(json.find("\"2 processes (MPI)\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"ok\": true"), std::string::npos) << json;
  const double events = Find(json, R"("captured_sequential_skew_median_ms":\s*([0-9.eE+-]+))");
  const double alone = Find(json, R"("ag_alone_skew_median_ms":\s*([0-9.eE+-]+))");
  const double analysis = Find(err, R"(analysis of matmul-allgather sequential[\s\S]*?skew median ([0-9.]+) ms)");
  std::printf("MPI median skew: all-gather alone %.4f ms; sequential: CUDA events %.4f ms, capture analysis %.4f ms\n",
              alone, events, analysis);
  // With nothing before it, the all-gather shows the whole 500 us delay. In `sequential` each
  // rank's GEMM runs first, and on N(0,1) data each GPU's GEMM runs at its own power-capped clock:
  // a rank 0 clocked lower than rank 1 ends its GEMM later and hides part of the delay (2 x H100,
  // 2026-11-27: SM clock medians 1545 / 1680 MHz, skew 0.378 ms against 0.489 alone). So the
  // sequential skew must only show most of the delay; the check is that capture and events agree.
  ASSERT_GT(alone, 0.45) << json;
  ASSERT_GT(events, 0.25) << json;
  ASSERT_GT(analysis, 0) << err;
  EXPECT_NEAR(analysis, events, 0.05 * events) << err;
#endif
}

}  // namespace
}  // namespace overlapscope::workloads_test
#endif  // OVERLAPSCOPE_BINARY_DIR
