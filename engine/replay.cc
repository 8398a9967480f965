// RunReplay (engine/replay.h): the analyses replay needs, the dependency graph, the replay.
#include "engine/replay.h"

#include <exception>
#include <fstream>
#include <new>

#include "absl/strings/str_cat.h"
#include "analyze/analysis.h"
#include "analyze/classify.h"
#include "analyze/graph/graph.h"
#include "analyze/graph_inputs.h"
#include "analyze/replay/replay.h"
#include "base/status_macros.h"
#include "engine/no_throw.h"
#include "engine/replay_render.h"
#include "engine/replay_trace.h"
#include "engine/session_state.h"

namespace overlapscope::engine {
namespace {

namespace rp = analyze::replay;

rp::GpuClass ToGpuClass(analyze::ActivityClass c) {
  switch (c) {
    case analyze::ActivityClass::kCompute: return rp::GpuClass::kCompute;
    case analyze::ActivityClass::kComm: return rp::GpuClass::kComm;
    case analyze::ActivityClass::kMemory: return rp::GpuClass::kMemory;
    case analyze::ActivityClass::kSync: return rp::GpuClass::kSync;
  }
  return rp::GpuClass::kCompute;
}

absl::StatusOr<rp::ReplayInputs> Inputs(const model::Trace& t, const analyze::AnalyzeOptions& o,
                                        const analyze::AnalysisResult& r) {
  rp::ReplayInputs in;
  ASSIGN_OR_RETURN(analyze::Classifier cl, analyze::Classifier::Create(o.rules, t));
  auto classes = [&](model::GpuKind kind, size_t n, std::vector<rp::GpuClass>& out) {
    out.resize(n);
    for (size_t i = 0; i < n; ++i) out[i] = ToGpuClass(cl.Classify({kind, static_cast<int32_t>(i)}));
  };
  classes(model::GpuKind::kKernel, t.kernels().size(), in.kernel_class);
  classes(model::GpuKind::kMemcpy, t.memcpys().size(), in.memcpy_class);
  classes(model::GpuKind::kMemset, t.memsets().size(), in.memset_class);
  in.kernel_iteration = r.iterations.kernel_iteration;
  in.memcpy_iteration = r.iterations.memcpy_iteration;
  in.memset_iteration = r.iterations.memset_iteration;
  for (const analyze::Iteration& it : r.iterations.iterations)
    in.iterations.push_back({it.process, it.number, it.start_ns, it.end_ns});
  for (const analyze::DeviceOverlap& d : r.overlap) {
    for (const analyze::KernelSlowdown& s : d.slowdowns)
      in.slowdowns.push_back({d.device, s.name, s.slowdown, s.median_alone_ns});
  }
  return in;
}

}  // namespace

absl::Status CheckChange(std::string_view spec) { return rp::ParseChange(spec).status(); }

absl::StatusOr<std::string> RunReplay(const Session& session, const ReplayRequest& request, ReportFormat format) {
  return NoThrow("replaying", [&]() -> absl::StatusOr<std::string> {
    rp::ReplayOptions ro;
    for (const std::string& c : request.changes) {
      ASSIGN_OR_RETURN(rp::Change ch, rp::ParseChange(c));
      ro.changes.push_back(std::move(ch));
    }
    ro.contention = request.contention;
    ro.sm_count = request.sm_count;
    ro.strict = request.strict;
    ro.keep_schedule = !request.trace_out.empty();
    ASSIGN_OR_RETURN(analyze::AnalyzeOptions ao, ToAnalyzeOptions(request.analyze));
    ao.critical_path = false;  // replay walks its own schedules
    const model::Trace& t = session.trace();
    ASSIGN_OR_RETURN(analyze::AnalysisResult ar, analyze::AnalyzeAll(t, ao));
    ASSIGN_OR_RETURN(rp::ReplayInputs in, Inputs(t, ao, ar));
    const analyze::graph::Graph g = analyze::graph::BuildGraph(t, analyze::MakeGraphInputs(ar.blocking, ar.cross_rank));
    ASSIGN_OR_RETURN(rp::ReplayResult res, rp::Replay(t, g, in, ro));
    if (!request.trace_out.empty()) RETURN_IF_ERROR(WritePredictedTrace(t, g, res.schedule, request.trace_out));
    if (!request.html_out.empty()) {
      std::ofstream f(request.html_out, std::ios::binary | std::ios::trunc);
      const std::string page = RenderReplayHtml(t, session.inputs(), res);
      if (f) f.write(page.data(), static_cast<std::streamsize>(page.size()));
      if (!f) return absl::InternalError(absl::StrCat(request.html_out, ": cannot write the HTML page"));
    }
    return RenderReplay(t, session.inputs(), res, format);
  });
}

}  // namespace overlapscope::engine
