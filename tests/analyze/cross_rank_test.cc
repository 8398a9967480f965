#include "analyze/cross_rank.h"

#include "gtest/gtest.h"
#include "model/trace_builder.h"

namespace overlapscope::analyze {
namespace {

using model::TraceBuilder;

// Two ranks with one GPU each. AddColl adds a collective carried by one kernel.
struct TwoRanks {
  TraceBuilder b;
  model::DeviceId dev[2];
  model::StreamId st[2];
  TwoRanks() {
    for (int r = 0; r < 2; ++r) {
      model::ProcessId p = b.AddProcess(model::Process{1000 + r, r, 2});
      dev[r] = b.GetOrAddDevice(p, r);
      st[r] = b.GetOrAddStream(dev[r], 17);
    }
  }
  void AddColl(int rank, const char* op, int64_t s, int64_t e, int64_t seq = -1) {
    model::Collective c;
    c.op = b.Intern(op);
    c.communicator = b.Intern("0");
    c.dtype = b.Intern("Half");
    c.in_elements = 500000;
    c.out_elements = 1000000;  // all-gather output: 1e6 halves = 2,000,000 bytes
    c.nranks = 2;
    c.sequence = seq;
    b.data().collectives.push_back(c);
    model::Kernel k;
    k.start_ns = s;
    k.end_ns = e;
    k.device = dev[rank];
    k.stream = st[rank];
    k.collective = static_cast<model::CollectiveId>(b.data().collectives.size() - 1);
    b.data().kernels.push_back(k);
  }
};

TEST(CrossRank, SkewWaitBandwidthAndStragglersByHand) {
  TwoRanks f;
  f.AddColl(0, "_allgather_base", 1000, 3000);    // A on rank 0
  f.AddColl(1, "_allgather_base", 1500, 3100);    // A on rank 1
  f.AddColl(0, "_allgather_base", 10000, 11000);  // B on rank 0
  f.AddColl(1, "_allgather_base", 9000, 11200);   // B on rank 1
  f.AddColl(0, "allreduce", 20000, 21000);        // only rank 0 has it
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  CrossRankResult r = AnalyzeCrossRank(*t);
  EXPECT_FALSE(r.matched_by_sequence);
  EXPECT_EQ(r.unmatched, 1);
  ASSERT_EQ(r.instances.size(), 2u);
  // A: starts 1000/1500 -> skew 500, rank 1 last, rank 0 waits 500;
  // bus time = min(3000-1500, 3100-1500) = 1500 ns; algbw = 2e6 B / 1500 ns = 1333.33 GB/s;
  // busbw = algbw * (2-1)/2 = 666.67 GB/s.
  const CollectiveInstance& a = r.instances[0];
  EXPECT_EQ(a.first_start_ns, 1000);
  EXPECT_EQ(a.skew_ns, 500);
  EXPECT_EQ(a.last_rank, 1);
  ASSERT_EQ(a.ranks.size(), 2u);
  EXPECT_EQ(a.ranks[0].rank, 0);
  EXPECT_EQ(a.ranks[0].wait_ns, 500);
  EXPECT_EQ(a.ranks[1].wait_ns, 0);
  EXPECT_EQ(a.bus_time_ns, 1500);
  EXPECT_EQ(a.size_bytes, 2000000);
  ASSERT_TRUE(a.algbw_gbps.has_value());
  EXPECT_NEAR(*a.algbw_gbps, 2000000.0 / 1500.0, 1e-9);
  EXPECT_NEAR(*a.busbw_gbps, 2000000.0 / 1500.0 / 2.0, 1e-9);
  // B: starts 10000/9000 -> skew 1000, rank 0 last, rank 1 waits 1000;
  // bus time = min(11000-10000, 11200-10000) = 1000 ns.
  const CollectiveInstance& b = r.instances[1];
  EXPECT_EQ(b.skew_ns, 1000);
  EXPECT_EQ(b.last_rank, 0);
  EXPECT_EQ(b.ranks[1].wait_ns, 1000);
  EXPECT_EQ(b.bus_time_ns, 1000);
  EXPECT_EQ(r.max_skew_ns, 1000);
  EXPECT_EQ(r.total_skew_ns, 1500);
  // No API calls in this trace: every participant's arrival is its start (collective_arrival.h),
  // counted once per participant of a matched instance: A and B x 2 ranks = 4.
  EXPECT_EQ(r.arrival_fallbacks, 4);
  EXPECT_EQ(a.ranks[0].arrival_ns, 1000);
  ASSERT_EQ(r.ranks.size(), 2u);
  // Rank 0 was last once (B: others waited 1000) and itself waited 500 (A).
  EXPECT_EQ(r.ranks[0].times_last, 1);
  EXPECT_EQ(r.ranks[0].others_wait_ns, 1000);
  EXPECT_EQ(r.ranks[0].own_wait_ns, 500);
  EXPECT_EQ(r.ranks[1].times_last, 1);
  EXPECT_EQ(r.ranks[1].others_wait_ns, 500);
  EXPECT_EQ(r.ranks[1].own_wait_ns, 1000);
}

TEST(CrossRank, SequenceNumbersBeatOrder) {
  TwoRanks f;
  // Rank 1's profile window missed sequence 7: matching by order would pair 7 with 8.
  f.AddColl(0, "allreduce", 100, 200, 7);
  f.AddColl(0, "allreduce", 300, 400, 8);
  f.AddColl(1, "allreduce", 350, 420, 8);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok());
  CrossRankResult r = AnalyzeCrossRank(*t);
  EXPECT_TRUE(r.matched_by_sequence);
  EXPECT_EQ(r.unmatched, 1);
  ASSERT_EQ(r.instances.size(), 1u);
  EXPECT_EQ(r.instances[0].sequence, 8);
  EXPECT_EQ(r.instances[0].skew_ns, 50);  // 350 - 300
  // All-reduce bus factor 2(n-1)/n = 1; time = min(400-350, 420-350) = 50 ns; 2e6 B / 50 ns.
  EXPECT_NEAR(*r.instances[0].busbw_gbps, 2000000.0 / 50.0, 1e-9);
}

TEST(CrossRank, SequencePerOpAndOrderWhereNcclGivesNone) {
  TwoRanks f;
  // NCCL numbers each function separately: all-gather 0 and all-reduce 0 are two instances.
  f.AddColl(0, "AllGather", 100, 200, 0);
  f.AddColl(1, "AllGather", 110, 200, 0);
  f.AddColl(0, "AllReduce", 300, 400, 0);
  f.AddColl(1, "AllReduce", 330, 400, 0);
  // A copy-engine all-gather on the same communicator has no sequence number on either rank; it
  // shares the (communicator, AllGather) pair, so that pair is matched by order instead.
  f.AddColl(0, "AllGather", 500, 600);
  f.AddColl(1, "AllGather", 540, 600);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok());
  CrossRankResult r = AnalyzeCrossRank(*t);
  EXPECT_EQ(r.unmatched, 0);
  EXPECT_EQ(r.duplicates, 0);
  ASSERT_EQ(r.instances.size(), 3u);
  // AllGather (order #1: 100/110 -> skew 10), AllReduce (seq 0: 300/330 -> 30), AllGather
  // (order #2: 500/540 -> 40). Only the all-reduce pair is matched by sequence.
  EXPECT_FALSE(r.instances[0].by_sequence);
  EXPECT_EQ(r.instances[0].ordinal, 0);
  EXPECT_EQ(r.instances[0].skew_ns, 10);
  EXPECT_TRUE(r.instances[1].by_sequence);
  EXPECT_EQ(r.instances[1].sequence, 0);
  EXPECT_EQ(r.instances[1].skew_ns, 30);
  EXPECT_FALSE(r.instances[2].by_sequence);
  EXPECT_EQ(r.instances[2].ordinal, 1);
  EXPECT_EQ(r.instances[2].skew_ns, 40);
  EXPECT_FALSE(r.matched_by_sequence);
  EXPECT_EQ(r.matched_by_order, 2);
}

