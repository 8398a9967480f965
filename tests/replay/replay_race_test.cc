// What the contention model's tie rule (analyze/replay/contention.h) rests on, read from the real
// overlapped all-gather traces (tests/data; docs/RESULTS.md "Why the all-gather pairs miss",
// `tools/replay_pairs.py OVERLAPSCOPE --race`): where a GEMM and the all-gather meet on a GPU,
// either the GEMM got the SMs first and the all-gather started in its last tile round, or the
// all-gather got them first and both ran side by side. These are facts of the traces the model is
// documented against; a change of the data or of the importer that moves them fails here.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/replay/residency.h"
#include "engine/session.h"
#include "model/trace.h"

namespace overlapscope::engine {
namespace {

const std::string kData = OVERLAPSCOPE_TEST_DATA;

struct Race {
  int gemm_first = 0, collective_first = 0;
  double min_lead = 1, max_lead = 0;  // the all-gather's start before the GEMM's end / its duration
  void Add(const Race& o) {
    gemm_first += o.gemm_first;
    collective_first += o.collective_first;
    min_lead = std::min(min_lead, o.min_lead);
    max_lead = std::max(max_lead, o.max_lead);
  }
};

// Every GEMM that meets an all-gather on its device, per trace directory.
Race RaceOf(const std::string& dir) {
  Race r;
  auto s = Load({dir});
  EXPECT_TRUE(s.ok()) << dir << ": " << s.status();
  if (!s.ok()) return r;
  const model::Trace& t = s->trace();
  std::map<model::DeviceId, std::vector<const model::Kernel*>> gemms, gathers;
  for (const model::Kernel& k : t.kernels()) {
    const std::string_view n = t.str(k.name);
    const model::DeviceId d = t.DeviceOfStream(k.stream);
    if (n.find("ncclDevKernel_AllGather") == 0) gathers[d].push_back(&k);
    if (n.find("nvjet") == 0) gemms[d].push_back(&k);
  }
  for (const auto& [d, gs] : gemms)
    for (const model::Kernel* g : gs)
      for (const model::Kernel* c : gathers[d]) {
        if (c->start_ns >= g->end_ns || c->end_ns <= g->start_ns) continue;
        if (c->start_ns < g->start_ns) {
          ++r.collective_first;
        } else {
          ++r.gemm_first;
          const double lead = static_cast<double>(g->end_ns - c->start_ns) / (g->end_ns - g->start_ns);
          r.min_lead = std::min(r.min_lead, lead);
          r.max_lead = std::max(r.max_lead, lead);
        }
        break;
      }
  return r;
}

TEST(ReplayRace, PersistentGemmWinsMostTiesAndTheAllGatherStartsInItsLastRound) {
  // The GEMM: one block on each of the 132 SMs (a persistent kernel), no room for the all-gather.
  const analyze::replay::BlockFootprint gemm{132, 384, 168, 213188}, gather{24, 544, 96, 103808};
  EXPECT_EQ(analyze::replay::SmsOccupied(gemm, 132), 132);
  EXPECT_FALSE(analyze::replay::FitsBeside(gemm, gather));
  // whatif_torch: 256x128 tiles of an 8192 x 4096 output, 1024 tiles on 132 blocks = 8 rounds: the
  // all-gather starts about 1/8 of the GEMM before its end (measured 44.5-47.2 us of 357-375).
  Race w;
  for (const char* run : {"default/run1", "default/run2", "sync/run1", "sync/run2"}) {
    w.Add(RaceOf(kData + "/whatif_torch/" + run + "/ag_overlap"));
  }
  EXPECT_EQ(w.gemm_first, 107);
  EXPECT_EQ(w.collective_first, 27);
  EXPECT_GT(w.min_lead, 1.0 / 9);
  EXPECT_LT(w.max_lead, 1.0 / 7);
  // torch_diag: 8192^3 with 320x128 tiles, 1664 tiles = 13 rounds (measured 107-115 of 1,459-1,516).
  Race d;
  for (const char* v : {"w2_default", "w2_sync", "w4_default", "w4_sync"}) {
    d.Add(RaceOf(kData + "/torch_diag/" + std::string(v) + "/mm_ag_overlap"));
  }
  EXPECT_EQ(d.gemm_first, 39);
  EXPECT_EQ(d.collective_first, 9);
  EXPECT_GT(d.min_lead, 1.0 / 14.5);
  EXPECT_LT(d.max_lead, 1.0 / 12);
  // The 3-step captures: rank 0 lost every race, rank 1 won every one.
  const Race k = RaceOf(kData + "/kineto/ag_overlap"), n = RaceOf(kData + "/kineto_nosync/ag_overlap");
  EXPECT_EQ(k.gemm_first + n.gemm_first, 4);
  EXPECT_EQ(k.collective_first + n.collective_first, 5);
}

}  // namespace
}  // namespace overlapscope::engine
