// Collectives named by NVTX ranges of the domain "overlapscope.collective"
// (importers/nccl/collective_range.h): the message format, and the attribution that turns the GPU
// work launched inside such a range into a collective with the message's fields.
#include "importers/nccl/collective_range.h"

#include "gtest/gtest.h"
#include "importers/nccl/nccl_attribution.h"

namespace overlapscope::import {
namespace {

TEST(CollectiveRange, ParsesEveryField) {
  auto f = ParseCollectiveRange(
      "AllReduce comm=9f3a0c1d22e4b7a1 seq=12 bytes=2097152 rank=1 nranks=2 dtype=bf16 redop=sum impl=one-shot");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->op, "AllReduce");
  EXPECT_EQ(f->comm, 0x9f3a0c1d22e4b7a1ull);
  EXPECT_EQ(f->sequence, 12);
  EXPECT_EQ(f->bytes, 2097152);
  EXPECT_EQ(f->rank, 1);
  EXPECT_EQ(f->nranks, 2);
  EXPECT_EQ(f->dtype, "bf16");
  EXPECT_EQ(f->redop, "sum");
  EXPECT_EQ(f->impl, "one-shot");
  EXPECT_EQ(CollectiveRangeCommName(f->comm), "ovs:9f3a0c1d22e4b7a1");
  EXPECT_EQ(CollectiveRangeCommName(0x2a), "ovs:000000000000002a");
}

TEST(CollectiveRange, KeysInAnyOrderOptionalOnesAbsentUnknownOnesIgnored) {
  auto f = ParseCollectiveRange("AllGather nranks=4 future=x rank=3 bytes=0 seq=0 comm=A");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->op, "AllGather");
  EXPECT_EQ(f->comm, 0xAu);
  EXPECT_EQ(f->rank, 3);
  EXPECT_EQ(f->nranks, 4);
  EXPECT_EQ(f->bytes, 0);
  EXPECT_TRUE(f->dtype.empty());
  EXPECT_TRUE(f->redop.empty());
}

TEST(CollectiveRange, MalformedMessagesAreRefused) {
  const char* bad[] = {
      "",
      "AllReduce",                                                          // no keys
      "Foo comm=1 seq=0 bytes=8 rank=0 nranks=2",                           // not a collective op
      "GroupEnd comm=1 seq=0 bytes=8 rank=0 nranks=2",                      // a group call, no collective
      "AllReduce seq=0 bytes=8 rank=0 nranks=2",                            // no comm
      "AllReduce comm=1 bytes=8 rank=0 nranks=2",                           // no seq
      "AllReduce comm=1 seq=0 rank=0 nranks=2",                             // no bytes
      "AllReduce comm=1 seq=0 bytes=8 nranks=2",                            // no rank
      "AllReduce comm=1 seq=0 bytes=8 rank=0",                              // no nranks
      "AllReduce comm=1 seq=0 bytes=8 rank=2 nranks=2",                     // rank >= nranks
      "AllReduce comm=0x1 seq=0 bytes=8 rank=0 nranks=2",                   // "0x" prefix
      "AllReduce comm=11112222333344445 seq=0 bytes=8 rank=0 nranks=2",     // 17 hex digits
      "AllReduce comm=1 seq=-1 bytes=8 rank=0 nranks=2",                    // negative
      "AllReduce comm=1 seq=+1 bytes=8 rank=0 nranks=2",                    // sign
      "AllReduce comm=1 seq=1x bytes=8 rank=0 nranks=2",                    // trailing junk
      "AllReduce comm=1  seq=0 bytes=8 rank=0 nranks=2",                    // double space
      "AllReduce comm=1 seq=0 bytes=8 rank=0 nranks=2 ",                    // trailing space
      "AllReduce comm=1 seq=0 bytes=8 rank=0 nranks=0",                     // no ranks
      "AllReduce comm=1 seq=0 bytes=99999999999999999999 rank=0 nranks=2",  // beyond int64
  };
  for (const char* m : bad) EXPECT_FALSE(ParseCollectiveRange(m).has_value()) << "'" << m << "'";
}

