// The overview trace of a many-rank job (exporters/perfetto_overview.h) on a hand-made input:
// every track, slice and counter sample below is what the input says, written out by hand.
#include "exporters/perfetto_overview.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "pftrace_decoder.h"

namespace overlapscope::exporters {
namespace {

using testing::DecodePftrace;
using testing::PfTrace;

std::string Encode(const std::vector<OverviewRank>& ranks, PerfettoStats* st) {
  std::string out;
  auto s = EncodeOverview(ranks, [&](std::string_view b) {
    out.append(b);
    return absl::OkStatus();
  });
  EXPECT_TRUE(s.ok()) << s.status();
  if (s.ok()) *st = *s;
  return out;
}

// uuid of the child track `name` of the process track named `process`; 0 when absent.
uint64_t Track(const PfTrace& d, const std::string& process, const std::string& name) {
  uint64_t parent = 0;
  for (const auto& [uuid, t] : d.tracks)
    if (t.kind == testing::PfTrack::kProcess && t.name == process) parent = uuid;
  for (const auto& [uuid, t] : d.tracks)
    if (parent != 0 && t.parent == parent && t.name == name) return uuid;
  return 0;
}

std::vector<std::pair<uint64_t, double>> Counter(const PfTrace& d, uint64_t track) {
  std::vector<std::pair<uint64_t, double>> v;
  for (const auto& e : d.events)
    if (e.type == 4 && e.track == track) v.push_back({e.ts, e.counter});
  return v;
}

std::vector<OverviewRank> TwoRanks() {
  OverviewRank a;
  a.label = "rank 0";
  a.host = "node1";
  a.pid = 42;
  OverviewDevice d;
  d.ordinal = 0;
  // Two iterations with a pause between them, then one that starts as the second ends.
  d.iterations = {{5, 1000, 2000, 600, 200, 400, {{"host_blocked", 0}, {"launch_bound", 30}, {"dependency", 0}}},
                  {6, 2500, 3000, 100, 100, 0, {{"host_blocked", 0}, {"launch_bound", 0}, {"dependency", 70}}},
                  {7, 3000, 3600, 0, 0, 0, {{"host_blocked", 0}, {"launch_bound", 10}, {"dependency", 0}}}};
  a.devices = {d};
  a.waits = {{1200, 300, 1, 4, 500, "allreduce", "c0", "rank 1"}};
  OverviewRank b;
  b.label = "rank 1";
  b.pid = 43;
  OverviewDevice e;
  e.ordinal = 1;
  e.iterations = {{5, 1100, 2100, 600, 600, 0, {{"host_blocked", 0}, {"launch_bound", 0}, {"dependency", 0}}}};
  b.devices = {e};
  return {a, b};
}

TEST(PerfettoOverview, TracksSlicesAndCountersAreTheInput) {
  PerfettoStats st;
  const std::string bytes = Encode(TwoRanks(), &st);
  auto d = DecodePftrace(bytes);
  ASSERT_TRUE(d.ok()) << d.status();
  // Rank 0: iterations, exposed communication, idle: launch_bound, idle: dependency (host_blocked
  // is 0 everywhere: no track), waiting for peers. Rank 1: iterations and exposed communication.
  // Process tracks: 2. Total 2 + 5 + 2.
  EXPECT_EQ(st.tracks, 9);
  EXPECT_EQ(d->tracks.size(), 9u);
  EXPECT_EQ(Track(*d, "rank 0 · node1", "idle: host_blocked"), 0u);
  EXPECT_EQ(Track(*d, "rank 1", "waiting for peers"), 0u);

  const uint64_t it0 = Track(*d, "rank 0 · node1", "iterations");
  ASSERT_NE(it0, 0u);
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& s : d->slices)
    if (s.track == it0) {
      spans.push_back({s.ts, s.dur});
      if (s.name == "step 5") {
        EXPECT_EQ(s.args.at("exposed_comm_ns"), "400");
        EXPECT_EQ(s.args.at("hidden_comm_ns"), "200");
        EXPECT_EQ(s.args.at("comm_ns"), "600");
        EXPECT_EQ(s.args.at("idle_launch_bound_ns"), "30");
      }
    }
  EXPECT_EQ(spans, (std::vector<std::pair<uint64_t, uint64_t>>{{1000, 1000}, {2500, 500}, {3000, 600}}));

  // Step functions: the value over each iteration, 0 in the pause after step 5 and at the end;
  // step 7 starts where step 6 ends, so no 0 in between.
  using CV = std::vector<std::pair<uint64_t, double>>;
  EXPECT_EQ(Counter(*d, Track(*d, "rank 0 · node1", "exposed communication")),
            (CV{{1000, 400}, {2000, 0}, {2500, 0}, {3000, 0}, {3600, 0}}));
  EXPECT_EQ(Counter(*d, Track(*d, "rank 0 · node1", "idle: launch_bound")),
            (CV{{1000, 30}, {2000, 0}, {2500, 0}, {3000, 10}, {3600, 0}}));
  EXPECT_EQ(Counter(*d, Track(*d, "rank 0 · node1", "idle: dependency")),
            (CV{{1000, 0}, {2000, 0}, {2500, 70}, {3000, 0}, {3600, 0}}));
  EXPECT_EQ(Counter(*d, Track(*d, "rank 1", "exposed communication")), (CV{{1100, 0}, {2100, 0}}));

  const uint64_t wt = Track(*d, "rank 0 · node1", "waiting for peers");
  int waits = 0;
  for (const auto& s : d->slices)
    if (s.track == wt) {
      ++waits;
      EXPECT_EQ(s.ts, 1200u);
      EXPECT_EQ(s.dur, 300u);
      EXPECT_EQ(s.name, "waiting for rank 1");
      EXPECT_EQ(s.args.at("wait_ns"), "300");
      EXPECT_EQ(s.args.at("skew_ns"), "500");
      EXPECT_EQ(s.args.at("sequence"), "4");
      EXPECT_EQ(s.args.at("collective"), "allreduce");
    }
  EXPECT_EQ(waits, 1);
  EXPECT_EQ(st.slices, 3 + 1 + 1);
  EXPECT_EQ(st.counter_samples, 5 * 3 + 2);
}

TEST(PerfettoOverview, SeveralGpusGetTheirOwnTracksAndNegativeTimesAreShifted) {
  OverviewRank r;
  r.label = "pid 7 (GPU 0, GPU 1)";
  for (int g = 0; g < 2; ++g) {
    OverviewDevice d;
    d.ordinal = g;
    d.iterations = {{1, -500 + g, 100, 10, 0, 10, {}}};
    r.devices.push_back(d);
  }
  PerfettoStats st;
  auto d = DecodePftrace(Encode({r}, &st));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(st.time_shift_ns, 500);
  const uint64_t g1 = Track(*d, r.label, "GPU 1 · iterations");
  ASSERT_NE(g1, 0u);
  ASSERT_NE(Track(*d, r.label, "GPU 0 · exposed communication"), 0u);
  for (const auto& s : d->slices)
    if (s.track == g1) {
      EXPECT_EQ(s.ts, 1u);  // -499 + 500
      EXPECT_EQ(s.dur, 599u);
    }
}

TEST(PerfettoOverview, UnwritablePathNamesIt) {
  auto s = WriteOverview(TwoRanks(), "/nonexistent-dir/overview.pftrace");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("/nonexistent-dir/overview.pftrace"), std::string::npos);
}

}  // namespace
}  // namespace overlapscope::exporters
