// Launch statistics, defined as Holistic Trace Analysis defines them (cuda_kernel_analysis.py):
// launch delay = GPU start − (call start + call duration), clipped at 0.
#include <algorithm>

#include "analyze/context.h"
#include "model/bounds.h"

namespace overlapscope::analyze {

namespace {

// One pass over every GPU activity with a launch call (Visit, per activity vector: contiguous,
// no per-kind dispatch) gathers launch delays per stream, call durations per (process, call
// name) and short kernels; the figures are made from those (Streams, Calls, ShortKernels).
class LaunchCollector {
 public:
  LaunchCollector(const Context& ctx, LaunchStats* out)
      : ctx_(ctx),
        t_(ctx.t),
        out_(out),
        delays_(t_.streams().size()),
        without_(t_.streams().size(), 0),
        call_slot_(t_.processes().size()),
        call_seen_(t_.api_calls().size(), 0) {
    for (size_t s = 0; s < delays_.size(); ++s)
      delays_[s].reserve(t_.StreamActivities(static_cast<model::StreamId>(s)).size());
  }

  template <typename Vec>
  void Visit(const Vec& v, const std::vector<int32_t>& launch, bool is_kernel) {
    for (size_t i = 0; i < v.size(); ++i) {
      const auto& e = v[i];
      int32_t li = launch[i];
      if (li == model::kNone) {
        ++without_[e.stream];
        continue;
      }
      const model::ApiCall& a = t_.api_calls()[li];
      int64_t cpu = a.end_ns - a.start_ns, gpu = e.end_ns - e.start_ns;
      delays_[e.stream].push_back(std::max<int64_t>(0, e.start_ns - a.end_ns));
      if (!call_seen_[li]) {
        call_seen_[li] = 1;
        CallDurations(t_.ProcessOfThread(a.thread), a.name).push_back(cpu);
      }
      if (is_kernel && cpu <= ctx_.opt.runtime_cutoff_ns && gpu < cpu) {
        ShortKernelStats& k = shorts_[{e.device, e.name}];
        k.name = e.name;
        k.device = e.device;
        ++k.count;
        k.gpu_total_ns = model::SatAdd(k.gpu_total_ns, gpu);
        k.cpu_total_ns = model::SatAdd(k.cpu_total_ns, cpu);
        ++out_->short_kernel_count;
      }
    }
  }
  void Streams();
  void Calls();
  void ShortKernels();

 private:
  // Durations of the calls of one (process, call name) that launched something (each call once),
  // through dense per-process slots.
  std::vector<int64_t>& CallDurations(model::ProcessId p, model::StringId name) {
    if (call_slot_[p].empty()) call_slot_[p].assign(t_.strings().size(), -1);
    int32_t& sl = call_slot_[p][name];
    if (sl < 0) {
      sl = static_cast<int32_t>(call_keys_.size());
      call_keys_.push_back({p, name});
      call_durs_.emplace_back();
    }
    return call_durs_[sl];
  }

  const Context& ctx_;
  const model::Trace& t_;
  LaunchStats* out_;
  std::vector<std::vector<int64_t>> delays_;  // per stream
  std::vector<int64_t> without_;              // per stream: activities without a launch call
  std::vector<std::vector<int32_t>> call_slot_;
  std::vector<std::pair<model::ProcessId, model::StringId>> call_keys_;
  std::vector<std::vector<int64_t>> call_durs_;
  absl::flat_hash_map<std::pair<model::DeviceId, model::StringId>, ShortKernelStats> shorts_;
  std::vector<uint8_t> call_seen_;
};

// Per stream: launch delay percentiles and outliers, and activities without a launch call.
void LaunchCollector::Streams() {
  for (size_t s = 0; s < delays_.size(); ++s) {
    if (delays_[s].empty() && without_[s] == 0) continue;
    StreamLaunchStats st;
    st.stream = static_cast<model::StreamId>(s);
    st.device = t_.DeviceOfStream(st.stream);
    st.without_launch_call = without_[s];
    for (int64_t d : delays_[s])
      if (d > ctx_.opt.launch_delay_cutoff_ns) ++st.launch_delay_outliers;
    st.launch_delay = ComputePercentiles(delays_[s]);
    out_->streams.push_back(st);
  }
}

// Per (process, call name): duration percentiles and outliers, by total time.
void LaunchCollector::Calls() {
  for (size_t k = 0; k < call_keys_.size(); ++k) {
    std::vector<int64_t>& v = call_durs_[k];
    RuntimeCallStats c;
    c.process = call_keys_[k].first;
    c.call = call_keys_[k].second;
    for (int64_t d : v)
      if (d > ctx_.opt.runtime_cutoff_ns) ++c.outliers;
    c.duration = ComputePercentiles(v);
    out_->calls.push_back(c);
  }
  // Ties by name text, not by interned id: ids depend on which ranks share the model, and the
  // per-rank reduction must order exactly as the whole model does.
  const model::Trace& t = ctx_.t;
  std::sort(out_->calls.begin(), out_->calls.end(), [&t](const RuntimeCallStats& a, const RuntimeCallStats& b) {
    double ta = a.duration.mean_ns * static_cast<double>(a.duration.count);
    double tb = b.duration.mean_ns * static_cast<double>(b.duration.count);
    if (ta != tb) return ta > tb;
    return a.process != b.process ? a.process < b.process : t.str(a.call) < t.str(b.call);
  });
}

// Kernels shorter than their launch call, by count.
void LaunchCollector::ShortKernels() {
  for (auto& [key, k] : shorts_) out_->short_kernels.push_back(k);
  const model::Trace& t = ctx_.t;  // ties by name text (see Calls)
  std::sort(out_->short_kernels.begin(), out_->short_kernels.end(),
            [&t](const ShortKernelStats& a, const ShortKernelStats& b) {
              if (a.count != b.count) return a.count > b.count;
              return a.device != b.device ? a.device < b.device : t.str(a.name) < t.str(b.name);
            });
}

}  // namespace

void ComputeLaunchStats(const Context& ctx, LaunchStats* out) {
  out->runtime_cutoff_ns = ctx.opt.runtime_cutoff_ns;
  out->launch_delay_cutoff_ns = ctx.opt.launch_delay_cutoff_ns;
  LaunchCollector c(ctx, out);
  c.Visit(ctx.t.kernels(), ctx.kernel_launch, true);
  c.Visit(ctx.t.memcpys(), ctx.memcpy_launch, false);
  c.Visit(ctx.t.memsets(), ctx.memset_launch, false);
  c.Streams();
  c.Calls();
  c.ShortKernels();
}

}  // namespace overlapscope::analyze
