// The streamed form of the per-rank reduction (engine/reduce.h PerRankReport, WriteReport):
// ranks read back from the temporary file and instances built while rendering give the bytes
// of the whole-model report (critical path off) in JSON, text and Markdown; the head holds only
// the ranks' summaries and no instance; ReducedRanks keeps, replaces and reports what it holds.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/reduce.h"
#include "gtest/gtest.h"

namespace overlapscope::engine {
namespace {

std::string Whole(const std::string& in, ReportFormat f) {
  auto s = Load({in});
  EXPECT_TRUE(s.ok()) << s.status();
  AnalyzeOptions o;
  o.critical_path = false;
  auto a = Analyze(*s, o);
  EXPECT_TRUE(a.ok()) << a.status();
  auto r = RenderReport(*a, f);
  return r.ok() ? *r : std::string();
}

std::string Streamed(const PerRankReport& r, ReportFormat f, size_t shown = 20) {
  std::FILE* tmp = std::tmpfile();
  EXPECT_NE(tmp, nullptr);
  if (tmp == nullptr) return "";
  RenderOptions o;
  o.collectives_shown = shown;
  const absl::Status st = WriteReport(r, f, o, tmp);
  EXPECT_TRUE(st.ok()) << st;
  std::string out(static_cast<size_t>(std::ftell(tmp)), '\0');
  std::rewind(tmp);
  EXPECT_EQ(std::fread(out.data(), 1, out.size(), tmp), out.size());
  std::fclose(tmp);
  return out;
}

TEST(StreamedReport, SameBytesAsTheWholeModelInEveryFormat) {
  const std::string src = OVERLAPSCOPE_SOURCE_DIR;
  int compared = 0;
  std::vector<std::string> inputs = {src + "/tests/data/capture"};
  for (const std::string& dir : {src + "/tests/data/kineto", src + "/samples"})
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.is_directory()) inputs.push_back(e.path().string());
  int with_findings = 0;
  for (const std::string& in : inputs) {
    if (!Load({in}).ok()) continue;  // samples/ directories without traces
    ReduceOptions ro;
    ro.jobs = 2;
    auto per = ReducePerRank({in}, AnalyzeOptions{}, ro);
    ASSERT_TRUE(per.ok()) << in << ": " << per.status();
    if (per->stats().ranks < 2) continue;
    ++compared;
    // The head: every rank's summary, no rank body, no instance row.
    ASSERT_EQ(per->head().ranks.size(), static_cast<size_t>(per->stats().ranks));
    for (const report::RankReport& rk : per->head().ranks) {
      EXPECT_FALSE(rk.label.empty());
      EXPECT_TRUE(rk.devices.empty() && rk.findings.items.empty() && rk.threads.empty()) << in;
    }
    EXPECT_TRUE(per->head().collectives_across_ranks.instances.empty());
    for (ReportFormat f : {ReportFormat::kJson, ReportFormat::kText, ReportFormat::kMarkdown})
      EXPECT_EQ(Streamed(*per, f), Whole(in, f)) << in << " format " << static_cast<int>(f);
    // The JSON's ranks come from their stored text (times of findings made relative there).
    const std::string json = Whole(in, ReportFormat::kJson);
    const size_t items = json.find("\"items\": [\n");  // a finding whose message names a time
    if (items != std::string::npos && json.find(" ms", items) != std::string::npos &&
        json.find("\"message\": \"", items) != std::string::npos)
      ++with_findings;
    // Every instance in the text (each built on demand) against the whole report's.
    auto s = Load({in});
    ASSERT_TRUE(s.ok());
    AnalyzeOptions o;
    o.critical_path = false;
    auto a = Analyze(*s, o);
    ASSERT_TRUE(a.ok());
    RenderOptions all;
    all.collectives_shown = SIZE_MAX;
    EXPECT_EQ(Streamed(*per, ReportFormat::kText, SIZE_MAX), *RenderReport(*a, ReportFormat::kText, all)) << in;
    EXPECT_TRUE(per->status().ok()) << per->status();
  }
  EXPECT_GE(compared, 9);
  EXPECT_GE(with_findings, 1);
}

TEST(ReducedRanks, KeepsReplacesAndNamesWhatIsMissing) {
  auto store = ReducedRanks::Create();
  ASSERT_TRUE(store.ok()) << store.status();
  ReducedRanks& r = **store;
  ASSERT_TRUE(r.Put(3, std::string(100000, 'a')).ok());
  ASSERT_TRUE(r.Put(1, "one").ok());
  ASSERT_TRUE(r.Put(3, "three").ok());  // replaced: a rank reduced again
  EXPECT_EQ(*r.Get(3), "three");
  EXPECT_EQ(*r.Get(1), "one");
  EXPECT_EQ(r.files(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(r.bytes(), 100000 + 3 + 5);
  EXPECT_EQ(r.Get(2).status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(r.Put(0, "").ok());
  EXPECT_EQ(*r.Get(0), "");
}

}  // namespace
}  // namespace overlapscope::engine
