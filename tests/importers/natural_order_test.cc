// Input files of a directory are read in natural order (base/natural_order.h): rank 2 before
// rank 10, so every report and export lists ranks in numeric order.
#include "base/natural_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "importers/import_any.h"
#include "importers/kineto/import.h"

namespace overlapscope {
namespace {

using base::NaturalCompare;

TEST(NaturalOrder, DigitRunsCompareByValue) {
  std::vector<std::string> names = {"rank10.json", "rank2.json",  "rank1.json",
                                    "rank0.json",  "rank11.json", "rank9.json"};
  std::sort(names.begin(), names.end(), base::NaturalLess);
  EXPECT_EQ(names, (std::vector<std::string>{"rank0.json", "rank1.json", "rank2.json", "rank9.json", "rank10.json",
                                             "rank11.json"}));
}

TEST(NaturalOrder, TotalAndDeterministic) {
  EXPECT_EQ(NaturalCompare("a", "a"), 0);
  EXPECT_LT(NaturalCompare("", "a"), 0);
  EXPECT_LT(NaturalCompare("rank", "rank0"), 0);
  EXPECT_LT(NaturalCompare("rank1", "rank01"), 0);  // equal values: fewer leading zeros first
  EXPECT_GT(NaturalCompare("rank01", "rank1"), 0);
  EXPECT_LT(NaturalCompare("rank007", "rank8"), 0);
  EXPECT_LT(NaturalCompare("host_99.1", "host_100.0"), 0);                               // pid-named files: by pid
  EXPECT_LT(NaturalCompare("rank18446744073709551616", "rank18446744073709551617"), 0);  // no overflow
  EXPECT_LT(NaturalCompare("a\xff", "b"), 0);
}

TEST(NaturalOrder, DirectoryOfRanksListsThemInRankOrder) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "natural_order_dir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (int r : {10, 2, 0, 1, 11})
    std::ofstream(dir / ("rank" + std::to_string(r) + ".json")) << "{\"traceEvents\": []}";
  auto files = import::ExpandTracePaths({dir.string()});
  ASSERT_TRUE(files.ok()) << files.status();
  std::vector<std::string> names;
  for (const std::string& f : *files) names.push_back(std::filesystem::path(f).filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"rank0.json", "rank1.json", "rank2.json", "rank10.json", "rank11.json"}));
}

// The rank in distributedInfo, read from the head only (gz inflated), decides the order; files
// without one (no distributedInfo before traceEvents, a bare array, a missing file) come last in
// their given order; a rank in the name counts when the trace records none.
TEST(RankOrder, DistributedInfoRankFromTheHeadDecidesTheOrder) {
  const std::string src = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap/";
  EXPECT_EQ(import::RankFromTraceHead(src + "rank1.json"), 1);
  EXPECT_EQ(import::RankFromTraceHead(src + "rank1.json.gz"), 1);
  EXPECT_EQ(import::RankFromTraceHead(src + "rank0.json.gz"), 0);
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "rank_order_head";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string after = write("a.json", "{\"traceEvents\": [], \"distributedInfo\": {\"rank\": 3}}");
  const std::string seven = write("b.json",
                                  "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", "
                                  "\"pg_config\": [{\"ranks\": [0]}], \"rank\": 7}, \"traceEvents\": []}");
  const std::string neg = write("c.json", "{\"distributedInfo\": {\"rank\": -1}, \"traceEvents\": []}");
  const std::string arr = write("d.json", "[{\"ph\": \"X\"}]");
  const std::string named = write("w-rank5.json", "{\"traceEvents\": []}");
  const std::string two = write("e.json", "{\"distributedInfo\": {\"rank\": 2}, \"traceEvents\": []}");
  EXPECT_EQ(import::RankFromTraceHead(after), -1);  // after traceEvents: not read
  EXPECT_EQ(import::RankFromTraceHead(seven), 7);
  EXPECT_EQ(import::RankFromTraceHead(neg), -1);
  EXPECT_EQ(import::RankFromTraceHead(arr), -1);
  EXPECT_EQ(import::RankFromTraceHead((dir / "missing.json").string()), -1);
  EXPECT_EQ(import::RankOfTraceFile(named), 5);
  const std::vector<std::string> files{after, seven, neg, arr, named, two};
  EXPECT_EQ(import::RankOrder(files), (std::vector<size_t>{5, 4, 1, 0, 2, 3}));
}

// Captures: rank<R>.ovspill by rank, then the processes without a rank (pid<P>.ovspill) by pid,
// whatever the names' byte order ("pid" sorts before "rank").
TEST(RankOrder, CapturesByRankThenPidFilesByPid) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "rank_order_spill";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* name : {"pid20.ovspill", "rank10.ovspill", "pid3.ovspill", "rank2.ovspill", "rank0.pid7.ovspill"})
    std::ofstream(dir / name) << "x";
  auto in = import::ExpandInputs({dir.string()});
  ASSERT_TRUE(in.ok()) << in.status();
  std::vector<std::string> names;
  for (const std::string& f : in->files) names.push_back(std::filesystem::path(f).filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"rank0.pid7.ovspill", "rank2.ovspill", "rank10.ovspill", "pid3.ovspill",
                                             "pid20.ovspill"}));
}

}  // namespace
}  // namespace overlapscope
