// The all-reduce workload's host side, no GPU needed: size lists, nccl-tests bandwidth, the
// table (one-shot-push included), the refusal of unknown implementations, and the NVTX range the custom kernels are
// launched in, parsed by the capture and matched across ranks by the analysis (a synthetic two-GPU trace). Expected
// values computed by hand.
#include <string>
#include <vector>

#include "analyze/cross_rank.h"
#include "gtest/gtest.h"
#include "importers/nccl/collective_range.h"
#include "importers/nccl/nccl_attribution.h"
#include "workloads/all_reduce.h"
#include "workloads/all_reduce_peers.h"

namespace overlapscope::workloads_test {
namespace {

TEST(WorkloadAllReduceHost, SizeLists) {
  auto r = workloads::ParseAllReduceSizes("0.5MB..64MB");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<int64_t>{524288, 1048576, 2097152, 4194304, 8388608, 16777216, 33554432, 67108864}));
  r = workloads::ParseAllReduceSizes("1MB,3MiB, 4096");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<int64_t>{1048576, 3145728, 4096}));
  r = workloads::ParseAllReduceSizes("1kb..3KiB");  // 1024, 2048; 4096 is past the end
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<int64_t>{1024, 2048}));
  r = workloads::ParseAllReduceSizes("1GB");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (std::vector<int64_t>{1073741824}));
  std::string many;
  for (int i = 1; i <= 65; ++i) many += std::to_string(i) + "KB,";
  for (const std::string bad : {"", "0MB", "1.3B", "64MB..1MB", "5XB", "1MB..", "MB", "-1MB", many.c_str()}) {
    auto b = workloads::ParseAllReduceSizes(bad);
    EXPECT_FALSE(b.ok()) << "'" << bad << "'";
    if (!b.ok()) {
      EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

TEST(WorkloadAllReduceHost, BytesAndBandwidth) {
  EXPECT_EQ(workloads::FormatBytes(524288), "512 KiB");
  EXPECT_EQ(workloads::FormatBytes(67108864), "64 MiB");
  EXPECT_EQ(workloads::FormatBytes(1000), "1000 B");
  EXPECT_EQ(workloads::FormatBytes(3145734), "3145734 B");
  EXPECT_EQ(workloads::AllReduceFigureKey("one-shot", 524288, "ms"), "one-shot_512KiB_ms");
  // 2 MiB in 0.013 ms: algbw = 2097152 / 13e-6 s = 161.3194e9 B/s; busbw = algbw x 2(n-1)/n:
  // n = 2 -> x1 = 161.319; n = 8 -> x1.75 = 282.309.
  EXPECT_NEAR(workloads::AllReduceBusBwGBps(2097152, 0.013, 2), 2097152 / 13e-6 / 1e9, 1e-9);
  EXPECT_NEAR(workloads::AllReduceBusBwGBps(2097152, 0.013, 8), 2097152 / 13e-6 / 1e9 * 1.75, 1e-9);
  EXPECT_EQ(workloads::AllReduceBusBwGBps(2097152, 0, 2), 0);
}

TEST(WorkloadAllReduceHost, TableNamesTheBestAndItsSpeedUp) {
  // The 2 MiB example on 2 ranks: NCCL 0.037 ms, one-shot 0.013 ms; two-shot failed.
  workloads::WorkloadResult r;
  r.figures["nccl_2MiB_ms"] = 0.037;
  r.figures["one-shot_2MiB_ms"] = 0.013;
  r.figures["nccl_64MiB_ms"] = 0.5;
  r.figures["one-shot_64MiB_ms"] = 0.8;
  workloads::RenderAllReduceTable({2097152, 67108864}, {"nccl", "one-shot", "two-shot"}, 2, r);
  EXPECT_DOUBLE_EQ(r.Get("best_2MiB_ms"), 0.013);
  EXPECT_NEAR(r.Get("best_2MiB_speedup_vs_nccl"), 0.037 / 0.013, 1e-12);  // 2.846
  EXPECT_NEAR(r.Get("one-shot_2MiB_busbw_gbps"), 161.319384615, 1e-6);
  EXPECT_NEAR(r.Get("nccl_2MiB_busbw_gbps"), 2097152 / 37e-6 / 1e9, 1e-9);
  EXPECT_EQ(r.Get("two-shot_2MiB_busbw_gbps"), -1);  // no figure for a failed one
  EXPECT_DOUBLE_EQ(r.Get("best_64MiB_ms"), 0.5);     // NCCL wins at 64 MiB: speed-up 1
  EXPECT_DOUBLE_EQ(r.Get("best_64MiB_speedup_vs_nccl"), 1.0);
  EXPECT_NE(r.table.find("one-shot (2.85x)"), std::string::npos) << r.table;
  EXPECT_NE(r.table.find("nccl (1.00x)"), std::string::npos) << r.table;
  EXPECT_NE(r.table.find("failed"), std::string::npos) << r.table;
}

TEST(WorkloadAllReduceHost, OneShotPushIsAnImplementationAndCanWinASize) {
  const auto& all = workloads::AllReduceImpls();
  EXPECT_EQ(all, (std::vector<std::string>{"nccl", "one-shot", "two-shot", "one-shot-push", "nccl-symmetric"}));
  // Figures of docs/results_h100/run3 (4 x H100, ms): at 512 KiB one-shot-push (thread stores)
  // 0.0130 against NCCL 0.0177 -> 1.36x; at 64 MiB NCCL 0.3308 beats its 0.8232.
  workloads::WorkloadResult r;
  r.figures["nccl_512KiB_ms"] = 0.0177;
  r.figures["one-shot-push_512KiB_ms"] = 0.0130;
  r.figures["nccl_64MiB_ms"] = 0.3308;
  r.figures["one-shot-push_64MiB_ms"] = 0.8232;
  workloads::RenderAllReduceTable({524288, 67108864}, {"nccl", "one-shot-push"}, 4, r);
  EXPECT_DOUBLE_EQ(r.Get("best_512KiB_ms"), 0.0130);
  EXPECT_NEAR(r.Get("best_512KiB_speedup_vs_nccl"), 0.0177 / 0.0130, 1e-12);  // 1.3615
  // busbw = 524288 B / 13e-6 s x 2(4-1)/4 = 60.495 GB/s (the run printed 60.3: its unrounded median).
  EXPECT_NEAR(r.Get("one-shot-push_512KiB_busbw_gbps"), 524288 / 13e-6 / 1e9 * 1.5, 1e-9);
  EXPECT_NE(r.table.find("one-shot-push (1.36x)"), std::string::npos) << r.table;
  EXPECT_NE(r.table.find("nccl (1.00x)"), std::string::npos) << r.table;
  EXPECT_NE(r.table.find("| one-shot-push       |"), std::string::npos) << r.table;  // its column header
}

TEST(WorkloadAllReduceHost, OneShotPushRangeNameIsParsed) {
  const std::string name = workloads::AllReduceRangeName(0xabcull, 3, 524288, 2, 4, workloads::DType::kBF16,
                                                         workloads::AllReduceAlgo::kOneShotPush);
  EXPECT_EQ(name,
            "AllReduce comm=0000000000000abc seq=3 bytes=524288 rank=2 nranks=4 dtype=bf16 redop=sum "
            "impl=one-shot-push");
  auto f = import::ParseCollectiveRange(name);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->impl, "one-shot-push");
  EXPECT_EQ(f->bytes, 524288);
}

TEST(WorkloadAllReduceHost, UnknownImplIsRefusedBeforeTheGpus) {
  workloads::AllReduceOptions o;
  o.impls = {"one-shot-push", "one-shot-pull"};
  auto r = workloads::RunAllReduce(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("unknown --impl 'one-shot-pull'"), absl::string_view::npos) << r.status();
  EXPECT_NE(r.status().message().find("one-shot-push"), absl::string_view::npos) << r.status();
}

TEST(WorkloadAllReduceHost, RangeNameIsWhatTheCaptureParses) {
  const std::string name = workloads::AllReduceRangeName(0x0123456789abcdefull, 41, 2097152, 1, 4,
                                                         workloads::DType::kBF16, workloads::AllReduceAlgo::kTwoShot);
  EXPECT_EQ(name,
            "AllReduce comm=0123456789abcdef seq=41 bytes=2097152 rank=1 nranks=4 dtype=bf16 redop=sum "
            "impl=two-shot");
  auto f = import::ParseCollectiveRange(name);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->comm, 0x0123456789abcdefull);
  EXPECT_EQ(f->sequence, 41);
  EXPECT_EQ(f->rank, 1);
  EXPECT_EQ(f->nranks, 4);
  EXPECT_EQ(f->impl, "two-shot");
}