// One process driving two GPUs from two threads (the built-in workloads' model): each thread
// wraps the launch of its GPU's all-reduce kernel in an "overlapscope.collective" range. A
// malformed range in that domain is counted and creates nothing; an "overlapscope.collective"
// range that launched nothing creates nothing either.
TEST(CollectiveRange, AttributionMakesCollectivesWithTheMessagesFields) {
  model::TraceBuilder b;
  model::ProcessId p = b.AddProcess(model::Process{42});
  auto& d = b.data();
  const model::StringId dom = b.Intern(kCollectiveRangeDomain);
  for (int r = 0; r < 2; ++r) {
    model::ThreadId t = b.GetOrAddThread(p, 100 + r);
    model::DeviceId dev = b.GetOrAddDevice(p, r);
    model::StreamId s = b.GetOrAddStream(dev, 7);
    const std::string name = "AllReduce comm=00000000000000ab seq=5 bytes=4096 rank=" + std::to_string(r) +
                             " nranks=2 dtype=fp32 redop=sum impl=two-shot";
    d.ranges.push_back({1000, 2000, model::RangeKind::kNvtx, t, model::kNoCorrelation, b.Intern(name), dom});
    model::ApiCall a;
    a.start_ns = 1100;
    a.end_ns = 1200;
    a.thread = t;
    a.correlation_id = 10 + r;
    a.name = b.Intern("cudaLaunchKernel");
    d.api_calls.push_back(a);
    model::Kernel k;
    k.start_ns = 3000 + 100 * r;
    k.end_ns = 5000;
    k.device = dev;
    k.stream = s;
    k.correlation_id = 10 + r;
    k.name =
        b.Intern("void overlapscope::workloads::ovs_allreduce_two_shot<float>(overlapscope::workloads::AllReduceArgs)");
    d.kernels.push_back(k);
  }
  model::ThreadId t0 = b.GetOrAddThread(p, 100);
  d.ranges.push_back({6000, 7000, model::RangeKind::kNvtx, t0, model::kNoCorrelation,
                      b.Intern("AllReduce comm=zz seq=6 bytes=4096 rank=0 nranks=2"), dom});
  d.ranges.push_back({8000, 9000, model::RangeKind::kNvtx, t0, model::kNoCorrelation,
                      b.Intern("AllReduce comm=ab seq=7 bytes=4096 rank=0 nranks=2"), dom});

  NcclAttribution a = AttributeNcclRanges(b, p);
  EXPECT_EQ(a.nccl_ranges, 0);
  EXPECT_EQ(a.own_ranges, 3);  // two with a kernel, one without
  EXPECT_EQ(a.own_malformed, 1);
  EXPECT_EQ(a.own_collectives, 2);
  EXPECT_EQ(a.collectives, 2);
  EXPECT_EQ(a.kernels, 2);
  EXPECT_TRUE(a.made.empty());  // NCCL's payloads and plugin records are not looked up for these
  auto tr = std::move(b).Finalize();
  ASSERT_TRUE(tr.ok()) << tr.status();
  ASSERT_EQ(tr->collectives().size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const model::Collective& c = tr->collectives()[r];
    EXPECT_EQ(tr->str(c.op), "AllReduce");
    EXPECT_EQ(tr->str(c.communicator), "ovs:00000000000000ab");
    EXPECT_EQ(c.sequence, 5);
    EXPECT_EQ(c.bytes, 4096);
    EXPECT_EQ(c.rank, r);
    EXPECT_EQ(c.nranks, 2);
    EXPECT_EQ(tr->str(c.dtype), "fp32");
    EXPECT_EQ(tr->str(c.reduce_op), "sum");
    EXPECT_EQ(c.start_ns, 3000 + 100 * r);  // the span of its kernel
    EXPECT_EQ(c.end_ns, 5000);
    EXPECT_EQ(tr->kernels()[r].collective, r);
  }
}

}  // namespace
}  // namespace overlapscope::import