TEST(CrossRank, NoSkewMeansNoStraggler) {
  TwoRanks f;
  f.AddColl(0, "all_to_allv", 100, 200);
  f.AddColl(1, "all_to_allv", 100, 250);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok());
  CrossRankResult r = AnalyzeCrossRank(*t);
  ASSERT_EQ(r.instances.size(), 1u);
  EXPECT_EQ(r.instances[0].skew_ns, 0);
  EXPECT_EQ(r.instances[0].last_rank, model::kNone);
  for (const auto& s : r.ranks) EXPECT_EQ(s.times_last, 0);
}

// One process driving two GPUs (the built-in workloads: one thread per GPU, one communicator).
// `proc_rank` is the process's rank (kNone when unknown); `coll_rank[g]` is the rank recorded
// with GPU g's collectives (kNone: none).
struct OneProcessTwoGpus {
  TraceBuilder b;
  model::DeviceId dev[2];
  model::StreamId st[2];
  int32_t coll_rank[2];
  OneProcessTwoGpus(int32_t proc_rank, int32_t r0, int32_t r1) : coll_rank{r0, r1} {
    model::ProcessId p = b.AddProcess(model::Process{4242, proc_rank, model::kNone});
    for (int g = 0; g < 2; ++g) {
      dev[g] = b.GetOrAddDevice(p, g);
      st[g] = b.GetOrAddStream(dev[g], 20 + g);
    }
  }
  void AddColl(int gpu, int64_t s, int64_t e, int64_t seq = -1, const char* comm = "") {
    model::Collective c;
    c.op = b.Intern("AllGather");
    c.communicator = b.Intern(comm);
    c.rank = coll_rank[gpu];
    c.nranks = coll_rank[gpu] == model::kNone ? model::kNone : 2;
    c.sequence = seq;
    c.bytes = 4096;
    b.data().collectives.push_back(c);
    model::Kernel k;
    k.start_ns = s;
    k.end_ns = e;
    k.device = dev[gpu];
    k.stream = st[gpu];
    k.collective = static_cast<model::CollectiveId>(b.data().collectives.size() - 1);
    b.data().kernels.push_back(k);
  }
};

