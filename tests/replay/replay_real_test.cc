// Replay and what-if on real traces (tests/data, ../shared/traces): the replay error of every trace
// with iterations, the predictions against measured pairs, determinism, and the changes' effects.
// Bounds are the figures achieved (docs/RESULTS.md "Replay"), so a regression fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/replay.h"
#include "engine/session.h"
#include "nlohmann/json.hpp"
#include "replay_test_util.h"

namespace overlapscope::engine {
namespace {

const std::string kData = OVERLAPSCOPE_TEST_DATA;
// $OVERLAPSCOPE_SHARED_TRACES overrides ../shared/traces (a checkout elsewhere, e.g. a worktree).
const std::string kShared = std::getenv("OVERLAPSCOPE_SHARED_TRACES") != nullptr
                                ? std::getenv("OVERLAPSCOPE_SHARED_TRACES")
                                : std::string(OVERLAPSCOPE_SOURCE_DIR) + "/../shared/traces";

struct ErrorBound {
  std::string dir;
  double median, worst;  // achieved |replay error| bounds (fractions)
};

TEST(ReplayReal, ReplayErrorOnEveryTraceWithIterations) {
  // Two-rank Kineto pairs (2 x H200) and the torch_diag programs (2 and 4 x H100).
  const std::vector<ErrorBound> bounds = {
      {"kineto/ag_sequential", 0.02, 0.05},
      {"kineto/a2a_sync", 0.02, 0.05},
      {"kineto/d2h_blocking", 0.02, 0.05},
      {"kineto/d2h_nonblocking_event", 0.02, 0.05},
      {"kineto/d2h_nonblocking_nosync", 0.02, 0.05},
      {"kineto_nosync/ag_sequential", 0.02, 0.05},
      {"kineto_nosync/a2a_sync", 0.02, 0.05},
      {"kineto_nosync/d2h_blocking", 0.02, 0.05},
      {"torch_diag/w2_default/mm_ag_sequential", 0.02, 0.05},
      {"torch_diag/w4_default/mm_ag_sequential", 0.02, 0.05},
      {"torch_diag/w4_default/dtensor_a2a_eager", 0.02, 0.05},
      {"torch_diag/w4_default/fsdp2_straggler", 0.02, 0.05},
      {"torch_diag/w4_sync/fsdp2", 0.02, 0.05},
      {"torch_diag/w4_default/mm_ag_overlap", 0.02, 0.05},
      {"kineto/a2a_async", 0.02, 0.05},
      {"kineto/ag_overlap", 0.02, 0.05},
  };
  std::vector<ErrorBound> all = bounds;
  // whatif_traces.py (2 x H100, 16 steps): every program of both profiler variants and captures.
  for (const char* v : {"default", "sync"})
    for (const char* run : {"run1", "run2"})
      for (const char* p :
           {"ag_sequential", "ag_overlap", "a2a_sync", "a2a_async", "d2h_blocking", "d2h_nonblocking_event"})
        all.push_back({std::string("whatif_torch/") + v + "/" + run + "/" + p, 0.02, 0.05});
  // The same programs under NCCL settings (tools/torch_traces/README.md: whatif_torch_nccl).
  for (const char* sp : {"default/ag", "default/a2a", "proto_simple/ag", "max_nchannels_12/a2a", "proto_ll/a2a"})
    for (const char* run : {"run1", "run2"}) {
      const std::string s = sp, setting = s.substr(0, s.find('/')),
                        d = "whatif_torch_nccl/" + setting + "/" + run + "/";
      for (const char* p : s.substr(s.find('/') + 1) == "ag" ? std::vector<const char*>{"ag_sequential", "ag_overlap"}
                                                             : std::vector<const char*>{"a2a_sync", "a2a_async"})
        all.push_back({d + p, 0.02, 0.05});
    }
  // The pairs with the GEMM's shape (record_shapes; tools/torch_traces/README.md:
  // whatif_torch_shapes): GEMM rows 8192, 8448, 6144 on 2 x H100, 8192 on 4.
  for (const char* g : {"g2_m8192", "g2_m8448", "g2_m6144", "g4_m8192"})
    for (const char* run : {"run1", "run2"})
      for (const char* p : {"ag_sequential", "ag_overlap", "a2a_sync", "a2a_async"})
        all.push_back({std::string("whatif_torch_shapes/") + g + "/" + run + "/" + p, 0.02, 0.05});
  // The all-gather pair with and without record_shapes in one session (whatif_torch_race).
  for (const char* g : {"m8192_shapes", "m8192_plain", "m6144_shapes", "m6144_plain"})
    for (const char* run : {"run1", "run2"})
      for (const char* p : {"ag_sequential", "ag_overlap"})
        all.push_back({std::string("whatif_torch_race/") + g + "/" + run + "/" + p, 0.02, 0.05});
  // The pairs on 2 and 4 x H200 in alternating program order (whatif_h200).
  for (const char* g : {"g2_m8192_shapes", "g2_m8192_plain", "g4_m8192_shapes"})
    for (const char* run : {"run1", "run2"})
      for (const char* p : {"ag_sequential", "ag_overlap", "a2a_sync", "a2a_async"})
        if (std::string(g) != "g2_m8192_plain" || p[1] == 'g')
          all.push_back({std::string("whatif_h200/") + g + "/" + run + "/" + p, 0.02, 0.05});
  for (const ErrorBound& b : all) {
    const nlohmann::json j = ReplayJson(kData + "/" + b.dir);
    ASSERT_TRUE(j.contains("replay_error")) << b.dir;
    EXPECT_GT(j["replay_error"]["iterations"].get<int>(), 0) << b.dir;
    EXPECT_LE(j["replay_error"]["median_abs"].get<double>(), b.median) << b.dir;
    EXPECT_LE(j["replay_error"]["worst_abs"].get<double>(), b.worst) << b.dir;
  }
}

TEST(ReplayReal, SharedTracesReplayOrSkipVisibly) {
  if (!std::filesystem::exists(kShared)) GTEST_SKIP() << kShared << " absent";
  for (const char* dir : {"hta/trace_filter", "hta/ns_resolution_trace", "hta/nccl_parser_config"}) {
    const nlohmann::json j = ReplayJson(kShared + "/" + dir);
    ASSERT_TRUE(j.contains("replay_error")) << dir;
    EXPECT_LE(j["replay_error"]["median_abs"].get<double>(), 0.02) << dir;
    EXPECT_LE(j["replay_error"]["worst_abs"].get<double>(), 0.05) << dir;
  }
}

TEST(ReplayReal, SameInputsSameBytes) {
  auto s = Load({kData + "/kineto/a2a_sync"});
  ASSERT_TRUE(s.ok());
  ReplayRequest req;
  req.changes = {"async:/SendRecv/", "scale:compute=0.8"};
  auto a = RunReplay(*s, req, ReportFormat::kJson), b = RunReplay(*s, req, ReportFormat::kJson);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  auto text = RunReplay(*s, req, ReportFormat::kText);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->rfind("Replay error:", 0), 0u) << "the replay error comes first";
}

TEST(ReplayReal, ChangesMoveTheStepTheRightWay) {
  const std::string base = kData + "/torch_diag/w4_default/mm_ag_sequential";
  const double measured = JobStep(ReplayJson(base), "measured");
  // Compute twice as fast: shorter. Compute twice as slow: longer. Remove the GEMM: shorter.
  const nlohmann::json fast = ReplayJson(base, {"scale:compute=0.5"});
  const nlohmann::json slow = ReplayJson(base, {"scale:compute=2"});
  const nlohmann::json gone = ReplayJson(base, {"remove:/nvjet|gemm|Gemm/"});
  EXPECT_LT(JobStep(fast, "predicted"), measured);
  EXPECT_GT(JobStep(slow, "predicted"), measured);
  EXPECT_LT(JobStep(gone, "predicted"), JobStep(fast, "predicted"));
  EXPECT_GT(gone["changes"][0]["matched"].get<int64_t>(), 0);
  // A faster interconnect cannot make the step longer.
  EXPECT_LE(JobStep(ReplayJson(base, {"scale:comm=0.5"}), "predicted"), measured * 1.001);
}

struct Pair {
  std::string base, target, change;
  double bound;  // achieved |predicted (with contention) - measured target| / measured target
};

// |step - step of the other capture of the same program| / step for whatif_torch's run1/run2 (the
// run-to-run noise of one program). A program captured once cannot measure its own noise: where the
// same program was recaptured twice on the same GPU model with the same profiler settings, the spread
// between those captures, |run2 - run1| / run1 (kineto_nosync: 2 x H100, profiler defaults, no
// cuda_sync events, as whatif_torch/default; tools/replay_pairs.py RECAPTURED); else 0 (kineto, on
// H200, was never recaptured there).
double CaptureSpread(const std::string& dir, double step) {
  for (const auto& [a, b] : {std::pair<std::string, std::string>{"/run1/", "/run2/"}, {"/run2/", "/run1/"}}) {
    const size_t at = dir.find(a);
    if (at == std::string::npos) continue;
    std::string other = dir;
    other.replace(at, a.size(), b);
    return std::abs(JobStep(ReplayJson(other), "measured") - step) / step;
  }
  const std::string once = kData + "/kineto_nosync/";
  if (dir.rfind(once, 0) == 0) {
    const std::string program = dir.substr(once.size());
    const double r1 = JobStep(ReplayJson(kData + "/whatif_torch/default/run1/" + program), "measured");
    const double r2 = JobStep(ReplayJson(kData + "/whatif_torch/default/run2/" + program), "measured");
    return r1 > 0 ? std::abs(r2 - r1) / r1 : 0;
  }
  return 0;
}

// Predictions against measured pairs (docs/RESULTS.md "Replay"): the job's step (slowest rank per
// iteration, lower median over iterations) of the target run predicted from the base run. The bounds
// are the achieved errors (goal: 10 %). A change counts where it exceeds 1 % and the spread between
// two captures of the base plus that of the target (programs captured twice, or their recaptures) —
// measured or predicted alike: where the measured change counts, the prediction is right (beyond the
// bound, same direction), wrong (beyond it, opposite) or a miss (within it: no change predicted).
TEST(ReplayReal, PredictionsAgainstMeasuredPairs) {
  std::vector<Pair> pairs = {
      // make_traces.py's async all-to-all: the next layer's GEMM (record_function "gemm") waits
      // for it, the independent GEMM runs beside it. These 3-step captures measured +1.1 % (H200,
      // noise unknown: the 1 % floor) and +7.9 % (beyond the 3.5 % of its recaptures); the model
      // predicts no change (+0.0, -0.1 %): misses (RESULTS.md "Why the async all-to-all is slower":
      // the all-to-all ends 5-9 us later after the GEMM than alone, and kineto_nosync's async
      // capture ran every GEMM of GPU 1 8 % slower, with or without the all-to-all beside it).
      {"kineto/a2a_sync", "kineto/a2a_async", "async:/SendRecv/@/^gemm$/", 0.02},
      {"kineto_nosync/a2a_sync", "kineto_nosync/a2a_async", "async:/SendRecv/@/^gemm$/", 0.08},
      {"kineto/d2h_blocking", "kineto/d2h_nonblocking_event", "nosync:/cudaStreamSynchronize/", 0.05},
      {"kineto_nosync/d2h_blocking", "kineto_nosync/d2h_nonblocking_event", "nosync:/cudaStreamSynchronize/", 0.07},
      {"torch_diag/w4_default/mm_ag_sequential", "torch_diag/w4_default/mm_ag_overlap", "async:/AllGather/", 0.02},
      {"torch_diag/w2_default/mm_ag_sequential", "torch_diag/w2_default/mm_ag_overlap", "async:/AllGather/", 0.01},
      {"torch_diag/w2_sync/mm_ag_sequential", "torch_diag/w2_sync/mm_ag_overlap", "async:/AllGather/", 0.06},
      // The base's rank 0 started iteration 2 late (its peer waited 0.41 ms); the change is taken
      // per iteration (-5.8 %, its un-profiled timings -6.3 %), the profiled target ran +1.3 %.
      {"kineto/ag_sequential", "kineto/ag_overlap", "async:/AllGather/", 0.08},
      // Two of the base's 4 iterations hold host stalls (3.6 and 5.8 ms on two ranks) that the
      // replay keeps: the lower median (JobStep) leaves them out (+0.9 %; the plain median +35.7 %).
      {"torch_diag/w4_sync/mm_ag_sequential", "torch_diag/w4_sync/mm_ag_overlap", "async:/AllGather/", 0.02},
      // Rank 1 of the base started its first iteration ~0.5 ms late; under the change that wait
      // lands in the next iteration, so the median of predicted steps was +22 % off (+8.5 % change
      // where the un-profiled program gained 5.3 %): per iteration, -5.8 % and +5.9 % off. Its
      // measured change (-11 %) is within the 15.8 % its recaptures differ by: no sign to judge.
      {"kineto_nosync/ag_sequential", "kineto_nosync/ag_overlap", "async:/AllGather/", 0.06},
  };
  // whatif_traces.py (2 x H100, 16 profiled steps, each program captured twice): bounds per
  // variant/run for the all-gather, all-to-all and D2H pairs. The all-gather's prediction stays at
  // the base: these captures have no record_shapes, so the GEMM's last round is unknown (the
  // what-if says so; ReplayShapes.* for captures with it) and the model runs the GEMM first and the
  // all-gather at its end, where in 80 % of the
  // measured iterations the all-gather starts in the persistent GEMM's last tile round (45-47 us
  // early) but runs ~20 us longer there, and in 20 % it took the SMs first (RESULTS.md, h24g);
  // default/run2's base ran its GEMM 10 % slower on GPU 0 than the other captures (409 against
  // 356-386 us): +14.6 %, a change within the 15.8 % spread of its two captures.
  const std::map<std::string, std::vector<double>> bounds = {
      {"default/run1", {0.02, 0.02, 0.05}},
      {"default/run2", {0.15, 0.04, 0.04}},
      {"sync/run1", {0.06, 0.02, 0.03}},
      {"sync/run2", {0.10, 0.01, 0.02}},
  };
  for (const auto& [run, b] : bounds) {
    const std::string d = "whatif_torch/" + run + "/";
    pairs.push_back({d + "ag_sequential", d + "ag_overlap", "async:/AllGather/", b[0]});
    pairs.push_back({d + "a2a_sync", d + "a2a_async", "async:/SendRecv/@/^gemm$/", b[1]});
    pairs.push_back({d + "d2h_blocking", d + "d2h_nonblocking_event", "nosync:/cudaStreamSynchronize/", b[2]});
  }
  // whatif_torch_nccl (2 x H100, 16 steps, two captures per setting; tools/torch_traces/README.md):
  // the all-gather pair with no NCCL setting and with NCCL_PROTO=Simple, the all-to-all pair with
  // none, NCCL_MAX_NCHANNELS=12 and NCCL_PROTO=LL. Bounds: the achieved errors.
  const std::vector<std::tuple<std::string, std::string, double>> nccl = {
      {"default/run1/ag", "async:/AllGather/", 0.05},
      {"default/run2/ag", "async:/AllGather/", 0.02},
      {"proto_simple/run1/ag", "async:/AllGather/", 0.02},
      {"proto_simple/run2/ag", "async:/AllGather/", 0.07},
      {"default/run1/a2a", "async:/SendRecv/@/^gemm$/", 0.01},
      {"default/run2/a2a", "async:/SendRecv/@/^gemm$/", 0.01},
      {"max_nchannels_12/run1/a2a", "async:/SendRecv/@/^gemm$/", 0.07},
      {"max_nchannels_12/run2/a2a", "async:/SendRecv/@/^gemm$/", 0.02},
      {"proto_ll/run1/a2a", "async:/SendRecv/@/^gemm$/", 0.07},
      {"proto_ll/run2/a2a", "async:/SendRecv/@/^gemm$/", 0.01},
  };
  for (const auto& [where, change, bound] : nccl) {
    const std::string d = "whatif_torch_nccl/" + where.substr(0, where.rfind('/') + 1);
    const bool ag = where.substr(where.rfind('/') + 1) == "ag";
    pairs.push_back({d + (ag ? "ag_sequential" : "a2a_sync"), d + (ag ? "ag_overlap" : "a2a_async"), change, bound});
  }
  int right = 0, missed = 0, wrong = 0;
  for (const Pair& p : pairs) {
    const nlohmann::json b = ReplayJson(kData + "/" + p.base, {p.change});
    const nlohmann::json t = ReplayJson(kData + "/" + p.target);
    const double base = JobStep(b, "measured"), target = JobStep(t, "measured");
    const double pred = PredictedJobStep(b);
    ASSERT_GT(target, 0) << p.target;
    EXPECT_LE(std::abs(pred - target) / target, p.bound) << p.base << " -> " << p.target;
    const double noise =
        std::max(0.01, CaptureSpread(kData + "/" + p.base, base) + CaptureSpread(kData + "/" + p.target, target));
    if (std::abs(target - base) <= noise * base) continue;  // noise: no sign to judge
    if (std::abs(pred - base) <= noise * base) {
      ++missed;
      continue;
    }
    if ((pred - base) * (target - base) > 0) {
      ++right;
    } else {
      ++wrong;
      EXPECT_EQ(p.base, "kineto/ag_sequential") << "sign of " << p.base << " -> " << p.target;
    }
  }
  // Right: whatif default/run1 d2h (predicted -6.1 %, measured -2.8 %). Wrong against the profiled
  // target: kineto/ag (predicted -5.8 %, the profiled overlapped program +1.3 %, its un-profiled
  // timings -6.3 %): the prediction's change is the median of per-iteration changes since the tenth
  // round (RESULTS.md "Tenth round: late ranks"), so the base's late rank 0 (iteration 2) no longer
  // decides it; the profiled target lost the race for the SMs (the all-gather first, the GEMM
  // longer), which no base trace says. Missed (predicted within +-0.5 %): both a2a rows above and
  // the all-gathers of w4_default, w2_sync and both sync whatif captures (measured -1.7, -5.4, -5.7,
  // -8.6 %: RESULTS.md "Why the all-gather pairs miss"). whatif_torch_nccl: missed (predicted within
  // +-0.5 %) default/run1's all-gather (measured +4.7 % where its un-profiled timing says -5.5 %),
  // proto_simple/run2's all-gather (-6.3 %) and max_nchannels_12/run1's all-to-all (+6.1 %). The
  // other 21 changes are within their noise.
  EXPECT_EQ(right, 1);
  EXPECT_EQ(wrong, 1);
  EXPECT_EQ(missed, 9);
}

// A program captured once takes its noise from the recaptures of the same program on the same GPU
// model and profiler settings (kineto_nosync <- whatif_torch/default; RESULTS.md "--noise" table:
// ag_sequential 0.460 / 0.509 ms, ag_overlap 0.467 / 0.443, a2a_sync 3.931 / 3.963, a2a_async
// 3.981 / 4.090). The all-gather pair's measured change (0.527 -> 0.469 ms, -11 %) lies within
// 10.7 + 5.1 % and is not judged; the all-to-all's (3.776 -> 4.077 ms, +8.0 %) lies beyond
// 0.8 + 2.7 % and is: there the model's sign is wrong (PredictionsAgainstMeasuredPairs).
TEST(ReplayReal, SingleCaptureNoiseFromTheRecapturesOfItsProgram) {
  const std::string d = kData + "/kineto_nosync/";
  EXPECT_NEAR(CaptureSpread(d + "ag_sequential", 0), (0.509 - 0.460) / 0.460, 0.002);
  EXPECT_NEAR(CaptureSpread(d + "ag_overlap", 0), (0.467 - 0.443) / 0.467, 0.002);
  EXPECT_NEAR(CaptureSpread(d + "a2a_sync", 0), (3.963 - 3.931) / 3.931, 0.001);
  EXPECT_NEAR(CaptureSpread(d + "a2a_async", 0), (4.090 - 3.981) / 3.981, 0.001);
  EXPECT_EQ(CaptureSpread(kData + "/kineto/ag_sequential", 0.5), 0);  // H200: never recaptured
  auto change = [&](const std::string& base, const std::string& target) {
    const double b = JobStep(ReplayJson(d + base), "measured");
    return (JobStep(ReplayJson(d + target), "measured") - b) / b;
  };
  EXPECT_LT(std::abs(change("ag_sequential", "ag_overlap")),
            CaptureSpread(d + "ag_sequential", 0) + CaptureSpread(d + "ag_overlap", 0));
  EXPECT_GT(std::abs(change("a2a_sync", "a2a_async")),
            CaptureSpread(d + "a2a_sync", 0) + CaptureSpread(d + "a2a_async", 0));
}

// JOIN names the host range that launched the consumer: every GEMM of make_traces.py's all-to-all
// program is the same nvjet kernel, but the next layer's is launched inside record_function("gemm")
// and the independent one inside "gemm_indep". Joined there, the next layer's GEMM waits for the
// all-to-all (which itself waits for the independent GEMM's SMs): later than a join matching
// nothing (the next iteration's first activity), and no kernel name matches ^gemm$.
TEST(ReplayReal, JoinMatchesTheRangeEnclosingTheLaunch) {
  const std::string base = kData + "/whatif_torch/default/run1/a2a_sync";
  const nlohmann::json by_range = ReplayJson(base, {"async:/SendRecv/@/^gemm$/"});
  const nlohmann::json nowhere = ReplayJson(base, {"async:/SendRecv/@/^no_such_name$/"});
  const double r = JobStep(by_range, "predicted_contention"), n = JobStep(nowhere, "predicted_contention");
  ASSERT_GT(n, 0);
  EXPECT_GT(r, 1.05 * n);  // 3.918 against 3.562 ms
  // The measured async run: 3.981 ms (base 3.931 ms).
  EXPECT_NEAR(r, JobStep(ReplayJson(kData + "/whatif_torch/default/run1/a2a_async"), "measured"), 0.02 * r);
}

TEST(ReplayReal, PredictedTimelineBesideTheMeasuredOne) {
  auto s = Load({kData + "/kineto/a2a_sync"});
  ASSERT_TRUE(s.ok());
  ReplayRequest req;
  req.changes = {"async:/SendRecv/"};
  req.trace_out = testing::TempDir() + "/replay_predicted.pftrace";
  ASSERT_TRUE(RunReplay(*s, req, ReportFormat::kText).ok());
  std::ifstream f(req.trace_out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  // Two ranks: two "... predicted" processes beside the measured ones, and their GPUs' groups
  // named "GPU N — <device> predicted · rank R" beside the measured "GPU N — <device> · rank R".
  size_t n = 0;
  for (size_t at = bytes.find(" predicted"); at != std::string::npos; at = bytes.find(" predicted", at + 1)) ++n;
  EXPECT_EQ(n, 4u);
  EXPECT_NE(bytes.find(" predicted \xC2\xB7 rank 0"), std::string::npos);
  EXPECT_NE(bytes.find(" predicted \xC2\xB7 rank 1"), std::string::npos);
  req.trace_out = "/nonexistent/dir/x.pftrace";
  EXPECT_FALSE(RunReplay(*s, req, ReportFormat::kText).ok());
}

TEST(ReplayReal, AsyncHidesTheCollectiveAndNosyncFreesTheHost) {
  // async: the all-gather leaves the compute's way: exposed communication drops on every rank.
  const nlohmann::json a = ReplayJson(kData + "/torch_diag/w2_default/mm_ag_sequential", {"async:/AllGather/"});
  ASSERT_FALSE(a["ranks"].empty());
  for (const auto& r : a["ranks"]) {
    EXPECT_LT(r["predicted"]["exposed_comm_ns"].get<int64_t>(), r["replayed"]["exposed_comm_ns"].get<int64_t>() / 2)
        << r["label"];
    EXPECT_LT(r["predicted"]["step_ns"].get<int64_t>(), r["replayed"]["step_ns"].get<int64_t>()) << r["label"];
  }
  EXPECT_NE(a["contention_model"].get<std::string>(), "none");  // the GEMM now runs beside NCCL
  // nosync: the blocking D2H's host wait is gone from the path.
  const nlohmann::json n = ReplayJson(kData + "/kineto/d2h_blocking", {"nosync:/cudaStreamSynchronize/"});
  EXPECT_GT(n["changes"][0]["matched"].get<int64_t>(), 0);
  for (const auto& r : n["ranks"]) {
    EXPECT_EQ(r["predicted"]["critical_path"]["blocked_ns"].get<int64_t>(), 0) << r["label"];
    EXPECT_LE(r["predicted"]["step_ns"].get<int64_t>(), r["replayed"]["step_ns"].get<int64_t>()) << r["label"];
  }
}

TEST(ReplayReal, MalformedChangeIsInvalidArgument) {
  EXPECT_EQ(CheckChange("async:AllGather").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckChange("ce:/AllGather/").ok());
}

}  // namespace
}  // namespace overlapscope::engine
