#include "importers/nccl/nccl_attribution.h"

#include "gtest/gtest.h"

namespace overlapscope::import {
namespace {

using model::kNone;

// One rank with a compute stream and a copy engine: an ncclAllGather range on the host thread
// encloses a cudaMemcpyBatchAsync (correlation 11) whose two copies carry the all-gather, as a
// zero-CTA (copy-engine) all-gather does; a GEMM launch (10) before the range and a copy
// (12) after it stay unattributed; an ncclCommInitRank range creates nothing.
TEST(NcclAttribution, CopiesInsideTheNcclRangeBecomeOneCollective) {
  model::TraceBuilder b;
  model::ProcessId p = b.AddProcess(model::Process{42, 0, 2});
  model::ThreadId t = b.GetOrAddThread(p, 42);
  model::ThreadId other = b.GetOrAddThread(p, 43);
  model::DeviceId dev = b.GetOrAddDevice(p, 0);
  model::StreamId s = b.GetOrAddStream(dev, 7), ce = b.GetOrAddStream(dev, 20);
  auto& d = b.data();
  model::StringId nccl = b.Intern("NCCL");
  d.ranges.push_back({1000, 2000, model::RangeKind::kNvtx, t, model::kNoCorrelation, b.Intern("ncclAllGather"), nccl});
  d.ranges.push_back({50, 900, model::RangeKind::kNvtx, t, model::kNoCorrelation, b.Intern("ncclCommInitRank"), nccl});
  auto api = [&](int64_t s0, int64_t e0, model::ThreadId th, int64_t corr, const char* name) {
    model::ApiCall a;
    a.start_ns = s0;
    a.end_ns = e0;
    a.thread = th;
    a.correlation_id = corr;
    a.name = b.Intern(name);
    d.api_calls.push_back(a);
  };
  api(100, 200, t, 9, "cudaMemsetAsync");          // inside ncclCommInitRank: not a collective
  api(500, 950, t, 10, "cudaLaunchKernel");        // before the all-gather range
  api(1100, 1400, t, 11, "cudaMemcpyBatchAsync");  // inside it
  api(1200, 1300, other, 13, "cudaLaunchKernel");  // inside in time, but another thread
  api(2100, 2200, t, 12, "cudaMemcpyAsync");       // after it
  model::Memset ms;
  ms.start_ns = 300;
  ms.end_ns = 310;
  ms.device = dev;
  ms.stream = s;
  ms.correlation_id = 9;
  d.memsets.push_back(ms);
  model::Kernel gemm;
  gemm.start_ns = 1000;
  gemm.end_ns = 5000;
  gemm.device = dev;
  gemm.stream = s;
  gemm.correlation_id = 10;
  d.kernels.push_back(gemm);
  model::Kernel k13 = gemm;
  k13.correlation_id = 13;
  d.kernels.push_back(k13);
  for (int i = 0; i < 3; ++i) {
    model::Memcpy m;
    m.start_ns = 1500 + 100 * i;
    m.end_ns = 1580 + 100 * i;
    m.device = dev;
    m.stream = ce;
    m.correlation_id = 11;
    m.kind = i == 0 ? model::MemcpyKind::kDtoD : i == 1 ? model::MemcpyKind::kPtoP : model::MemcpyKind::kHtoD;
    m.bytes = i < 2 ? 4096 : 56;  // own chunk, the peer's chunk, and a small argument block
    d.memcpys.push_back(m);
  }
  model::Memcpy after;
  after.start_ns = 2300;
  after.end_ns = 2400;
  after.device = dev;
  after.stream = s;
  after.correlation_id = 12;
  d.memcpys.push_back(after);

  NcclAttribution a = AttributeNcclRanges(b, p);
  EXPECT_EQ(a.nccl_ranges, 1);  // ncclCommInitRank is not a collective call
  EXPECT_EQ(a.collectives, 1);
  EXPECT_EQ(a.kernels, 0);
  EXPECT_EQ(a.memcpys, 3);
  EXPECT_EQ(a.bytes_from_copies, 1);
  auto tr = std::move(b).Finalize();
  ASSERT_TRUE(tr.ok()) << tr.status();
  ASSERT_EQ(tr->collectives().size(), 1u);
  const model::Collective& c = tr->collectives()[0];
  EXPECT_EQ(tr->str(c.op), "AllGather");
  EXPECT_EQ(c.rank, 0);
  EXPECT_EQ(c.nranks, 2);
  // Its span is that of its three copies: 1500 .. 1780.
  EXPECT_EQ(c.start_ns, 1500);
  EXPECT_EQ(c.end_ns, 1780);
  EXPECT_EQ(c.stream, ce);
  // No kernel carries it: its bytes are its device-to-device and peer copies', 2 x 4096 (the
  // nccl-tests size of a 2-rank copy-engine all-gather of 4096-byte chunks: own chunk + one
  // peer's); the 56-byte host copy is not data.
  EXPECT_EQ(c.bytes, 8192);
  int attributed = 0;
  for (const auto& m : tr->memcpys()) attributed += m.collective != kNone;
  EXPECT_EQ(attributed, 3);
  for (const auto& k : tr->kernels()) EXPECT_EQ(k.collective, kNone);
}

TEST(NcclAttribution, KernelCollectiveKeepsUnknownBytes) {
  // An all-gather range that launched a kernel and (NCCL's first call) a set-up copy: its bytes
  // are not the copy's 1 MiB; they stay unknown for the profiler plugin or the importer to fill.
  model::TraceBuilder b;
  model::ProcessId p = b.AddProcess(model::Process{42, 0, 2});
  model::ThreadId t = b.GetOrAddThread(p, 42);
  model::DeviceId dev = b.GetOrAddDevice(p, 0);
  model::StreamId s = b.GetOrAddStream(dev, 7);
  auto& d = b.data();
  d.ranges.push_back(
      {1000, 2000, model::RangeKind::kNvtx, t, model::kNoCorrelation, b.Intern("ncclAllGather"), b.Intern("NCCL")});
  for (int64_t corr : {20, 21}) {
    model::ApiCall a;
    a.start_ns = 1000 + 100 * (corr - 19);  // 1100, 1200: inside the range
    a.end_ns = a.start_ns + 50;
    a.thread = t;
    a.correlation_id = corr;
    a.name = b.Intern("cudaLaunchKernel");
    d.api_calls.push_back(a);
  }
  model::Memcpy setup;
  setup.start_ns = 3000;
  setup.end_ns = 3100;
  setup.device = dev;
  setup.stream = s;
  setup.correlation_id = 20;
  setup.bytes = 1 << 20;
  d.memcpys.push_back(setup);
  model::Kernel k;
  k.start_ns = 3200;
  k.end_ns = 4000;
  k.device = dev;
  k.stream = s;
  k.correlation_id = 21;
  d.kernels.push_back(k);
  NcclAttribution a = AttributeNcclRanges(b, p);
  EXPECT_EQ(a.collectives, 1);
  EXPECT_EQ(a.kernels, 1);
  EXPECT_EQ(a.memcpys, 1);
  EXPECT_EQ(a.bytes_from_copies, 0);
  auto tr = std::move(b).Finalize();
  ASSERT_TRUE(tr.ok()) << tr.status();
  ASSERT_EQ(tr->collectives().size(), 1u);
  EXPECT_EQ(tr->collectives()[0].bytes, -1);
}

TEST(NcclAttribution, RangeNames) {
  EXPECT_EQ(NcclRangeOp("ncclAllGather"), "AllGather");
  EXPECT_EQ(NcclRangeOp("ncclGroupEnd"), "GroupEnd");
  EXPECT_EQ(NcclRangeOp("ncclSend"), "Send");
  EXPECT_EQ(NcclRangeOp("ncclCommInitRank"), "");
  EXPECT_EQ(NcclRangeOp("AllGather"), "");
}

TEST(NcclAttribution, NoNcclDomainChangesNothing) {
  model::TraceBuilder b;
  model::ProcessId p = b.AddProcess(model::Process{});
  NcclAttribution a = AttributeNcclRanges(b, p);
  EXPECT_EQ(a.collectives, 0);
  EXPECT_EQ(a.nccl_ranges, 0);
}

}  // namespace
}  // namespace overlapscope::import
