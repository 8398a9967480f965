// Parsing of the capture-range settings (capture/cupti/capture_range.h) and the profile
// command line that carries them.
#include "capture/cupti/capture_range.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace overlapscope::cupti {
namespace {

TEST(CaptureRangeParse, Kinds) {
  RangeConfig c;
  EXPECT_EQ(ParseCaptureRange("cudaProfilerApi", &c), "");
  EXPECT_EQ(c.trigger, RangeTrigger::kCudaProfilerApi);
  EXPECT_EQ(ParseCaptureRange("nvtx", &c), "");
  EXPECT_EQ(c.trigger, RangeTrigger::kNvtx);
  EXPECT_EQ(ParseCaptureRange("none", &c), "");
  EXPECT_EQ(c.trigger, RangeTrigger::kNone);
  const std::string err = ParseCaptureRange("cudaprofilerapi", &c);
  EXPECT_NE(err.find("'cudaprofilerapi'"), std::string::npos) << err;
  EXPECT_NE(err.find("cudaProfilerApi"), std::string::npos) << err;
}

TEST(CaptureRangeParse, NvtxNameAndDomain) {
  RangeConfig c;
  EXPECT_EQ(ParseNvtxCapture("train", &c), "");
  EXPECT_EQ(c.nvtx_name, "train");
  EXPECT_EQ(c.nvtx_domain, "");
  EXPECT_EQ(ParseNvtxCapture("step@MyLib", &c), "");
  EXPECT_EQ(c.nvtx_name, "step");
  EXPECT_EQ(c.nvtx_domain, "MyLib");
  // The last '@' separates: a name may hold one.
  EXPECT_EQ(ParseNvtxCapture("a@b@Dom", &c), "");
  EXPECT_EQ(c.nvtx_name, "a@b");
  EXPECT_EQ(c.nvtx_domain, "Dom");
  EXPECT_NE(ParseNvtxCapture("", &c), "");
  EXPECT_NE(ParseNvtxCapture("@Dom", &c), "");
  EXPECT_NE(ParseNvtxCapture("name@", &c), "");
  EXPECT_NE(ParseNvtxCapture("name@*", &c), "");
}

TEST(CaptureRangeParse, RangeEnd) {
  RangeConfig c;
  EXPECT_EQ(ParseRangeEnd("stop", &c), "");
  EXPECT_EQ(c.max_windows, 1);
  EXPECT_EQ(ParseRangeEnd("repeat:3", &c), "");
  EXPECT_EQ(c.max_windows, 3);
  EXPECT_EQ(ParseRangeEnd("repeat", &c), "");
  EXPECT_EQ(c.max_windows, 0);
  for (const char* bad : {"repeat:0", "repeat:", "repeat:x", "repeat:-1", "stop-shutdown", ""})
    EXPECT_NE(ParseRangeEnd(bad, &c), "") << bad;
}

TEST(CaptureRangeParse, Seconds) {
  int64_t ns = -1;
  EXPECT_EQ(ParseSeconds("2", &ns), "");
  EXPECT_EQ(ns, 2000000000);
  EXPECT_EQ(ParseSeconds("0.5", &ns), "");
  EXPECT_EQ(ns, 500000000);
  EXPECT_EQ(ParseSeconds(".25", &ns), "");
  EXPECT_EQ(ns, 250000000);
  EXPECT_EQ(ParseSeconds("1.000000001", &ns), "");
  EXPECT_EQ(ns, 1000000001);
  EXPECT_EQ(ParseSeconds("0", &ns), "");
  EXPECT_EQ(ns, 0);
  for (const char* bad : {"", ".", "-1", "1e3", "1.0000000001", "abc", "2s", "99999999999"})
    EXPECT_NE(ParseSeconds(bad, &ns), "") << bad;
}

TEST(CaptureRangeParse, PiecesMustFit) {
  RangeConfig c;
  EXPECT_EQ(CheckRangeConfig(c), "");
  c.trigger = RangeTrigger::kNvtx;
  EXPECT_NE(CheckRangeConfig(c), "");  // nvtx without a name
  c.nvtx_name.append("x");             // (assigning a literal trips a GCC 12 -Wrestrict false positive)
  EXPECT_EQ(CheckRangeConfig(c), "");
  c.trigger = RangeTrigger::kCudaProfilerApi;
  EXPECT_NE(CheckRangeConfig(c), "");  // a name without nvtx
  RangeConfig d;
  d.max_windows = 2;
  EXPECT_NE(CheckRangeConfig(d), "");  // repeat:N without a range
}

TEST(CaptureRangeParse, NvtxMatching) {
  RangeConfig c;
  c.trigger = RangeTrigger::kNvtx;
  c.nvtx_name = "step";
  EXPECT_TRUE(NvtxMatches(c, "step", ""));
  EXPECT_FALSE(NvtxMatches(c, "step", "NCCL"));
  EXPECT_FALSE(NvtxMatches(c, "step2", ""));
  c.nvtx_domain = "NCCL";
  EXPECT_TRUE(NvtxMatches(c, "step", "NCCL"));
  EXPECT_FALSE(NvtxMatches(c, "step", ""));
}

TEST(CaptureRangeParse, FromEnvironment) {
  ::setenv(kEnvCaptureRange, "nvtx", 1);
  ::setenv(kEnvNvtxCapture, "iter@Train", 1);
  ::setenv(kEnvRangeEnd, "repeat:2", 1);
  ::setenv(kEnvDelay, "1.5", 1);
  ::setenv(kEnvDuration, "0.25", 1);
  ::setenv(kEnvT0, "1700000000123456789", 1);
  RangeConfig c;
  EXPECT_EQ(RangeConfigFromEnv(&c), "");
  EXPECT_EQ(c.trigger, RangeTrigger::kNvtx);
  EXPECT_EQ(c.nvtx_name, "iter");
  EXPECT_EQ(c.nvtx_domain, "Train");
  EXPECT_EQ(c.max_windows, 2);
  EXPECT_EQ(c.delay_ns, 1500000000);
  EXPECT_EQ(c.duration_ns, 250000000);
  EXPECT_EQ(c.t0_ns, 1700000000123456789);
  ::setenv(kEnvT0, "soon", 1);
  RangeConfig bad;
  EXPECT_NE(RangeConfigFromEnv(&bad), "");
  for (const char* v : {kEnvCaptureRange, kEnvNvtxCapture, kEnvRangeEnd, kEnvDelay, kEnvDuration, kEnvT0})
    ::unsetenv(v);
  RangeConfig none;
  EXPECT_EQ(RangeConfigFromEnv(&none), "");
  EXPECT_EQ(none.trigger, RangeTrigger::kNone);
  EXPECT_FALSE(none.timed());
}

}  // namespace
}  // namespace overlapscope::cupti
