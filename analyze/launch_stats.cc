// Launch statistics, defined as Holistic Trace Analysis defines them (cuda_kernel_analysis.py):
// launch delay = GPU start − (call start + call duration), clipped at 0.
#include <algorithm>

#include "analyze/context.h"

namespace overlapscope::analyze {

void ComputeLaunchStats(const Context& ctx, LaunchStats* out) {
  const model::Trace& t = ctx.t;
  out->runtime_cutoff_ns = ctx.opt.runtime_cutoff_ns;
  out->launch_delay_cutoff_ns = ctx.opt.launch_delay_cutoff_ns;
  const size_t ns = t.streams().size();
  std::vector<std::vector<int64_t>> delays(ns);
  std::vector<int64_t> without(ns, 0);
  // Per (process, call name): durations of calls that launched something (each call once).
  absl::flat_hash_map<std::pair<model::ProcessId, model::StringId>, std::vector<int64_t>> call_durs;
  absl::flat_hash_map<std::pair<model::DeviceId, model::StringId>, ShortKernelStats> shorts;
  std::vector<uint8_t> call_seen(t.api_calls().size(), 0);
  for (size_t s = 0; s < ns; ++s) {
    for (model::GpuRef r : t.StreamActivities(static_cast<model::StreamId>(s))) {
      int32_t li = ctx.LaunchOf(r);
      if (li == model::kNone) {
        ++without[s];
        continue;
      }
      const model::ApiCall& a = t.api_calls()[li];
      int64_t cpu = a.end_ns - a.start_ns, gpu = t.EndNs(r) - t.StartNs(r);
      delays[s].push_back(std::max<int64_t>(0, t.StartNs(r) - a.end_ns));
      if (!call_seen[li]) {
        call_seen[li] = 1;
        call_durs[{t.ProcessOfThread(a.thread), a.name}].push_back(cpu);
      }
      if (r.kind == model::GpuKind::kKernel && cpu <= ctx.opt.runtime_cutoff_ns && gpu < cpu) {
        ShortKernelStats& k = shorts[{t.DeviceOfStream(static_cast<model::StreamId>(s)), ctx.NameOf(r)}];
        k.name = ctx.NameOf(r);
        k.device = t.DeviceOfStream(static_cast<model::StreamId>(s));
        ++k.count;
        k.gpu_total_ns += gpu;
        k.cpu_total_ns += cpu;
        ++out->short_kernel_count;
      }
    }
    if (delays[s].empty() && without[s] == 0) continue;
    StreamLaunchStats st;
    st.stream = static_cast<model::StreamId>(s);
    st.device = t.DeviceOfStream(st.stream);
    st.without_launch_call = without[s];
    for (int64_t d : delays[s])
      if (d > ctx.opt.launch_delay_cutoff_ns) ++st.launch_delay_outliers;
    st.launch_delay = ComputePercentiles(delays[s]);
    out->streams.push_back(st);
  }
  for (auto& [key, v] : call_durs) {
    RuntimeCallStats c;
    c.process = key.first;
    c.call = key.second;
    for (int64_t d : v)
      if (d > ctx.opt.runtime_cutoff_ns) ++c.outliers;
    c.duration = ComputePercentiles(v);
    out->calls.push_back(c);
  }
  std::sort(out->calls.begin(), out->calls.end(), [](const RuntimeCallStats& a, const RuntimeCallStats& b) {
    double ta = a.duration.mean_ns * static_cast<double>(a.duration.count);
    double tb = b.duration.mean_ns * static_cast<double>(b.duration.count);
    if (ta != tb) return ta > tb;
    return a.process != b.process ? a.process < b.process : a.call < b.call;
  });
  for (auto& [key, k] : shorts) out->short_kernels.push_back(k);
  std::sort(out->short_kernels.begin(), out->short_kernels.end(),
            [](const ShortKernelStats& a, const ShortKernelStats& b) {
              if (a.count != b.count) return a.count > b.count;
              return a.device != b.device ? a.device < b.device : a.name < b.name;
            });
}

}  // namespace overlapscope::analyze
