// NodeAttrs and ChangeEffects (build.h): what each node of the graph is, and which changes touch
// it. Regexes run once per distinct name, never per event.
#include <algorithm>
#include <limits>
#include <memory>

#include "analyze/replay/build.h"
#include "analyze/replay/fresh.h"
#include "re2/re2.h"

namespace overlapscope::analyze::replay {
namespace {

template <typename T>
T Pick(const std::vector<T>& k, const std::vector<T>& c, const std::vector<T>& s, model::GpuRef r) {
  switch (r.kind) {
    case model::GpuKind::kKernel: return k[r.index];
    case model::GpuKind::kMemcpy: return c[r.index];
    case model::GpuKind::kMemset: return s[r.index];
  }
  return k[r.index];
}

// Cached RE2 search over interned names: one regex run per distinct name.
class NameMatcher {
 public:
  NameMatcher(const model::Trace& t, const std::string& re)
      : t_(t), re_(std::make_unique<RE2>(re, RE2::Quiet)), cache_(t.strings().size(), -1) {}
  bool Match(model::StringId id) {
    if (id <= 0 || static_cast<size_t>(id) >= cache_.size()) return false;
    int8_t& c = cache_[id];
    if (c < 0) c = re_->ok() && RE2::PartialMatch(t_.str(id), *re_) ? 1 : 0;
    return c == 1;
  }

 private:
  const model::Trace& t_;
  std::unique_ptr<RE2> re_;
  std::vector<int8_t> cache_;  // per StringId: -1 not yet, 0 no, 1 yes
};

// The attributes of GPU nodes, into sized vectors.
void GpuAttrs(const model::Trace& t, const graph::Graph& g, const ReplayInputs& in, NodeAttrs& a) {
  for (graph::NodeId v = 0; v < g.num_gpu(); ++v) {
    const model::GpuRef r = g.Ref(v);
    const model::StreamId s = g.Stream(v);  // t.StreamOf(r), kept by the graph (no read of the record)
    a.device[v] = s >= 0 ? t.DeviceOfStream(s) : model::kNone;
    a.cls[v] = Pick(in.kernel_class, in.memcpy_class, in.memset_class, r);
    a.iteration[v] = Pick(in.kernel_iteration, in.memcpy_iteration, in.memset_iteration, r);
    if (a.iteration[v] >= static_cast<int32_t>(in.iterations.size())) a.iteration[v] = model::kNone;
  }
}

}  // namespace

absl::StatusOr<NodeAttrs> CollectAttrs(const model::Trace& t, const graph::Graph& g, const ReplayInputs& in) {
  if (in.kernel_class.size() != t.kernels().size() || in.memcpy_class.size() != t.memcpys().size() ||
      in.memset_class.size() != t.memsets().size() || in.kernel_iteration.size() != t.kernels().size() ||
      in.memcpy_iteration.size() != t.memcpys().size() || in.memset_iteration.size() != t.memsets().size())
    return absl::InvalidArgumentError("replay inputs are not parallel to the trace's activities");
  NodeAttrs a;
  a.num_gpu = g.num_gpu();
  AssignFresh(a.device, a.num_gpu, model::DeviceId{model::kNone});
  AssignFresh(a.cls, a.num_gpu, GpuClass::kSync);
  AssignFresh(a.iteration, a.num_gpu, int32_t{model::kNone});
  for (size_t d = 0; d < t.devices().size(); ++d)
    a.device_process.push_back(t.ProcessOfDevice(static_cast<model::DeviceId>(d)));
  a.gpu_name = g.GpuNames();
  a.gpu_coll = g.GpuCollectives();
  a.calls = t.api_calls();
  a.collectives = t.collectives();
  GpuAttrs(t, g, in, a);
  return a;
}

ChangeEffects MatchChanges(const model::Trace& t, const NodeAttrs& a, const std::vector<Change>& changes) {
  ChangeEffects fx;
  const size_t n = a.num_gpu + a.calls.size();
  fx.scale = ZeroedVector<double>(n);
  fx.removed = ZeroedVector<uint8_t>(n);
  fx.moved = ZeroedVector<uint8_t>(n);
  fx.copy_engine = ZeroedVector<uint8_t>(n);
  fx.nosync = ZeroedVector<uint8_t>(n);
  fx.deferred = ZeroedVector<uint8_t>(n);
  fx.join_change = ZeroedVector<int32_t>(n);
  fx.matches.assign(changes.size(), 0);
  ZeroedVector<uint8_t> touched(changes.size() > 1 ? n : 0);  // one change: each hit is a new node
  for (size_t ci = 0; ci < changes.size(); ++ci) {
    const Change& c = changes[ci];
    NameMatcher m(t, c.regex);
    for (size_t v = 0; v < n; ++v) {
      const bool gpu = static_cast<int32_t>(v) < a.num_gpu;
      const int32_t u = static_cast<int32_t>(v);
      const bool coll = gpu && (a.CarriesCollective(u) || a.cls[v] == GpuClass::kComm);
      bool hit = false;
      switch (c.kind) {
        case ChangeKind::kScaleClass: hit = gpu && a.cls[v] == c.cls; break;
        case ChangeKind::kScaleName:
        case ChangeKind::kRemove:
        case ChangeKind::kDefer: hit = gpu && (m.Match(a.Name(u)) || m.Match(a.Op(u))); break;
        case ChangeKind::kAsync:
        case ChangeKind::kCopyEngine: hit = gpu && coll && (m.Match(a.Name(u)) || m.Match(a.Op(u))); break;
        case ChangeKind::kNoSync: hit = !gpu && m.Match(a.Name(u)); break;
      }
      if (!hit) continue;
      ++fx.matches[ci];
      if (changes.size() == 1) {
        ++fx.changed_nodes;
      } else if (!touched[v]) {
        touched[v] = 1, ++fx.changed_nodes;
      }
      switch (c.kind) {
        case ChangeKind::kScaleClass:
        case ChangeKind::kScaleName:
          // 0 stands for 1: a product that underflows to 0 is kept as the smallest double
          // (any duration times it rounds to 0, as times 0 would).
          fx.scale[v] =
              std::max((fx.scale[v] == 0 ? 1.0 : fx.scale[v]) * c.factor, std::numeric_limits<double>::denorm_min());
          fx.any_scale = true;
          break;
        case ChangeKind::kRemove:
          fx.removed[v] = 1;
          fx.any_removed = true;
          break;
        case ChangeKind::kAsync:
          fx.moved[v] = 1;
          fx.any_moved = true;
          fx.join_change[v] = static_cast<int32_t>(ci);
          break;
        case ChangeKind::kCopyEngine:
          fx.copy_engine[v] = 1;
          fx.any_copy_engine = true;
          break;
        case ChangeKind::kNoSync:
          fx.nosync[v] = 1;
          fx.any_nosync = true;
          break;
        case ChangeKind::kDefer:
          fx.deferred[v] = 1;
          fx.any_deferred = true;
          break;
      }
    }
  }
  return fx;
}

}  // namespace overlapscope::analyze::replay
