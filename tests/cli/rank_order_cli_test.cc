// Ranks in numeric order when only the trace's distributedInfo says the rank: a job written by
// tensorboard_trace_handler-style names ("<worker>.<n>.pt.trace.json.gz", no rank in the name)
// whose name order is not the rank order is read, reported and exported exactly as the same job
// named in rank order (importers' RankOrder). Real 4-GPU traces (tests/data/torch_diag).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "cli_runner.h"
#include "gtest/gtest.h"

namespace overlapscope::testing {
namespace {

namespace fs = std::filesystem;

// Rank r of fsdp2_straggler as job.<kShuffled[r]>: natural name order is ranks 1, 3, 2, 0. The
// reference names job.1<r> keep name order == rank order; both the same length, so the outputs
// (binary Perfetto included) can be compared byte for byte after renaming.
constexpr const char* kShuffled[] = {"93", "17", "55", "40"};

struct Jobs {
  std::string ref, shf;
  std::vector<std::pair<std::string, std::string>> renames;  // shuffled path -> reference path
};

Jobs MakeJobs(const std::string& name) {
  const fs::path src = fs::path(OVERLAPSCOPE_SOURCE_DIR) / "tests/data/torch_diag/w4_sync/fsdp2_straggler";
  const fs::path root = fs::path(::testing::TempDir()) / name;
  fs::remove_all(root);
  Jobs j{(root / "ref").string(), (root / "shf").string(), {}};
  fs::create_directories(j.ref);
  fs::create_directories(j.shf);
  for (int r = 0; r < 4; ++r) {
    const fs::path from = src / ("rank" + std::to_string(r) + ".json.gz");
    const std::string ref = j.ref + "/job.1" + std::to_string(r) + ".pt.trace.json.gz";
    const std::string shf = j.shf + "/job." + kShuffled[r] + ".pt.trace.json.gz";
    fs::copy_file(from, ref);
    fs::copy_file(from, shf);
    j.renames.push_back({shf, ref});
  }
  j.renames.push_back({j.shf, j.ref});  // the directory itself, last
  return j;
}

std::string Renamed(const Jobs& j, std::string s) {
  for (const auto& [from, to] : j.renames) absl::StrReplaceAll({{from, to}}, &s);
  return s;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(RankOrderCli, RanksOnlyInDistributedInfoComeInRankOrderInEveryFormat) {
  if (UnderSanitizer()) GTEST_SKIP() << "four real ranks in every format: too slow under sanitizers";
  const Jobs j = MakeJobs("rank_order_formats");
  const CliLimits big{4096, 120};
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{{},
                                                                                     {"--json"},
                                                                                     {"--markdown"},
                                                                                     {"--per-rank"},
                                                                                     {"--per-rank", "--json"},
                                                                                     {"--per-rank", "--markdown"},
                                                                                     {"--ranks", "all"}}) {
    std::vector<std::string> a{"analyze", j.shf}, b{"analyze", j.ref};
    a.insert(a.end(), flags.begin(), flags.end());
    b.insert(b.end(), flags.begin(), flags.end());
    const CliRun shf = RunCliLimited(a, big), ref = RunCliLimited(b, big);
    const std::string what = flags.empty() ? "text" : flags.back();
    ASSERT_EQ(shf.exit_code, 0) << what << ": " << shf.Describe();
    ASSERT_EQ(ref.exit_code, 0) << what << ": " << ref.Describe();
    EXPECT_TRUE(Renamed(j, shf.out) == ref.out) << what << ": the shuffled names give another report";
  }
  const std::string html_a = j.shf + ".html", html_b = j.ref + ".html";
  ASSERT_EQ(RunCliLimited({"analyze", j.shf, "--html", html_a}, big).exit_code, 0);
  ASSERT_EQ(RunCliLimited({"analyze", j.ref, "--html", html_b}, big).exit_code, 0);
  EXPECT_TRUE(Renamed(j, ReadFile(html_a)) == ReadFile(html_b)) << "--html: the shuffled names give another page";
  // The rows of the overview in rank order (not 1, 3, 2, 0 as the names sort).
  const CliRun text = RunCliLimited({"analyze", j.shf}, big);
  size_t at = 0;
  for (int r = 0; r < 4; ++r) {
    const size_t next = text.out.find("== rank " + std::to_string(r) + " ", at);
    ASSERT_NE(next, std::string::npos) << "rank " << r << " block missing or out of order";
    at = next;
  }
}

TEST(RankOrderCli, DiffAndExportFollowTheRankOrder) {
  if (UnderSanitizer()) GTEST_SKIP() << "four real ranks: too slow under sanitizers";
  const Jobs j = MakeJobs("rank_order_diff");
  const CliLimits big{4096, 120};
  for (const char* fmt : {"--json", "--markdown"}) {
    const CliRun shf = RunCliLimited({"diff", j.ref, j.shf, fmt}, big);
    const CliRun ref = RunCliLimited({"diff", j.ref, j.ref, fmt}, big);
    ASSERT_EQ(shf.exit_code, 0) << shf.Describe();
    EXPECT_TRUE(Renamed(j, shf.out) == ref.out) << fmt << ": each rank must be compared with itself";
  }
  const std::string out = fs::path(j.shf).parent_path().string();
  for (const char* ext : {".pftrace", ".json"}) {
    const std::string a = out + "/shf" + ext, b = out + "/ref" + ext;
    ASSERT_EQ(RunCliLimited({"export", j.shf, "-o", a}, big).exit_code, 0);
    ASSERT_EQ(RunCliLimited({"export", j.ref, "-o", b}, big).exit_code, 0);
    if (std::string(ext) == ".json") {  // one file per rank, named by rank
      for (int r = 0; r < 4; ++r) {
        const std::string suffix = ".rank" + std::to_string(r) + ".json";
        EXPECT_TRUE(Renamed(j, ReadFile(out + "/shf" + suffix)) == ReadFile(out + "/ref" + suffix)) << suffix;
      }
    } else {
      EXPECT_TRUE(Renamed(j, ReadFile(a)) == ReadFile(b)) << "Perfetto: processes in another order";
    }
  }
}

}  // namespace
}  // namespace overlapscope::testing
