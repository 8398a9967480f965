// `overlapscope diff` on real pairs (tests/data/kineto): the verdict's overlap and step-time
// changes, a trace against itself, a saved report against its trace, --fail-on (exit 3), and a
// pair made by slowing one kernel of a real trace by 20 % (SlowKernel below).
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

Result Overlapscope(const std::string& args) {
  const std::string err_path = std::filesystem::temp_directory_path() / ("diff_cli_err_" + std::to_string(getpid()));
  std::string cmd = std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope " + args + " 2>" + err_path;
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream e(err_path);
  r.err.assign(std::istreambuf_iterator<char>(e), std::istreambuf_iterator<char>());
  std::filesystem::remove(err_path);
  return r;
}

const std::string kKineto = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/";

nlohmann::json DiffJson(const std::string& base, const std::string& test) {
  Result r = Overlapscope("diff " + base + " " + test + " --json");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& VerdictRank(const nlohmann::json& d, const std::string& label) {
  for (const auto& r : d["verdict"]["ranks"])
    if (r["label"] == label) return r;
  static const nlohmann::json kNone;
  ADD_FAILURE() << "no " << label;
  return kNone;
}

// Slows every kernel whose name contains `needle` by `factor` and stretches the timeline at its
// start: every event (host or GPU) starting after it moves later by the added time, every event
// spanning its start (a sync call, a step range) grows by it. Returns the number of kernels slowed.
int SlowKernel(const std::string& in, const std::string& out, const std::string& needle, double factor) {
  std::ifstream f(in);
  nlohmann::json j = nlohmann::json::parse(f);
  auto& ev = j["traceEvents"];
  std::vector<std::pair<double, double>> slowed;  // (start us, added us)
  auto is_target = [&](const nlohmann::json& e) {
    return e.value("cat", "") == "kernel" && e.value("name", "").find(needle) != std::string::npos;
  };
  for (const auto& e : ev)
    if (is_target(e)) slowed.push_back({e["ts"].get<double>(), e["dur"].get<double>() * (factor - 1)});
  for (auto& e : ev) {
    if (!e.contains("ts") || !e["ts"].is_number()) continue;
    const double ts = e["ts"].get<double>();
    const bool target = is_target(e);
    const bool has_dur = e.contains("dur") && e["dur"].is_number();
    const double dur = has_dur ? e["dur"].get<double>() : 0;
    double shift = 0, grow = 0;
    for (const auto& [s, added] : slowed) {
      if (s < ts)
        shift += added;
      else if (has_dur && !(target && s == ts) && s < ts + dur)
        grow += added;
    }
    e["ts"] = ts + shift;
    if (has_dur) e["dur"] = (target ? dur * factor : dur) + grow;
  }
  std::ofstream o(out);
  o << j.dump();
  return static_cast<int>(slowed.size());
}

TEST(DiffCli, AllGatherSequentialVsOverlapped) {
  const nlohmann::json d = DiffJson(kKineto + "ag_sequential", kKineto + "ag_overlap");
  EXPECT_EQ(d["schema"], "overlapscope.diff/1");
  // Overlap from the golden reports: rank 0 0 -> 0.7868, rank 1 0 -> 0.3110.
  EXPECT_NEAR(VerdictRank(d, "rank 0")["overlap_ratio"]["delta"].get<double>(), 0.78679, 1e-4);
  EXPECT_NEAR(VerdictRank(d, "rank 1")["overlap_ratio"]["delta"].get<double>(), 0.31095, 1e-4);
  // Step times by hand from the goldens' iterations (gpu_end - max(gpu_start, previous gpu_end)):
  // rank 1 498140 -> 418525 ns (faster); rank 0 445021 -> 504827 (its all-gather waits for rank 1
  // in iteration 3: 629755 ns). Three iterations a side: not judged.
  const auto& r1 = VerdictRank(d, "rank 1")["step_time_ns"];
  EXPECT_EQ(r1["base_median"], 498140);
  EXPECT_EQ(r1["test_median"], 418525);
  EXPECT_EQ(r1["significance"], "not judged");
  const auto& r0 = VerdictRank(d, "rank 0")["step_time_ns"];
  EXPECT_EQ(r0["base_median"], 445021);
  EXPECT_EQ(r0["test_median"], 504827);
  Result text = Overlapscope("diff " + kKineto + "ag_sequential " + kKineto + "ag_overlap");
  EXPECT_NE(text.out.find("rank 1: step time 498.1 µs -> 418.5 µs (-79.6 µs, -16.0%), not judged (3 vs 3 "
                          "iterations; 5 a side needed); overlap 0.0% -> 31.1% (+31.1 points)"),
            std::string::npos)
      << text.out;
  // The CI gate: overlap must not drop. It rose: pass; the reverse comparison fails with exit 3.
  EXPECT_EQ(
      Overlapscope("diff " + kKineto + "ag_sequential " + kKineto + "ag_overlap --fail-on 'overlap_ratio<-0.05'").code,
      0);
  Result rev =
      Overlapscope("diff " + kKineto + "ag_overlap " + kKineto + "ag_sequential --fail-on 'overlap_ratio<-0.05'");
  EXPECT_EQ(rev.code, 3) << rev.err;
  EXPECT_NE(rev.err.find("FAIL rank 0: overlap_ratio 78.7% -> 0.0% (-78.7 points) violates overlap_ratio<-0.05"),
            std::string::npos)
      << rev.err;
}

TEST(DiffCli, AllToAllSyncVsAsyncAgreesWithMeasuredSteps) {
  // The workload measured its own steps without the profiler (timings.json, rank 0, 20
  // iterations): median 3.630 ms sync, 3.815 ms async: async was slower. The traces agree.
  const nlohmann::json d = DiffJson(kKineto + "a2a_sync", kKineto + "a2a_async");
  for (const char* rank : {"rank 0", "rank 1"}) {
    const auto& v = VerdictRank(d, rank);
    EXPECT_GT(v["step_time_ns"]["test_median"].get<double>(), v["step_time_ns"]["base_median"].get<double>()) << rank;
    EXPECT_GT(v["overlap_ratio"]["delta"].get<double>(), 0.2) << rank;  // 0 -> 21 % / 24 %
  }
  EXPECT_NEAR(VerdictRank(d, "rank 0")["overlap_ratio"]["test"].get<double>(), 0.211, 1e-3);
}

TEST(DiffCli, IdleByCauseAndCollectivesOnTheAllGatherPair) {
  const nlohmann::json d = DiffJson(kKineto + "ag_sequential", kKineto + "ag_overlap");
  // Idle by cause per iteration (report 1.7). The golden report of ag_sequential has one
  // launch-bound gap (51520 ns) and one dependency gap (8096 ns) on rank 0, both ended in its
  // first iteration; ag_overlap none on rank 0. Per-iteration medians are 0 on both sides, so the
  // verdict has no idle change for rank 0 (a first-iteration gap does not move the median step).
  for (const auto& r : d["ranks"]) {
    bool path = false;
    for (const auto& s : r["per_iteration"]) {
      path = path || s["metric"] == "critical_path_ns";
      if (r["label"] == "rank 0" && s["metric"] == "gap_launch_bound_ns") {
        EXPECT_EQ(s["base"], nlohmann::json::parse("[51520, 0, 0]"));
        EXPECT_EQ(s["test"], nlohmann::json::parse("[0, 0, 0]"));
        EXPECT_EQ(s["base_median"], 0);
      }
      if (r["label"] == "rank 0" && s["metric"] == "gap_dependency_ns")
        EXPECT_EQ(s["base"], nlohmann::json::parse("[8096, 0, 0]"));
    }
    EXPECT_TRUE(path) << r["label"];
  }
  for (const auto& c : d["verdict"]["changes"])
    EXPECT_NE(c["what"].get<std::string>().rfind("GPU idle (", 0), 0u) << c.dump();
  // Findings by kind (golden reports): the sequential all-gather runs on the compute stream, 3
  // findings a rank; overlapped, none.
  for (const auto& r : d["ranks"]) {
    EXPECT_EQ(r["summary"]["finding_collective_on_compute_stream"]["base"], 3) << r["label"];
    EXPECT_EQ(r["summary"]["finding_collective_on_compute_stream"]["test"], 0) << r["label"];
  }
  // The all-gathers of one size and communicator: exposed time on both sides, and less of it
  // once overlapped.
  ASSERT_EQ(d["collectives"].size(), 1u) << d["collectives"].dump();
  const auto& c = d["collectives"][0]["exposed_ns"];
  ASSERT_FALSE(c["base"].is_null());
  ASSERT_FALSE(c["test"].is_null());
  EXPECT_LT(c["delta"].get<double>(), 0);
}

TEST(DiffCli, ExposedTimePerCollectiveAddsUpToTheDevice) {
  // Every all-gather of ag_overlap is matched across the ranks, so each rank's exposed times
  // over the instances sum to its device's collectives.exposed_ns (computed from the overlap
  // analysis' own list, not from the matching).
  Result r = Overlapscope("analyze " + kKineto + "ag_overlap --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["collectives_across_ranks"]["unmatched"], 0);
  for (size_t rank = 0; rank < 2; ++rank) {
    int64_t sum = 0;
    for (const auto& ci : j["collectives_across_ranks"]["instances"])
      for (const auto& p : ci["ranks"])
        if (p["rank"] == rank) sum += p["exposed_ns"].get<int64_t>();
    EXPECT_EQ(sum, j["ranks"][rank]["devices"][0]["collectives"]["exposed_ns"].get<int64_t>()) << rank;
  }
}

TEST(DiffCli, SidesAtOnceAndOneAfterTheOtherAgree) {
  const std::string a = kKineto + "a2a_sync", b = kKineto + "a2a_async";
  Result at_once = Overlapscope("diff " + a + " " + b + " --json");
  Result sequential = Overlapscope("diff " + a + " " + b + " --json --sequential");
  EXPECT_EQ(at_once.code, 0) << at_once.err;
  EXPECT_EQ(sequential.code, 0) << sequential.err;
  EXPECT_EQ(at_once.out, sequential.out);
  // A bad side fails the same way in both modes (the other side's work is discarded).
  const std::string bad = std::string(OVERLAPSCOPE_TEST_DATA) + "/golden/inputs.txt";
  EXPECT_EQ(Overlapscope("diff " + a + " " + bad).code, 2);
  EXPECT_EQ(Overlapscope("diff " + bad + " " + a + " --sequential").code, 2);
}

TEST(DiffCli, TraceAgainstItselfChangesNothing) {
  const std::string t = kKineto + "ag_overlap";
  Result r = Overlapscope("diff " + t + " " + t +
                          " --fail-on 'step_time_ns>0' --fail-on 'step_time_ns<0' --fail-on 'overlap_ratio<-0.05'"
                          " --fail-on 'exposed_comm_ns>+10%' --fail-on 'exposed_comm_ns<-0%' --fail-on 'gpu_idle_ns>0'"
                          " --fail-on 'findings>0' --fail-on 'blocked_ns>+1%'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no change moved the step time"), std::string::npos) << r.out;
  const nlohmann::json d = DiffJson(t, t);
  EXPECT_TRUE(d["verdict"]["changes"].empty());
  // Any --fail-on: every metric, both directions, absolute and relative, at 0.
  std::string gates;
  for (const auto& [metric, v] : d["ranks"][0]["summary"].items())
    for (const char* g : {">0", "<0", ">+0%", "<-0%"}) gates += " --fail-on '" + metric + g + "'";
  Result all = Overlapscope("diff " + t + " " + t + gates);
  EXPECT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(all.err.find("FAIL"), std::string::npos) << all.err;
  for (const auto& rank : d["ranks"])
    for (const auto& [metric, v] : rank["summary"].items())
      if (!v["delta"].is_null()) {
        EXPECT_EQ(v["delta"].get<double>(), 0) << metric;
      }
}

TEST(DiffCli, SavedReportAgainstItsTrace) {
  const std::string t = kKineto + "a2a_async";
  const std::string saved = std::filesystem::temp_directory_path() / "diff_cli_saved.json";
  ASSERT_EQ(std::system((std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope analyze " + t +
                         " --json --top 100 >" + saved)
                            .c_str()),
            0);
  const nlohmann::json d = DiffJson(saved, t);
  EXPECT_TRUE(d["verdict"]["changes"].empty()) << d["verdict"].dump();
  EXPECT_EQ(d["base"]["report_schema_version"], d["test"]["report_schema_version"]);
  Result bad = Overlapscope("diff " + std::string(OVERLAPSCOPE_TEST_DATA) + "/golden/inputs.txt " + t);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(Overlapscope("diff " + t).code, 64);
  EXPECT_EQ(Overlapscope("diff " + t + " " + t + " --fail-on 'no_such_metric>0'").code, 64);
  std::filesystem::remove(saved);
}

TEST(DiffCli, SlowedKernelIsNamedFirst) {
  const std::string base = kKineto + "d2h_blocking/rank0.json";
  const std::string slow = std::filesystem::temp_directory_path() / "diff_cli_slow.json";
  ASSERT_EQ(SlowKernel(base, slow, "AbsFunctor", 1.2), 3);
  const nlohmann::json d = DiffJson(base, slow);
  ASSERT_FALSE(d["verdict"]["changes"].empty());
  const auto& first = d["verdict"]["changes"][0];
  EXPECT_NE(first["what"].get<std::string>().find("AbsFunctor"), std::string::npos) << first.dump();
  // +20 % of the kernel's time per iteration (golden d2h_blocking rank 0: 3 instances in 3
  // iterations, ~31.3 µs each; ns rounding of the rewritten µs times: a few ns).
  EXPECT_NEAR(first["delta_ns"].get<double>(), 0.2 * first["base_ns"].get<double>(), 5);
  EXPECT_GT(first["delta_ns"].get<double>(), 6000);
  std::filesystem::remove(slow);
}

}  // namespace