// Two GPUs of one process, two one-shot all-reduces each (seq 0 and 1), launched inside the
// workload's NVTX ranges. Times (ns):
//   rank 0: seq 0 launch call 1100, kernel 5000..15000; seq 1 call 20100, kernel 22000..30000
//   rank 1: seq 0 launch call 1600, kernel 7000..15000; seq 1 call 20600, kernel 22000..30000
// Arrival = the launch call's host start (no stream work before seq 0; seq 0's kernel ended
// before seq 1's call), so both instances have skew 500 with rank 0 waiting. Bus time of seq 0
// = end - last start = 15000 - 7000 = 8000 ns: algbw = 2097152 / 8000 = 262.144 GB/s, busbw =
// x 2(2-1)/2 = 262.144.
TEST(WorkloadAllReduceHost, CustomCollectivesAreMatchedAcrossRanks) {
  model::TraceBuilder b;
  model::ProcessId p = b.AddProcess(model::Process{42});
  auto& d = b.data();
  const model::StringId dom = b.Intern(import::kCollectiveRangeDomain);
  const model::StringId kname = b.Intern(
      "void overlapscope::workloads::ovs_allreduce_one_shot<__nv_bfloat16>(overlapscope::workloads::AllReduceArgs)");
  const int64_t call[2][2] = {{1100, 20100}, {1600, 20600}};
  const int64_t kstart[2][2] = {{5000, 22000}, {7000, 22000}};
  const int64_t kend[2] = {15000, 30000};
  for (int r = 0; r < 2; ++r) {
    model::ThreadId t = b.GetOrAddThread(p, 100 + r);
    model::StreamId s = b.GetOrAddStream(b.GetOrAddDevice(p, r), 7);
    for (int seq = 0; seq < 2; ++seq) {
      const std::string name = workloads::AllReduceRangeName(0xfeedull, seq, 2097152, r, 2, workloads::DType::kBF16,
                                                             workloads::AllReduceAlgo::kOneShot);
      d.ranges.push_back({call[r][seq] - 50, call[r][seq] + 500, model::RangeKind::kNvtx, t, model::kNoCorrelation,
                          b.Intern(name), dom});
      model::ApiCall a;
      a.start_ns = call[r][seq];
      a.end_ns = call[r][seq] + 100;
      a.thread = t;
      a.correlation_id = 10 * (r + 1) + seq;
      a.name = b.Intern("cudaLaunchKernel");
      d.api_calls.push_back(a);
      model::Kernel k;
      k.start_ns = kstart[r][seq];
      k.end_ns = kend[seq];
      k.device = d.streams[s].device;
      k.stream = s;
      k.correlation_id = a.correlation_id;
      k.name = kname;
      d.kernels.push_back(k);
    }
  }
  const import::NcclAttribution a = import::AttributeNcclRanges(b, p);
  EXPECT_EQ(a.own_collectives, 4);
  auto tr = std::move(b).Finalize();
  ASSERT_TRUE(tr.ok()) << tr.status();
  const analyze::CrossRankResult x = analyze::AnalyzeCrossRank(*tr);
  EXPECT_EQ(x.identified_by, analyze::RankSource::kCollectiveRank);
  EXPECT_TRUE(x.matched_by_sequence);
  EXPECT_EQ(x.unmatched, 0);
  ASSERT_EQ(x.instances.size(), 2u);
  for (int seq = 0; seq < 2; ++seq) {
    const analyze::CollectiveInstance& i = x.instances[seq];
    EXPECT_EQ(i.sequence, seq);
    EXPECT_EQ(tr->str(i.op), "AllReduce");
    EXPECT_EQ(tr->str(i.communicator), "ovs:000000000000feed");
    ASSERT_EQ(i.ranks.size(), 2u);
    EXPECT_EQ(i.ranks[0].rank, 0);
    EXPECT_EQ(i.ranks[1].rank, 1);
    EXPECT_EQ(i.skew_ns, 500);
    EXPECT_EQ(i.ranks[0].wait_ns, 500);
    EXPECT_EQ(i.ranks[1].wait_ns, 0);
    EXPECT_EQ(i.last_rank, 1);
    EXPECT_EQ(i.size_bytes, 2097152);
  }
  ASSERT_TRUE(x.instances[0].busbw_gbps.has_value());
  EXPECT_NEAR(*x.instances[0].busbw_gbps, 262.144, 1e-9);
}

}  // namespace
}  // namespace overlapscope::workloads_test

