#include "engine/replay_trace.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "exporters/perfetto_writer.h"
#include "model/trace_builder.h"

namespace overlapscope::engine {
namespace {

// Copies events of `t` into `b` twice: as recorded, and at the schedule's times in a process of
// their own per rank.
class Copier {
 public:
  Copier(const model::Trace& t, const analyze::graph::Graph& g, const analyze::replay::NodeTimes& times,
         model::TraceBuilder& b)
      : t_(t), g_(g), times_(times), b_(b) {
    moved_.assign(static_cast<size_t>(g.num_gpu()), 0);
    for (analyze::graph::NodeId v : times.moved) {
      if (v >= 0 && v < g.num_gpu()) moved_[v] = 1;
    }
  }

  void Run() {
    for (const model::Process& p : t_.processes()) {
      model::Process m = p, q = p;
      m.name = Str(p.name), m.host = Str(p.host), m.source = Str(p.source);
      q.name = b_.Intern(std::string(t_.str(p.name)) + " predicted"), q.host = m.host, q.source = m.source;
      q.pid = p.pid + 100'000'000;
      proc_[0].push_back(b_.AddProcess(m));
      proc_[1].push_back(b_.AddProcess(q));
    }
    for (analyze::graph::NodeId v = 0; v < g_.num_gpu(); ++v) Gpu(v);
    for (int32_t i = 0; i < static_cast<int32_t>(t_.api_calls().size()); ++i) Api(i);
  }

 private:
  model::StringId Str(model::StringId id) { return id > 0 ? b_.Intern(t_.str(id)) : 0; }
  bool Timed(analyze::graph::NodeId v) const {
    return static_cast<size_t>(v) < times_.start_ns.size() && times_.start_ns[v] != INT64_MIN;
  }

  // Device and stream of a copy (`which` 0: measured, 1: predicted).
  std::pair<model::DeviceId, model::StreamId> Place(model::StreamId s, int which) {
    if (s < 0) return {model::kNone, model::kNone};
    const model::Stream& st = t_.streams()[s];
    const model::Device& dev = t_.devices()[st.device];
    const model::DeviceId d = b_.GetOrAddDevice(proc_[which][dev.process], dev.ordinal);
    // The predicted GPU's group says so too: the viewer names it by the device's name, and two
    // groups of one name would not tell the measured timeline from the predicted one.
    const std::string name(t_.str(dev.name));
    b_.data().devices[d].name =
        which == 0 ? Str(dev.name) : b_.Intern(name.empty() ? std::string("predicted") : name + " predicted");
    return {d, b_.GetOrAddStream(d, st.native_id)};
  }

  // The predicted stream of the collectives a change moved off stream `s` (as the prediction has
  // them: a stream of their own): on the predicted GPU, numbered after the recorded streams of its
  // device, named for the stream they came from ("stream 21 · comm · async (predicted) from stream 7").
  model::StreamId SideStream(model::StreamId s) {
    if (auto it = side_.find(s); it != side_.end()) return it->second;
    const model::Stream& st = t_.streams()[s];
    const model::DeviceId d = Place(s, 1).first;
    int64_t top = -1;
    for (const model::Stream& o : t_.streams()) {
      if (o.device == st.device) top = std::max(top, o.native_id);
    }
    const model::StreamId id = b_.GetOrAddStream(d, top + 1 + sides_on_[d]++);
    b_.data().streams[id].name = b_.Intern(absl::StrCat("async (predicted) from stream ", st.native_id));
    return side_[s] = id;
  }

  template <typename E>
  void Twice(const E& e, analyze::graph::NodeId v, std::vector<E>& out) {
    for (int which = 0; which < 2; ++which) {
      if (which == 1 && !Timed(v)) continue;
      E c = e;
      c.name = Str(e.name);
      std::tie(c.device, c.stream) = Place(e.stream, which);
      if (which == 1 && moved_[v] && e.stream >= 0) c.stream = SideStream(e.stream);
      if (which == 1) c.start_ns = times_.start_ns[v], c.end_ns = times_.end_ns[v];
      out.push_back(c);
    }
  }

  void Gpu(analyze::graph::NodeId v) {
    const model::GpuRef r = g_.Ref(v);
    auto& d = b_.data();
    switch (r.kind) {
      case model::GpuKind::kKernel: {
        model::Kernel k = t_.kernels()[r.index];
        k.collective = model::kNone;  // the collectives are not copied
        Twice(k, v, d.kernels);
        break;
      }
      case model::GpuKind::kMemcpy: {
        model::Memcpy m = t_.memcpys()[r.index];
        m.collective = model::kNone, m.dst_device = model::kNone;
        Twice(m, v, d.memcpys);
        break;
      }
      case model::GpuKind::kMemset: Twice(t_.memsets()[r.index], v, d.memsets); break;
    }
  }

  void Api(int32_t i) {
    const model::ApiCall& c = t_.api_calls()[i];
    if (c.thread < 0) return;
    const model::Thread& th = t_.threads()[c.thread];
    const analyze::graph::NodeId v = g_.ApiNode(i);
    for (int which = 0; which < 2; ++which) {
      if (which == 1 && !Timed(v)) continue;
      model::ApiCall a = c;
      a.name = Str(c.name);
      a.thread = b_.GetOrAddThread(proc_[which][th.process], th.tid);
      if (which == 1) a.start_ns = times_.start_ns[v], a.end_ns = times_.end_ns[v];
      b_.data().api_calls.push_back(a);
    }
  }

  const model::Trace& t_;
  const analyze::graph::Graph& g_;
  const analyze::replay::NodeTimes& times_;
  model::TraceBuilder& b_;
  std::vector<model::ProcessId> proc_[2];
  std::vector<uint8_t> moved_;                       // per GPU node: moved to a stream of its own
  std::map<model::StreamId, model::StreamId> side_;  // recorded stream -> its predicted side stream
  std::map<model::DeviceId, int64_t> sides_on_;      // side streams made per predicted device
};

}  // namespace

absl::Status WritePredictedTrace(const model::Trace& t, const analyze::graph::Graph& g,
                                 const analyze::replay::NodeTimes& times, const std::string& path) {
  model::TraceBuilder b;
  Copier(t, g, times, b).Run();
  ASSIGN_OR_RETURN(model::Trace out, std::move(b).Finalize());
  return exporters::WritePerfetto(out, nullptr, path);
}

}  // namespace overlapscope::engine
