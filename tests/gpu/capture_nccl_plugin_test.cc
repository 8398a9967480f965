// NCCL profiler plugin on real GPUs: an all-gather on every visible GPU (one thread and one
// communicator rank per GPU, >= 2 GPUs) under an in-process CaptureSession, NCCL loading
// libnccl-profiler-overlapscope.so through NCCL_PROFILER_PLUGIN. Every captured all-gather
// must carry NCCL's view: sequence >= 0, bytes = the known size, algorithm/protocol, channels,
// and sequence numbers consecutive per communicator rank and equal across ranks.
//
// NCCL decides once per process whether a profiler plugin exists (at its first communicator),
// so the test runs itself in a fresh process (this binary, filtered to this test) and the outer
// test only checks that run.
#if __has_include(<nccl.h>)
#include <nccl.h>
#define OVERLAPSCOPE_TEST_HAVE_NCCL 1
#endif
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "capture/cupti/capture_session.h"
#include "capture_util.h"
#include "engine/capture.h"
#include "gtest/gtest.h"

namespace overlapscope::testing {
namespace {

constexpr char kChildEnv[] = "OVERLAPSCOPE_NCCL_PLUGIN_TEST_CHILD";

#if defined(OVERLAPSCOPE_TEST_HAVE_NCCL)
constexpr int kIters = 5;
constexpr size_t kCount = 1 << 20;  // float elements per rank: 4 MiB in, 4 MiB x nranks out

// Runs the all-gathers; returns "" or what failed.
std::string AllGatherOnEveryGpu(int n) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return "ncclGetUniqueId failed";
  std::vector<std::string> err(n);
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      ncclComm_t comm;
      float *send = nullptr, *recv = nullptr;
      cudaStream_t s;
      if (cudaSetDevice(r) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess ||
          cudaMalloc(&send, kCount * sizeof(float)) != cudaSuccess ||
          cudaMalloc(&recv, kCount * n * sizeof(float)) != cudaSuccess) {
        err[r] = "CUDA setup failed";
        return;
      }
      if (ncclCommInitRank(&comm, n, id, r) != ncclSuccess) {
        err[r] = "ncclCommInitRank failed";
        return;
      }
      for (int i = 0; i < kIters; ++i)
        if (ncclAllGather(send, recv, kCount, ncclFloat, comm, s) != ncclSuccess) err[r] = "ncclAllGather failed";
      if (cudaStreamSynchronize(s) != cudaSuccess) err[r] = "sync failed";
      ncclCommDestroy(comm);
      cudaFree(send), cudaFree(recv), cudaStreamDestroy(s);
    });
  for (auto& t : ts) t.join();
  for (const auto& e : err)
    if (!e.empty()) return e;
  return "";
}

// The real test, in the child process.
void Child() {
  int n = 0;
  cudaGetDeviceCount(&n);
  const std::string dir = FreshDir("nccl_plugin");
  const std::string why = cupti::SetNcclPluginEnv(dir);
  ASSERT_EQ(why, "");
  std::printf("NCCL_PROFILER_PLUGIN=%s OVERLAPSCOPE_NCCL_DIR=%s\n", std::getenv("NCCL_PROFILER_PLUGIN"), dir.c_str());
  auto session = cupti::CaptureSession::Start();
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_EQ(AllGatherOnEveryGpu(n), "");
  auto trace = engine::StopCapture(**session);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const model::Trace& t = *trace;
  for (const auto& src : t.sources()) {
    std::printf("source %s (%s): read %lld kept %lld skipped %lld\n", src.path.c_str(), src.format.c_str(),
                static_cast<long long>(src.events_read), static_cast<long long>(src.events_kept),
                static_cast<long long>(src.skipped()));
    for (size_t i = 0; i < model::kStatCount; ++i)
      if (src.counts[i] != 0)
        std::printf("  %s: %lld\n", std::string(model::Describe(static_cast<model::Stat>(i)).name).c_str(),
                    static_cast<long long>(src.counts[i]));
  }
  std::map<std::string, std::map<int, std::vector<int64_t>>> seqs;  // communicator -> rank -> sequences
  int all_gathers = 0;
  for (size_t i = 0; i < t.collectives().size(); ++i) {
    const model::Collective& c = t.collectives()[i];
    std::printf(
        "collective %s comm %s rank %d/%d seq %lld bytes %lld dtype %s algo %s proto %s channels %d "
        "channel span %lld ns, GPU %lld ns, %zu activities\n",
        std::string(t.str(c.op)).c_str(), std::string(t.str(c.communicator)).c_str(), c.rank, c.nranks,
        static_cast<long long>(c.sequence), static_cast<long long>(c.bytes), std::string(t.str(c.dtype)).c_str(),
        std::string(t.str(c.algorithm)).c_str(), std::string(t.str(c.protocol)).c_str(), c.channels,
        static_cast<long long>(c.channel_span_ns), static_cast<long long>(c.end_ns - c.start_ns),
        t.CollectiveActivities(static_cast<model::CollectiveId>(i)).size());
    if (t.str(c.op) != "AllGather") continue;
    ++all_gathers;
    EXPECT_GE(c.sequence, 0);
    EXPECT_EQ(c.bytes, static_cast<int64_t>(kCount * n * sizeof(float)));
    EXPECT_FALSE(t.str(c.algorithm).empty());
    EXPECT_FALSE(t.str(c.protocol).empty());
    EXPECT_GT(c.channels, 0);
    EXPECT_FALSE(t.str(c.communicator).empty());
    EXPECT_EQ(c.nranks, n);
    seqs[std::string(t.str(c.communicator))][c.rank].push_back(c.sequence);
  }
  EXPECT_EQ(all_gathers, n * kIters);
  ASSERT_EQ(seqs.size(), 1u) << "one communicator";
  const auto& ranks = seqs.begin()->second;
  ASSERT_EQ(static_cast<int>(ranks.size()), n);
  const std::vector<int64_t>* first = nullptr;
  for (const auto& [rank, v] : ranks) {
    ASSERT_EQ(static_cast<int>(v.size()), kIters) << "rank " << rank;
    for (size_t i = 1; i < v.size(); ++i) EXPECT_EQ(v[i], v[i - 1] + 1) << "rank " << rank << " not consecutive";
    if (first) {
      EXPECT_EQ(v, *first) << "rank " << rank << " numbers differ from rank 0";
    }
    first = &v;
  }
}
#endif

TEST(CaptureNcclPlugin, AllGatherCarriesNcclDetails) {
  if (std::string why = NoGpuReason(); !why.empty()) GTEST_SKIP() << why << ": NCCL plugin GPU test skipped";
#if !defined(OVERLAPSCOPE_TEST_HAVE_NCCL)
  GTEST_SKIP() << "built without nccl.h: NCCL plugin GPU test skipped";
#else
  int n = 0;
  cudaGetDeviceCount(&n);
  if (n < 2) GTEST_SKIP() << "needs 2 GPUs, found " << n << ": NCCL plugin GPU test skipped";
  if (std::getenv(kChildEnv)) {
    Child();
    return;
  }
  char self[4096];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(len, 0);
  self[len] = '\0';
  const std::string cmd =
      std::string(kChildEnv) + "=1 " + self + " --gtest_filter=CaptureNcclPlugin.AllGatherCarriesNcclDetails";
  EXPECT_EQ(RunCommand(cmd), 0);
#endif
}

}  // namespace
}  // namespace overlapscope::testing