namespace overlapscope::workloads_test {
namespace {

// Blocks split [begin, end) into contiguous chunks: every vector in exactly one block's range,
// for sizes smaller and larger than the block count, empty ranges included.
TEST(WorkloadAllReduceHost, BlockRangesCoverEveryVectorOnce) {
  for (int64_t begin : {int64_t{0}, int64_t{5}, int64_t{32768}}) {
    for (int64_t len :
         {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{64}, int64_t{65}, int64_t{32768}, int64_t{100003}}) {
      for (int nblocks : {1, 3, 64, 128}) {
        std::vector<int> seen(len, 0);
        for (int b = 0; b < nblocks; ++b) {
          int64_t b0 = 0, b1 = 0;
          workloads::AllReduceBlockRange(begin, begin + len, b, nblocks, &b0, &b1);
          ASSERT_LE(begin, b0);
          ASSERT_LE(b0, b1);
          ASSERT_LE(b1, begin + len);
          for (int64_t v = b0; v < b1; ++v) ++seen[v - begin];
        }
        for (int64_t v = 0; v < len; ++v) ASSERT_EQ(seen[v], 1) << "vector " << v << " of " << len << ", " << nblocks;
      }
    }
  }
  // 512 KiB of bf16 = 32768 vectors: 256 blocks' worth at 128 vectors each, capped.
  EXPECT_EQ(workloads::AllReduceBlocks(workloads::DType::kBF16, 262144, 64), 64);
  EXPECT_EQ(workloads::AllReduceBlocks(workloads::DType::kBF16, 262144, 128), 128);
  EXPECT_EQ(workloads::AllReduceBlocks(workloads::DType::kBF16, 8 * 128, 64), 1);
  EXPECT_EQ(workloads::AllReduceBlocks(workloads::DType::kBF16, 8 * 129, 64), 2);
  EXPECT_EQ(workloads::AllReduceBlocks(workloads::DType::kF32, 1, 64), 1);
}

}  // namespace
}  // namespace overlapscope::workloads_test
