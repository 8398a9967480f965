// The "critical path" tracks of the .pftrace (exporters/perfetto_critical_path.cc) for the
// two-rank trace of analyze's CollectiveHeldBackByOneRanksSlowKernel test, whose job path is
// worked out by hand there: rank 1's host [0,10), its launch latency [10,30) and gemm [30,1030)
// on stream 7, rank 0's all-reduce [1030,1200) on stream 7, then rank 0's host: blocked
// [1200,1210) and [1210,1220).
#include <map>
#include <set>

#include "analyze/analysis.h"
#include "analyze/multi_synth.h"
#include "exporters/perfetto_writer.h"
#include "gtest/gtest.h"
#include "pftrace_decoder.h"

namespace overlapscope::exporters {
namespace {

using overlapscope::testing::DecodePftrace;

model::Trace TwoRanks() {
  analyze::testing::MultiSynth s(2);
  for (int r = 0; r < 2; ++r) {
    s.Range(r, "ProfilerStep#1", 0, 1220);
    s.Launch(r, "gemm", 7, 10, 30, r == 0 ? 530 : 1030);
    const model::CollectiveId c = s.Collective("allreduce", 0, 2);
    s.Launch(r, "ncclDevKernel_AllReduce", 7, 40, r == 0 ? 535 : 1035, 1200, c);
    s.Api(r, "cudaStreamSynchronize", 60, 1210);
  }
  return s.Finish();
}

TEST(PerfettoCriticalPath, PathSlicesOnTopTrackAndLanesWithArrowsBetweenLanes) {
  const model::Trace t = TwoRanks();
  analyze::AnalyzeOptions o;
  o.keep_path_segments = true;
  auto a = analyze::AnalyzeAll(t, o);
  ASSERT_TRUE(a.ok()) << a.status();
  auto bytes = EncodePerfettoToString(t, &*a, nullptr);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto dec = DecodePftrace(*bytes);
  ASSERT_TRUE(dec.ok()) << dec.status();
  uint64_t top = 0;
  std::set<uint64_t> lanes;
  for (const auto& [uuid, tr] : dec->tracks) {
    if (tr.name != "critical path") continue;
    if (tr.parent == 0)
      top = uuid;
    else
      lanes.insert(uuid);
  }
  ASSERT_NE(top, 0u);
  // Lanes: rank 1's thread and stream 7, rank 0's stream 7 and thread.
  EXPECT_EQ(lanes.size(), 4u);
  std::map<uint64_t, std::string> on_top;  // ts -> name
  std::map<uint64_t, int> flow_ends;       // flow id -> slices it touches
  for (const auto& s : dec->slices) {
    if (s.track == top) on_top[s.ts] = s.name;
    if (!lanes.count(s.track)) continue;
    for (uint64_t f : s.flows) ++flow_ends[f];
    for (uint64_t f : s.terminating_flows) ++flow_ends[f];
  }
  const std::map<uint64_t, std::string> want = {{0, "host (no op)"},
                                                {10, "GPU waits for host: cudaLaunchKernel"},
                                                {30, "compute: gemm"},
                                                {1030, "comm: ncclDevKernel_AllReduce"},
                                                {1200, "host blocked: cudaStreamSynchronize"},
                                                {1210, "host (no op)"}};
  EXPECT_EQ(on_top, want);
  // Arrows where the path changes lane: rank 1 thread -> rank 1 stream 7 (at 10), -> rank 0
  // stream 7 (at 1030), -> rank 0 thread (at 1200): three flows, each with two ends.
  EXPECT_EQ(flow_ends.size(), 3u);
  for (const auto& [id, n] : flow_ends) EXPECT_EQ(n, 2) << "flow " << id;
}

TEST(PerfettoCriticalPath, NothingDrawnWithoutKeptSegments) {
  const model::Trace t = TwoRanks();
  auto a = analyze::AnalyzeAll(t, analyze::AnalyzeOptions{});  // keep_path_segments off
  ASSERT_TRUE(a.ok());
  auto bytes = EncodePerfettoToString(t, &*a, nullptr);
  ASSERT_TRUE(bytes.ok());
  auto dec = DecodePftrace(*bytes);
  ASSERT_TRUE(dec.ok());
  for (const auto& [uuid, tr] : dec->tracks) EXPECT_NE(tr.name, "critical path");
}

}  // namespace
}  // namespace overlapscope::exporters
