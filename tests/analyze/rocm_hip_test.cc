// The HIP runtime is a peer of CUDA's in every analysis: host blocking, sync points, findings,
// launch statistics and idle-gap causes, on tests/data/kineto/rocm_hip_loop (a ROCm trace as
// Kineto writes it since 2024: HIP calls as "cuda_runtime", "correlation" args) and on the same
// program as roctracer-era Kineto (2021-2024) wrote it: correlation only in "External id", the
// copy a "kernel" row named "CopyDeviceToHost", no "device" arg (the GPU is the pid).
//
// The program, by hand (µs; one thread; device 2; ProfilerStep#1 [1000, 1100), #2 [1100, 1200)):
//   hipMalloc [1001, 1003)
//   hipLaunchKernel [1005, 1008)            -> gemm, stream 0   [1010, 1030)
//   hipStreamWaitEvent [1009, 1010)
//   hipExtModuleLaunchKernel [1011, 1013)   -> nccl, stream 1   [1015, 1040)
//   hipMemcpyWithStream [1042, 1060)        -> DtoH copy, s 0   [1050, 1055)
//   hipLaunchKernel [1070, 1072)            -> relu, stream 0   [1075, 1080)
//   hipDeviceSynchronize [1085, 1090)
//   hipLaunchKernel [1100, 1102)            -> gemm, stream 0   [1110, 1130)
//   hipLaunchKernel [1140, 1142)            -> relu, stream 0   [1145, 1150)
//   hipStreamSynchronize [1151, 1160)
//   hipDeviceSynchronize [1170, 1175)
//   hipLaunchKernel [1180, 1182)            -> add, stream 0    [1185, 1190)
//   hipDeviceSynchronize [1195, 1196)       (final: nothing is launched after it)
// Blocked: copy 18 + device sync 5 + stream sync 9 + device sync 5 = 37 µs (final 1 µs apart).
// Busy [1010, 1040) [1050, 1055) [1075, 1080) [1110, 1130) [1145, 1150) [1185, 1190): span 180,
// busy 70, idle 110 µs, all in gaps >= 5 µs: [1040, 1050) 10, [1055, 1075) 20, [1080, 1110) 30
// and [1150, 1185) 35 are host-blocked (the launch call came after the gap began and its thread
// was inside the copy, a device sync or the stream sync meanwhile); [1130, 1145) 15 launch-bound.
// Sync points: malloc, stream-wait-event, sync-memcpy, device-sync x3, stream-sync. Findings:
// device-wide-sync-in-loop in both iterations (5 µs each); blocking-d2h-before-independent-work
// for the copy (18 µs; relu is launched after it in the same iteration).
// Launch statistics: hipLaunchKernel 5 calls, hipExtModuleLaunchKernel 1, hipMemcpyWithStream 1;
// launch delay on stream 0: 2, 0 (the copy starts before its call ends), 3, 8, 3, 3 µs.
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze {
namespace {

const std::string kTrace = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/rocm_hip_loop/rank0.json";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// The roctracer-era spelling of the same trace.
std::string Roctracer2021(std::string text) {
  ReplaceAll(text, "\"correlation\"", "\"External id\"");
  ReplaceAll(text, "\"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> Host)\"",
             "\"cat\": \"kernel\", \"name\": \"CopyDeviceToHost\"");
  ReplaceAll(text, "\"device\": 2, ", "");
  return text;
}

void ExpectEveryAnalysis(const std::string& name, const std::string& text) {
  SCOPED_TRACE(name);
  const std::string path = ::testing::TempDir() + "/rocm_hip_test." + name + ".json";
  std::ofstream(path, std::ios::binary) << text;
  auto t = import::ImportTraces({path});
  std::remove(path.c_str());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(model::ImportWarnings(t->sources()).empty());
  ASSERT_EQ(t->kernels().size(), 6u);
  ASSERT_EQ(t->memcpys().size(), 1u);
  ASSERT_EQ(t->api_calls().size(), 13u);
  auto r = AnalyzeAll(*t, AnalyzeOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->ranks.size(), 1u);
  const RankSummary& s = r->ranks[0];

  // Host blocking.
  EXPECT_EQ(s.blocked_ns, 37000);
  ASSERT_EQ(r->blocking.threads.size(), 1u);
  EXPECT_EQ(r->blocking.threads[0].final_sync_ns, 1000);

  // Sync points, by kind.
  std::map<std::string, int> points;
  for (const SyncPoint& p : r->sync.points) ++points[std::string(ToString(p.kind))];
  const std::map<std::string, int> want_points = {
      {"malloc", 1}, {"stream-wait-event", 1}, {"sync-memcpy", 1}, {"device-sync", 3}, {"stream-sync", 1}};
  EXPECT_EQ(points, want_points);

  // Findings.
  std::map<std::string, std::pair<int, int64_t>> findings;
  for (const Finding& f : r->sync.findings) {
    auto& [n, cost] = findings[std::string(f.kind)];
    ++n;
    cost += f.cost_ns;
    if (f.kind == "device-wide-sync-in-loop") EXPECT_EQ(t->str(f.call), "hipDeviceSynchronize");
    if (f.kind == "blocking-d2h-before-independent-work") EXPECT_EQ(t->str(f.call), "hipMemcpyWithStream");
  }
  const std::map<std::string, std::pair<int, int64_t>> want_findings = {
      {"device-wide-sync-in-loop", {2, 10000}}, {"blocking-d2h-before-independent-work", {1, 18000}}};
  EXPECT_EQ(findings, want_findings);

  // Launch statistics.
  std::map<std::string, int64_t> calls;
  for (const RuntimeCallStats& c : r->launch.calls) calls[std::string(t->str(c.call))] = c.duration.count;
  const std::map<std::string, int64_t> want_calls = {
      {"hipLaunchKernel", 5}, {"hipExtModuleLaunchKernel", 1}, {"hipMemcpyWithStream", 1}};
  EXPECT_EQ(calls, want_calls);
  int64_t delays = 0, without = 0, max_delay = 0;
  for (const StreamLaunchStats& st : r->launch.streams) {
    delays += st.launch_delay.count;
    without += st.without_launch_call;
    if (t->streams()[st.stream].native_id == 0) {
      EXPECT_EQ(st.launch_delay.count, 6);
      max_delay = st.launch_delay.max_ns;
    }
  }
  EXPECT_EQ(delays, 7);
  EXPECT_EQ(without, 0);
  EXPECT_EQ(max_delay, 8000);

  // Idle gaps and their causes.
  EXPECT_EQ(s.gpu_span_ns, 180000);
  EXPECT_EQ(s.gpu_idle_ns, 110000);
  EXPECT_EQ(s.gpu_gap_ns, 110000);
  EXPECT_EQ(s.gap_cause_ns[static_cast<int>(GapCause::kHostBlocked)], 95000);
  EXPECT_EQ(s.gap_cause_ns[static_cast<int>(GapCause::kLaunchBound)], 15000);
  EXPECT_EQ(s.gap_cause_ns[static_cast<int>(GapCause::kDependency)], 0);
  EXPECT_EQ(s.gap_cause_ns[static_cast<int>(GapCause::kUnknown)], 0);

  // Overlap: the nccl kernel [1015, 1040) under gemm [1010, 1030): 15 of 25 µs hidden.
  EXPECT_EQ(s.comm_ns, 25000);
  EXPECT_EQ(s.hidden_comm_ns, 15000);
}

TEST(RocmHip, EveryAnalysisReadsHipCallsToday) {
  const std::string text = ReadAll(kTrace);
  ASSERT_FALSE(text.empty()) << kTrace;
  ExpectEveryAnalysis("today", text);
}

TEST(RocmHip, EveryAnalysisReadsHipCallsRoctracer2021) {
  const std::string text = ReadAll(kTrace);
  ASSERT_FALSE(text.empty()) << kTrace;
  const std::string old = Roctracer2021(text);
  ASSERT_EQ(old.find("\"correlation\""), std::string::npos);
  ASSERT_NE(old.find("CopyDeviceToHost"), std::string::npos);
  ExpectEveryAnalysis("roctracer2021", old);
}

}  // namespace
}  // namespace overlapscope::analyze
