// Runs the built overlapscope binary and checks exit codes and output of the documented
// interface (README "Exit codes"): --help everywhere, usage errors, unreadable inputs.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Result RunCli(const std::string& args) {
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
  for (const char* cmd : {"info", "analyze", "diff", "export", "profile", "run"}) {
    Result r = RunCli(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("usage: overlapscope " + std::string(cmd)), std::string::npos) << r.out;
  }
  Result top = RunCli("--help");
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("commands:"), std::string::npos);
}

TEST(Cli, UsageErrorsExit64) {
  EXPECT_EQ(RunCli("").code, 64);
  EXPECT_EQ(RunCli("no-such-command").code, 64);
  Result r = RunCli("info --no-such-flag x.json");
  EXPECT_EQ(r.code, 64);
  EXPECT_NE(r.out.find("unknown option --no-such-flag"), std::string::npos) << r.out;
  EXPECT_EQ(RunCli("info").code, 64);  // no trace given
}

TEST(Cli, UnreadableTraceExits2WithPath) {
  Result r = RunCli("info /nonexistent/trace.json");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("/nonexistent/trace.json"), std::string::npos) << r.out;
  std::string bad = ::testing::TempDir() + "/truncated.json";
  std::ofstream(bad) << "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1";
  r = RunCli("info " + bad);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("offset"), std::string::npos) << r.out;
}

TEST(Cli, InfoJsonOnRealTwoRankTrace) {
  Result r = RunCli("info --json " + std::string(OVERLAPSCOPE_SOURCE_DIR) + "/samples/pytorch_ag_overlap");
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
  Result r = RunCli("info " + kData + "/kineto/ag_overlap/rank0.json " + kData + "/kineto/ag_overlap/rank0.json.gz");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("rank 0 already comes from"), std::string::npos) << r.out;
}

}  // namespace

namespace {

const std::string kSample = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/samples/pytorch_ag_overlap";

TEST(Cli, AnalyzeGateExitCodes) {
  // ag_overlap: rank 0 hides 78.7% and rank 1 31.1% of its all-gather time (see the report),
  // so a 0.25 floor passes on both ranks and a 0.5 floor fails on rank 1 only.
  Result pass = RunCli("analyze " + kSample + " --require 'overlap_ratio>=0.25'");
  EXPECT_EQ(pass.code, 0) << pass.out;
  Result fail = RunCli("analyze " + kSample + " --require 'overlap_ratio>=0.5'");
  EXPECT_EQ(fail.code, 3) << fail.out;
  EXPECT_NE(fail.out.find("rank 1"), std::string::npos) << fail.out;
  Result bad_metric = RunCli("analyze " + kSample + " --require 'no_such_metric>=1'");
  EXPECT_EQ(bad_metric.code, 64) << bad_metric.out;
  Result bad_regex = RunCli("analyze " + kSample + " --comm-kernel '(['");
  EXPECT_EQ(bad_regex.code, 64) << bad_regex.out;
}

TEST(Cli, AnalyzeJsonHasSchemaAndNoNaN) {
  Result r = RunCli("analyze --json " + std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/d2h_blocking/rank0.json.gz");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("NaN"), std::string::npos);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema"], "overlapscope.report/1");
}

TEST(Cli, ExportWritesBothFormats) {
  // One .pftrace holds every rank; Chrome JSON is one Kineto-style file per rank
  // (OUT.rank<r>.json[.gz]) because HTA and TensorBoard expect that.
  const std::string dir = ::testing::TempDir();
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {dir + "/cli_export.pftrace", {dir + "/cli_export.pftrace"}},
      {dir + "/cli_export.json", {dir + "/cli_export.rank0.json", dir + "/cli_export.rank1.json"}},
      {dir + "/cli_export.json.gz", {dir + "/cli_export.rank0.json.gz", dir + "/cli_export.rank1.json.gz"}}};
  for (const auto& [out, files] : cases) {
    for (const auto& f : files) std::remove(f.c_str());
    Result r = RunCli("export " + kSample + " -o " + out);
    EXPECT_EQ(r.code, 0) << out << ": " << r.out;
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary | std::ios::ate);
      EXPECT_TRUE(in.good()) << f;
      EXPECT_GT(static_cast<int64_t>(in.tellg()), 1000) << f;
    }
  }
}

}  // namespace

