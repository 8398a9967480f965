// What-if against our own workloads' measured pairs (tests/data/replay_pairs: `overlapscope run
// -o` captures of 4 x H100, tools/replay_pairs_capture.sh): each base replayed with the change
// that turns it into the measured target. The captures are kept gzipped; they are unpacked into a
// temporary directory first (the spill reader takes no .gz). Bounds are the achieved errors, all
// within the 10 % (docs/RESULTS.md "Replay"); absent data is skipped visibly.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "replay_test_util.h"

namespace overlapscope::engine {
namespace {

namespace fs = std::filesystem;

const std::string kPairs = std::string(OVERLAPSCOPE_TEST_DATA) + "/replay_pairs";

// `dir` with every *.ovspill.gz / *.ovnccl.gz unpacked into a fresh directory; "" on failure.
std::string Unpacked(const std::string& dir, const std::string& name) {
  const fs::path out = fs::path(::testing::TempDir()) / "replay_pairs" / name;
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::create_directories(out, ec);
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.size() < 4 || f.substr(f.size() - 3) != ".gz") continue;
    gzFile in = gzopen(e.path().c_str(), "rb");
    if (in == nullptr) return "";
    std::ofstream o(out / f.substr(0, f.size() - 3), std::ios::binary);
    char buf[1 << 16];
    int n;
    while ((n = gzread(in, buf, sizeof(buf))) > 0) o.write(buf, n);
    gzclose(in);
    if (n < 0 || !o) return "";
  }
  return out.string();
}

struct RunPair {
  std::string run, base, target;
  std::vector<std::string> changes;
  double bound;      // achieved |predicted (with contention) - measured| / measured
  bool sign = true;  // the sign is right where the measured change exceeds 1 % (false: a known miss)
};

