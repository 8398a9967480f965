// PrepareContext and the small helpers the analyses share.
#include "analyze/context.h"

#include <algorithm>
#include <cmath>

#include "analyze/strings.h"
#include "base/phase_log.h"
#include "base/run_all.h"
#include "model/bounds.h"

namespace overlapscope::analyze {

namespace {

// The class of every GPU activity (classify.h), and the summary that explains it: per (kind,
// name, carries a collective) the rule that decided and the count and time it covers, largest
// time first.
void ClassifyActivities(Context& ctx, Classifier& classifier, ClassificationSummary* summary) {
  const model::Trace& t = ctx.t;
  ctx.kernel_cls.resize(t.kernels().size());
  ctx.memcpy_cls.resize(t.memcpys().size());
  ctx.memset_cls.resize(t.memsets().size());
  // Explanations per (kind, name, rule): the rule is a function of (kind, name, carries
  // collective), so key by those through a dense index (name id * 8 + kind * 2 + carries).
  std::vector<int32_t> expl_index(t.strings().size() * 8, -1);
  summary->rules = classifier.rules();
  auto classify = [&](model::GpuKind kind, size_t n, std::vector<ActivityClass>& out, auto name_of, auto dur_of,
                      auto carries) {
    for (size_t i = 0; i < n; ++i) {
      model::GpuRef r{kind, static_cast<int32_t>(i)};
      size_t key = static_cast<size_t>(name_of(i)) * 8 + static_cast<size_t>(kind) * 2 + (carries(i) ? 1 : 0);
      int32_t& slot = expl_index[key];
      if (slot < 0) {
        int32_t rule = classifier.RuleOf(r);
        slot = static_cast<int32_t>(summary->names.size());
        summary->names.push_back(ClassExplanation{name_of(i), kind, classifier.Classify(r), rule, 0, 0, 0});
      }
      ClassExplanation& e = summary->names[slot];
      out[i] = e.cls;
      ++e.count;
      int64_t d = dur_of(i);
      e.total_ns = model::SatAdd(e.total_ns, d);  // a sum over activities: saturates, never wraps
      e.max_ns = std::max(e.max_ns, d);
      ++summary->count[static_cast<int>(e.cls)];
      summary->total_ns[static_cast<int>(e.cls)] += d;
    }
  };
  classify(
      model::GpuKind::kKernel, t.kernels().size(), ctx.kernel_cls, [&](size_t i) { return t.kernels()[i].name; },
      [&](size_t i) { return t.kernels()[i].end_ns - t.kernels()[i].start_ns; },
      [&](size_t i) { return t.kernels()[i].collective != model::kNone; });
  classify(
      model::GpuKind::kMemcpy, t.memcpys().size(), ctx.memcpy_cls, [&](size_t i) { return t.memcpys()[i].name; },
      [&](size_t i) { return t.memcpys()[i].end_ns - t.memcpys()[i].start_ns; },
      [&](size_t i) { return t.memcpys()[i].collective != model::kNone; });
  classify(
      model::GpuKind::kMemset, t.memsets().size(), ctx.memset_cls, [&](size_t i) { return t.memsets()[i].name; },
      [&](size_t i) { return t.memsets()[i].end_ns - t.memsets()[i].start_ns; }, [](size_t) { return false; });
  std::sort(summary->names.begin(), summary->names.end(), [](const ClassExplanation& a, const ClassExplanation& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.count > b.count;
  });
}

// Per device: the compute, comm and busy sets, and each activity's span and name in
// DeviceActivities order (the hot loops of the analyses read these instead of dispatching per
// kind); per stream: its compute-class time. DeviceActivities is sorted by start, so each set
// builds in one pass.
void BuildDeviceSets(Context& ctx) {
  const model::Trace& t = ctx.t;
  ctx.dev.resize(t.devices().size());
  ctx.act_span.resize(t.devices().size());
  ctx.act_name.resize(t.devices().size());
  ctx.stream_compute_ns.assign(t.streams().size(), 0);
  std::vector<Interval> comp, comm, busy;
  for (size_t d = 0; d < t.devices().size(); ++d) {
    comp.clear();
    comm.clear();
    busy.clear();
    auto acts = t.DeviceActivities(static_cast<model::DeviceId>(d));
    busy.reserve(acts.size());
    std::vector<Interval>& spans = ctx.act_span[d];
    std::vector<model::StringId>& names = ctx.act_name[d];
    spans.reserve(acts.size());
    names.reserve(acts.size());
    for (model::GpuRef r : acts) {
      Interval iv;
      model::StreamId stream;
      switch (r.kind) {
        case model::GpuKind::kKernel: {
          const model::Kernel& k = t.kernels()[r.index];
          iv = {k.start_ns, k.end_ns};
          names.push_back(k.name);
          stream = k.stream;
          break;
        }
        case model::GpuKind::kMemcpy: {
          const model::Memcpy& m = t.memcpys()[r.index];
          iv = {m.start_ns, m.end_ns};
          names.push_back(m.name);
          stream = m.stream;
          break;
        }
        default: {
          const model::Memset& m = t.memsets()[r.index];
          iv = {m.start_ns, m.end_ns};
          names.push_back(m.name);
          stream = m.stream;
          break;
        }
      }
      spans.push_back(iv);
      ActivityClass c = ctx.Cls(r);
      if (c == ActivityClass::kSync) continue;
      busy.push_back(iv);
      if (c == ActivityClass::kCompute) {
        comp.push_back(iv);
        ctx.stream_compute_ns[stream] += iv.length();
      } else if (c == ActivityClass::kComm)
        comm.push_back(iv);
    }
    ctx.dev[d].compute = IntervalSet::FromSortedByStart(comp);
    ctx.dev[d].comm = IntervalSet::FromSortedByStart(comm);
    ctx.dev[d].busy = IntervalSet::FromSortedByStart(busy);
  }
}

// Launch calls per thread (an API call that enqueued at least one activity), by start, and the
// start of each process's last launch (final syncs come after it).
void IndexLaunches(Context& ctx) {
  const model::Trace& t = ctx.t;
  std::vector<uint8_t> is_launch(t.api_calls().size(), 0);
  for (const auto* v : {&ctx.kernel_launch, &ctx.memcpy_launch, &ctx.memset_launch})
    for (int32_t a : *v)
      if (a != model::kNone) is_launch[a] = 1;
  ctx.launches_by_thread.assign(t.threads().size(), {});
  ctx.last_launch_start.assign(t.processes().size(), INT64_MIN);
  for (size_t i = 0; i < t.api_calls().size(); ++i) {
    if (!is_launch[i]) continue;
    const model::ApiCall& a = t.api_calls()[i];
    ctx.launches_by_thread[a.thread].push_back(static_cast<int32_t>(i));
    int64_t& last = ctx.last_launch_start[t.ProcessOfThread(a.thread)];
    last = std::max(last, a.start_ns);
  }
}

}  // namespace

absl::Status PrepareContext(Context& ctx, ClassificationSummary* summary) {
  auto classifier = Classifier::Create(ctx.opt.rules, ctx.t);
  if (!classifier.ok()) return classifier.status();
  // Each part writes its own members of the context and reads only the trace (the device sets
  // also the classes): at once on up to --threads threads, the same context at any count.
  base::RunAll(ctx.opt.threads, {[&] {
                                   base::PhaseSpan s_("classify, device sets");
                                   ClassifyActivities(ctx, *classifier, summary);
                                   BuildDeviceSets(ctx);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("windows");
                                   PrepareWindows(ctx);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("iterations");
                                   ctx.iters = AssignIterations(ctx.t, ctx.opt.iteration_marker, ctx.opt.threads);
                                 },
                                 [&] {
                                   base::PhaseSpan s_("index launches");
                                   IndexLaunches(ctx);
                                 }});
  return absl::OkStatus();
}

bool IsPageable(const model::Trace& t, const model::Memcpy& m) {
  if (m.src_kind == model::MemoryKind::kPageable || m.dst_kind == model::MemoryKind::kPageable) return true;
  // Kineto names say it even when the importer did not fill the kinds.
  return m.src_kind == model::MemoryKind::kUnknown && m.dst_kind == model::MemoryKind::kUnknown &&
         Contains(t.str(m.name), "Pageable");
}
bool IsDtoH(const model::Trace& t, const model::Memcpy& m) {
  if (m.kind != model::MemcpyKind::kUnknown) return m.kind == model::MemcpyKind::kDtoH;
  return Contains(t.str(m.name), "DtoH");
}
bool IsPinnedDst(const model::Trace& t, const model::Memcpy& m) {
  if (m.dst_kind != model::MemoryKind::kUnknown) return m.dst_kind == model::MemoryKind::kPinned;
  return Contains(t.str(m.name), "-> Pinned");
}

int64_t MedianNs(std::vector<int64_t>& v) {
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  int64_t hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  int64_t lo = *std::max_element(v.begin(), v.begin() + mid);
  return lo + (hi - lo) / 2;
}

Percentiles ComputePercentiles(std::vector<int64_t>& v) {
  Percentiles p;
  p.count = static_cast<int64_t>(v.size());
  if (v.empty()) return p;
  // Nearest rank: the smallest value with at least q of the samples at or below it. Selection
  // (nth_element, ascending ranks on shrinking ranges) instead of a full sort: O(n).
  auto index = [&](double q) {
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return k == 0 ? size_t{0} : k - 1;
  };
  auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  p.min_ns = *mn;
  p.max_ns = *mx;
  double sum = 0;
  for (int64_t x : v) sum += static_cast<double>(x);
  p.mean_ns = sum / static_cast<double>(v.size());
  size_t lo = 0;
  int64_t* out[3] = {&p.p50_ns, &p.p90_ns, &p.p99_ns};
  const double qs[3] = {0.50, 0.90, 0.99};
  for (int i = 0; i < 3; ++i) {
    size_t k = index(qs[i]);
    std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(lo), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    *out[i] = v[k];
    lo = k;
  }
  return p;
}

}  // namespace overlapscope::analyze