namespace {

TEST(Cli, AnalyzeWritesTheAnalyzedPerfettoTrace) {
  std::string out = ::testing::TempDir() + "/analyzed.pftrace";
  std::remove(out.c_str());
  Result r = RunCli("analyze " + std::string(OVERLAPSCOPE_SOURCE_DIR) + "/samples/pytorch_ag_overlap --trace " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
  std::ifstream in(out, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The analysis tracks are in the file (names are stored as plain strings in the protobuf).
  EXPECT_NE(bytes.find("exposed communication"), std::string::npos);
  Result bad = RunCli("analyze " + std::string(OVERLAPSCOPE_SOURCE_DIR) +
                      "/samples/pytorch_ag_overlap --trace /nonexistent/dir/x.pftrace");
  EXPECT_EQ(bad.code, 1) << bad.out;
}

}  // namespace

namespace {

// Records that look like GPU work but could not be read: every output says so first, --strict
// turns it into exit 2 (no report, nothing exported), and a trace whose GPU activity was all lost
// says it has no GPU numbers.
TEST(Cli, DataLossWarnsFirstEverywhereAndStrictExits2) {
  const std::string good =
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 10, \"dur\": 5, "
      "\"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1}}";
  const std::string lost =  // a kernel whose duration is not a number
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 20, \"dur\": \"5\", "
      "\"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 2}}";
  const std::string path = ::testing::TempDir() + "/cli_dataloss.json";
  std::ofstream(path) << "{\"traceEvents\": [" << good << ", " << lost << "]}";
  Result text = RunCli("analyze " + path);
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_EQ(text.out.rfind("warning: " + path + ": 1 x kineto_gpu_event_skipped", 0), 0u) << text.out;
  Result md = RunCli("analyze --markdown " + path);
  EXPECT_NE(md.out.find("> **Warning: part of the input could not be read"), std::string::npos) << md.out;
  EXPECT_LT(md.out.find("> **Warning"), md.out.find("| rank |"));
  Result js = RunCli("analyze --json " + path);
  ASSERT_EQ(js.code, 0) << js.out;
  auto j = nlohmann::json::parse(js.out);
  ASSERT_EQ(j["warnings"].size(), 1u);
  EXPECT_EQ(j["warnings"][0]["stat"], "kineto_gpu_event_skipped");
  EXPECT_EQ(j["warnings"][0]["count"], 1);
  for (const char* cmd : {"analyze --strict ", "info --strict ", "export --strict -o /tmp/cli_dataloss_out.json "}) {
    Result r = RunCli(cmd + path);
    EXPECT_EQ(r.code, 2) << cmd << r.out;
    EXPECT_NE(r.out.find("--strict: part of the input could not be read"), std::string::npos) << r.out;
  }
  Result info = RunCli("info " + path);
  EXPECT_EQ(info.code, 0);
  EXPECT_EQ(info.out.rfind("warning: ", 0), 0u) << info.out;
  // All GPU activity lost: said first, never an ordinary-looking report.
  std::ofstream(path) << "{\"traceEvents\": [" << lost << "]}";
  Result none = RunCli("analyze " + path);
  EXPECT_EQ(none.code, 0) << none.out;
  EXPECT_EQ(none.out.rfind("warning: " + path + ": no GPU activity of this source could be read", 0), 0u) << none.out;
  // Harmless records (flow arrows, display metadata) warn nowhere.
  std::ofstream(path) << "{\"traceEvents\": [" << good
                      << ", {\"ph\": \"s\", \"id\": 1, \"pid\": 1, \"tid\": 1, \"ts\": 1, \"cat\": \"fwdbwd\", "
                         "\"name\": \"fwdbwd\"}]}";
  Result clean = RunCli("analyze --strict " + path);
  EXPECT_EQ(clean.code, 0) << clean.out;
  EXPECT_EQ(clean.out.find("warning"), std::string::npos) << clean.out;
  std::remove(path.c_str());
}

}  // namespace
