// Merging NCCL plugin records onto a synthetic capture: NVTX-made collectives (a kernel
// all-gather, a copy-engine all-gather, a grouped all-gather whose task event comes from
// another thread), a collective created from plugin records alone (no NCCL range), one plugin
// collective that matches nothing and one outside the capture window.
#include "gtest/gtest.h"
#include "importers/nccl/nccl_attribution.h"
#include "importers/nccl/nccl_plugin_records.h"
#include "ovnccl_writer.h"
#include "test_util.h"

namespace overlapscope::import {
using namespace ::overlapscope::formats;  // the record layouts the tests encode
namespace {

using formats::kTypeCollApi;
using formats::kTypeGroupApi;
using model::kNone;

TEST(NcclPluginMerge, PlacesPluginCollectivesByThreadAndTime) {
  model::TraceBuilder b;
  const model::ProcessId p = b.AddProcess(model::Process{4242, 0, 2});
  const model::ThreadId t = b.GetOrAddThread(p, 11);
  const model::DeviceId dev = b.GetOrAddDevice(p, 0);
  const model::StreamId s = b.GetOrAddStream(dev, 7), ce = b.GetOrAddStream(dev, 20);
  auto& d = b.data();
  const model::StringId nccl = b.Intern("NCCL");
  auto range = [&](int64_t s0, int64_t e0, const char* name) {
    d.ranges.push_back({s0, e0, model::RangeKind::kNvtx, t, model::kNoCorrelation, b.Intern(name), nccl});
  };
  auto api = [&](int64_t s0, int64_t e0, int64_t corr) {
    model::ApiCall a;
    a.start_ns = s0, a.end_ns = e0, a.thread = t, a.correlation_id = corr, a.name = b.Intern("launch");
    d.api_calls.push_back(a);
  };
  auto kernel = [&](int64_t s0, int64_t e0, int64_t corr) {
    model::Kernel k;
    k.start_ns = s0, k.end_ns = e0, k.device = dev, k.stream = s, k.correlation_id = corr;
    d.kernels.push_back(k);
  };
  range(1000, 2000, "ncclAllGather");  // kernel all-gather, launched inside its call
  range(3000, 4000, "ncclAllGather");  // copy-engine all-gather
  range(5000, 5100, "ncclAllGather");  // grouped: no GPU work in the call itself ...
  range(5200, 6000, "ncclGroupEnd");   // ... its kernel is launched in ncclGroupEnd
  api(1200, 1300, 5), kernel(10000, 11000, 5);
  api(3100, 3200, 9);
  for (int i = 0; i < 2; ++i) {
    model::Memcpy m;
    m.start_ns = 12000 + 100 * i, m.end_ns = 12500 + 100 * i, m.device = dev, m.stream = ce, m.correlation_id = 9;
    d.memcpys.push_back(m);
  }
  api(5300, 5400, 12), kernel(13000, 14000, 12);
  api(7100, 7200, 20), kernel(15000, 16000, 20);  // no NCCL range around it (NVTX off)
  const NcclAttribution nvtx = AttributeNcclRanges(b, p);
  ASSERT_EQ(nvtx.collectives, 3);

  ::overlapscope::testing::OvncclWriter w;
  w.Process(4242).Comm(1, 0xabc, 2, 1).Comm(2, 0xdef, 2, 1);
  // In range 1: its task event starts inside the call, on the same thread.
  w.Api(1, 0, 1, kTypeGroupApi, 1050, 11).Api(2, 1, 1, kTypeCollApi, 1100, 11, "AllGather", 1024, "ncclFloat16", 0);
  w.Coll(3, 2, 1, 1400, 11, "AllGather", 1024, "ncclFloat16", 7, 2, "RING", "SIMPLE", 1);
  w.ChStart(4, 3, 900000, 0).ChStop(4, 905000).ChStart(5, 3, 900300, 1).ChStop(5, 905400);
  w.Stop(3, 1500).Stop(2, 1800).Stop(1, 1900);
  // Copy-engine all-gather on communicator 2: API events only (NCCL has no task event for it).
  w.Api(10, 0, 2, kTypeGroupApi, 3050, 11).Api(11, 10, 2, kTypeCollApi, 3060, 11, "AllGather", 2048, "ncclBfloat16", 3);
  w.Stop(11, 3800).Stop(10, 3900);
  // Grouped: the task event starts later on another thread (tid 99, a CUDA host callback).
  w.Api(50, 0, 1, kTypeGroupApi, 4990, 11).Api(51, 50, 1, kTypeCollApi, 5010, 11, "AllGather", 512, "ncclFloat32", 1);
  w.Coll(52, 51, 1, 5950, 99, "AllGather", 512, "ncclFloat32", 8, 1, "RING", "LL", 1);
  w.Stop(51, 5090).Stop(50, 5900).Stop(52, 5960, 99);
  // No NCCL range: the GroupApi window [7000, 7900] on tid 11 holds the launch (corr 20).
  w.Api(20, 0, 1, kTypeGroupApi, 7000, 11).Api(21, 20, 1, kTypeCollApi, 7050, 11, "AllReduce", 256, "ncclFloat32", 0);
  w.Coll(22, 21, 1, 7500, 11, "AllReduce", 256, "ncclFloat32", 0, 4, "TREE", "LL", 1);
  w.Stop(22, 7600).Stop(21, 7850).Stop(20, 7900);
  // Matches nothing: no NCCL range, no CUDA call in [8000, 8900].
  w.Api(30, 0, 1, kTypeGroupApi, 8000, 11).Api(31, 30, 1, kTypeCollApi, 8010, 11, "AllGather", 8, "ncclFloat32", 2);
  w.Stop(31, 8800).Stop(30, 8900);
  // Outside the window [0, 9000].
  w.Api(40, 0, 1, kTypeGroupApi, 9500, 11).Api(41, 40, 1, kTypeCollApi, 9510, 11, "AllGather", 8, "ncclFloat32", 3);
  w.Stop(41, 9800).Stop(40, 9900);

  auto f = ParseNcclPluginBytes(w.bytes(), "nccl.4242.ovnccl");
  ASSERT_TRUE(f.ok()) << f.status();
  NcclMergeOptions o;
  o.window_start_ns = 0, o.window_end_ns = 9000;
  const NcclMergeResult r = MergeNcclPlugin(std::move(f).value(), nvtx, b, p, o);
  EXPECT_EQ(r.linked_to_nvtx, 3);
  EXPECT_EQ(r.created, 1);
  EXPECT_EQ(r.unmatched, 1);
  EXPECT_EQ(r.outside_window, 1);
  EXPECT_EQ(r.kernels, 1);

  auto tr = std::move(b).Finalize();
  ASSERT_TRUE(tr.ok()) << tr.status();
  ASSERT_EQ(tr->collectives().size(), 4u);  // sorted by GPU start: 10000, 12000, 13000, 15000
  const auto& cs = tr->collectives();
  // Kernel all-gather: 1024 fp16 per rank, 2 ranks -> out 2048 elements, 4096 bytes;
  // channel span = max(905000, 905400) - min(900000, 900300) = 5400 ns.
  EXPECT_EQ(tr->str(cs[0].op), "AllGather");
  EXPECT_EQ(tr->str(cs[0].communicator), "nccl:0000000000000abc");
  EXPECT_EQ(cs[0].rank, 1);  // the communicator's rank, not the process's (0)
  EXPECT_EQ(cs[0].nranks, 2);
  EXPECT_EQ(cs[0].sequence, 7);
  EXPECT_EQ(tr->str(cs[0].dtype), "float16");
  EXPECT_EQ(cs[0].in_elements, 1024);
  EXPECT_EQ(cs[0].out_elements, 2048);
  EXPECT_EQ(cs[0].bytes, 4096);
  EXPECT_EQ(tr->str(cs[0].algorithm), "RING");
  EXPECT_EQ(tr->str(cs[0].protocol), "SIMPLE");
  EXPECT_EQ(cs[0].channels, 2);
  EXPECT_EQ(cs[0].channel_span_ns, 5400);
  // Copy-engine all-gather: 2048 bf16 x 2 ranks x 2 bytes = 8192; sequence from the API
  // ordinal (communicator 2 has no NCCL task numbers); no algorithm, protocol or channels.
  EXPECT_EQ(tr->str(cs[1].communicator), "nccl:0000000000000def");
  EXPECT_EQ(cs[1].sequence, 3);
  EXPECT_EQ(tr->str(cs[1].dtype), "bfloat16");
  EXPECT_EQ(cs[1].bytes, 8192);
  EXPECT_EQ(cs[1].algorithm, 0);
  EXPECT_EQ(cs[1].channels, kNone);
  EXPECT_EQ(cs[1].channel_span_ns, -1);
  EXPECT_EQ(cs[1].start_ns, 12000);  // its two copies: 12000 .. 12600
  EXPECT_EQ(cs[1].end_ns, 12600);
  // Grouped all-gather: the NVTX collective was "GroupEnd"; 512 fp32 x 2 ranks x 4 = 4096.
  EXPECT_EQ(tr->str(cs[2].op), "AllGather");
  EXPECT_EQ(cs[2].sequence, 8);
  EXPECT_EQ(cs[2].bytes, 4096);
  EXPECT_EQ(tr->str(cs[2].protocol), "LL");
  EXPECT_EQ(cs[2].channels, 1);
  // Created from the plugin: all-reduce of 256 fp32 = 1024 bytes, carried by kernel corr 20.
  EXPECT_EQ(tr->str(cs[3].op), "AllReduce");
  EXPECT_EQ(cs[3].sequence, 0);
  EXPECT_EQ(cs[3].bytes, 1024);
  EXPECT_EQ(tr->str(cs[3].algorithm), "TREE");
  EXPECT_EQ(cs[3].channels, 4);
  EXPECT_EQ(cs[3].start_ns, 15000);
  for (const auto& k : tr->kernels()) EXPECT_NE(k.collective, kNone) << k.correlation_id;

  const model::SourceStats* plugin = nullptr;
  for (const auto& src : tr->sources())
    if (src.format == "nccl-plugin") plugin = &src;
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->Count(model::Stat::kNcclPluginUnmatched), 1);
  EXPECT_EQ(import::testing::DetailOf(*plugin, model::Stat::kNcclPluginMerge,
                                      "plugin collectives outside the capture window"),
            1);
  EXPECT_EQ(import::testing::DetailOf(*plugin, model::Stat::kNcclPluginMerge,
                                      "collectives created from plugin records (no NCCL range)"),
            1);
}

// NCCL 2.28.3 runs ncclAlltoAll as one send and one receive per peer: under the call's
// GroupApi event (ordinal 5 on its communicator) one P2pApi event and one P2p task (no NCCL
// sequence number) each, as the plugin recorded on 2 x H200. The collective keeps the NCCL
// range's op, sizes come from the sends and receives, the sequence from the group's ordinal.
TEST(NcclPluginMerge, AllToAllFromPointToPointTasks) {
  model::TraceBuilder b;
  const model::ProcessId p = b.AddProcess(model::Process{5, 0, 2});
  const model::ThreadId t = b.GetOrAddThread(p, 21);
  const model::DeviceId dev = b.GetOrAddDevice(p, 0);
  auto& d = b.data();
  d.ranges.push_back(
      {100, 900, model::RangeKind::kNvtx, t, model::kNoCorrelation, b.Intern("ncclAlltoAll"), b.Intern("NCCL")});
  model::ApiCall a;
  a.start_ns = 300, a.end_ns = 350, a.thread = t, a.correlation_id = 4;
  d.api_calls.push_back(a);
  model::Kernel k;
  k.start_ns = 2000, k.end_ns = 2500, k.device = dev, k.stream = b.GetOrAddStream(dev, 7), k.correlation_id = 4;
  d.kernels.push_back(k);
  const NcclAttribution nvtx = AttributeNcclRanges(b, p);
  ::overlapscope::testing::OvncclWriter w;
  w.Process(5).Comm(1, 0x42, 2, 0);
  w.Api(1, 0, 1, kTypeGroupApi, 110, 21, "", 0, "", 5);
  uint64_t id = 2;
  for (const char* f : {"Send", "Recv", "Send", "Recv"}) {
    w.Api(id, 1, 1, formats::kTypeP2pApi, 120 + id, 21, f, 100, "ncclFloat32", id / 4);
    w.Coll(id + 10, id, 1, 400, 21, f, 100, "ncclFloat32", -1, 2, "", "", 0, formats::kTypeP2p);
    w.Stop(id, 130 + id).Stop(id + 10, 450, 21);
    ++id;
  }
  w.Stop(1, 800);
  auto f = ParseNcclPluginBytes(w.bytes(), "a2a");
  ASSERT_TRUE(f.ok());
  const NcclMergeResult r = MergeNcclPlugin(std::move(f).value(), nvtx, b, p);
  EXPECT_EQ(r.linked_to_nvtx, 4);
  auto tr = std::move(b).Finalize();
  ASSERT_TRUE(tr.ok());
  ASSERT_EQ(tr->collectives().size(), 1u);
  const model::Collective& c = tr->collectives()[0];
  EXPECT_EQ(tr->str(c.op), "AlltoAll");
  // 100 floats to each of 2 peers: in = sends 2 x 100, out = receives 2 x 100; 200 x 4 B = 800.
  EXPECT_EQ(c.in_elements, 200);
  EXPECT_EQ(c.out_elements, 200);
  EXPECT_EQ(c.bytes, 800);
  EXPECT_EQ(c.sequence, 5);  // the group's ordinal: NCCL numbers no point-to-point task
  EXPECT_EQ(c.channels, 2);
  EXPECT_EQ(c.algorithm, 0);  // P2p events carry no algorithm/protocol
  EXPECT_EQ(tr->str(c.communicator), "nccl:0000000000000042");
}

// The same sends and receives written as ncclGroupStart/ncclSend/ncclRecv/ncclGroupEnd: the
// NCCL range is ncclGroupEnd, the collective becomes "SendRecv".
TEST(NcclPluginMerge, SendRecvGroupNamedFromThePlugin) {
  model::TraceBuilder b;
  const model::ProcessId p = b.AddProcess(model::Process{5, 0, 2});
  const model::ThreadId t = b.GetOrAddThread(p, 21);
  const model::DeviceId dev = b.GetOrAddDevice(p, 0);
  auto& d = b.data();
  d.ranges.push_back(
      {100, 900, model::RangeKind::kNvtx, t, model::kNoCorrelation, b.Intern("ncclGroupEnd"), b.Intern("NCCL")});
  model::ApiCall a;
  a.start_ns = 300, a.end_ns = 350, a.thread = t, a.correlation_id = 4;
  d.api_calls.push_back(a);
  model::Kernel k;
  k.start_ns = 2000, k.end_ns = 2500, k.device = dev, k.stream = b.GetOrAddStream(dev, 7), k.correlation_id = 4;
  d.kernels.push_back(k);
  const NcclAttribution nvtx = AttributeNcclRanges(b, p);
  ::overlapscope::testing::OvncclWriter w;
  w.Process(5).Comm(1, 0x42, 2, 0);
  w.Api(1, 0, 1, kTypeGroupApi, 50, 21, "", 0, "", 0);  // ends inside ncclGroupEnd's range
  w.Api(2, 1, 1, formats::kTypeP2pApi, 60, 21, "Send", 8, "ncclInt8", 0);
  w.Api(3, 1, 1, formats::kTypeP2pApi, 70, 21, "Recv", 8, "ncclInt8", 0);
  w.Coll(4, 2, 1, 400, 21, "Send", 8, "ncclInt8", -1, 1, "", "", 0, formats::kTypeP2p);
  w.Stop(2, 65).Stop(3, 75).Stop(4, 410).Stop(1, 850);
  auto f = ParseNcclPluginBytes(w.bytes(), "sr");
  ASSERT_TRUE(f.ok());
  MergeNcclPlugin(std::move(f).value(), nvtx, b, p);
  auto tr = std::move(b).Finalize();
  ASSERT_TRUE(tr.ok());
  ASSERT_EQ(tr->collectives().size(), 1u);
  // The Send task starts inside ncclGroupEnd's range; the Recv call (no task event) by its
  // group's stop at 850, inside the same range: one collective of both, 8 bytes each way.
  EXPECT_EQ(tr->str(tr->collectives()[0].op), "SendRecv");
  EXPECT_EQ(tr->collectives()[0].bytes, 8);
  EXPECT_EQ(tr->collectives()[0].sequence, 0);
}

// Without any NCCL range and without CUDA calls, nothing is created and everything is counted.
TEST(NcclPluginMerge, EmptyCaptureCountsEverything) {
  model::TraceBuilder b;
  const model::ProcessId p = b.AddProcess(model::Process{1, 0, 1});
  ::overlapscope::testing::OvncclWriter w;
  w.Process(1).Comm(1, 5, 1, 0);
  w.Api(1, 0, 1, kTypeGroupApi, 10, 3).Api(2, 1, 1, kTypeCollApi, 11, 3, "AllReduce", 4, "ncclFloat32", 0);
  w.Coll(3, 2, 1, 12, 3, "AllReduce", 4, "ncclFloat32", 0, 1, "RING", "LL", 0);
  w.Stop(3, 13).Stop(2, 14).Stop(1, 15);
  auto f = ParseNcclPluginBytes(w.bytes(), "f");
  ASSERT_TRUE(f.ok());
  const NcclMergeResult r = MergeNcclPlugin(std::move(f).value(), NcclAttribution{}, b, p);
  EXPECT_EQ(r.unmatched, 1);
  EXPECT_EQ(r.created, 0);
  EXPECT_TRUE(b.data().collectives.empty());
  ASSERT_EQ(b.data().sources.size(), 1u);
  EXPECT_EQ(b.data().sources[0].skipped(), 1);
}

}  // namespace
}  // namespace overlapscope::import
