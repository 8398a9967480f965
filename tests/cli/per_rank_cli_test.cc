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

// The gates read the head (each rank's label and summary, cross-rank figures included): the same
// verdicts and lines as the whole-model analyze with the critical path off.
TEST(PerRankCli, GatesGiveTheWholeModelVerdicts) {
  const std::string dir = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap";
  for (const char* gate : {"overlap_ratio>=0", "overlap_ratio>=0.99", "collective_wait_ns<=0"}) {
    const CliRun whole = RunCliLimited({"analyze", dir, "--critical-path", "off", "--require", gate});
    const CliRun per = RunCliLimited({"analyze", dir, "--per-rank", "--require", gate});
    EXPECT_EQ(per.exit_code, whole.exit_code) << gate << ": " << per.Describe();
    EXPECT_TRUE(per.exit_code == 0 || per.exit_code == 3) << per.Describe();
    EXPECT_EQ(per.err, whole.err) << gate;
    EXPECT_NE(per.err.find("rank 1: "), std::string::npos) << per.err;
    EXPECT_EQ(per.out, whole.out) << gate;
  }
  // A path metric is not computed per rank: the gate fails and says why.
  const CliRun path = RunCliLimited({"analyze", dir, "--per-rank", "--require", "critical_path_ns>=0"});
  EXPECT_EQ(path.exit_code, 3) << path.Describe();
  EXPECT_NE(path.err.find("not computed"), std::string::npos) << path.err;
}

// Without --per-rank, analyze reduces rank by rank by itself when one model of the job would not
// fit the memory budget (here set below ag_overlap's two ranks' estimate): the per-rank report,
// and a note on stderr saying why. Anything that needs one model keeps it.
TEST(PerRankCli, ChosenByItselfWhenOneModelWouldNotFit) {
  const std::string dir = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap";
  const CliRun per = RunCliLimited({"analyze", dir, "--per-rank", "--json"});
  ASSERT_EQ(per.exit_code, 0) << per.Describe();
  const CliRun roomy = RunCliLimited({"analyze", dir, "--json"});
  ASSERT_EQ(roomy.exit_code, 0) << roomy.Describe();
  EXPECT_NE(roomy.out, per.out);  // the whole model: the critical path is in
  ::setenv("OVERLAPSCOPE_MEMORY_BUDGET", "1000", 1);
  const CliRun tight = RunCliLimited({"analyze", dir, "--json"});
  const CliRun insist = RunCliLimited({"analyze", dir, "--json", "--critical-path", "on"});
  ::unsetenv("OVERLAPSCOPE_MEMORY_BUDGET");
  ASSERT_EQ(tight.exit_code, 0) << tight.Describe();
  EXPECT_EQ(tight.out, per.out);
  EXPECT_NE(tight.err.find("2 rank files would take about"), std::string::npos) << tight.err;
  EXPECT_NE(tight.err.find("--critical-path on"), std::string::npos) << tight.err;
  ASSERT_EQ(insist.exit_code, 0) << insist.Describe();
  EXPECT_EQ(insist.out, roomy.out);
  EXPECT_EQ(insist.err, "");
}

}  // namespace
}  // namespace overlapscope::testing
