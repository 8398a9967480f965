// Launch statistics, defined as Holistic Trace Analysis defines them (cuda_kernel_analysis.py):
// launch delay = GPU start − (call start + call duration), clipped at 0.
#include <algorithm>

#include "analyze/context.h"
#include "model/bounds.h"

namespace overlapscope::analyze {

void ComputeLaunchStats(const Context& ctx, LaunchStats* out) {
  const model::Trace& t = ctx.t;
  out->runtime_cutoff_ns = ctx.opt.runtime_cutoff_ns;
  out->launch_delay_cutoff_ns = ctx.opt.launch_delay_cutoff_ns;
  const size_t ns = t.streams().size();
  std::vector<std::vector<int64_t>> delays(ns);
  std::vector<int64_t> without(ns, 0);
  // Per (process, call name): durations of calls that launched something (each call once).
  // Per (process, call name) through dense per-process slots.
  std::vector<std::vector<int32_t>> call_slot(t.processes().size());
  std::vector<std::pair<model::ProcessId, model::StringId>> call_keys;
  std::vector<std::vector<int64_t>> call_durs;
  absl::flat_hash_map<std::pair<model::DeviceId, model::StringId>, ShortKernelStats> shorts;
  std::vector<uint8_t> call_seen(t.api_calls().size(), 0);
  // One pass per activity vector (contiguous, no per-kind dispatch).
  auto visit = [&](const auto& v, const std::vector<int32_t>& launch, bool is_kernel) {
    for (size_t i = 0; i < v.size(); ++i) {
      const auto& e = v[i];
      int32_t li = launch[i];
      if (li == model::kNone) {
        ++without[e.stream];
        continue;
      }
      const model::ApiCall& a = t.api_calls()[li];
      int64_t cpu = a.end_ns - a.start_ns, gpu = e.end_ns - e.start_ns;
      delays[e.stream].push_back(std::max<int64_t>(0, e.start_ns - a.end_ns));
      if (!call_seen[li]) {
        call_seen[li] = 1;
        model::ProcessId p = t.ProcessOfThread(a.thread);
        if (call_slot[p].empty()) call_slot[p].assign(t.strings().size(), -1);
        int32_t& sl = call_slot[p][a.name];
        if (sl < 0) {
          sl = static_cast<int32_t>(call_keys.size());
          call_keys.push_back({p, a.name});
          call_durs.emplace_back();
        }
        call_durs[sl].push_back(cpu);
      }
      if (is_kernel && cpu <= ctx.opt.runtime_cutoff_ns && gpu < cpu) {
        ShortKernelStats& k = shorts[{e.device, e.name}];
        k.name = e.name;
        k.device = e.device;
        ++k.count;
        k.gpu_total_ns = model::SatAdd(k.gpu_total_ns, gpu);
        k.cpu_total_ns = model::SatAdd(k.cpu_total_ns, cpu);
        ++out->short_kernel_count;
      }
    }
  };
  for (size_t s = 0; s < ns; ++s) delays[s].reserve(t.StreamActivities(static_cast<model::StreamId>(s)).size());
  visit(t.kernels(), ctx.kernel_launch, true);
  visit(t.memcpys(), ctx.memcpy_launch, false);
  visit(t.memsets(), ctx.memset_launch, false);
  for (size_t s = 0; s < ns; ++s) {
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
  for (size_t k = 0; k < call_keys.size(); ++k) {
    std::vector<int64_t>& v = call_durs[k];
    RuntimeCallStats c;
    c.process = call_keys[k].first;
    c.call = call_keys[k].second;
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
