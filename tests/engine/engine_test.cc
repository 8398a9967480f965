// The engine's library API (engine/engine.h) on the real traces of tests/data: what Load
// merges and aligns, that Analyze + RenderReport give the CLI's report byte for byte, and the
// errors a front end sees.
#include "engine/engine.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/clock_align.h"
#include "gtest/gtest.h"
#include "model/trace.h"

namespace overlapscope::engine {
namespace {

namespace fs = std::filesystem;

const std::string kData = OVERLAPSCOPE_TEST_DATA;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs with the source root as working directory, as tools/golden.sh runs the CLI: the report
// records the inputs as given.
struct InSourceRoot {
  fs::path old = fs::current_path();
  InSourceRoot() { fs::current_path(OVERLAPSCOPE_SOURCE_DIR); }
  ~InSourceRoot() { fs::current_path(old); }
};

TEST(Engine, LoadMergesRanksOfADirectory) {
  auto s = Load({kData + "/kineto/ag_overlap"});
  ASSERT_TRUE(s.ok()) << s.status();
  // The directory holds rank<r>.json and rank<r>.json.gz: the .json.gz are read.
  ASSERT_EQ(s->files().size(), 2u);
  EXPECT_EQ(fs::path(s->files()[0]).filename(), "rank0.json.gz");
  EXPECT_EQ(fs::path(s->files()[1]).filename(), "rank1.json.gz");
  ASSERT_EQ(s->inputs().size(), 1u);
  const model::Trace& t = s->trace();
  ASSERT_EQ(t.processes().size(), 2u);
  EXPECT_EQ(t.processes()[0].rank, 0);
  EXPECT_EQ(t.processes()[1].rank, 1);
  // No host named (file names rank<r>.json.gz): clocks assumed shared, nothing aligned.
  EXPECT_EQ(s->clock_alignment().status, analyze::ClockAlignStatus::kHostsUnknown);
}

TEST(Engine, ReportIsTheCliReportByteForByte) {
  InSourceRoot root;
  for (const char* in : {"tests/data/kineto/ag_overlap", "tests/data/capture/known_work_normal.ovspill"}) {
    auto s = Load({in});
    ASSERT_TRUE(s.ok()) << s.status();
    auto a = Analyze(*s);
    ASSERT_TRUE(a.ok()) << a.status();
    std::string name = in;
    for (char& c : name)
      if (c == '/') c = '_';
    struct {
      ReportFormat f;
      const char* ext;
    } const kForms[] = {{ReportFormat::kJson, "json"}, {ReportFormat::kText, "txt"}, {ReportFormat::kMarkdown, "md"}};
    for (const auto& form : kForms) {
      auto r = RenderReport(*a, form.f);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(*r, Slurp("tests/data/golden/" + name + ".analyze." + form.ext)) << in << " " << form.ext;
    }
    auto info = DescribeSession(*s, true);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(*info, Slurp("tests/data/golden/" + name + ".info.json")) << in;
  }
}

TEST(Engine, CapturesLoadWithoutCuda) {
  auto s = Load({kData + "/capture/known_work_normal.ovspill"});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->trace().processes().size(), 1u);
  EXPECT_GT(s->trace().kernels().size(), 0u);
  EXPECT_NE(s->trace().clock_note().find("CLOCK_REALTIME"), std::string::npos);
}

TEST(Engine, LoadErrorsNameTheFile) {
  auto missing = Load({kData + "/no/such/trace.json"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no/such/trace.json: offset 0:"), std::string::npos) << missing.status();
  auto none = Load({});
  EXPECT_FALSE(none.ok());
  auto mixed = Load({kData + "/kineto/ag_overlap/rank0.json.gz", kData + "/capture/known_work_normal.ovspill"});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("cannot be analyzed together"), std::string::npos) << mixed.status();
  // The same rank twice (the .json and the .json.gz of one trace).
  auto twice = Load({kData + "/kineto/ag_overlap/rank0.json", kData + "/kineto/ag_overlap/rank0.json.gz"});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("rank 0 already comes from"), std::string::npos) << twice.status();
  // Not a trace at all: the JSON reader says where and why.
  const std::string junk = testing::TempDir() + "/engine_junk.json";
  std::ofstream(junk) << "this is not json";
  auto bad = Load({junk});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("engine_junk.json: offset"), std::string::npos) << bad.status();
  EXPECT_FALSE(ParseClockAlign("sometimes").ok());
}

TEST(Engine, ProgressNamesEachFile) {
  std::vector<LoadProgress> seen;
  LoadOptions o;
  o.progress = [&](const LoadProgress& p) { seen.push_back(p); };
  ASSERT_TRUE(Load({kData + "/kineto/a2a_sync"}, o).ok());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().file, 0);
  EXPECT_EQ(seen.back().file, 1);
  EXPECT_EQ(seen.back().files, 2);
  EXPECT_EQ(seen.back().done_bytes, seen.back().total_bytes);  // the last call: file fully read
}

