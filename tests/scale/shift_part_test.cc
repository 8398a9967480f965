// Moving a reduced rank by a clock offset (engine::reduce::ShiftPart, report/shift_times.h) is
// the same as reducing it with the offset added to every timestamp at import: the per-rank
// reduction relies on it to align the clocks of a many-host job without reading any rank twice.
// Checked field for field (the serialized parts, the form the MPI gather sends) on every rank
// file of tests/data and samples/, for offsets that are and are not whole µs, both signs.
#include <filesystem>
#include <string>
#include <vector>

#include "engine/reduce_internal.h"
#include "gtest/gtest.h"

namespace overlapscope::engine::reduce {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> RankFiles() {
  std::vector<std::string> out;
  const std::string src = OVERLAPSCOPE_SOURCE_DIR;
  for (const std::string& dir : {src + "/tests/data/kineto", src + "/samples", src + "/tests/data/capture"})
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const std::string p = e.path().string();
      if (!e.is_regular_file() || p.ends_with("report.json") || p.ends_with("timings.json")) continue;  // not traces
      if (p.ends_with(".json") || p.ends_with(".json.gz") || p.ends_with(".ovspill")) out.push_back(p);
    }
  return out;
}

// Where two serialized parts first differ, with context.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t from = i < 120 ? 0 : i - 120;
  return "at byte " + std::to_string(i) + ":\n  shifted on import: " + a.substr(from, 240) +
         "\n  shifted after:     " + b.substr(from, 240);
}

TEST(ShiftPartTest, SameAsShiftingAtImport) {
  analyze::AnalyzeOptions options;
  options.critical_path = false;  // as the reduction runs it (engine/reduce.cc Prepare)
  options.mark_message_times = true;
  options.hta_both_filters = true;
  const std::vector<std::string> files = RankFiles();
  ASSERT_GE(files.size(), 20u) << "expected the rank files of tests/data and samples/";
  int compared = 0;
  for (const std::string& f : files) {
    absl::StatusOr<RankPart> base = ReduceRank(f, options, 10, 0, 1);
    ASSERT_TRUE(base.ok()) << f << ": " << base.status();
    for (int64_t offset : {int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{-123456789}, int64_t{987654321987}}) {
      absl::StatusOr<RankPart> at_import = ReduceRank(f, options, 10, offset, 1);
      ASSERT_TRUE(at_import.ok()) << f << ": " << at_import.status();
      RankPart after = *base;
      ShiftPart(&after, offset);
      const std::string want = SerializePart(*at_import), got = SerializePart(after);
      EXPECT_EQ(want, got) << f << " offset " << offset << " " << FirstDifference(want, got);
      ++compared;
    }
  }
  EXPECT_EQ(compared, static_cast<int>(files.size()) * 5);
}

}  // namespace
}  // namespace overlapscope::engine::reduce
