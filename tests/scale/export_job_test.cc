// export --per-rank (engine/export_job.h): one .pftrace per rank and an overview whose tracks
// carry the report's figures (analyze --per-rank on the same input, computed here separately),
// on every multi-rank input of tests/data and samples/ and on a generated job whose waits are
// known from the generator's offsets.
#include "engine/export_job.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/multirank/gen_job.h"
#include "engine/engine.h"
#include "gtest/gtest.h"
#include "report/report.h"
#include "tests/exporters/pftrace_decoder.h"

namespace overlapscope::engine {
namespace {

namespace fs = std::filesystem;
using testing::PfTrace;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string Scratch(const std::string& name) {
  return (fs::temp_directory_path() / absl::StrCat("ovs_export_", ::getpid(), "_", name)).string();
}

// Child tracks (name -> uuid) of each process track, by process name.
std::map<std::string, std::map<std::string, uint64_t>> Children(const PfTrace& d) {
  std::map<uint64_t, std::string> process;
  for (const auto& [uuid, t] : d.tracks)
    if (t.kind == testing::PfTrack::kProcess) process[uuid] = t.name;
  std::map<std::string, std::map<std::string, uint64_t>> out;
  for (const auto& [uuid, t] : d.tracks)
    if (process.count(t.parent)) out[process[t.parent]][t.name] = uuid;
  for (const auto& [uuid, name] : process) out[name];
  return out;
}

const std::map<std::string, uint64_t>* ProcessOf(const std::map<std::string, std::map<std::string, uint64_t>>& c,
                                                 const report::RankReport& rk) {
  auto it = c.find(rk.host.empty() ? rk.label : absl::StrCat(rk.label, " · ", rk.host));
  return it == c.end() ? nullptr : &it->second;
}

// The logical track of `track`: lane tracks ("iterations · lane 1", made for partially
// overlapping slices) count as their parent's.
uint64_t Logical(const PfTrace& d, uint64_t track) {
  for (;;) {
    const testing::PfTrack& t = d.tracks.at(track);
    if (t.parent == 0 || d.tracks.at(t.parent).kind == testing::PfTrack::kProcess) return track;
    track = t.parent;
  }
}

bool HasSample(const PfTrace& d, uint64_t track, uint64_t ts, double v) {
  for (const auto& e : d.events)
    if (e.type == 4 && e.track == track && e.ts == ts && e.counter == v) return true;
  return false;
}

// Every figure the overview draws, against the report: iterations (span, exposed_comm_ns), the
// exposed-communication and idle-by-cause counters, and every wait of every instance.
void ExpectOverviewIsTheReport(const PfTrace& d, const report::Report& r, const JobExport& job, const std::string& in) {
  const auto children = Children(d);
  ASSERT_EQ(children.size(), r.ranks.size()) << in;
  std::map<std::string, const std::map<std::string, uint64_t>*> by_label;
  int64_t iterations = 0;
  for (const report::RankReport& rk : r.ranks) {
    const auto* tracks = ProcessOf(children, rk);
    ASSERT_NE(tracks, nullptr) << in << ": " << rk.label;
    by_label[rk.label] = tracks;
    for (const report::DeviceReport& dev : rk.devices) {
      const std::string pre = rk.devices.size() > 1 ? absl::StrCat("GPU ", dev.device, " · ") : "";
      std::map<std::string, bool> cause_nonzero;
      for (const report::IterationOverlap& it : dev.iterations)
        for (const report::NamedValue& g : it.gap_ns) cause_nonzero[g.name] |= g.value != 0;
      for (const auto& [cause, nonzero] : cause_nonzero)
        EXPECT_EQ(tracks->count(pre + "idle: " + cause), nonzero ? 1u : 0u) << in << " " << rk.label << " " << cause;
      for (const report::IterationOverlap& it : dev.iterations) {
        if (it.gpu_start_ns == 0 && it.gpu_end_ns == 0) continue;
        ++iterations;
        const uint64_t ts = static_cast<uint64_t>(it.gpu_start_ns);
        bool found = false;
        for (const auto& s : d.slices)
          if (Logical(d, s.track) == tracks->at(pre + "iterations") && s.ts == ts &&
              s.name == absl::StrCat("step ", it.iteration)) {
            found = true;
            EXPECT_EQ(s.dur, static_cast<uint64_t>(it.gpu_end_ns - it.gpu_start_ns));
            EXPECT_EQ(s.args.at("exposed_comm_ns"), std::to_string(it.stats.exposed_comm_ns));
          }
        EXPECT_TRUE(found) << in << " " << rk.label << " step " << it.iteration;
        EXPECT_TRUE(
            HasSample(d, tracks->at(pre + "exposed communication"), ts, static_cast<double>(it.stats.exposed_comm_ns)))
            << in << " " << rk.label << " step " << it.iteration;
        for (const report::NamedValue& g : it.gap_ns)
          if (cause_nonzero[g.name])
            EXPECT_TRUE(HasSample(d, tracks->at(pre + "idle: " + g.name), ts, static_cast<double>(g.value)))
                << in << " " << rk.label << " step " << it.iteration << " " << g.name;
      }
    }
  }
  EXPECT_EQ(job.iterations, iterations) << in;
  int64_t waits = 0;
  for (const report::Instance& inst : r.collectives_across_ranks.instances)
    for (const report::InstanceRank& ir : inst.ranks) {
      if (ir.wait_ns <= 0) continue;
      ++waits;
      ASSERT_TRUE(by_label.count(ir.ref.label)) << in << ": " << ir.ref.label;
      const uint64_t wt = by_label[ir.ref.label]->at("waiting for peers");
      bool found = false;
      for (const auto& s : d.slices)
        found |= Logical(d, s.track) == wt && s.ts == static_cast<uint64_t>(ir.arrival_ns) &&
                 s.dur == static_cast<uint64_t>(ir.wait_ns) && s.args.at("instance") == std::to_string(inst.index);
      EXPECT_TRUE(found) << in << " instance " << inst.index << " " << ir.ref.label;
    }
  EXPECT_EQ(job.waits, waits) << in;
  EXPECT_EQ(job.waits_unplaced, 0) << in;
}

// Each rank file parses and holds events; its name is rank<r>.pftrace.
void ExpectRankFiles(const JobExport& job, const report::Report& r, const std::string& in) {
  ASSERT_EQ(job.rank_files.size(), r.ranks.size()) << in;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const std::string& f = job.rank_files[i];
    if (r.ranks[i].rank) EXPECT_EQ(fs::path(f).filename().string(), absl::StrCat("rank", *r.ranks[i].rank, ".pftrace"));
    auto d = testing::DecodePftrace(ReadAll(f));
    ASSERT_TRUE(d.ok()) << f << ": " << d.status();
    EXPECT_GT(d->slices.size(), 0u) << f;
  }
}

std::vector<std::string> MultiRankInputs() {
  std::vector<std::string> out;
  const std::string src = OVERLAPSCOPE_SOURCE_DIR;
  for (const std::string& dir : {src + "/tests/data/kineto", src + "/samples"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory()) out.push_back(e.path().string());
  out.push_back(src + "/tests/data/capture");
  return out;
}

TEST(ExportJobTest, OverviewIsTheReportOnEveryMultiRankInput) {
  int compared = 0;
  const std::string out = Scratch("inputs");
  for (const std::string& in : MultiRankInputs()) {
    if (!Load({in}).ok()) continue;
    auto per = AnalyzePerRank({in}, AnalyzeOptions{});
    ASSERT_TRUE(per.ok()) << in << ": " << per.status();
    if (per->stats.ranks < 2) continue;
    ++compared;
    fs::remove_all(out);
    JobExportOptions o;
    o.reduce.jobs = 2;
    o.analyze = compared % 2 == 0;  // both ways over the inputs
    auto job = ExportJob({in}, out, o);
    ASSERT_TRUE(job.ok()) << in << ": " << job.status();
    ExpectRankFiles(*job, per->report, in);
    auto d = testing::DecodePftrace(ReadAll(job->overview));
    ASSERT_TRUE(d.ok()) << in << ": " << d.status();
    ExpectOverviewIsTheReport(*d, per->report, *job, in);
  }
  EXPECT_GE(compared, 9) << "multi-rank inputs in tests/data and samples";
  fs::remove_all(out);
}

TEST(ExportJobTest, AnalysisTracksOnRankTracesCarryNoTimeMarkers) {
  const std::string out = Scratch("analyze");
  JobExportOptions o;
  o.analyze = true;
  auto job = ExportJob({std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/d2h_blocking"}, out, o);
  ASSERT_TRUE(job.ok()) << job.status();
  bool findings = false;
  for (const std::string& f : job->rank_files) {
    auto d = testing::DecodePftrace(ReadAll(f));
    ASSERT_TRUE(d.ok()) << d.status();
    for (const auto& s : d->slices) {
      if (!s.args.count("what")) continue;
      findings = true;  // a finding's text: times as "+X ms", no analyze::findings::kTimeMarker
      EXPECT_EQ(s.args.at("what").find('\x1f'), std::string::npos) << f << ": " << s.args.at("what");
      EXPECT_EQ(s.args.at("change").find('\x1f'), std::string::npos) << f << ": " << s.args.at("change");
    }
  }
  EXPECT_TRUE(findings) << "d2h_blocking has findings";
  fs::remove_all(out);
}

TEST(ExportJobTest, OneFileAndErrors) {
  const std::string src = OVERLAPSCOPE_SOURCE_DIR;
  const std::string out = Scratch("one");
  auto one = ExportJob({src + "/tests/data/kineto/ag_overlap/rank1.json"}, out, {});
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->rank_files.size(), 1u);
  EXPECT_EQ(fs::path(one->rank_files[0]).filename(), "rank1.pftrace");
  EXPECT_TRUE(testing::DecodePftrace(ReadAll(one->rank_files[0])).ok());
  EXPECT_TRUE(testing::DecodePftrace(ReadAll(one->overview)).ok());
  EXPECT_EQ(one->waits, 0);
  // An output "directory" below a regular file: an output error naming it.
  auto bad_out = ExportJob({src + "/tests/data/kineto/ag_overlap"}, one->overview + "/sub", {});
  ASSERT_FALSE(bad_out.ok());
  EXPECT_TRUE(IsOutputError(bad_out.status())) << bad_out.status();
  EXPECT_NE(std::string(bad_out.status().message()).find(one->overview + "/sub"), std::string::npos);
  // An unreadable input: an input error.
  auto bad_in = ExportJob({src + "/tests/data/kineto/no_such_dir"}, out, {});
  ASSERT_FALSE(bad_in.ok());
  EXPECT_FALSE(IsOutputError(bad_in.status())) << bad_in.status();
  fs::remove_all(out);
}

TEST(ExportJobTest, GeneratedJobWaitsAreTheInjectedOffsets) {
  bench::JobSpec spec;
  spec.template_path = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap/rank0.json";
  spec.out_dir = Scratch("job_in");
  spec.ranks = 6;
  spec.tiles = 3;
  spec.jitter_ns = 20000;
  spec.straggler = 4;
  spec.straggler_delay_ns = 300000;
  auto info = bench::WriteJob(spec);
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_GT(info->collectives_per_tile, 0);
  const std::string out = Scratch("job_out");
  JobExportOptions o;
  o.reduce.jobs = 2;
  o.reduce.memory_budget_bytes = 1;  // one rank at a time
  auto job = ExportJob({spec.out_dir}, out, o);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->rank_files.size(), 6u);
  for (int r = 0; r < 6; ++r) EXPECT_EQ(fs::path(job->rank_files[r]).filename(), absl::StrCat("rank", r, ".pftrace"));
  auto d = testing::DecodePftrace(ReadAll(job->overview));
  ASSERT_TRUE(d.ok()) << d.status();
  const auto children = Children(*d);
  // Rank r waits in instance i of tile k for the straggler: its arrival is the template's
  // shifted by OffsetNs(r, k), so wait = OffsetNs(4, k) - OffsetNs(r, k) (the delay exceeds the
  // jitter); the straggler never waits.
  const int64_t per_tile = info->collectives_per_tile;
  for (int r = 0; r < 6; ++r) {
    auto it = children.find(absl::StrCat("rank ", r));
    ASSERT_NE(it, children.end()) << r;
    if (r == 4) {
      EXPECT_EQ(it->second.count("waiting for peers"), 0u);
      continue;
    }
    std::vector<uint64_t> durs;
    for (const auto& s : d->slices)
      if (Logical(*d, s.track) == it->second.at("waiting for peers")) {
        durs.push_back(s.dur);
        EXPECT_EQ(s.name, "waiting for rank 4");
      }
    std::vector<uint64_t> want;
    for (int64_t k = 0; k < spec.tiles; ++k)
      for (int64_t c = 0; c < per_tile; ++c)
        want.push_back(static_cast<uint64_t>(bench::OffsetNs(spec, info->period_ns, 4, k) -
                                             bench::OffsetNs(spec, info->period_ns, r, k)));
    EXPECT_EQ(durs, want) << "rank " << r;
  }
  EXPECT_EQ(job->waits, 5 * spec.tiles * per_tile);
  auto per = AnalyzePerRank({spec.out_dir}, AnalyzeOptions{});
  ASSERT_TRUE(per.ok()) << per.status();
  ExpectOverviewIsTheReport(*d, per->report, *job, spec.out_dir);
  fs::remove_all(out);
  fs::remove_all(spec.out_dir);
}

}  // namespace
}  // namespace overlapscope::engine
