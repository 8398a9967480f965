// The per-rank reduction (engine/reduce.h) gives the same report bytes as the whole-model path
// (with the critical path off, which it cannot compute) on every multi-rank input of tests/data
// and on generated jobs; the generated jobs' skews and straggler are the ones injected.
#include "engine/reduce.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/multirank/gen_job.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace overlapscope::engine {
namespace {

namespace fs = std::filesystem;

std::string Whole(const std::string& in, ClockAlign align, ReportFormat f) {
  LoadOptions lo;
  lo.align_clocks = align;
  auto s = Load({in}, lo);
  EXPECT_TRUE(s.ok()) << s.status();
  AnalyzeOptions o;
  o.critical_path = false;
  auto a = Analyze(*s, o);
  EXPECT_TRUE(a.ok()) << a.status();
  auto r = RenderReport(*a, f);
  return r.ok() ? *r : std::string();
}

std::string PerRank(const std::string& in, ClockAlign align, ReportFormat f, int jobs, int64_t budget) {
  ReduceOptions ro;
  ro.align_clocks = align;
  ro.jobs = jobs;
  ro.memory_budget_bytes = budget;
  auto r = AnalyzePerRank({in}, AnalyzeOptions{}, ro);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  auto out = RenderReport(r->report, f);
  return out.ok() ? *out : std::string();
}

std::vector<std::string> MultiRankInputs() {
  std::vector<std::string> out;
  const std::string src = OVERLAPSCOPE_SOURCE_DIR;
  for (const std::string& dir : {src + "/tests/data/kineto", src + "/samples"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory()) out.push_back(e.path().string());
  out.push_back(src + "/tests/data/capture");
  return out;
}

TEST(ReduceTest, SameReportOnEveryMultiRankInput) {
  int compared = 0;
  for (const std::string& in : MultiRankInputs()) {
    if (!Load({in}).ok()) continue;  // samples/ directories without traces
    auto per = AnalyzePerRank({in}, AnalyzeOptions{});
    ASSERT_TRUE(per.ok()) << in << ": " << per.status();
    if (per->stats.ranks < 2) continue;
    ++compared;
    for (ClockAlign al : {ClockAlign::kAuto, ClockAlign::kOn, ClockAlign::kOff})
      for (ReportFormat f : {ReportFormat::kJson, ReportFormat::kText, ReportFormat::kMarkdown}) {
        const std::string whole = Whole(in, al, f);
        ASSERT_FALSE(whole.empty()) << in;
        EXPECT_EQ(PerRank(in, al, f, 2, 0), whole) << in << " format " << static_cast<int>(f);
      }
    // One rank at a time (a budget smaller than any rank) and one job: the same bytes.
    EXPECT_EQ(PerRank(in, ClockAlign::kAuto, ReportFormat::kJson, 1, 1),
              Whole(in, ClockAlign::kAuto, ReportFormat::kJson))
        << in;
  }
  EXPECT_GE(compared, 9) << "multi-rank inputs in tests/data and samples";
}

TEST(ReduceTest, OneRankIsTheWholeModelPathWithTheCriticalPath) {
  const std::string in = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap/rank0.json";
  auto s = Load({in});
  ASSERT_TRUE(s.ok());
  auto a = Analyze(*s);
  ASSERT_TRUE(a.ok());
  auto per = AnalyzePerRank({in}, AnalyzeOptions{});
  ASSERT_TRUE(per.ok()) << per.status();
  EXPECT_FALSE(per->report.paths_skipped.has_value());
  EXPECT_EQ(*RenderReport(per->report, ReportFormat::kJson), *RenderReport(*a, ReportFormat::kJson));
}

TEST(ReduceTest, BadInputsFailLikeLoad) {
  const std::string src = OVERLAPSCOPE_SOURCE_DIR;
  auto missing = AnalyzePerRank({src + "/tests/data/kineto/no_such_dir"}, AnalyzeOptions{});
  EXPECT_FALSE(missing.ok());
  // Two files of rank 0: refused, as Load refuses them.
  auto dup = AnalyzePerRank(
      {src + "/tests/data/kineto/ag_overlap/rank0.json", src + "/tests/data/kineto/a2a_async/rank0.json.gz"},
      AnalyzeOptions{});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(std::string(dup.status().message()).find("already comes from"), std::string::npos) << dup.status();
  ReduceOptions bad;
  bad.jobs = -1;
  EXPECT_FALSE(AnalyzePerRank({src + "/tests/data/kineto/ag_overlap"}, AnalyzeOptions{}, bad).ok());
}

class GeneratedJob : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_.template_path = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap/rank0.json";
    spec_.out_dir = (fs::temp_directory_path() / ("ovs_job_" + std::to_string(::getpid()))).string();
    spec_.ranks = 6;
    spec_.tiles = 3;
    spec_.jitter_ns = 20000;
    spec_.straggler = 4;
    spec_.straggler_delay_ns = 300000;
    auto info = bench::WriteJob(spec_);
    ASSERT_TRUE(info.ok()) << info.status();
    info_ = *info;
  }
  void TearDown() override { fs::remove_all(spec_.out_dir); }
  bench::JobSpec spec_;
  bench::JobInfo info_;
};

TEST_F(GeneratedJob, SameReportAndTheInjectedSkewAndStraggler) {
  const std::string whole = Whole(spec_.out_dir, ClockAlign::kAuto, ReportFormat::kJson);
  ASSERT_EQ(PerRank(spec_.out_dir, ClockAlign::kAuto, ReportFormat::kJson, 2, 0), whole);
  const nlohmann::json j = nlohmann::json::parse(whole);
  ASSERT_EQ(j["ranks"].size(), 6u);
  const nlohmann::json& x = j["collectives_across_ranks"];
  ASSERT_GT(info_.collectives_per_tile, 0);
  ASSERT_EQ(x["instances"].size(), static_cast<size_t>(spec_.tiles * info_.collectives_per_tile));
  // Instances are in order of first start: tile k holds instances [k*C, (k+1)*C).
  for (size_t i = 0; i < x["instances"].size(); ++i) {
    const int64_t k = static_cast<int64_t>(i) / info_.collectives_per_tile;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int r = 0; r < spec_.ranks; ++r) {
      const int64_t o = bench::OffsetNs(spec_, info_.period_ns, r, k);
      lo = std::min(lo, o), hi = std::max(hi, o);
    }
    const nlohmann::json& in = x["instances"][i];
    EXPECT_EQ(in["skew_ns"].get<int64_t>(), hi - lo) << "instance " << i;
    EXPECT_EQ(in["last"], "rank 4") << "instance " << i;
    EXPECT_EQ(in["ranks"].size(), 6u);
  }
  bool found = false;
  for (const nlohmann::json& s : x["ranks"])
    if (s["rank"] == 4) {
      found = true;
      EXPECT_EQ(s["times_last"].get<int64_t>(), spec_.tiles * info_.collectives_per_tile);
    }
  EXPECT_TRUE(found) << "the straggler's row";
  EXPECT_EQ(j["ranks"][4]["summary"]["collective_times_last"].get<int64_t>(), spec_.tiles * info_.collectives_per_tile);
}

}  // namespace
}  // namespace overlapscope::engine
