// libFuzzer target: `.ovnccl` NCCL profiler plugin files (formats/ovnccl_format.h) through the
// reader (ParseNcclPluginBytes) and, when it accepts them, the merge into a capture
// (MergeNcclPlugin) and the pipeline after it. The capture is a fixed synthetic process (pid
// 4242, thread 11) with NCCL API ranges, launches, kernels and copy-engine copies; the seeds
// (make_seeds.cc) hold plugin records that fall into its ranges, so the merge does real work.
// Checks: a refused file names itself in the error; a merged trace finalizes, keeps the model's
// invariants and goes through analysis, reports and exports (fuzz_util.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/session.h"
#include "fuzz/fuzz_util.h"
#include "importers/nccl/nccl_attribution.h"
#include "importers/nccl/nccl_plugin_records.h"

namespace {

using namespace overlapscope;

// The capture the plugin records are merged into (as in tests/importers/nccl_plugin_merge_test).
model::ProcessId SyntheticCapture(model::TraceBuilder& b) {
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
    a.start_ns = s0, a.end_ns = e0, a.thread = t, a.correlation_id = corr, a.name = b.Intern("cudaLaunchKernel");
    d.api_calls.push_back(a);
  };
  auto kernel = [&](int64_t s0, int64_t e0, int64_t corr) {
    model::Kernel k;
    k.start_ns = s0, k.end_ns = e0, k.device = dev, k.stream = s, k.correlation_id = corr;
    k.name = b.Intern("ncclDevKernel_AllGather_RING_LL");
    d.kernels.push_back(k);
  };
  range(1000, 2000, "ncclAllGather");
  range(3000, 4000, "ncclAllGather");
  range(5000, 5100, "ncclAllGather");
  range(5200, 6000, "ncclGroupEnd");
  api(1200, 1300, 5), kernel(10000, 11000, 5);
  api(3100, 3200, 9);
  for (int i = 0; i < 2; ++i) {
    model::Memcpy m;
    m.start_ns = 12000 + 100 * i, m.end_ns = 12500 + 100 * i, m.device = dev, m.stream = ce, m.correlation_id = 9;
    m.bytes = 1024, m.name = b.Intern("Memcpy PtoP");
    d.memcpys.push_back(m);
  }
  api(5300, 5400, 12), kernel(13000, 14000, 12);
  api(7100, 7200, 20), kernel(15000, 16000, 20);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = "nccl.4242.ovnccl";
  auto f = import::ParseNcclPluginBytes(std::string_view(reinterpret_cast<const char*>(data), size), path);
  if (!f.ok()) {
    fuzz::CheckImportError(f.status(), path);
    return 0;
  }
  model::TraceBuilder b;
  const model::ProcessId p = SyntheticCapture(b);
  const import::NcclAttribution nvtx = import::AttributeNcclRanges(b, p);
  import::MergeNcclPlugin(std::move(f).value(), nvtx, b, p);
  auto t = std::move(b).Finalize();
  if (!t.ok()) fuzz::Fail("the NCCL plugin merge built a trace that does not finalize", t.status().message());
  fuzz::RunPipeline(engine::Session::FromTrace(std::move(t).value(), {path}));
  return 0;
}
