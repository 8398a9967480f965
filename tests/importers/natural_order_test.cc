// Input files of a directory are read in natural order (base/natural_order.h): rank 2 before
// rank 10, so every report and export lists ranks in numeric order.
#include "base/natural_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace overlapscope
