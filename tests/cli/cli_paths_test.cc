// `analyze` with the critical path, straggler causes and stream concurrency (METRICS §8, §9):
// --group errors exit 64, and properties of the JSON sections on the bundled two-rank sample.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

struct Result {
  int code = -1;
  std::string out;
};

Result RunOs(const std::string& args, bool with_stderr = true) {
  std::string cmd = std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope " + args + (with_stderr ? " 2>&1" : "");
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

const std::string kSample = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/samples/pytorch_ag_overlap";
const char* kCats[] = {"compute",      "comm",          "memory",  "host_launch", "host_untraced",
                       "host_blocked", "gpu_wait_host", "gpu_gap", "wait_peers"};

int64_t SumOf(const nlohmann::json& comp) {
  int64_t s = 0;
  for (const char* c : kCats) s += comp[std::string(c) + "_ns"].get<int64_t>();
  return s;
}

TEST(CliPaths, GroupErrorsExit64) {
  for (const char* bad : {"--group noequals", "--group '=x'", "--group 'a=('", "--group a=x --group a=y"}) {
    Result r = RunOs("analyze " + kSample + " " + bad);
    EXPECT_EQ(r.code, 64) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("--group"), std::string::npos) << r.out;
  }
}

TEST(CliPaths, SectionsAddUpOnTheSample) {
  Result r = RunOs("analyze " + kSample + " --json --group 'nccl=nccl' --group 'gemm=nvjet'", false);
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 2000);
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["schema_version"], "1.11");
  const auto& cp = j["critical_path"];
  ASSERT_GT(cp["iterations"].get<int>(), 0);
  // The walk leaves no hole and counts nothing twice: every path's parts add up to the time
  // between where it starts and where it ends (the job's path and each rank's own path).
  for (const auto& it : cp["per_iteration"]) {
    EXPECT_EQ(SumOf(it["composition"]), it["end_ns"].get<int64_t>() - it["start_ns"].get<int64_t>());
    for (const auto& o : it["own"])
      EXPECT_EQ(SumOf(o["composition"]), o["end_ns"].get<int64_t>() - o["start_ns"].get<int64_t>());
  }
  // Groups: both found activities; no pair overlaps longer than its shorter set is busy.
  ASSERT_EQ(j["stream_concurrency"]["groups"].size(), 2u);
  for (const auto& g : j["stream_concurrency"]["groups"]) EXPECT_GT(g["activities"].get<int>(), 0) << g;
  for (const auto& d : j["stream_concurrency"]["devices"])
    for (const char* kind : {"streams", "groups"})
      for (const auto& p : d["whole"][kind]) {
        EXPECT_LE(p["concurrent_ns"].get<int64_t>(), std::min(p["a_ns"].get<int64_t>(), p["b_ns"].get<int64_t>()));
      }
  Result text = RunOs("analyze " + kSample + " --group 'nccl=nccl' --group 'gemm=nvjet'");
  EXPECT_NE(text.out.find("== critical path"), std::string::npos);
  EXPECT_NE(text.out.find("groups nccl & gemm"), std::string::npos) << text.out;
}

}  // namespace
