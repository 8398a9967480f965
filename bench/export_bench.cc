// Export benchmark: .pftrace and Chrome JSON writing speed and sizes.
//
// Targets (checked here, printed, never asserted by unit tests): >= 2 M events/s written for
// .pftrace, and a .pftrace at most 1/4 of the Kineto-style JSON of the same events.
//
// usage: export_bench [EVENTS (default 3000000)] [KINETO_TRACE...]
//   A synthetic trace of about EVENTS model events (2 ranks; per launch a cpu_op, its
//   cudaLaunchKernel and the kernel, plus a D2H copy with a stream sync every 16 launches) is
//   built with model::TraceBuilder; then each KINETO_TRACE (default: the traces under
//   tests/data/kineto) is imported and exported the same way.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "exporters/chrome_writer.h"
#include "exporters/perfetto_writer.h"
#include "importers/kineto/import.h"
#include "model/trace_builder.h"

namespace {

using namespace overlapscope;
using Clock = std::chrono::steady_clock;

model::Trace MakeTrace(int64_t target_events) {
  model::TraceBuilder b;
  const int ranks = 2;
  const auto launch = b.Intern("cudaLaunchKernel"), memcpy_api = b.Intern("cudaMemcpyAsync"),
             sync_api = b.Intern("cudaStreamSynchronize"), python = b.Intern("python"), h200 = b.Intern("NVIDIA H200"),
             copy_name = b.Intern("Memcpy DtoH (Device -> Pinned)"), sync_name = b.Intern("Stream Sync"),
             allgather = b.Intern("allgather"), group = b.Intern("0"), half = b.Intern("Half");
  std::vector<model::StringId> kernels, ops;
  for (int i = 0; i < 40; ++i) {
    kernels.push_back(b.Intern("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>_" +
                               std::to_string(i)));
    ops.push_back(b.Intern("aten::op_" + std::to_string(i)));
  }
  const auto nccl = b.Intern("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  // Per launch: cpu_op + API + kernel = 3 events; every 16th launch adds copy API, copy, sync
  // API and sync record = 4 more: (16 * 3 + 4) / 16 = 3.25 events per launch.
  const int64_t launches_per_rank = static_cast<int64_t>(target_events / 3.25 / ranks);
  for (int r = 0; r < ranks; ++r) {
    model::Process pr;
    pr.pid = 4000 + r;
    pr.rank = r;
    pr.world_size = ranks;
    pr.name = python;
    const auto p = b.AddProcess(pr);
    const auto th = b.GetOrAddThread(p, 4000 + r);
    const auto dev = b.GetOrAddDevice(p, r);
    b.data().devices[dev].name = h200;
    const auto compute = b.GetOrAddStream(dev, 7), comm = b.GetOrAddStream(dev, 17), copy = b.GetOrAddStream(dev, 21);
    auto& d = b.data();
    int64_t t = 1'790'857'026'000'000'000 + 12'345 * r, corr = 1, gpu_t = t + 20'000;
    for (int64_t i = 0; i < launches_per_rank; ++i) {
      const bool is_comm = i % 10 == 9;
      model::Range op;
      op.thread = th;
      op.name = is_comm ? allgather : ops[i % ops.size()];
      op.start_ns = t;
      op.end_ns = t + 3'100;
      op.external_id = i;
      d.ranges.push_back(op);
      model::ApiCall a;
      a.thread = th;
      a.name = launch;
      a.correlation_id = corr;
      a.external_id = i;
      a.start_ns = t + 400;
      a.end_ns = t + 2'900 + (i % 13);
      d.api_calls.push_back(a);
      model::Kernel k;
      k.device = dev;
      k.stream = is_comm ? comm : compute;
      k.name = is_comm ? nccl : kernels[i % kernels.size()];
      k.correlation_id = corr++;
      k.external_id = i;
      gpu_t = std::max(gpu_t, t + 5'000);
      k.start_ns = gpu_t;
      k.end_ns = gpu_t + 1'000 + 37 * (i % 50);
      k.grid = {static_cast<int32_t>(132 + i % 7), 1, 1};
      k.block = {256, 1, 1};
      k.registers_per_thread = 32;
      k.shared_memory_bytes = 0;
      if (is_comm) {
        model::Collective c;
        c.process = p;
        c.device = dev;
        c.stream = comm;
        c.op = allgather;
        c.communicator = group;
        c.dtype = half;
        c.sequence = i / 10;
        c.in_elements = 1 << 20;
        c.out_elements = 2 << 20;
        c.nranks = ranks;
        c.rank = r;
        c.correlation_id = k.correlation_id;
        k.collective = static_cast<int32_t>(d.collectives.size());
        d.collectives.push_back(c);
      } else {
        gpu_t = k.end_ns + 200;
      }
      d.kernels.push_back(k);
      t += 3'200;
      if (i % 16 == 15) {
        model::ApiCall ca;
        ca.thread = th;
        ca.name = memcpy_api;
        ca.correlation_id = corr;
        ca.start_ns = t;
        ca.end_ns = t + 1'500;
        d.api_calls.push_back(ca);
        model::Memcpy m;
        m.device = dev;
        m.stream = copy;
        m.name = copy_name;
        m.correlation_id = corr++;
        m.start_ns = gpu_t;
        m.end_ns = gpu_t + 2'240;
        m.bytes = 4096;
        m.kind = model::MemcpyKind::kDtoH;
        m.src_kind = model::MemoryKind::kDevice;
        m.dst_kind = model::MemoryKind::kPinned;
        m.is_async = 1;
        d.memcpys.push_back(m);
        model::ApiCall sa;
        sa.thread = th;
        sa.name = sync_api;
        sa.correlation_id = corr;
        sa.start_ns = t + 1'600;
        sa.end_ns = std::max(t + 2'000, m.end_ns);
        d.api_calls.push_back(sa);
        model::Sync y;
        y.kind = model::SyncKind::kStreamSync;
        y.device = dev;
        y.stream = copy;
        y.thread = th;
        y.correlation_id = corr++;
        y.name = sync_name;
        y.start_ns = sa.start_ns;
        y.end_ns = sa.end_ns;
        d.syncs.push_back(y);
        t = sa.end_ns + 100;
      }
    }
  }
  auto tr = std::move(b).Finalize();
  if (!tr.ok()) {
    std::fprintf(stderr, "finalize: %s\n", std::string(tr.status().message()).c_str());
    std::exit(1);
  }
  return std::move(tr).value();
}

// `copies` copies of a real trace one after the other (times shifted by its span, correlation
// ids by their range), to measure real names and args at a size where timing means something.
model::Trace Tile(const model::Trace& t, int copies) {
  model::TraceBuilder b;
  for (size_t i = 1; i < t.strings().size(); ++i) b.Intern(t.str(static_cast<model::StringId>(i)));
  auto& d = b.data();
  for (const auto& p : t.processes()) b.AddProcess(p);
  for (const auto& th : t.threads()) d.threads[b.GetOrAddThread(th.process, th.tid)].name = th.name;
  for (const auto& dev : t.devices()) d.devices[b.GetOrAddDevice(dev.process, dev.ordinal)].name = dev.name;
  for (const auto& s : t.streams()) d.streams[b.GetOrAddStream(s.device, s.native_id)].name = s.name;
  int64_t max_corr = 0;
  for (const auto& a : t.api_calls()) max_corr = std::max(max_corr, a.correlation_id);
  const int64_t span = t.end_ns() - t.start_ns() + 1000, corr_step = max_corr + 1;
  const int32_t nc = static_cast<int32_t>(t.collectives().size());
  for (int k = 0; k < copies; ++k) {
    const int64_t dt = k * span, dc = k * corr_step;
    auto shift = [&](auto e) {
      e.start_ns += dt;
      e.end_ns += dt;
      return e;
    };
    auto corr = [&](int64_t c) { return c < 0 ? c : c + dc; };
    for (auto e : t.kernels()) {
      e = shift(e);
      e.correlation_id = corr(e.correlation_id);
      if (e.collective >= 0) e.collective += k * nc;
      d.kernels.push_back(e);
    }
    for (auto e : t.memcpys()) {
      e = shift(e);
      e.correlation_id = corr(e.correlation_id);
      if (e.collective >= 0) e.collective += k * nc;
      d.memcpys.push_back(e);
    }
    for (auto e : t.memsets()) {
      e = shift(e);
      e.correlation_id = corr(e.correlation_id);
      d.memsets.push_back(e);
    }
    for (auto e : t.api_calls()) {
      e = shift(e);
      e.correlation_id = corr(e.correlation_id);
      d.api_calls.push_back(e);
    }
    for (auto e : t.syncs()) {
      e = shift(e);
      e.correlation_id = corr(e.correlation_id);
      e.event_record_correlation_id = corr(e.event_record_correlation_id);
      d.syncs.push_back(e);
    }
    for (auto e : t.ranges()) d.ranges.push_back(shift(e));
    for (auto e : t.gpu_ranges()) d.gpu_ranges.push_back(shift(e));
    for (auto e : t.collectives()) {
      e = shift(e);
      e.correlation_id = corr(e.correlation_id);
      d.collectives.push_back(e);
    }
  }
  auto tr = std::move(b).Finalize();
  if (!tr.ok()) {
    std::fprintf(stderr, "tile: %s\n", std::string(tr.status().message()).c_str());
    std::exit(1);
  }
  return std::move(tr).value();
}

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Encodes to a counting sink (no disk), best of `reps`.
void Measure(const char* label, const model::Trace& t, const std::string& kineto_path, int64_t kineto_bytes, int reps) {
  const int64_t events = t.total_events();
  double best = 1e30;
  exporters::PerfettoStats ps;
  for (int i = 0; i < reps; ++i) {
    const auto a = Clock::now();
    auto st = exporters::EncodePerfetto(t, nullptr, [](std::string_view) { return absl::OkStatus(); });
    const auto b = Clock::now();
    if (!st.ok()) {
      std::fprintf(stderr, "%s: %s\n", label, std::string(st.status().message()).c_str());
      std::exit(1);
    }
    ps = *st;
    best = std::min(best, Seconds(a, b));
  }
  // Our Kineto-style JSON of the same events (all processes), in memory.
  int64_t json_bytes = 0;
  double json_best = 1e30;
  for (int i = 0; i < reps; ++i) {
    json_bytes = 0;
    const auto a = Clock::now();
    for (size_t p = 0; p < t.processes().size(); ++p) {
      exporters::ChromeStats cs;
      auto s = exporters::EncodeChromeProcess(
          t, static_cast<model::ProcessId>(p), [](std::string_view) { return absl::OkStatus(); }, &cs);
      if (!s.ok()) std::exit(1);
      json_bytes += cs.bytes;
    }
    json_best = std::min(json_best, Seconds(a, Clock::now()));
  }
  // The same through the file writer, to see the disk's share.
  const std::string tmp = (std::filesystem::temp_directory_path() / "export_bench.pftrace").string();
  const auto fa = Clock::now();
  absl::Status ws = exporters::WritePerfetto(t, nullptr, tmp, nullptr);
  const double file_s = Seconds(fa, Clock::now());
  std::filesystem::remove(tmp);
  if (!ws.ok()) std::exit(1);

  std::printf("%s\n", label);
  std::printf("  model events            %lld (slices %lld, flows %lld, tracks %lld)\n", static_cast<long long>(events),
              static_cast<long long>(ps.slices), static_cast<long long>(ps.flows), static_cast<long long>(ps.tracks));
  std::printf("  pftrace encode          %.3f s  = %.2f M events/s (target >= 2)   [to file: %.3f s = %.2f M/s]\n",
              best, events / best / 1e6, file_s, events / file_s / 1e6);
  std::printf("  pftrace bytes           %lld (%.1f bytes/event)\n", static_cast<long long>(ps.bytes),
              static_cast<double>(ps.bytes) / std::max<int64_t>(events, 1));
  std::printf("  chrome json encode      %.3f s  = %.2f M events/s, %lld bytes\n", json_best, events / json_best / 1e6,
              static_cast<long long>(json_bytes));
  if (kineto_bytes > 0)
    std::printf("  pftrace / Kineto JSON   %.3f (target <= 0.25; %s as PyTorch wrote it: %lld bytes uncompressed)\n",
                static_cast<double>(ps.bytes) / kineto_bytes, kineto_path.c_str(),
                static_cast<long long>(kineto_bytes));
  std::printf("  pftrace / our JSON      %.3f (our Kineto-compatible export: fewer args and spaces than Kineto)\n",
              static_cast<double>(ps.bytes) / json_bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t target = argc > 1 ? std::atoll(argv[1]) : 3'000'000;
  {
    const auto a = Clock::now();
    model::Trace t = MakeTrace(target);
    std::printf("built synthetic trace in %.2f s\n", Seconds(a, Clock::now()));
    Measure("synthetic (2 ranks)", t, "", 0, 3);
  }
  std::vector<std::vector<std::string>> inputs;
  if (argc > 2) {
    for (int i = 2; i < argc; ++i) inputs.push_back({argv[i]});
  } else {
    const std::filesystem::path root =
        std::filesystem::path(__FILE__).parent_path().parent_path() / "tests/data/kineto";
    if (std::filesystem::exists(root))
      for (const auto& e : std::filesystem::directory_iterator(root))
        if (e.is_directory() && std::filesystem::exists(e.path() / "rank0.json.gz"))
          inputs.push_back({(e.path() / "rank0.json.gz").string(), (e.path() / "rank1.json.gz").string()});
    std::sort(inputs.begin(), inputs.end());
  }
  for (const auto& files : inputs) {
    auto t = import::ImportTraces(files);
    if (!t.ok()) {
      std::fprintf(stderr, "%s: %s\n", files[0].c_str(), std::string(t.status().message()).c_str());
      continue;
    }
    int64_t original = 0;
    for (const auto& s : t->sources()) original += s.bytes;
    Measure(files[0].c_str(), *t, files.size() > 1 ? "both ranks" : files[0], original, 5);
    // The largest real trace, tiled to about 2 M events, for a throughput figure.
    if (files[0].find("a2a_async") != std::string::npos || argc > 2) {
      const int copies = static_cast<int>(std::max<int64_t>(1, 2'000'000 / std::max<int64_t>(t->total_events(), 1)));
      model::Trace tiled = Tile(*t, copies);
      Measure(("tiled x" + std::to_string(copies) + ": " + files[0]).c_str(), tiled, "both ranks, tiled",
              original * copies, 3);
    }
  }
  return 0;
}
