// HTA-compatible communication/computation overlap (analyze/overlap.h, HtaCompat; METRICS.md
// section 2): what Holistic Trace Analysis prints for the same trace, rule for rule.
#include <cmath>

#include "analyze/context.h"
#include "analyze/strings.h"

namespace overlapscope::analyze {
namespace {

// HTA's name rules (hta/common/types.py), applied with Python's re.match (anchored at start).
bool HtaIsComm(std::string_view n) {
  return StartsWith(n, "nccl") || StartsWith(n, "hip") || StartsWith(n, "hccl") || Contains(n, "ncclKernel");
}
bool HtaIsCompute(std::string_view n) {
  // Inverse match of: ^nccl, .*Memcpy, .*Memset, .*dma, ^.*Sync, ^Stream Wait Event,
  // cuda.*LaunchKernel, ^runFunction, ^hip, ^job_exe, ^packet, ^pe_exe, ^cpum_exe_subgraph,
  // ^hccl, ^collective_subgraph_execution.
  for (std::string_view p : {"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe", "packet", "pe_exe",
                             "cpum_exe_subgraph", "hccl", "collective_subgraph_execution"})
    if (StartsWith(n, p)) return false;
  for (std::string_view p : {"Memcpy", "Memset", "dma", "Sync"})
    if (Contains(n, p)) return false;
  if (StartsWith(n, "cuda") && n.find("LaunchKernel", 4) != std::string_view::npos) return false;
  return true;
}

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// HTA's ^ProfilerStep#\d+.
bool IsProfilerStep(std::string_view n) {
  constexpr std::string_view kStep = "ProfilerStep#";
  return StartsWith(n, kStep) && n.size() > kStep.size() && n[kStep.size()] >= '0' && n[kStep.size()] <= '9';
}

// The distinct ProfilerStep#N names of the trace (any rank, host ranges or GPU annotations: HTA
// counts both as CPU rows), in order of first appearance.
std::vector<model::StringId> StepNames(const model::Trace& t) {
  std::vector<int8_t> step_of(t.strings().size(), -1);
  std::vector<model::StringId> names;
  auto see = [&](model::StringId n) {
    if (step_of[n] < 0) {
      step_of[n] = IsProfilerStep(t.str(n)) ? 1 : 0;
      if (step_of[n] == 1) names.push_back(n);
    }
  };
  for (const model::Range& r : t.ranges()) see(r.name);
  for (const model::GpuRange& g : t.gpu_ranges()) see(g.name);
  return names;
}

// HTA's default filter (_filter_irrelevant_gpu_kernels), per process: the bound in µs (rounded
// up like every HTA start) below which a launch call's start keeps its GPU work; INT64_MAX
// where nothing is filtered. It applies when the trace holds >= 2 distinct ProfilerStep#N names
// (`applies`, decided by the caller); a rank's bound is the start of its last ProfilerStep row,
// else the start of its first CPU row (which filters everything: HTA then prints NaN). A rank
// without CPU rows keeps everything.
std::vector<int64_t> StepBounds(const model::Trace& t, bool applies) {
  const size_t np = t.processes().size();
  std::vector<int64_t> bound(np, INT64_MAX);
  if (!applies) return bound;
  std::vector<int8_t> step_of(t.strings().size(), -1);
  auto is_step = [&](model::StringId n) {
    if (step_of[n] < 0) step_of[n] = IsProfilerStep(t.str(n)) ? 1 : 0;
    return step_of[n] == 1;
  };
  std::vector<int64_t> last(np, INT64_MIN), first(np, INT64_MAX);
  // As recorded: HTA reads the files as they are (model/events.h, Process::clock_offset_ns).
  auto cpu_row = [&](model::ProcessId p, int64_t start_ns, bool step) {
    const int64_t us = CeilDiv(start_ns - t.processes()[p].clock_offset_ns, 1000);
    first[p] = std::min(first[p], us);
    if (step) last[p] = std::max(last[p], us);
  };
  for (const model::Range& r : t.ranges()) cpu_row(t.ProcessOfThread(r.thread), r.start_ns, is_step(r.name));
  for (const model::GpuRange& g : t.gpu_ranges()) cpu_row(t.ProcessOfDevice(g.device), g.start_ns, is_step(g.name));
  for (const model::ApiCall& a : t.api_calls()) cpu_row(t.ProcessOfThread(a.thread), a.start_ns, false);
  for (size_t p = 0; p < np; ++p) bound[p] = last[p] != INT64_MIN ? last[p] : first[p];
  return bound;
}

// Per process: the union over its devices of HTA's comm and compute intervals, for the whole
// trace and as HTA's default filter keeps them (AddDevice, per device), then HTA's figures
// (Figures).
class HtaSets {
 public:
  HtaSets(const Context& ctx, const std::vector<int64_t>& bound)
      : ctx_(ctx),
        t_(ctx.t),
        bound_(bound),
        whole_(t_.processes().size()),
        kept_(t_.processes().size()),
        dropped_(t_.processes().size(), 0),
        filtered_out_(t_.processes().size(), 0),
        has_gpu_(t_.processes().size(), 0),
        kind_of_(t_.strings().size(), -1) {}

  void AddDevice(size_t d);
  void Figures(bool filter, std::vector<HtaCompat>* out) const;