TEST(CrossRankIdentity, OneProcessTwoGpusWithoutRanksIsMatchedPerGpu) {
  OneProcessTwoGpus f(model::kNone, model::kNone, model::kNone);
  f.AddColl(0, 100, 400);    // instance 1 on GPU 0
  f.AddColl(1, 250, 420);    // instance 1 on GPU 1
  f.AddColl(0, 1000, 1300);  // instance 2
  f.AddColl(1, 900, 1290);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  CrossRankResult r = AnalyzeCrossRank(*t);
  EXPECT_EQ(r.identified_by, RankSource::kDevice);
  EXPECT_EQ(r.without_rank, 0);
  ASSERT_EQ(r.participants.size(), 2u);
  EXPECT_EQ(r.participants[0].label, "GPU 0");
  EXPECT_EQ(r.participants[1].label, "GPU 1");
  EXPECT_EQ(r.participants[0].rank, model::kNone);  // no invented rank numbers
  ASSERT_EQ(r.instances.size(), 2u);
  // 1: starts 100/250 -> skew 150, GPU 1 last, GPU 0 waits 150; bus = min(400-250, 420-250) = 150.
  EXPECT_EQ(r.instances[0].skew_ns, 150);
  EXPECT_EQ(r.instances[0].last, 1);
  EXPECT_EQ(r.instances[0].last_rank, model::kNone);
  EXPECT_EQ(r.instances[0].ranks[0].wait_ns, 150);
  EXPECT_EQ(r.instances[0].bus_time_ns, 150);
  // No dtype/elements: size from Collective::bytes = 4096; algbw = 4096 B / 150 ns.
  EXPECT_EQ(r.instances[0].size_bytes, 4096);
  EXPECT_NEAR(*r.instances[0].algbw_gbps, 4096.0 / 150.0, 1e-9);
  // 2: starts 1000/900 -> skew 100, GPU 0 last.
  EXPECT_EQ(r.instances[1].skew_ns, 100);
  EXPECT_EQ(r.instances[1].last, 0);
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].own_wait_ns, 150);
  EXPECT_EQ(r.ranks[1].own_wait_ns, 100);
}

