// Runs the built overlapscope binary and checks exit codes and output of the documented
// interface (README "Exit codes"): --help everywhere, usage errors, unreadable inputs.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Result Run(const std::string& args) {
  std::string cmd = std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

const std::string kData = OVERLAPSCOPE_TEST_DATA;

TEST(Cli, HelpOnEverySubcommand) {
  for (const char* cmd : {"info", "analyze", "export", "profile", "run"}) {
    Result r = Run(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("usage: overlapscope " + std::string(cmd)), std::string::npos) << r.out;
  }
  Result top = Run("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("commands:"), std::string::npos);
}

TEST(Cli, UsageErrorsExit64) {
  EXPECT_EQ(Run("").code, 64);
  EXPECT_EQ(Run("no-such-command").code, 64);
  Result r = Run("info --no-such-flag x.json");
  EXPECT_EQ(r.code, 64);
  EXPECT_NE(r.out.find("unknown option --no-such-flag"), std::string::npos) << r.out;
  EXPECT_EQ(Run("info").code, 64);  // no trace given
}

TEST(Cli, UnreadableTraceExits2WithPath) {
  Result r = Run("info /nonexistent/trace.json");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/trace.json"), std::string::npos) << r.out;
  std::string bad = ::testing::TempDir() + "/truncated.json";
  std::ofstream(bad) << "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1";
  r = Run("info " + bad);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("offset"), std::string::npos) << r.out;
}

TEST(Cli, InfoJsonOnRealTwoRankTrace) {
  Result r = Run("info --json " + std::string(OVERLAPSCOPE_SOURCE_DIR) + "/samples/pytorch_ag_overlap");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["schema"], "overlapscope.info/1");
  // The sample directory holds rank0.json.gz and rank1.json.gz.
  ASSERT_EQ(j["processes"].size(), 2u) << r.out.substr(0, 2000);
  EXPECT_EQ(j["processes"][0]["rank"], 0);
  EXPECT_EQ(j["processes"][1]["rank"], 1);
  EXPECT_GT(j["counts"]["kernels"].get<int>(), 0);
}

}  // namespace

namespace {

TEST(Cli, SameRankTwiceIsAnError) {
  // The same rank-0 trace as .json and .json.gz: two files claiming one rank must not become
  // two "peers" of a cross-rank analysis.
  Result r = Run("info " + kData + "/kineto/ag_overlap/rank0.json " + kData + "/kineto/ag_overlap/rank0.json.gz");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("rank 0 already comes from"), std::string::npos) << r.out;
}

}  // namespace
