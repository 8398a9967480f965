// A generated job on several hosts whose clocks disagree (bench/multirank/gen_job.h
// ranks_per_host): clock alignment moves every rank of a non-reference host, and the per-rank
// reduction moves their reduced parts instead of reading those ranks again (engine/reduce.h) —
// the report is still the whole-model report byte for byte, the clock errors are found, and the
// injected straggler is still the last rank of every collective.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench/multirank/gen_job.h"
#include "engine/engine.h"
#include "engine/reduce.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace overlapscope::engine {
namespace {

namespace fs = std::filesystem;

TEST(MultiHostJob, ShiftedHostsAreMovedNotReducedAgain) {
  bench::JobSpec spec;
  spec.template_path = std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/kineto/ag_overlap/rank0.json";
  spec.out_dir = (fs::temp_directory_path() / ("ovs_hosts_" + std::to_string(::getpid()))).string();
  spec.ranks = 12;
  spec.ranks_per_host = 4;  // node0..node2, clocks 0, 12.345, 24.690 µs ahead
  spec.tiles = 6;
  spec.jitter_ns = 20000;
  spec.straggler = 5;
  spec.straggler_delay_ns = 300000;
  ASSERT_TRUE(bench::WriteJob(spec).ok());

  auto s = Load({spec.out_dir});
  ASSERT_TRUE(s.ok()) << s.status();
  AnalyzeOptions o;
  o.critical_path = false;
  auto a = Analyze(*s, o);
  ASSERT_TRUE(a.ok()) << a.status();
  const std::string whole = *RenderReport(*a, ReportFormat::kJson);
  ReduceOptions ro;
  ro.jobs = 2;
  auto per = AnalyzePerRank({spec.out_dir}, AnalyzeOptions{}, ro);
  ASSERT_TRUE(per.ok()) << per.status();
  fs::remove_all(spec.out_dir);
  EXPECT_EQ(*RenderReport(per->report, ReportFormat::kJson), whole);
  EXPECT_EQ(*RenderReport(per->report, ReportFormat::kText), *RenderReport(*a, ReportFormat::kText));
  EXPECT_EQ(per->stats.ranks, 12);
  EXPECT_EQ(per->stats.shifted, 8) << "the ranks of the two hosts moved onto the reference host's clock";

  const nlohmann::json j = nlohmann::json::parse(whole);
  ASSERT_TRUE(j["clock_alignment"]["applied"].get<bool>()) << j["clock_alignment"].dump();
  int hosts = 0;
  for (const auto& h : j["clock_alignment"]["hosts"]) {
    const std::string name = h["host"];
    ASSERT_EQ(name.rfind("node", 0), 0u) << name;
    const int64_t error_ns = std::stoll(name.substr(4)) * spec.host_clock_step_ns;
    const int64_t ref_error_ns =
        std::stoll(j["clock_alignment"]["reference_host"].get<std::string>().substr(4)) * spec.host_clock_step_ns;
    // Alignment takes the median of collective end differences, which the jitter blurs.
    EXPECT_LT(std::llabs(h["offset_ns"].get<int64_t>() + (error_ns - ref_error_ns)), spec.jitter_ns) << name;
    ++hosts;
  }
  EXPECT_EQ(hosts, 3);
  const nlohmann::json& inst = j["collectives_across_ranks"]["instances"];
  ASSERT_GT(inst.size(), 0u);
  for (const auto& i : inst) EXPECT_EQ(i["last_rank"], 5) << i.dump().substr(0, 300);
}

}  // namespace
}  // namespace overlapscope::engine
