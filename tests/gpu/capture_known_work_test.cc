// Capture GPU tests: known_work captured in-process (CaptureSession) and through the injection
// library (`overlapscope profile`), including targets that crash, exit from a thread or fork.
// Label `gpu`; every test skips with a visible message when no CUDA device is usable.
#include <cuda_runtime.h>
#include <cupti.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "capture/cupti/capture_session.h"
#include "capture_util.h"
#include "engine/capture.h"
#include "gtest/gtest.h"
#include "importers/ovspill/spill_reader.h"
#include "known_work.h"

namespace overlapscope::testing {
namespace {

#define SKIP_WITHOUT_GPU()                                                                                      \
  do {                                                                                                          \
    if (std::string why = NoGpuReason(); !why.empty()) GTEST_SKIP() << "no GPU, capture test skipped: " << why; \
  } while (0)

TEST(CaptureInProcess, KnownWorkExactly) {
  SKIP_WITHOUT_GPU();
  // Twice in one process: the second session must not re-register anything or lose records.
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    auto session = cupti::CaptureSession::Start();
    ASSERT_TRUE(session.ok()) << session.status();
    EXPECT_FALSE(cupti::CaptureSession::Start().ok());  // one session per process
    ASSERT_EQ(RunKnownWork("normal"), 0);
    auto trace = engine::StopCapture(**session);
    ASSERT_TRUE(trace.ok()) << trace.status();
    ExpectKnownWork(*trace);
    EXPECT_FALSE((*session)->Stop().ok());
  }
}

// Another CUPTI client holds the callback subscriber (as torch.profiler's Kineto does after its
// session): the capture records API calls from activity records, and the trace is complete. Needs
// a process whose CUPTI nobody subscribed to yet, so the test below runs this one in a child.
void NoopCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

TEST(CaptureInProcess, DISABLED_BesideAnotherCuptiClientChild) {
  SKIP_WITHOUT_GPU();
  CUpti_SubscriberHandle other = nullptr;
  ASSERT_EQ(cuptiSubscribe(&other, NoopCallback, nullptr), CUPTI_SUCCESS);
  auto session = cupti::CaptureSession::Start();
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_EQ(RunKnownWork("normal"), 0);
  auto trace = engine::StopCapture(**session);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ExpectKnownWork(*trace);  // kernels, copies, memsets, syncs and the API calls that launched them
  EXPECT_FALSE(trace->api_calls().empty());
  cuptiUnsubscribe(other);
}

TEST(CaptureInProcess, BesideAnotherCuptiClient) {
  SKIP_WITHOUT_GPU();
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  ASSERT_GT(n, 0);
  const std::string self(buf, static_cast<size_t>(n));
  EXPECT_EQ(RunCommand("'" + self +
                       "' --gtest_also_run_disabled_tests "
                       "--gtest_filter=CaptureInProcess.DISABLED_BesideAnotherCuptiClientChild"),
            0);
}

// Runs `overlapscope profile -o DIR -- known_work MODE` without rank variables, so the spill
// file is named pid<P>.ovspill; returns the profile exit code.
int Profile(const std::string& dir, const std::string& mode) {
  return RunCommand("env -u RANK -u LOCAL_RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID '" +
                    BinaryPath("overlapscope") + "' profile -o '" + dir + "' -- '" + BinaryPath("known_work") + "' " +
                    mode);
}

// True when a source says `part`: in an example, in the description of a statistic it hit, or
// in a statistic's detail ("signal 6").
bool NoteContains(const model::Trace& t, const std::string& part) {
  for (const auto& s : t.sources()) {
    for (const auto& e : s.examples)
      if (e.find(part) != std::string::npos) return true;
    for (size_t i = 0; i < model::kStatCount; ++i)
      if (s.counts[i] != 0 && model::Describe(static_cast<model::Stat>(i)).description.find(part) != std::string::npos)
        return true;
    for (const auto& [k, v] : s.details)
      if (k.second.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(CaptureInjected, KnownWorkExactly) {
  SKIP_WITHOUT_GPU();
  const std::string dir = FreshDir("inject_normal");
  ASSERT_EQ(Profile(dir, "normal"), 0);
  const auto files = SpillFilesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("/pid"), std::string::npos);
  auto trace = import::ReadSpillFiles(files);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ExpectKnownWork(*trace);
  EXPECT_FALSE(NoteContains(*trace, "no end record"));
  // The Perfetto file beside it.
  const std::string pftrace = files[0].substr(0, files[0].size() - 8) + ".pftrace";
  FILE* f = std::fopen(pftrace.c_str(), "rb");
  ASSERT_NE(f, nullptr) << pftrace;
  std::fseek(f, 0, SEEK_END);
  EXPECT_GT(std::ftell(f), 1000);
  std::fclose(f);
}

TEST(CaptureInjected, RankNamesTheFile) {
  SKIP_WITHOUT_GPU();
  const std::string dir = FreshDir("inject_rank");
  ASSERT_EQ(RunCommand("RANK=3 WORLD_SIZE=4 '" + BinaryPath("overlapscope") + "' profile -o '" + dir + "' -- '" +
                       BinaryPath("known_work") + "' normal"),
            0);
  const auto files = SpillFilesIn(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], dir + "/rank3.ovspill");
  auto trace = import::ReadSpillFiles(files);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->processes()[0].rank, 3);
  EXPECT_EQ(trace->processes()[0].world_size, 4);
}

// Copy-engine batches (cudaMemcpyBatchAsync, as NCCL's zero-CTA collectives use) and peer
// copies: every byte of every copy is in the trace, attributed to the call that issued it.
TEST(CaptureInjected, BatchAndPeerCopies) {
  SKIP_WITHOUT_GPU();
  const std::string dir = FreshDir("inject_copies");
  ASSERT_EQ(Profile(dir, "copies"), 0);
  auto trace = import::ReadSpillFiles(SpillFilesIn(dir));
  ASSERT_TRUE(trace.ok()) << trace.status();
  for (const auto& m : trace->memcpys())
    std::printf("  memcpy '%s' bytes %lld device %d dst_device %d stream %lld corr %lld\n",
                std::string(trace->str(m.name)).c_str(), static_cast<long long>(m.bytes),
                trace->devices()[m.device].ordinal, m.dst_device >= 0 ? trace->devices()[m.dst_device].ordinal : -1,
                static_cast<long long>(trace->streams()[m.stream].native_id), static_cast<long long>(m.correlation_id));
  int devices = 0;
  cudaGetDeviceCount(&devices);
  ExpectCopies(*trace, devices);
}

// A target that dies after its work still leaves a complete, readable trace.
class CaptureCrash : public ::testing::TestWithParam<const char*> {};

TEST_P(CaptureCrash, TraceSurvives) {
  SKIP_WITHOUT_GPU();
  const std::string mode = GetParam();
  const std::string dir = FreshDir(std::string("inject_") + mode);
  const int rc = Profile(dir, mode);
  const bool crashes = mode == "abort" || mode == "segv";
  EXPECT_EQ(rc, crashes ? 4 : 0);  // 4: the target failed (kExitTargetFailed)
  const auto files = SpillFilesIn(dir);
  ASSERT_EQ(files.size(), 1u) << "fork: the child must not write a file of its own";
  auto trace = import::ReadSpillFiles(files);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ExpectKnownWork(*trace);
  if (mode == "abort") {
    EXPECT_TRUE(NoteContains(*trace, "signal 6")) << Describe(*trace);
  }
  if (mode == "segv") {
    EXPECT_TRUE(NoteContains(*trace, "signal 11")) << Describe(*trace);
  }
  // reset_exit: everything arrived through the flush at cudaDeviceReset; no end record.
  if (mode == "reset_exit") {
    EXPECT_TRUE(NoteContains(*trace, "no end record"));
  } else if (!crashes) {
    EXPECT_FALSE(NoteContains(*trace, "no end record"));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CaptureCrash, ::testing::Values("abort", "segv", "thread_exit", "fork", "reset_exit"));

}  // namespace
}  // namespace overlapscope::testing
