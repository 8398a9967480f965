#include "synthetic_trace.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "model/trace_builder.h"

namespace overlapscope::testing {

using namespace model;

// Thread 100, sorted by (start, -end):
//   user_annotation "step" [900,1250)   cpu_op "aten::mm" [1000,5000)   <- partial overlap
//   cudaLaunchKernel c1 [1100,1200)  (inside "step")
//   cudaLaunchKernel c2 [1300,1400)  cudaMemcpyAsync c3 [1400,1450)  cudaLaunchKernel c4 [1450,1460)
//   cudaEventRecord c5 [1460,1470)   cudaStreamWaitEvent c6 [1470,1480)  cudaStreamSynchronize c7 [4050,4200)
// Lanes: lane 0 = step{c1}, c2, c3, c4, c5, c6, c7; lane 1 = aten::mm (it starts inside "step" and
// ends after it). c2|c3 and c3|c4 touch: END before BEGIN at 1400 and 1450.
// Stream 7: gpu annotation "gemm_range" [1400,2000), kernel "gemm" c1 [1500,3000) (partial
//   overlap -> lane 1), zero-length kernel "empty" c4 [3000,3000) (lane 0, after the range).
// Stream 13: gpu annotation "nccl:all_gather" [1599,4001) around "ncclDevKernel_AllGather" c2
//   [1600,4000), collective 0; Stream Wait Event c6 [1475,1476) waits on stream 7, event record c5.
// Stream 20: "Memcpy DtoH (Device -> Pinned)" c3 [4000,4100), 4096 bytes.
// Device sync track: Stream Sync c7 [4050,4200) on stream 20.
// Flows (7): c1, c2, c3, c4 launches; c6 -> wait record; c7 -> stream sync; and stream 7's last
// activity before record c5 (kernel "empty", c4) -> the wait record.
Trace MakeSmallTrace() {
  TraceBuilder b;
  Process pr;
  pr.pid = 100;
  pr.rank = 0;
  pr.world_size = 2;
  pr.name = b.Intern("python");
  pr.host = b.Intern("node1");
  const ProcessId p = b.AddProcess(pr);
  const ThreadId th = b.GetOrAddThread(p, 100);
  b.data().threads[th].name = b.Intern("python main");
  const DeviceId dev = b.GetOrAddDevice(p, 0);
  b.data().devices[dev].name = b.Intern("NVIDIA H100");
  const StreamId s7 = b.GetOrAddStream(dev, 7), s13 = b.GetOrAddStream(dev, 13), s20 = b.GetOrAddStream(dev, 20);
  auto& d = b.data();
  auto range = [&](RangeKind k, const char* name, int64_t s, int64_t e, int64_t ext) {
    Range r;
    r.kind = k;
    r.thread = th;
    r.name = b.Intern(name);
    r.start_ns = s;
    r.end_ns = e;
    r.external_id = ext;
    d.ranges.push_back(r);
  };
  range(RangeKind::kUserAnnotation, "step", 900, 1250, 1);
  range(RangeKind::kCpuOp, "aten::mm", 1000, 5000, 2);
  auto api = [&](const char* name, int64_t corr, int64_t s, int64_t e) {
    ApiCall a;
    a.thread = th;
    a.name = b.Intern(name);
    a.correlation_id = corr;
    a.external_id = 2;
    a.start_ns = s;
    a.end_ns = e;
    d.api_calls.push_back(a);
  };
  api("cudaLaunchKernel", 1, 1100, 1200);
  api("cudaLaunchKernel", 2, 1300, 1400);
  api("cudaMemcpyAsync", 3, 1400, 1450);
  api("cudaLaunchKernel", 4, 1450, 1460);
  api("cudaEventRecord", 5, 1460, 1470);
  api("cudaStreamWaitEvent", 6, 1470, 1480);
  api("cudaStreamSynchronize", 7, 4050, 4200);

  Collective c;
  c.process = p;
  c.device = dev;
  c.stream = s13;
  c.op = b.Intern("allgather");
  c.communicator = b.Intern("0");
  c.dtype = b.Intern("Half");
  c.sequence = 0;
  c.in_elements = 8;
  c.out_elements = 16;
  c.bytes = 32;
  c.rank = 0;
  c.nranks = 2;
  c.correlation_id = 2;
  c.algorithm = b.Intern("RING");  // as the NCCL profiler plugin reports them
  c.protocol = b.Intern("SIMPLE");
  c.channels = 2;
  c.channel_span_ns = 2300;
  c.root_or_peer = 1;  // as NCCL's NVTX payload gives them
  c.reduce_op = b.Intern("sum");
  d.collectives.push_back(c);

  auto kernel = [&](StreamId s, const char* name, int64_t corr, int64_t st, int64_t e, CollectiveId col) {
    Kernel k;
    k.device = dev;
    k.stream = s;
    k.name = b.Intern(name);
    k.correlation_id = corr;
    k.external_id = 2;
    k.start_ns = st;
    k.end_ns = e;
    k.grid = {24, 1, 1};
    k.block = {544, 1, 1};
    k.registers_per_thread = 96;
    k.shared_memory_bytes = 1024;
    k.collective = col;
    d.kernels.push_back(k);
  };
  kernel(s7, "gemm", 1, 1500, 3000, kNone);
  kernel(s13, "ncclDevKernel_AllGather", 2, 1600, 4000, 0);
  kernel(s7, "empty", 4, 3000, 3000, kNone);

  Memcpy m;
  m.device = dev;
  m.stream = s20;
  m.name = b.Intern("Memcpy DtoH (Device -> Pinned)");
  m.correlation_id = 3;
  m.start_ns = 4000;
  m.end_ns = 4100;
  m.bytes = 4096;
  m.kind = MemcpyKind::kDtoH;
  m.src_kind = MemoryKind::kDevice;
  m.dst_kind = MemoryKind::kPinned;
  m.is_async = 1;
  d.memcpys.push_back(m);

  auto gpu_range = [&](StreamId s, const char* name, int64_t st, int64_t e) {
    GpuRange g;
    g.device = dev;
    g.stream = s;
    g.name = b.Intern(name);
    g.start_ns = st;
    g.end_ns = e;
    d.gpu_ranges.push_back(g);
  };
  gpu_range(s7, "gemm_range", 1400, 2000);
  gpu_range(s13, "nccl:all_gather", 1599, 4001);

  Sync w;
  w.kind = SyncKind::kStreamWaitEvent;
  w.device = dev;
  w.thread = th;
  w.stream = s13;
  w.wait_on_stream = s7;
  w.event_record_correlation_id = 5;
  w.correlation_id = 6;
  w.event_id = 3;
  w.name = b.Intern("Stream Wait Event");
  w.start_ns = 1475;
  w.end_ns = 1476;
  d.syncs.push_back(w);
  Sync ss;
  ss.kind = SyncKind::kStreamSync;
  ss.device = dev;
  ss.stream = s20;
  ss.thread = th;
  ss.correlation_id = 7;
  ss.name = b.Intern("Stream Sync");
  ss.start_ns = 4050;
  ss.end_ns = 4200;
  d.syncs.push_back(ss);
  auto t = std::move(b).Finalize();
  if (!t.ok()) std::abort();
  return std::move(t).value();
}

Trace MakeStepsTrace(int ranks, int steps, int kernels_per_step, int64_t base_ns) {
  TraceBuilder b;
  const StringId python = b.Intern("python"), launch = b.Intern("cudaLaunchKernel");
  const StringId gemm = b.Intern("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64"),
                 nccl = b.Intern("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
                 mm = b.Intern("aten::mm"), allgather = b.Intern("allgather"), h200 = b.Intern("NVIDIA H200");
  std::vector<StringId> step_names;
  for (int s = 0; s < steps; ++s) step_names.push_back(b.Intern(absl::StrCat("ProfilerStep#", s)));
  for (int r = 0; r < ranks; ++r) {
    Process pr;
    pr.pid = 1000 + r;
    pr.rank = r;
    pr.world_size = ranks;
    pr.name = python;
    const ProcessId p = b.AddProcess(pr);
    const ThreadId th = b.GetOrAddThread(p, 1000 + r);
    const DeviceId dev = b.GetOrAddDevice(p, r);
    b.data().devices[dev].name = h200;
    const StreamId compute = b.GetOrAddStream(dev, 7), comm = b.GetOrAddStream(dev, 17);
    auto& d = b.data();
    int64_t t = base_ns + 1000 * r, corr = 1;
    for (int s = 0; s < steps; ++s) {
      const int64_t step_start = t;
      for (int k = 0; k < kernels_per_step; ++k) {
        const bool is_comm = k % 4 == 3;
        Range op;
        op.kind = RangeKind::kCpuOp;
        op.thread = th;
        op.name = is_comm ? allgather : mm;
        op.start_ns = t + 10;
        op.end_ns = t + 1990;
        op.external_id = corr;
        d.ranges.push_back(op);
        ApiCall a;
        a.thread = th;
        a.name = launch;
        a.correlation_id = corr;
        a.external_id = corr;
        a.start_ns = t + 100;
        a.end_ns = t + 1100 + (k % 7);
        d.api_calls.push_back(a);
        Kernel kn;
        kn.device = dev;
        kn.stream = is_comm ? comm : compute;
        kn.name = is_comm ? nccl : gemm;
        kn.correlation_id = corr;
        kn.external_id = corr;
        kn.start_ns = t + 5000;
        kn.end_ns = t + 5000 + 1500 + 13 * (k % 5);
        kn.grid = {is_comm ? 24 : 132, 1, 1};
        kn.block = {is_comm ? 544 : 384, 1, 1};
        kn.registers_per_thread = 96;
        kn.shared_memory_bytes = 103808;
        d.kernels.push_back(kn);
        ++corr;
        t += 2000;
      }
      Range step;
      step.kind = RangeKind::kUserAnnotation;
      step.thread = th;
      step.name = step_names[s];
      step.start_ns = step_start;
      step.end_ns = t;
      d.ranges.push_back(step);
      (void)allgather;
    }
  }
  auto tr = std::move(b).Finalize();
  if (!tr.ok()) std::abort();
  return std::move(tr).value();
}

}  // namespace overlapscope::testing
