// The workloads' SM clock sampler (workloads/sm_clock.h) on a real GPU (label gpu): while resumed
// it samples the clock, the board power and the clock event reasons through NVML; while paused it
// samples nothing. Skips visibly without a GPU or without NVML.
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "workload_util.h"
#include "workloads/sm_clock.h"

namespace overlapscope::workloads_test {
namespace {

TEST(WorkloadSmClock, SamplesClockPowerAndReasonsOnlyWhileResumed) {
  WORKLOAD_REQUIRE_GPUS(1);
  auto s = workloads::SmClockSampler::Start(5);
  if (!s) GTEST_SKIP() << "libnvidia-ml.so.1 not loadable or no visible GPU in NVML: sampler test skipped";
  EXPECT_EQ(s->Summary(), "");  // starts paused
  s->Resume();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  s->Pause();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a sample in flight lands
  const std::string sum = s->Summary();
  std::printf("%s\n", sum.c_str());
  EXPECT_NE(sum.find("SM clock during the timed phases (NVML, every 5 ms): GPU 0 median "), std::string::npos) << sum;
  EXPECT_NE(sum.find(" W, power cap "), std::string::npos) << sum;
  EXPECT_NE(sum.find("% of samples)"), std::string::npos) << sum;
  std::map<std::string, double> fig;
  s->AddFigures(fig);
  EXPECT_GT(fig["sm_clock_mhz_gpu0_median"], 100);
  EXPECT_LE(fig["sm_clock_mhz_gpu0_min"], fig["sm_clock_mhz_gpu0_median"]);
  EXPECT_GE(fig["sm_clock_mhz_gpu0_max"], fig["sm_clock_mhz_gpu0_median"]);
  EXPECT_GT(fig["power_w_gpu0_median"], 5);  // an idle H100 draws ~70 W
  EXPECT_LT(fig["power_w_gpu0_median"], 2000);
  ASSERT_EQ(fig.count("clock_power_cap_pct_gpu0"), 1u);
  EXPECT_GE(fig["clock_power_cap_pct_gpu0"], 0);
  EXPECT_LE(fig["clock_power_cap_pct_gpu0"], 100);
  // Paused: nothing more is sampled.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(s->Summary(), sum);
}

}  // namespace
}  // namespace overlapscope::workloads_test