 private:
  struct Sets {
    IntervalSet comp, comm;
  };

  const Context& ctx_;
  const model::Trace& t_;
  const std::vector<int64_t>& bound_;
  std::vector<Sets> whole_, kept_;
  std::vector<int64_t> dropped_, filtered_out_;
  std::vector<uint8_t> has_gpu_;
  // Kind per distinct name: 0 other, 1 comm, 2 compute (HTA classifies memcpy/memset by name too).
  std::vector<int8_t> kind_of_;
  // Per device, activities come in start order and ceil() is monotone, so each list is sorted.
  std::vector<Interval> lists_[2][2];  // [kept?][comm?]
};

void HtaSets::AddDevice(size_t d) {
  const auto& spans = ctx_.act_span[d];
  if (spans.empty()) return;
  const auto& names = ctx_.act_name[d];
  const auto acts = t_.DeviceActivities(static_cast<model::DeviceId>(d));
  const model::ProcessId p = t_.ProcessOfDevice(static_cast<model::DeviceId>(d));
  has_gpu_[p] = 1;
  // HTA rounds the timestamps as the file has them, not as clock alignment shifted them: whole-µs
  // rounding does not commute with a shift, and HTA never aligns clocks.
  const int64_t recorded = t_.processes()[p].clock_offset_ns;
  for (auto& l : lists_) l[0].clear(), l[1].clear();
  for (size_t i = 0; i < spans.size(); ++i) {
    int8_t& k = kind_of_[names[i]];
    if (k < 0) {
      std::string_view n = t_.str(names[i]);
      k = HtaIsComm(n) ? 1 : HtaIsCompute(n) ? 2 : 0;
    }
    if (k == 0) continue;
    // HTA rounds ns-resolution traces to whole µs: start up, end down.
    Interval iv{CeilDiv(spans[i].start_ns - recorded, 1000), FloorDiv(spans[i].end_ns - recorded, 1000)};
    if (iv.end_ns <= iv.start_ns) {
      ++dropped_[p];
      continue;
    }
    const int comm = k == 1 ? 1 : 0;
    lists_[0][comm].push_back(iv);
    bool keep = bound_[p] == INT64_MAX;
    if (!keep) {
      const int32_t call = t_.LaunchOf(acts[i]);
      keep = call != model::kNone && CeilDiv(t_.api_calls()[call].start_ns - recorded, 1000) < bound_[p];
    }
    if (keep)
      lists_[1][comm].push_back(iv);
    else
      ++filtered_out_[p];
  }
  for (int f = 0; f < 2; ++f) {
    Sets& sets = f == 0 ? whole_[p] : kept_[p];
    for (int comm = 0; comm < 2; ++comm) {
      if (lists_[f][comm].empty()) continue;
      IntervalSet& set = comm ? sets.comm : sets.comp;
      IntervalSet add = IntervalSet::FromSortedByStart(lists_[f][comm]);
      set = set.empty() ? std::move(add) : set.Union(add);
    }
  }
}

void HtaSets::Figures(bool filter, std::vector<HtaCompat>* out) const {
  auto pct = [](int64_t part, int64_t all) -> std::optional<double> {
    if (all <= 0) return std::nullopt;
    return std::round(10000.0 * static_cast<double>(part) / static_cast<double>(all)) / 100.0;
  };
  for (size_t p = 0; p < has_gpu_.size(); ++p) {
    if (!has_gpu_[p]) continue;
    HtaCompat h;
    h.process = static_cast<model::ProcessId>(p);
    h.comm_us = kept_[p].comm.Length();
    h.overlap_us = kept_[p].comm.IntersectLength(kept_[p].comp);
    h.overlap_pct = pct(h.overlap_us, h.comm_us);
    h.wholetrace_comm_us = whole_[p].comm.Length();
    h.wholetrace_overlap_us = whole_[p].comm.IntersectLength(whole_[p].comp);
    h.wholetrace_overlap_pct = pct(h.wholetrace_overlap_us, h.wholetrace_comm_us);
    h.step_filter = filter;
    h.last_step_start_us = filter ? bound_[p] : 0;
    h.filtered_out = filtered_out_[p];
    h.dropped_sub_us = dropped_[p];
    out->push_back(h);
  }
}

}  // namespace

void ComputeHtaCompat(const Context& ctx, std::vector<HtaCompat>* out, std::vector<HtaCompat>* other,
                      std::vector<std::string>* step_names) {
  const std::vector<model::StringId> names = StepNames(ctx.t);
  if (step_names != nullptr) {
    step_names->clear();
    for (size_t i = 0; i < names.size() && i < 2; ++i) step_names->emplace_back(ctx.t.str(names[i]));
  }
  const bool filter = names.size() >= 2;
  for (const bool applies : {filter, !filter}) {
    std::vector<HtaCompat>* into = applies == filter ? out : other;
    if (into == nullptr) continue;
    const std::vector<int64_t> bound = StepBounds(ctx.t, applies);
    HtaSets sets(ctx, bound);
    for (size_t d = 0; d < ctx.t.devices().size(); ++d) sets.AddDevice(d);
    sets.Figures(applies, into);
  }
}

}  // namespace overlapscope::analyze
