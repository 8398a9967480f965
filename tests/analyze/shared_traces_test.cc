// Other people's traces (../shared/traces: HTA's and TraceLens' test data, see its README): every
// count, ns overlap, GPU idle and host blocked time equals an independent count, and the
// HTA-compatible numbers equal what HTA prints. Expected values come from
// tools/trace_facts.py (stdlib-only, shares no code with the importer) and from HTA run from its
// source with Debian's python3-pandas (TraceAnalysis(dir).get_comm_comp_overlap(), default and
// with its step filter disabled); the small traces were also checked by hand. Skips visibly
// when the traces are absent (they may not be committed).
#include <sys/stat.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze {
namespace {

// The shared traces' directory with a trailing '/': $OVERLAPSCOPE_SHARED_TRACES where set (a
// checkout elsewhere, e.g. a worktree), as the other real-trace tests take it, else
// ../shared/traces beside the source tree. Read at each call: a test may set the variable.
std::string SharedTracesDir() {
  const char* env = std::getenv("OVERLAPSCOPE_SHARED_TRACES");
  return std::string(env != nullptr ? env : OVERLAPSCOPE_SOURCE_DIR "/../shared/traces") + "/";
}
const std::string kTraces = SharedTracesDir();
constexpr std::optional<double> kNoComm = std::nullopt;

struct Expected {
  const char* file;
  int files;  // files loaded together (ranks of one run; HTA reads them as one directory)
  int index;  // this file's process in the trace
  size_t kernels, memcpys, memsets, api_calls;
  int64_t comm_ns, hidden_ns, idle_ns, blocked_ns;
  std::optional<double> hta_default, hta_whole;
};

const Expected kExpected[] = {
    {"hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 1, 0, 14, 2, 0, 21, 0, 0, 8762845, 95772, kNoComm,
     kNoComm},
    {"hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 1, 0, 79, 16, 3, 361, 0, 0,
     12854103000, 57590000, kNoComm, kNoComm},
    {"hta/critical_path/cuda_event_sync/event_sync_trace.json.gz", 1, 0, 4, 1, 0, 12, 0, 0, 212000, 69000, kNoComm,
     kNoComm},
    {"hta/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", 1, 0, 3, 0, 3, 39, 0, 0, 19134000, 0,
     kNoComm, kNoComm},
    {"hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz", 1, 0, 79, 16, 3, 331, 0, 0,
     15975817000, 40759000, kNoComm, kNoComm},
    {"hta/nccl_parser_config/nccl_data.json.gz", 1, 0, 2700, 960, 114, 8740, 46876493, 7317025, 503050991, 78736, 14.31,
     15.14},
    {"hta/negative_queue_length_values_check/rank0.json.gz", 1, 0, 6080, 1390, 277, 33924, 187870000, 2553000,
     793037000, 761534000, 1.37, 1.36},
    {"hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 1, 0, 4350, 1600, 145, 15329, 0, 0,
     7574738, 0, kNoComm, kNoComm},
    {"hta/trace_file_list/inference_rank_1.json.gz", 1, 0, 4, 0, 0, 8, 0, 0, 1599000, 0, kNoComm, kNoComm},
    {"hta/trace_filter/sampled_rank-0.json.gz", 2, 0, 1154, 40, 10, 1204, 396199000, 59216000, 675191000, 1267000,
     11.81, 14.95},
    {"hta/trace_filter/sampled_rank-1.json.gz", 2, 1, 1104, 40, 10, 1154, 379053000, 75530000, 651136000, 316000, 20.05,
     19.93},
    {"tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 1, 0, 1465, 1, 241, 1922, 0, 0, 4005532,
     14110220, kNoComm, kNoComm},
    {"tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz", 1, 0, 2995, 550, 108, 3100, 71516523, 15891299,
     2565652, 0, 22.45, 19.75},
};

bool Exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

// Our own Kineto traces (tests/data/kineto, PyTorch 2.x on H100s, two ranks each), checked the
// same way: tools/trace_facts.py for the counts, HTA from its source for its numbers.
const Expected kOurData[] = {
    {"a2a_async/rank0.json.gz", 2, 0, 45, 0, 30, 253, 3407769, 719072, 103164, 0, 20.96, 20.78},
    {"a2a_async/rank1.json.gz", 2, 1, 44, 0, 29, 253, 3075782, 753497, 98145, 0, 24.46, 24.11},
    {"a2a_sync/rank0.json.gz", 2, 0, 44, 0, 29, 181, 2699377, 0, 141984, 0, 0.0, 0.0},
    {"a2a_sync/rank1.json.gz", 2, 1, 45, 0, 30, 181, 2214191, 0, 139265, 0, 0.0, 0.0},
    {"ag_overlap/rank0.json.gz", 2, 0, 6, 0, 3, 58, 1390068, 1093685, 4255, 0, 69.66, 78.60},
    {"ag_overlap/rank1.json.gz", 2, 1, 6, 0, 3, 58, 288349, 89663, 37409, 0, 24.06, 30.77},
    {"ag_sequential/rank0.json.gz", 2, 0, 6, 0, 3, 40, 257694, 0, 69953, 0, 0.0, 0.0},
    {"ag_sequential/rank1.json.gz", 2, 1, 7, 0, 4, 40, 712731, 0, 18208, 0, 0.0, 0.0},
    {"d2h_blocking/rank0.json.gz", 2, 0, 36, 3, 21, 58, 0, 0, 292968, 2452308, kNoComm, kNoComm},
    {"d2h_blocking/rank1.json.gz", 2, 1, 36, 3, 21, 73, 0, 0, 308060, 2456147, kNoComm, kNoComm},
    {"d2h_nonblocking_event/rank0.json.gz", 2, 0, 36, 3, 21, 67, 0, 0, 124508, 2358802, kNoComm, kNoComm},
    {"d2h_nonblocking_event/rank1.json.gz", 2, 1, 36, 3, 21, 97, 0, 0, 128963, 2032332, kNoComm, kNoComm},
    {"d2h_nonblocking_nosync/rank0.json.gz", 2, 0, 38, 4, 22, 58, 0, 0, 1324339, 0, kNoComm, kNoComm},
    {"d2h_nonblocking_nosync/rank1.json.gz", 2, 1, 36, 3, 21, 58, 0, 0, 128703, 0, kNoComm, kNoComm},
};

// Loads each group of files (the ranks of one run, as HTA reads one directory) and checks every
// file's process against its expected counts and figures.
template <size_t N>
void CheckAll(const std::string& root, const Expected (&expected)[N]) {
  for (size_t i = 0; i < N; ++i) {
    const Expected& e = expected[i];
    if (e.index != 0) continue;  // loaded with its first file
    std::vector<std::string> paths;
    for (int f = 0; f < e.files; ++f) paths.push_back(root + expected[i + f].file);
    SCOPED_TRACE(paths[0]);
    auto t = import::ImportTraces(paths);
    ASSERT_TRUE(t.ok()) << t.status();
    // Every record was understood: no warning.
    for (const auto& w : model::ImportWarnings(t->sources())) ADD_FAILURE() << w.message;
    auto r = AnalyzeAll(*t, AnalyzeOptions{});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(t->processes().size(), static_cast<size_t>(e.files));
    for (int f = 0; f < e.files; ++f) {
      const Expected& x = expected[i + f];
      SCOPED_TRACE(x.file);
      const model::ProcessId p = f;
      size_t k = 0, m = 0, s = 0, a = 0;
      for (const auto& v : t->kernels()) k += t->ProcessOfDevice(v.device) == p;
      for (const auto& v : t->memcpys()) m += t->ProcessOfDevice(v.device) == p;
      for (const auto& v : t->memsets()) s += t->ProcessOfDevice(v.device) == p;
      for (const auto& v : t->api_calls()) a += t->ProcessOfThread(v.thread) == p;
      EXPECT_EQ(k, x.kernels);
      EXPECT_EQ(m, x.memcpys);
      EXPECT_EQ(s, x.memsets);
      EXPECT_EQ(a, x.api_calls);
      const RankSummary* rs = nullptr;
      for (const RankSummary& sum : r->ranks)
        if (sum.process == p) rs = &sum;
      ASSERT_NE(rs, nullptr);
      EXPECT_EQ(rs->comm_ns, x.comm_ns);
      EXPECT_EQ(rs->hidden_comm_ns, x.hidden_ns);
      EXPECT_EQ(rs->gpu_idle_ns, x.idle_ns);
      EXPECT_EQ(rs->blocked_ns, x.blocked_ns);
      EXPECT_EQ(rs->hta_compat_overlap_pct, x.hta_default);
      EXPECT_EQ(rs->hta_wholetrace_overlap_pct, x.hta_whole);
    }
  }
}

TEST(SharedTraces, DirectoryFollowsOverlapscopeSharedTraces) {
  const char* was = std::getenv("OVERLAPSCOPE_SHARED_TRACES");
  const std::string saved = was != nullptr ? was : "";
  ::setenv("OVERLAPSCOPE_SHARED_TRACES", "/elsewhere/traces", 1);
  EXPECT_EQ(SharedTracesDir(), "/elsewhere/traces/");
  ::unsetenv("OVERLAPSCOPE_SHARED_TRACES");
  EXPECT_EQ(SharedTracesDir(), std::string(OVERLAPSCOPE_SOURCE_DIR) + "/../shared/traces/");
  if (was != nullptr) ::setenv("OVERLAPSCOPE_SHARED_TRACES", saved.c_str(), 1);
}

TEST(SharedTraces, CountsOverlapIdleBlockedAndHtaEqualIndependentCounts) {
  if (!Exists(kTraces + "README.md")) GTEST_SKIP() << "no " << kTraces << ": the shared public traces are absent";
  CheckAll(kTraces, kExpected);
}

TEST(SharedTraces, OurTracesEqualIndependentCountsToo) {
  CheckAll(std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/", kOurData);
}

// Host names: what the trace records first; PyTorch's default file name otherwise; HTA-style
// names give none (two ranks of one machine must not become two hosts).
TEST(SharedTraces, HostFromTheTraceNotFromAnHtaStyleFileName) {
  const std::string ns = kTraces + "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz";
  if (!Exists(ns)) GTEST_SKIP() << "no " << ns << ": the shared public traces are absent";
  auto t = import::ImportTraces({ns});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->str(t->processes()[0].host), "twshared39868.02.pnb3.facebook.com");  // its top-level host_name
  auto amd = import::ImportTraces({kTraces + "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"});
  ASSERT_TRUE(amd.ok()) << amd.status();
  EXPECT_EQ(amd->str(amd->processes()[0].host), "");  // neither the trace nor the name says
}

}  // namespace
}  // namespace overlapscope::analyze