TEST(ReplayPairs, OurWorkloadsPredictedFromTheirBase) {
  if (!fs::is_directory(kPairs)) GTEST_SKIP() << kPairs << " absent (tools/replay_pairs_capture.sh makes it)";
  // Sequential matmul-allgather computes first and gathers after; the overlapped program issues
  // the all-gather first: prefetch:.
  const std::string ag = "prefetch:/(?i)allgather/", ag_ce = "ce:/(?i)allgather/";
  // All-to-all: the async program also consumes each layer's all-to-all after the next layer's
  // GEMM: the all-to-all joins its consumer (Sampled..., then FinitePoison..., as
  // workloads/all_to_all.cc enqueues them after the event wait) and the consumers are deferred
  // past the next GEMM.
  const std::string a2a = "async:/(?i)alltoall|sendrecv/@/Sampled|FinitePoison/", a2a_ce = "ce:/(?i)alltoall|sendrecv/";
  const std::string defer = "defer:/FinitePoison|Sampled/";
  const std::vector<RunPair> pairs = {
      {"g1", "d2h-blocking", "d2h-nonblocking-event", {"nosync:/^cudaMemcpy(_v[0-9]+)?$/"}, 0.01},
      {"g2mpi", "matmul-allgather-sequential", "matmul-allgather-overlap", {ag}, 0.03},
      {"g2mpi", "matmul-allgather-sequential", "matmul-allgather-overlap-ce", {ag, ag_ce}, 0.02},
      {"g4mpi", "matmul-allgather-sequential", "matmul-allgather-overlap", {ag}, 0.07},
      {"g4mpi", "matmul-allgather-sequential", "matmul-allgather-overlap-ce", {ag, ag_ce}, 0.06},
      // -6.1 and -6.8 % (-7.0 and -7.8 % before the job's change was taken per iteration): the NCCL
      // kernel's transfer measured 31-46 % longer beside the GEMMs than alone, which no input of
      // the sync run says (docs/RESULTS.md).
      {"g2mpi", "all-to-all-sync", "all-to-all-async", {a2a, defer}, 0.07},
      {"g4mpi", "all-to-all-sync", "all-to-all-async", {a2a, defer}, 0.07},
      // Copy engines: recorded transfer time (measured: the copy-engine all-to-all moves its bytes
      // in the kernel's time alone), the own chunk's on-device copy waits for the GEMM's SMs
      // (-5.2 and -5.7 %, -6.0 and -6.6 % before the job's change was taken per iteration; were
      // -12.8 and -16.2 % when it started beside the GEMM).
      {"g2mpi", "all-to-all-sync", "all-to-all-async-ce", {a2a, defer, a2a_ce}, 0.06},
      {"g4mpi", "all-to-all-sync", "all-to-all-async-ce", {a2a, defer, a2a_ce}, 0.06},
  };
  int checked = 0;
  for (const RunPair& p : pairs) {
    const std::string b = kPairs + "/" + p.run + "/" + p.base, t = kPairs + "/" + p.run + "/" + p.target;
    if (!fs::is_directory(b) || !fs::is_directory(t)) {
      std::printf("skipped (absent): %s -> %s\n", b.c_str(), t.c_str());
      continue;
    }
    const std::string ub = Unpacked(b, p.run + "_" + p.base), ut = Unpacked(t, p.run + "_" + p.target);
    ASSERT_FALSE(ub.empty() || ut.empty()) << b;
    const nlohmann::json bj = ReplayJson(ub, p.changes), tj = ReplayJson(ut);
    const double base = JobStep(bj, "measured"), target = JobStep(tj, "measured");
    const double pred = PredictedJobStep(bj);
    ASSERT_GT(target, 0) << t;
    ASSERT_GT(base, 0) << b;
    // The base replays within 1 % (median over iterations; measured 0.1-0.8 %).
    EXPECT_LE(bj["replay_error"]["median_abs"].get<double>(), 0.01) << b;
    // The plugin file next to each capture covers every mode of the run: only this mode's
    // collectives are merged (its window), so each matches across the ranks.
    EXPECT_EQ(bj["graph"]["collectives_unmatched"].get<int64_t>(), 0) << b;
    EXPECT_LE(std::abs(pred - target) / target, p.bound) << p.run << ": " << p.base << " -> " << p.target;
    if (std::abs(target - base) > 0.01 * base && p.sign)
      EXPECT_GT((pred - base) * (target - base), 0) << "sign of " << p.run << ": " << p.base << " -> " << p.target;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// The copy-engine all-to-all holds no SMs but its own chunk's on-device copy waits for the GEMM
// that fills them (measured: it starts in the GEMM's tail, as the kernel does): with contention the
// prediction is later than without, and the output says which copy-engine model it used.
TEST(ReplayPairs, CopyEngineCollectiveWaitsForTheGemmsSms) {
  const std::string b = kPairs + "/g4mpi/all-to-all-sync";
  if (!fs::is_directory(b)) GTEST_SKIP() << b << " absent";
  const std::string u = Unpacked(b, "g4mpi_sync_ce");
  ASSERT_FALSE(u.empty());
  const std::vector<std::string> ch = {"async:/(?i)alltoall|sendrecv/@/Sampled|FinitePoison/",
                                       "defer:/FinitePoison|Sampled/", "ce:/(?i)alltoall|sendrecv/"};
  const nlohmann::json j = ReplayJson(u, ch);
  EXPECT_EQ(j["contention_model"].get<std::string>(), "sm-share");
  EXPECT_EQ(j.value("copy_engine_model", ""), "recorded-transfer");
  // 2.24 ms without the wait, 2.56 ms with it (measured target 2.75 ms).
  EXPECT_GT(JobStep(j, "predicted_contention"), 1.1 * JobStep(j, "predicted"));
  auto s = Load({u});
  ASSERT_TRUE(s.ok()) << s.status();
  ReplayRequest req;
  req.changes = ch;
  auto text = RunReplay(*s, req, ReportFormat::kText);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_NE(text->find("copy-engine collectives: recorded transfer time"), std::string::npos) << *text;
}

// Our sequential matmul-allgather runs the GEMM, then the all-gather, then waits on the host for
// the iteration's end: moved to its own stream at the same point (async:) the all-gather has
// nothing left to overlap; issued at the start of the iteration (prefetch:) it hides behind the
// GEMM (4 ranks, 2.19 ms replayed; measured overlap run 1.73 ms).
TEST(ReplayPairs, PrefetchOverlapsWhatAsyncCannot) {
  const std::string b = kPairs + "/g4mpi/matmul-allgather-sequential";
  if (!fs::is_directory(b)) GTEST_SKIP() << b << " absent";
  const std::string u = Unpacked(b, "g4mpi_sequential_prefetch");
  ASSERT_FALSE(u.empty());
  const nlohmann::json async = ReplayJson(u, {"async:/(?i)allgather/"});
  const nlohmann::json pre = ReplayJson(u, {"prefetch:/(?i)allgather/"});
  const double replayed = JobStep(async, "replayed");
  ASSERT_GT(replayed, 0);
  EXPECT_NEAR(JobStep(async, "predicted"), replayed, 0.01 * replayed);
  EXPECT_LT(JobStep(pre, "predicted"), 0.75 * replayed);
  EXPECT_LT(JobStep(pre, "predicted_contention"), 0.8 * replayed);
  EXPECT_GT(JobStep(pre, "predicted_contention"), JobStep(pre, "predicted"));  // the GEMM on fewer SMs
  ASSERT_FALSE(pre["ranks"].empty());
  for (const auto& r : pre["ranks"])
    EXPECT_LT(r["predicted"]["exposed_comm_ns"].get<int64_t>(), r["replayed"]["exposed_comm_ns"].get<int64_t>() / 20)
        << r["label"];
}

}  // namespace
}  // namespace overlapscope::engine
