// `analyze --html` and `diff --html` on a known trace: the page is self-contained and holds the
// charts the data call for (counts from the golden report of tests/data/kineto/ag_overlap).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace {

std::string RenderPage(const std::string& args) {
  const std::string out = std::filesystem::temp_directory_path() / ("html_cli_" + std::to_string(getpid()) + ".html");
  const std::string cmd =
      std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope " + args + " --html " + out + " >/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(out);
  return page;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

const std::string kKineto = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/";

TEST(HtmlCli, AnalyzePageHasEveryChart) {
  const std::string page = RenderPage("analyze " + kKineto + "ag_overlap");
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* outside : {"<script", "http://", "https://", "<link", "@import"})
    EXPECT_EQ(page.find(outside), std::string::npos) << outside;
  // 2 ranks x 1 GPU x 3 iterations: one hidden and one exposed bar each.
  EXPECT_EQ(Count(page, "<svg class=\"chart overlap\""), 2u);
  EXPECT_EQ(Count(page, "class=\"hidden\""), 6u);
  EXPECT_EQ(Count(page, "class=\"exposed\""), 6u);
  // Rank 1 has idle gaps (launch_bound 23.5 µs, dependency 7.1 µs); rank 0 none.
  EXPECT_EQ(Count(page, "<svg class=\"chart idle\""), 1u);
  EXPECT_EQ(Count(page, "class=\"cause\""), 4u);  // all four causes, two of them 0 wide
  // 3 all-gathers matched across 2 ranks: 6 heat-map cells; the straggler table has both ranks.
  EXPECT_EQ(Count(page, "class=\"wait\""), 6u);
  EXPECT_NE(page.find("<table class=\"stragglers\">"), std::string::npos);
  // A timeline per rank: rows per stream (compute stream 7, NCCL stream 17), slices coloured by
  // class; top kernels of three classes.
  EXPECT_EQ(Count(page, "<svg class=\"chart timeline\""), 2u);
  EXPECT_GE(Count(page, "class=\"slice\""), 4u);
  EXPECT_NE(page.find("fill=\"#f28e2b\"><title>ncclDevKernel_AllGather"), std::string::npos);
  EXPECT_EQ(Count(page, "<svg class=\"chart kernels\""), 3u);
  // Rank 1's contention is -1.7 µs (golden report): no slowdown, said so, not a negative time.
  EXPECT_NE(page.find("none (overlapped compute ran 1.7 µs faster)"), std::string::npos);
  EXPECT_EQ(page.find("<td>-1.7 µs</td>"), std::string::npos);
}

TEST(HtmlCli, DiffPageShowsVerdictDeltasAndBothSides) {
  const std::string page = RenderPage("diff " + kKineto + "ag_sequential " + kKineto + "ag_overlap");
  ASSERT_FALSE(page.empty());
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_NE(page.find("<ul class=\"verdict\">"), std::string::npos);
  EXPECT_NE(page.find("overlap 0.0% -&gt; 78.7% (+78.7 points)"), std::string::npos);
  EXPECT_EQ(Count(page, "<table class=\"deltas\">"), 2u);
  // Both sides: 2 ranks each, each with its overlap chart and timeline.
  EXPECT_EQ(Count(page, "<svg class=\"chart overlap\""), 4u);
  EXPECT_EQ(Count(page, "<svg class=\"chart timeline\""), 4u);
  // Deltas of kernels by name and class, and of the all-gathers by (op, communicator, size).
  EXPECT_NE(page.find("<table class=\"kdiff\">"), std::string::npos);
  EXPECT_EQ(Count(page, "<table class=\"classdiff\">"), 1u);
  EXPECT_EQ(Count(page, "<table class=\"colldiff\">"), 1u);
  // Both sides: the heat map and straggler table, and top kernels by class of each side.
  EXPECT_EQ(Count(page, "<table class=\"stragglers\">"), 2u);
  EXPECT_EQ(Count(page, "<section class=\"kernels\">"), 2u);
  // BASE (sequential all-gather) has findings: their table says what to change.
  EXPECT_NE(page.find("<table class=\"findings\"><tr><th>finding</th><th>count</th><th>cost</th><th>what to "
                      "change</th></tr>"),
            std::string::npos);
  EXPECT_NE(page.find("<span class=\"advice\">"), std::string::npos);
}

}  // namespace
