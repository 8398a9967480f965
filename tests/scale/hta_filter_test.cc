// HTA's step filter is a decision about the whole job (>= 2 distinct ProfilerStep#N names over
// every rank), which one rank alone cannot make: the per-rank reduction computes each rank's HTA
// figures both ways and picks once every rank is in (engine/reduce_internal.h ChooseHtaVariant).
// Jobs made from the real ag_overlap ranks where one rank alone decides differently from the job:
// the per-rank report must still be the whole-model report, byte for byte.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_replace.h"
#include "engine/engine.h"
#include "engine/reduce.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace overlapscope::engine {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// rank<r>.json of ag_overlap into `dir`, with the given replacements of its text.
void WriteRank(const fs::path& dir, int r, const absl::flat_hash_map<std::string, std::string>& subs) {
  const std::string src =
      std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap/rank" + std::to_string(r) + ".json";
  std::string text = Read(src);
  ASSERT_FALSE(text.empty()) << src;
  std::ofstream(dir / ("rank" + std::to_string(r) + ".json"), std::ios::binary) << absl::StrReplaceAll(text, subs);
}

std::string WholeJson(const std::string& dir) {
  auto s = Load({dir}, LoadOptions{});
  EXPECT_TRUE(s.ok()) << s.status();
  AnalyzeOptions o;
  o.critical_path = false;
  auto a = Analyze(*s, o);
  EXPECT_TRUE(a.ok()) << a.status();
  auto r = RenderReport(*a, ReportFormat::kJson);
  return r.ok() ? *r : std::string();
}

std::string PerRankJson(const std::string& dir) {
  ReduceOptions ro;
  ro.jobs = 2;
  auto r = AnalyzePerRank({dir}, AnalyzeOptions{}, ro);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  auto out = RenderReport(r->report, ReportFormat::kJson);
  return out.ok() ? *out : std::string();
}

class HtaFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ovs_hta_filter_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Each rank holds one step name (its three steps renamed alike), a different one per rank: alone
// neither rank filters; the job holds two names, so HTA filters both.
TEST_F(HtaFilterTest, OneStepNamePerRankButTwoInTheJob) {
  const absl::flat_hash_map<std::string, std::string> to7 = {
      {"ProfilerStep#2", "ProfilerStep#7"}, {"ProfilerStep#3", "ProfilerStep#7"}, {"ProfilerStep#4", "ProfilerStep#7"}};
  const absl::flat_hash_map<std::string, std::string> to8 = {
      {"ProfilerStep#2", "ProfilerStep#8"}, {"ProfilerStep#3", "ProfilerStep#8"}, {"ProfilerStep#4", "ProfilerStep#8"}};
  WriteRank(dir_, 0, to7);
  WriteRank(dir_, 1, to8);
  const std::string whole = WholeJson(dir_.string());
  const nlohmann::json j = nlohmann::json::parse(whole);
  ASSERT_EQ(j["ranks"].size(), 2u);
  for (const auto& rk : j["ranks"]) EXPECT_TRUE(rk["hta_compat"]["step_filter"].get<bool>()) << rk["label"];
  EXPECT_EQ(PerRankJson(dir_.string()), whole);
}

// Rank 1 has no step at all: the job's filter (rank 0's three steps) leaves rank 1 nothing,
// HTA prints NaN (null); alone, rank 1 would not filter.
TEST_F(HtaFilterTest, ARankWithoutStepsInAJobWithSteps) {
  WriteRank(dir_, 0, {});
  WriteRank(dir_, 1, {{"ProfilerStep#", "TrainingStep#"}});
  const std::string whole = WholeJson(dir_.string());
  const nlohmann::json j = nlohmann::json::parse(whole);
  ASSERT_EQ(j["ranks"].size(), 2u);
  EXPECT_TRUE(j["ranks"][1]["hta_compat"]["step_filter"].get<bool>());
  EXPECT_TRUE(j["ranks"][1]["hta_compat"]["overlap_pct"].is_null());
  EXPECT_FALSE(j["ranks"][0]["hta_compat"]["overlap_pct"].is_null());
  EXPECT_EQ(PerRankJson(dir_.string()), whole);
}

// HTA never aligns clocks: its figures are the same whether or not clock alignment shifted a
// rank (they use the timestamps as recorded; µs rounding does not commute with a shift). On
// every multi-rank input whose alignment moves a rank by a non-whole-µs offset.
TEST(HtaRecordedTimes, FiguresDoNotMoveWithClockAlignment) {
  const std::string src = OVERLAPSCOPE_SOURCE_DIR;
  int shifted_inputs = 0;
  for (const std::string& dir : {src + "/tests/data/kineto", src + "/samples"})
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_directory() || !Load({e.path().string()}).ok()) continue;  // samples/ without traces
      nlohmann::json on, off;
      for (auto [align, out] : {std::pair{ClockAlign::kOn, &on}, std::pair{ClockAlign::kOff, &off}}) {
        LoadOptions lo;
        lo.align_clocks = align;
        auto s = Load({e.path().string()}, lo);
        ASSERT_TRUE(s.ok()) << s.status();
        AnalyzeOptions o;
        o.critical_path = false;
        auto a = Analyze(*s, o);
        ASSERT_TRUE(a.ok()) << a.status();
        auto r = RenderReport(*a, ReportFormat::kJson);
        ASSERT_TRUE(r.ok()) << r.status();
        *out = nlohmann::json::parse(*r);
      }
      bool moved = false;
      for (const auto& h : on["clock_alignment"]["hosts"]) moved |= h["offset_ns"].get<int64_t>() % 1000 != 0;
      if (!moved) continue;
      ++shifted_inputs;
      ASSERT_EQ(on["ranks"].size(), off["ranks"].size());
      for (size_t i = 0; i < on["ranks"].size(); ++i)
        EXPECT_EQ(on["ranks"][i]["hta_compat"], off["ranks"][i]["hta_compat"]) << e.path() << " rank " << i;
    }
  EXPECT_GE(shifted_inputs, 3) << "expected several inputs whose ranks alignment moves";
}

}  // namespace
}  // namespace overlapscope::engine
