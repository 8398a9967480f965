// The what-if pairs on 2 and 4 x H200 (tests/data/whatif_h200, tools/torch_traces/README.md): the
// all-gather and all-to-all pairs captured in alternating program order, and in the same session on
// the same GPUs the programs' balanced un-profiled timings (whatif_clocks.py: 2 s phases A B B A B
// A A B, every iteration timed with CUDA events). The predictions are judged against those balanced
// timings as tools/replay_pairs.py judges them (its BALANCED table; docs/RESULTS.md "Eleventh
// round: balanced timings on H200").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "replay_test_util.h"

namespace overlapscope::engine {
namespace {

const std::string kH200 = std::string(OVERLAPSCOPE_TEST_DATA) + "/whatif_h200/";

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The balanced change of program `b` against `a` in whatif_clocks.py's files (rank 0's phase
// medians without the run's first phase, each program's median; the files' mean) and its bound
// (the largest spread of one program's phases or between the files' changes, 1 % at least).
struct Balanced {
  double change = 0, bound = 0.01;
  bool ok = false;
};
Balanced BalancedChange(const std::vector<std::string>& files, const std::string& a, const std::string& b) {
  Balanced out;
  std::vector<double> changes;
  for (const std::string& f : files) {
    const nlohmann::json j = nlohmann::json::parse(ReadGzText(kH200 + f), nullptr, false);
    if (j.is_discarded()) return out;
    for (const auto& r : j["ranks"]) {
      if (r["rank"].get<int>() != 0) continue;
      std::map<std::string, std::vector<double>> by;
      const auto& ph = r["phases"];
      for (size_t i = 1; i < ph.size(); ++i)
        by[ph[i]["scenario"].get<std::string>()].push_back(ph[i]["median_iter_ms"].get<double>());
      if (by[a].empty() || by[b].empty()) return out;
      for (const std::string& name : {a, b}) {
        const auto [lo, hi] = std::minmax_element(by[name].begin(), by[name].end());
        out.bound = std::max(out.bound, (*hi - *lo) / Median(by[name]));
      }
      changes.push_back(Median(by[b]) / Median(by[a]) - 1);
    }
  }
  if (changes.size() != files.size()) return out;
  const auto [lo, hi] = std::minmax_element(changes.begin(), changes.end());
  out.bound = std::max(out.bound, *hi - *lo);
  for (double c : changes) out.change += c / changes.size();
  out.ok = true;
  return out;
}

TEST(ReplayH200, BalancedTimingsOfTheSession) {
  if (!std::filesystem::is_directory(kH200)) GTEST_SKIP() << kH200 << " absent";
  const std::vector<std::string> g2 = {"clocks_g2_m8192_gpu01.json.gz", "clocks_g2_m8192_gpu23.json.gz"};
  // Two GPUs: the async all-to-all changes nothing (-0.27 and +0.31 %: within the bound), the
  // overlapped all-gather gains about 5 %; four GPUs: the all-to-all gains 1.6 %, the all-gather 2.4 %.
  const Balanced a2 = BalancedChange(g2, "a2a_sync", "a2a_async");
  ASSERT_TRUE(a2.ok);
  EXPECT_LT(std::abs(a2.change), a2.bound);
  const Balanced g2ag = BalancedChange(g2, "ag_sequential", "ag_overlap");
  ASSERT_TRUE(g2ag.ok);
  EXPECT_NEAR(g2ag.change, -0.050, 0.005);
  const Balanced a4 = BalancedChange({"clocks_g4_m8192.json.gz"}, "a2a_sync", "a2a_async");
  ASSERT_TRUE(a4.ok);
  EXPECT_NEAR(a4.change, -0.016, 0.002);
  EXPECT_GT(std::abs(a4.change), a4.bound);
}

// Every pair: the error against the profiled target within 8 % (the largest achieved: the
// all-gathers without record_shapes, whose GEMM's last round the model cannot know), and the
// predicted change's sign against the balanced timings. Right: the all-gathers with the GEMM's
// shape on 2 and 4 GPUs. Noise: the 2-GPU all-to-alls (the model predicts -0.2 %, nothing). Missed:
// the all-gathers without shape (they wait for the GEMM's end: -0.4 % against -5.0 %) and the
// 4-GPU all-to-alls (-0.2 % against -1.6 %: the send/recv's rate beside the GEMM's last round is 0,
// measured on H100's captures; here its transfer started in that round and took no longer).
TEST(ReplayH200, PairsAgainstBalancedTimings) {
  if (!std::filesystem::is_directory(kH200)) GTEST_SKIP() << kH200 << " absent";
  struct Set {
    std::string dir;
    std::vector<std::string> clocks;
    bool a2a;
  };
  const std::vector<std::string> g2 = {"clocks_g2_m8192_gpu01.json.gz", "clocks_g2_m8192_gpu23.json.gz"};
  const std::vector<Set> sets = {{"g2_m8192_shapes", g2, true},
                                 {"g2_m8192_plain", g2, false},
                                 {"g4_m8192_shapes", {"clocks_g4_m8192.json.gz"}, true}};
  std::map<std::string, int> signs;
  int pairs = 0;
  for (const Set& s : sets) {
    for (const char* run : {"run1", "run2"}) {
      for (bool ag : {true, false}) {
        if (!ag && !s.a2a) continue;
        const std::string d = kH200 + s.dir + "/" + run + "/";
        const std::string a = ag ? "ag_sequential" : "a2a_sync", b = ag ? "ag_overlap" : "a2a_async";
        const nlohmann::json bj = ReplayJson(d + a, {ag ? "async:/AllGather/" : "async:/SendRecv/@/^gemm$/"});
        const double base = JobStep(bj, "measured"), target = JobStep(ReplayJson(d + b), "measured");
        const double pred = PredictedJobStep(bj);
        ASSERT_GT(target * base * pred, 0) << d;
        EXPECT_LE(std::abs(pred - target) / target, 0.08) << d << a << " -> " << b;
        const Balanced bal = BalancedChange(s.clocks, a, b);
        ASSERT_TRUE(bal.ok) << d;
        ++signs[Judge(bal.change, (pred - base) / base, bal.bound)];
        ++pairs;
      }
    }
  }
  EXPECT_EQ(pairs, 10);
  EXPECT_EQ(signs["right"], 4);
  EXPECT_EQ(signs["noise"], 2);
  EXPECT_EQ(signs["missed"], 4);
  EXPECT_EQ(signs["WRONG"], 0);
}

}  // namespace
}  // namespace overlapscope::engine
