// `overlapscope export --per-rank` through the binary: what selects the mode, the files it
// writes and its exit codes (README "Exit codes"; engine/export_job.h is tested in tests/scale).
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

Result RunOvs(const std::string& args) {
  const std::string cmd = std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

const std::string kJob = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/ag_overlap";

TEST(ExportPerRankCli, DirectoryOutputWritesRankFilesAndOverview) {
  const std::string out = ::testing::TempDir() + "/export_per_rank_cli";
  fs::remove_all(out);
  Result r = RunOvs("export " + kJob + " -o " + out + "/");  // a trailing '/' selects the mode
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f : {"rank0.pftrace", "rank1.pftrace", "overview.pftrace"})
    EXPECT_GT(fs::file_size(fs::path(out) / f), 1000u) << f;
  EXPECT_NE(r.out.find("wrote 2 rank traces"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("perfetto overview): 2 ranks"), std::string::npos) << r.out;
  // An existing directory selects it too; --jobs and --memory-budget as for analyze.
  r = RunOvs("export " + kJob + " -o " + out + " --jobs 1 --memory-budget 64M");
  EXPECT_EQ(r.code, 0) << r.out;
  fs::remove_all(out);
}

TEST(ExportPerRankCli, ExitCodes) {
  const std::string out = ::testing::TempDir() + "/export_per_rank_codes";
  EXPECT_EQ(RunOvs("export " + kJob + " -o " + out + " --per-rank --format chrome").code, 64);
  EXPECT_EQ(RunOvs("export " + kJob + " -o " + out + " --jobs 0").code, 64);
  EXPECT_EQ(RunOvs("export " + kJob + " -o " + out + " --memory-budget lots").code, 64);
  EXPECT_EQ(RunOvs("export " + kJob + "/no_such_rank.json -o " + out + " --per-rank").code, 2);
  EXPECT_EQ(RunOvs("export " + kJob + " -o /proc/version/sub --per-rank").code, 1);
  Result help = RunOvs("export --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--per-rank"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("overview.pftrace"), std::string::npos) << help.out;
  fs::remove_all(out);
}

}  // namespace