TEST(CrossRankIdentity, SameRankOnBothGpusFallsBackToGpuLabels) {
  // The NVTX attribution copies the process rank (0) into every collective: ranks 0/0 are
  // not distinct, neither is the process rank, so the GPUs are told apart by ordinal.
  OneProcessTwoGpus f(0, 0, 0);
  f.AddColl(0, 100, 200);
  f.AddColl(1, 120, 210);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok());
  CrossRankResult r = AnalyzeCrossRank(*t);
  EXPECT_EQ(r.identified_by, RankSource::kDevice);
  ASSERT_EQ(r.instances.size(), 1u);
  EXPECT_EQ(r.instances[0].skew_ns, 20);
  EXPECT_EQ(r.participants[1].label, "GPU 1");
}

TEST(CrossRankIdentity, CommunicatorRanksFromThePluginWin) {
  OneProcessTwoGpus f(model::kNone, 1, 0);  // GPU 0 is rank 1, GPU 1 is rank 0
  f.AddColl(0, 100, 200, 5, "0xabc");
  f.AddColl(1, 130, 205, 5, "0xabc");
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok());
  CrossRankResult r = AnalyzeCrossRank(*t);
  EXPECT_EQ(r.identified_by, RankSource::kCollectiveRank);
  EXPECT_TRUE(r.matched_by_sequence);
  ASSERT_EQ(r.participants.size(), 2u);
  EXPECT_EQ(r.participants[0].label, "rank 0");
  EXPECT_EQ(r.participants[0].gpu, 1);
  ASSERT_EQ(r.instances.size(), 1u);
  // Rank 0 (GPU 1) started at 130, rank 1 (GPU 0) at 100: rank 0 arrived last, rank 1 waits 30.
  EXPECT_EQ(r.instances[0].last_rank, 0);
  EXPECT_EQ(r.instances[0].ranks[1].rank, 1);
  EXPECT_EQ(r.instances[0].ranks[1].wait_ns, 30);
}

TEST(CrossRankIdentity, RankInTheLargestCommunicatorAndDuplicatesCounted) {
  TwoRanks f;  // process ranks 0, 1
  f.AddColl(0, "allreduce", 100, 200, 1);
  f.AddColl(1, "allreduce", 110, 200, 1);
  f.AddColl(1, "allreduce", 300, 400, 1);  // a second record of sequence 1 on rank 1
  // Collectives carry the process rank (TwoRanks sets none): give them sub-communicator ranks
  // that contradict the world ranks except in the largest communicator.
  f.b.data().collectives[0].rank = 0;
  f.b.data().collectives[1].rank = 1;
  f.b.data().collectives[2].rank = 0;
  f.b.data().collectives[2].nranks = 1;  // smaller communicator: ignored for the label
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok());
  CrossRankResult r = AnalyzeCrossRank(*t);
  EXPECT_EQ(r.identified_by, RankSource::kCollectiveRank);
  EXPECT_EQ(r.participants[1].label, "rank 1");
  EXPECT_EQ(r.duplicates, 1);
  ASSERT_EQ(r.instances.size(), 1u);
  EXPECT_EQ(r.instances[0].skew_ns, 10);
}

TEST(CrossRank, DtypeAndBusFactorTables) {
  EXPECT_EQ(DtypeBytes("Half"), 2);
  EXPECT_EQ(DtypeBytes("c10::BFloat16"), 2);
  EXPECT_EQ(DtypeBytes("Float"), 4);
  EXPECT_EQ(DtypeBytes("Long"), 8);
  EXPECT_EQ(DtypeBytes("mystery"), 0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("_allgather_base", 4), 0.75);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("AllReduce", 4), 1.5);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("all_to_allv", 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("reduce_scatter_tensor", 2), 0.5);
  EXPECT_DOUBLE_EQ(*BusBandwidthFactor("broadcast", 2), 1.0);
  EXPECT_FALSE(BusBandwidthFactor("barrier", 2).has_value());
}

}  // namespace
}  // namespace overlapscope::analyze
