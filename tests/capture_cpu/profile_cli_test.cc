// `overlapscope profile` after its target: reads the spill files the target's processes left in
// the output directory, writes one trace per rank and prints the summary. The target here is a
// shell that drops hand-made spill files where the injection would have written them, so this
// runs without a GPU.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "importers/ovspill/spill_reader.h"

namespace overlapscope::import {
using namespace ::overlapscope::formats;  // the record layouts the tests encode
namespace {

std::string OneRankSpill(int rank) {
  std::string b;
  SpillEncoder::AppendFileHeader(&b);
  SpillEncoder::AppendString(&b, 1, "_Z4gemmv");
  SpillEncoder::AppendString(&b, 2, "cudaLaunchKernel");
  SpillEncoder::Append(&b, SpillType::kProcess, SpillProcess{1000 + rank, rank, 2, 0, 0, 0, 0});
  SpillEncoder::Append(&b, SpillType::kApi, SpillApi{1000, 2000, 0, 5, 1, 211, 0, 2, 0, {}});
  SpillKernel k{};
  k.start = 3000, k.end = 9000, k.stream = 7, k.correlation = 1, k.name_sid = 1;
  SpillEncoder::Append(&b, SpillType::kKernel, k);
  SpillEncoder::Append(&b, SpillType::kEnd, SpillEnd{10000, 0, 0});
  return SpillEncoder::Frame(b);
}

struct ProfileRun {
  int rc = -1;
  std::string out;
};

ProfileRun Profile(const std::string& args) {
  const std::string log = std::string(::testing::TempDir()) + "profile_cli." + std::to_string(::getpid()) + ".log";
  ProfileRun r;
  const int status = std::system(
      (std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope profile " + args + " > " + log + " 2>&1").c_str());
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(log);
  std::stringstream ss;
  ss << f.rdbuf();
  r.out = ss.str();
  std::remove(log.c_str());
  return r;
}

bool Exists(const std::string& p) { return ::access(p.c_str(), F_OK) == 0; }

TEST(ProfileCli, ReadsEveryRankAndWritesTraces) {
  const std::string dir = std::string(::testing::TempDir()) + "profile_cli." + std::to_string(::getpid());
  const std::string src = dir + ".src";
  ::mkdir(src.c_str(), 0755);
  for (int rank = 0; rank < 2; ++rank) {
    std::ofstream(src + "/rank" + std::to_string(rank) + ".ovspill", std::ios::binary) << OneRankSpill(rank);
  }
  // The "target" copies the files into $OVERLAPSCOPE_SPILL_DIR, which profile sets.
  const std::string target = "-- sh -c 'cp " + src + "/*.ovspill \"$OVERLAPSCOPE_SPILL_DIR\"/'";
  ProfileRun r = Profile("-o " + dir + " " + target);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Exists(dir + "/rank0.pftrace")) << r.out;
  EXPECT_TRUE(Exists(dir + "/rank1.pftrace")) << r.out;
  EXPECT_NE(r.out.find("captured 2 process(es)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 1 pid 1001"), std::string::npos) << r.out;

  // The raw captures open with the other commands too (cli/load.cc reads .ovspill).
  const int info = std::system((std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope info " + dir +
                                "/rank0.ovspill " + dir + "/rank1.ovspill > /dev/null")
                                   .c_str());
  EXPECT_TRUE(WIFEXITED(info) && WEXITSTATUS(info) == 0);

  r = Profile("-o " + dir + " --trace-format chrome " + target);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_TRUE(Exists(dir + "/rank0.json")) << r.out;
  EXPECT_TRUE(Exists(dir + "/rank1.json")) << r.out;

  // The output directory itself (README: `overlapscope analyze prof/`) stands for its spill
  // files, not for the rank<R>.json exports next to them: both ranks, once each.
  const std::string listing = dir + ".info.txt";
  const int dir_info = std::system(
      (std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope info --json " + dir + " > " + listing).c_str());
  EXPECT_TRUE(WIFEXITED(dir_info) && WEXITSTATUS(dir_info) == 0);
  std::ifstream in(listing);
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("rank0.ovspill"), std::string::npos) << json.substr(0, 2000);
  EXPECT_NE(json.find("rank1.ovspill"), std::string::npos) << json.substr(0, 2000);
  EXPECT_EQ(json.find("rank0.json"), std::string::npos) << json.substr(0, 2000);

  // A target that fails still gets its traces written; the exit code says it failed (4).
  r = Profile("-o " + dir + " -- sh -c 'cp " + src + "/rank0.ovspill \"$OVERLAPSCOPE_SPILL_DIR\"/; exit 3'");
  EXPECT_EQ(r.rc, 4) << r.out;
  EXPECT_NE(r.out.find("captured 1 process(es)"), std::string::npos) << r.out;

  // Nothing captured, bad usage.
  r = Profile("-o " + dir + " -- true");
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("nothing captured"), std::string::npos) << r.out;
  EXPECT_EQ(Profile("-o " + dir).rc, 64);
  EXPECT_EQ(Profile("--trace-format svg -- true").rc, 64);
  std::system(("rm -rf '" + dir + "' '" + src + "'").c_str());
}

// Capture-range flags: bad values are bad command lines (64) that name the value; good ones reach
// the target as the injection library's variables (here a shell prints them).
TEST(ProfileCli, CaptureRangeFlags) {
  for (const char* bad : {"--capture-range=cudaprofilerapi", "--capture-range=nvtx", "--nvtx-capture=step",
                          "--capture-range-end=repeat:0", "--delay -1", "--duration 1e3", "--api=some"}) {
    ProfileRun r = Profile(std::string(bad) + " -- true");
    EXPECT_EQ(r.rc, 64) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("overlapscope profile: "), std::string::npos) << r.out;
  }
  const std::string dir = std::string(::testing::TempDir()) + "profile_range." + std::to_string(::getpid());
  ProfileRun r = Profile(
      "-o " + dir +
      " --capture-range=nvtx --nvtx-capture=step@Lib --capture-range-end=stop --delay 0.5 --duration 2 --api=all "
      "-- sh -c 'echo \"ENV $OVERLAPSCOPE_CAPTURE_RANGE $OVERLAPSCOPE_NVTX_CAPTURE $OVERLAPSCOPE_CAPTURE_RANGE_END "
      "$OVERLAPSCOPE_DELAY $OVERLAPSCOPE_DURATION $OVERLAPSCOPE_API T0=${OVERLAPSCOPE_T0_NS:+set}\"'");
  EXPECT_NE(r.out.find("ENV nvtx step@Lib stop 0.5 2 all T0=set"), std::string::npos) << r.out;
  EXPECT_EQ(r.rc, 1) << r.out;  // the shell initialized no CUDA: nothing captured
  // Without the flags, variables from the caller's environment do not reach the target.
  ::setenv("OVERLAPSCOPE_CAPTURE_RANGE", "nvtx", 1);
  ::setenv("OVERLAPSCOPE_API", "all", 1);
  r = Profile("-o " + dir + " -- sh -c 'echo \"ENV [$OVERLAPSCOPE_CAPTURE_RANGE] [$OVERLAPSCOPE_API]\"'");
  ::unsetenv("OVERLAPSCOPE_CAPTURE_RANGE");
  ::unsetenv("OVERLAPSCOPE_API");
  EXPECT_NE(r.out.find("ENV [] []"), std::string::npos) << r.out;
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace overlapscope::import
