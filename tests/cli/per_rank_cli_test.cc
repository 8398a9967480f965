// `analyze --per-rank` progress without a terminal (OVERLAPSCOPE_PROGRESS=1: a line per rank on
// stderr) and the streamed report on stdout: the same bytes with and without progress.
#include <cstdlib>
#include <string>

#include "absl/strings/str_split.h"
#include "cli_runner.h"
#include "gtest/gtest.h"

namespace overlapscope::testing {
namespace {

TEST(PerRankCli, ForcedProgressCountsEveryRankAndLeavesTheReportAlone) {
  const std::string dir = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap";
  const CliRun quiet = RunCliLimited({"analyze", dir, "--per-rank", "--jobs", "2", "--json"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.Describe();
  EXPECT_EQ(quiet.err, "");  // not a terminal: no progress unless asked
  ::setenv("OVERLAPSCOPE_PROGRESS", "1", 1);
  const CliRun loud = RunCliLimited({"analyze", dir, "--per-rank", "--jobs", "2", "--json"});
  ::unsetenv("OVERLAPSCOPE_PROGRESS");
  ASSERT_EQ(loud.exit_code, 0) << loud.Describe();
  EXPECT_EQ(loud.out, quiet.out);
  std::vector<std::string> lines = absl::StrSplit(loud.err, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << loud.err;  // ag_overlap: two ranks
  EXPECT_EQ(lines[0].rfind("analyzed 1 / 2 ranks, ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("analyzed 2 / 2 ranks, ", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(" MB/s"), std::string::npos) << lines[1];
}

}  // namespace
}  // namespace overlapscope::testing
