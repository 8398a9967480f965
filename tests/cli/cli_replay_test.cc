// `overlapscope replay`: help, exit codes (README), the replay error first in every form.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Result Replay(const std::string& args) {
  std::string cmd = std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope replay " + args + " 2>&1";
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

const std::string kTrace = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/a2a_sync";

TEST(CliReplay, HelpNamesTheChanges) {
  Result r = Replay("--help");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("usage: overlapscope replay"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("async:/REGEX/[@/JOIN/]"), std::string::npos) << r.out;
}

TEST(CliReplay, ExitCodes) {
  EXPECT_EQ(Replay("").code, 64);                                     // no trace
  EXPECT_EQ(Replay(kTrace + " --change 'async:SendRecv'").code, 64);  // malformed change
  EXPECT_EQ(Replay(kTrace + " --change 'scale:gpu=2'").code, 64);
  EXPECT_EQ(Replay(kTrace + " --json --markdown").code, 64);
  EXPECT_EQ(Replay(kTrace + " --sm-count 1").code, 64);
  EXPECT_EQ(Replay(kTrace + " --threads 0").code, 64);
  Result bad = Replay("/nonexistent/trace.json");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("/nonexistent/trace.json"), std::string::npos) << bad.out;
}

TEST(CliReplay, ReplayErrorComesFirst) {
  Result text = Replay(kTrace + " --change 'async:/SendRecv/'");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_EQ(text.out.rfind("Replay error: median |error|", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("Changes: async:/SendRecv/ ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Contention model: "), std::string::npos) << text.out;
  // The job's step and how its change was taken, with the late ranks counted (2 ranks).
  EXPECT_NE(text.out.find("\nJob step (slowest rank per iteration, median of "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("the change is the median of per-iteration changes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("change/iter"), std::string::npos) << text.out;  // the same rule per rank
  EXPECT_NE(text.out.find("iterations with a late rank (a peer waited >= 10 % of the step for it): "),
            std::string::npos)
      << text.out;
  Result md = Replay(kTrace + " --markdown --strict");
  ASSERT_EQ(md.code, 0) << md.out;
  EXPECT_EQ(md.out.rfind("# overlapscope replay\n\n- Replay error (strict: no fallbacks):", 0), 0u) << md.out;
  Result json = Replay(kTrace + " --json --no-contention --change 'scale:comm=0.5'");
  ASSERT_EQ(json.code, 0) << json.out;
  EXPECT_NE(json.out.find("\"schema\": \"overlapscope.replay/1\",\n  \"schema_version\": \"1.2\""), std::string::npos);
  EXPECT_NE(json.out.find("\"change_rule\": \"median-of-per-iteration-changes\""), std::string::npos);
  EXPECT_LT(json.out.find("\"replay_error\""), json.out.find("\"graph\""));
  EXPECT_EQ(json.out.find("predicted_contention"), std::string::npos);
  // The recorded schedule's critical path is not walked: null, never zeros that read as "0 ns".
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  ASSERT_FALSE(doc["ranks"].empty());
  ASSERT_FALSE(doc["iterations"].empty());
  for (const char* part : {"ranks", "iterations"}) {
    for (const auto& x : doc[part]) {
      EXPECT_TRUE(x["measured"]["critical_path"].is_null()) << part << ": " << x["measured"];
      EXPECT_TRUE(x["replayed"]["critical_path"].is_object()) << part;
      EXPECT_TRUE(x["predicted"]["critical_path"].is_object()) << part;
    }
  }
}

// --html: a self-contained page, the replay error first, the per-rank table and per rank a chart
// of the step and the critical path of each schedule (2 ranks: 2 charts); no script, no network.
TEST(CliReplay, HtmlPage) {
  const std::string out = testing::TempDir() + "/replay_page.html";
  Result r = Replay(kTrace + " --change 'async:/SendRecv/' --html " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream f(out, std::ios::binary);
  const std::string page((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  const size_t error = page.find("<li>Replay error: median |error|");
  ASSERT_NE(error, std::string::npos) << page.substr(0, 2000);
  EXPECT_LT(error, page.find("Per rank (median over iterations)"));
  EXPECT_NE(page.find("Changes: async:/SendRecv/ ("), std::string::npos);
  EXPECT_NE(page.find("<th>with contention</th>"), std::string::npos);
  size_t charts = 0;
  for (size_t at = page.find("<svg class=\"chart\""); at != std::string::npos;
       at = page.find("<svg class=\"chart\"", at + 1))
    ++charts;
  EXPECT_EQ(charts, 2u);
  EXPECT_NE(page.find(">rank 1</h3>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("http"), std::string::npos);
  // An unwritable path is an error (exit 1), not a bad command line.
  EXPECT_EQ(Replay(kTrace + " --html /nonexistent/dir/x.html").code, 1);
}

// Honest output (issue 24): the graph's inferred edges and unresolved waits are counted, and where
// the replay's median error exceeds 5 % every prediction says so next to its number (the job's
// line, the rank's row, Markdown, JSON). The 2-rank FSDP2 trace with cuda_sync rows replays
// within 0.1 % with its fallbacks; with --strict (what the graph alone explains) rank 0's median
// error is about 16 % and the job's about 7 %.
TEST(CliReplay, UnreliableReplayIsFlaggedNextToItsPredictions) {
  const std::string fsdp = std::string(OVERLAPSCOPE_TEST_DATA) + "/torch_diag/w2_sync/fsdp2";
  Result fine = Replay(fsdp + " --change 'scale:comm=0.5'");
  ASSERT_EQ(fine.code, 0) << fine.out;
  EXPECT_EQ(fine.out.find("not reliable"), std::string::npos) << fine.out;
  Result text = Replay(fsdp + " --strict --change 'scale:comm=0.5'");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_TRUE(std::regex_search(text.out, std::regex("\nGraph: [0-9]+ nodes; edges [0-9]+ recorded, [1-9][0-9]* "
                                                     "inferred; cross-stream waits [1-9][0-9]* unresolved")))
      << text.out;
  EXPECT_TRUE(std::regex_search(
      text.out, std::regex(R"re(\(change [-+0-9.]+ %\) \(replay error [0-9.]+ % > 5 %: not reliable\); the change)re")))
      << text.out;
  EXPECT_TRUE(
      std::regex_search(text.out, std::regex(R"re(\nrank 0 .* ms \(replay error \+[0-9.]+ % > 5 %: not reliable\))re")))
      << text.out;
  EXPECT_FALSE(std::regex_search(text.out, std::regex("\nrank 1 [^\n]*not reliable"))) << text.out;
  Result md = Replay(fsdp + " --strict --change 'scale:comm=0.5' --markdown");
  ASSERT_EQ(md.code, 0) << md.out;
  EXPECT_NE(md.out.find("| rank 0 |"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("% > 5 %: not reliable) |"), std::string::npos) << md.out;
  Result json = Replay(fsdp + " --strict --change 'scale:comm=0.5' --json");
  ASSERT_EQ(json.code, 0) << json.out;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  EXPECT_GT(doc["graph"]["edges_inferred"].get<int64_t>(), 0);
  EXPECT_GT(doc["graph"]["waits_unresolved"].get<int64_t>(), 0);
  EXPECT_TRUE(doc["job"]["unreliable"].get<bool>());
  EXPECT_TRUE(doc["ranks"][0]["unreliable"].get<bool>());
  EXPECT_FALSE(doc["ranks"][1]["unreliable"].get<bool>());
}

// A rank's median can hide iterations far off: the 2-rank FSDP2 trace with --strict has both
// ranks' medians within 5 % (rank 0 4.9 %) but two of rank 0's iterations 15 % off. The head line
// counts them (text, Markdown) and --json flags each; without --strict none is off and none is said.
TEST(CliReplay, IterationsFarOffAreCountedAndFlagged) {
  const std::string fsdp = std::string(OVERLAPSCOPE_TEST_DATA) + "/torch_diag/w2_default/fsdp2";
  Result fine = Replay(fsdp);
  ASSERT_EQ(fine.code, 0) << fine.out;
  EXPECT_EQ(fine.out.find("iterations replay more than"), std::string::npos) << fine.out;
  Result text = Replay(fsdp + " --strict");
  ASSERT_EQ(text.code, 0) << text.out;
  const std::string first_line = text.out.substr(0, text.out.find('\n'));
  EXPECT_TRUE(first_line.ends_with("; 2 of 8 iterations replay more than 5 % off")) << text.out;
  Result md = Replay(fsdp + " --strict --markdown");
  ASSERT_EQ(md.code, 0) << md.out;
  EXPECT_NE(md.out.find("worst <= 5 %); 2 of 8 iterations replay more than 5 % off\n"), std::string::npos) << md.out;
  Result json = Replay(fsdp + " --strict --json");
  ASSERT_EQ(json.code, 0) << json.out;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  for (const auto& r : doc["ranks"]) EXPECT_FALSE(r["unreliable"].get<bool>()) << r["label"];
  int off = 0;
  for (const auto& it : doc["iterations"]) {
    const bool far = std::abs(it["replay_error"].get<double>()) > 0.05;
    ASSERT_TRUE(it.contains("unreliable")) << it;
    EXPECT_EQ(it["unreliable"].get<bool>(), far) << it["iteration"];
    off += far ? 1 : 0;
  }
  EXPECT_EQ(off, 2);
}

// --threads (issue 26): the same bytes at 1, 2 and 16 threads, the prediction and the replay error.
TEST(CliReplay, SameBytesAtEveryThreadCount) {
  const std::string fsdp = std::string(OVERLAPSCOPE_TEST_DATA) + "/torch_diag/w4_default/fsdp2";
  for (const char* form : {" --json", ""}) {
    const std::string args = fsdp + " --change 'async:/AllGather/'" + form;
    Result one = Replay(args + " --threads 1");
    ASSERT_EQ(one.code, 0) << one.out;
    for (const char* n : {"2", "16"}) EXPECT_EQ(Replay(args + " --threads " + n).out, one.out) << n << form;
  }
}

}  // namespace