// Two ranks renamed as PyTorch's default worker files of two hosts ("<host>_<pid>.<ms>.pt.trace
// .json.gz", the time in ms as tensorboard_trace_handler wrote it before ns): auto alignment
// estimates host b's offset from the 3 matched all-gathers and adds it to every event of rank 1
// while the trace is built; rank 0 (reference) is unchanged.
TEST(Engine, LoadAlignsTwoHostsOnce) {
  const fs::path dir = fs::path(testing::TempDir()) / "engine_two_hosts";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kData + "/kineto/ag_overlap/rank0.json.gz", dir / "hosta_11.1790857026123.pt.trace.json.gz");
  fs::copy_file(kData + "/kineto/ag_overlap/rank1.json.gz", dir / "hostb_22.1790857026123.pt.trace.json.gz");
  LoadOptions off;
  off.align_clocks = ClockAlign::kOff;
  auto raw = Load({dir.string()}, off);
  auto aligned = Load({dir.string()});
  ASSERT_TRUE(raw.ok()) << raw.status();
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(raw->clock_alignment().status, analyze::ClockAlignStatus::kOff);
  const analyze::ClockAlignment& a = aligned->clock_alignment();
  ASSERT_EQ(a.status, analyze::ClockAlignStatus::kAligned) << aligned->clock_summary();
  ASSERT_EQ(a.hosts.size(), 2u);
  EXPECT_EQ(a.hosts[0].host, "hosta");
  EXPECT_EQ(a.hosts[1].host, "hostb");
  EXPECT_EQ(a.hosts[1].instances, 3);
  const int64_t off_b = a.hosts[1].offset_ns;
  // Every kernel and API call of rank 1 moved by exactly the offset, rank 0's not at all.
  const model::Trace& r = raw->trace();
  const model::Trace& t = aligned->trace();
  ASSERT_NE(off_b, 0);
  // (start, end) of every event of a kind, rank 1's moved by the offset, in the aligned order.
  auto shifted = [&](const auto& events, auto process_of) {
    std::vector<std::pair<int64_t, int64_t>> v;
    for (const auto& e : events) {
      const int64_t o = process_of(e) == 1 ? off_b : 0;
      v.push_back({e.start_ns + o, e.end_ns + o});
    }
    std::stable_sort(v.begin(), v.end());
    return v;
  };
  auto as_is = [](const auto& events) {
    std::vector<std::pair<int64_t, int64_t>> v;
    for (const auto& e : events) v.push_back({e.start_ns, e.end_ns});
    return v;
  };
  auto by_device = [&](const auto& e) { return r.ProcessOfDevice(e.device); };
  auto by_thread = [&](const auto& e) { return r.ProcessOfThread(e.thread); };
  EXPECT_EQ(as_is(t.kernels()), shifted(r.kernels(), by_device));
  EXPECT_EQ(as_is(t.memsets()), shifted(r.memsets(), by_device));
  EXPECT_EQ(as_is(t.api_calls()), shifted(r.api_calls(), by_thread));
  EXPECT_EQ(as_is(t.ranges()), shifted(r.ranges(), by_thread));
  EXPECT_NE(t.clock_note().find("host hostb shifted by"), std::string::npos) << t.clock_note();
  // The joins were built on the shifted trace: every kernel's launch call precedes it there.
  for (size_t i = 0; i < t.kernels().size(); ++i) {
    const int32_t call = t.LaunchOf({model::GpuKind::kKernel, static_cast<int32_t>(i)});
    if (call == model::kNone) continue;
    EXPECT_EQ(t.ProcessOfThread(t.api_calls()[call].thread), t.ProcessOfDevice(t.kernels()[i].device));
  }
}

TEST(Engine, GatesAndOptions) {
  EXPECT_TRUE(CheckGate("overlap_ratio>=0.5").ok());
  auto unknown = CheckGate("speed>=1");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown metric 'speed'"), std::string::npos);
  EXPECT_FALSE(CheckGate("overlap_ratio=0.5").ok());
  EXPECT_FALSE(CheckClassRule({"comm", "(", "--comm-kernel"}).ok());
  EXPECT_FALSE(CheckClassRule({"fast", "x", "--comm-kernel"}).ok());
  EXPECT_FALSE(CheckRulesText({"comm\n", "rules.txt"}).ok());

  auto s = Load({kData + "/kineto/ag_overlap"});
  ASSERT_TRUE(s.ok());
  auto a = Analyze(*s);
  ASSERT_TRUE(a.ok());
  auto g = EvaluateGates(*a, {"overlap_ratio>=0", "overlap_ratio>1.5"});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(g->passed);
  ASSERT_EQ(g->lines.size(), 4u);  // 2 gates x 2 ranks
  EXPECT_EQ(g->lines[0].rfind("PASS rank 0: overlap_ratio>=0", 0), 0u) << g->lines[0];
  EXPECT_EQ(g->lines[1].rfind("FAIL rank 0: overlap_ratio>1.5", 0), 0u) << g->lines[1];

  // An analysis drawn into another session's export is refused, not drawn on the wrong trace.
  auto other = Load({kData + "/kineto/ag_sequential"});
  ASSERT_TRUE(other.ok());
  ExportOptions draw;
  draw.analysis = &*a;
  auto e = ExportPerfetto(*other, testing::TempDir() + "/engine_other.pftrace", draw);
  EXPECT_FALSE(e.ok());
  auto fmt = TraceFormatFromPath("x.txt");
  EXPECT_FALSE(fmt.ok());
  EXPECT_EQ(*TraceFormatFromPath("x.json.gz"), TraceFormat::kChrome);
}

}  // namespace
}  // namespace overlapscope::engine
