// The async:, prefetch: and defer: changes (replay.h) as edges: matching collectives leave the stream they shared with
// other work for a side stream of their own (issued at the same point: after what preceded them
// on the stream; in order among themselves), and whoever waited for them right after them (the
// next activity on their stream, or the activities their event waits released: PyTorch's
// work.wait()) waits only before the join point instead, with the recorded gap from the
// collective's end to that first waiter (the GPU's front end takes as long across streams).
#include "analyze/replay/build_async.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <tuple>
#include <utility>

#include "re2/re2.h"

namespace overlapscope::analyze::replay {
namespace {

struct Waiter {
  graph::NodeId collective, from;  // the moved collective; the first activity that waited for it
};

class AsyncBuilder {
 public:
  AsyncBuilder(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
               const ChangeEffects& fx, const std::vector<graph::NodeId>& anchors, const GapFn& gap, EdgeRows& rows)
      : t_(t), g_(g), a_(a), fx_(fx), anchors_(anchors), gap_(gap), rows_(rows) {
    for (const Change& c : changes) {
      joins_.push_back(c.join_regex.empty() ? nullptr : std::make_unique<RE2>(c.join_regex, RE2::Quiet));
      join_hit_.push_back(joins_.back() ? JoinHits(*joins_.back()) : std::vector<uint8_t>{});
    }
  }

  void Build(const std::vector<uint8_t>& restream) {
    for (size_t s = 0; s < restream.size(); ++s) {
      if (restream[s] == kRestreamMerged) Restream(static_cast<model::StreamId>(s));
      if (restream[s] == kRestreamInline) InlineWaiters(static_cast<model::StreamId>(s));
    }
    // The activities that waited for a moved collective's event, found from the collectives' out-
    // edges (the same edges as the waiters' in-edges, and sorted alike by Join()).
    for (graph::NodeId c = 0; c < g_.num_gpu(); ++c) {
      if (!fx_.moved[c]) continue;
      for (const graph::Edge& e : g_.CrossSuccs(c)) {
        if (e.kind == graph::EdgeKind::kEventWait && g_.IsGpu(e.to) && !fx_.moved[e.to]) waiters_.push_back({c, e.to});
      }
    }
    NextSameCommunicator();
    Join();
  }

 private:
  void Restream(model::StreamId s) {
    graph::NodeId main = -1, side = -1;
    graph::NodeId main_before_iter = -1;  // the last unmoved activity before the current iteration's first
    int32_t iter = INT32_MIN;
    std::vector<graph::NodeId> open;  // moved, waiting for the next unmoved activity
    std::vector<graph::NodeId> held;  // deferred, waiting for the next compute activity not deferred
    // The last activity chained that was not deferred: where a moved collective is issued. The
    // deferred activities placed before it run later than its issue point (an async program
    // issues the next all-to-all right after the GEMM that produced it, and consumes the previous
    // one after that), so they do not hold it back.
    graph::NodeId issue = -1;
    auto chain = [&](graph::NodeId u, int64_t gap) {
      if (main >= 0) rows_.Add(u, {main, Dep::kAfterEnd, gap});
      main = u;
    };
    auto place_held = [&] {
      for (graph::NodeId h : held) chain(h, main >= 0 ? gap_(main, h) : 0);
      held.clear();
    };
    for (graph::NodeId u = g_.StreamBegin(s); u < g_.StreamEnd(s); ++u) {
      if (a_.iteration[u] != iter) {
        place_held();  // a deferred activity stays in its iteration: at its end
        iter = a_.iteration[u], main_before_iter = main;
      }
      if (fx_.moved[u]) {
        const graph::NodeId anchor = anchors_.empty() ? -1 : anchors_[u];
        if (anchor >= 0) {  // prefetch: at the start of its iteration, with its first activity
          if (main_before_iter >= 0) rows_.Add(u, {main_before_iter, Dep::kAfterEnd, 0});
          rows_.Add(u, {anchor, Dep::kAfterStart, 0});
        } else if (issue >= 0) {
          rows_.Add(u, {issue, Dep::kAfterEnd, 0});
        }
        if (side >= 0) rows_.Add(u, {side, Dep::kAfterEnd, 0});
        side = u;
        open.push_back(u);
        continue;
      }
      for (graph::NodeId c : open) waiters_.push_back({c, u});
      open.clear();
      if (fx_.Deferred(u)) {
        held.push_back(u);
        continue;
      }
      chain(u, main >= 0 ? gap_(main, u) : 0);
      issue = u;
      if (a_.cls[u] == GpuClass::kCompute) place_held();
    }
    place_held();
  }

  // The waiters Restream() would find on a stream without deferred activities: each moved
  // collective's next activity not moved (the caller builds the stream's order itself).
  void InlineWaiters(model::StreamId s) {
    std::vector<graph::NodeId> open;
    for (graph::NodeId u = g_.StreamBegin(s); u < g_.StreamEnd(s); ++u) {
      if (fx_.moved[u]) {
        open.push_back(u);
        continue;
      }
      for (graph::NodeId c : open) waiters_.push_back({c, u});
      open.clear();
    }
  }

  // The collectives by process, communicator and recorded start (NextSame() searches them).
  void NextSameCommunicator() {
    for (graph::NodeId v = 0; v < g_.num_gpu(); ++v) {
      if (a_.CarriesCollective(v)) keys_.emplace_back(a_.ProcessOf(v), a_.Communicator(v), g_.StartNs(v));
    }
    std::sort(keys_.begin(), keys_.end());
  }

  // For moved collective v: the recorded start of the next collective of its communicator in its
  // process (INT64_MAX when none). Asked once per waiter (not kept per node: no array of them all).
  int64_t NextSame(graph::NodeId v) const {
    auto it =
        std::lower_bound(keys_.begin(), keys_.end(), std::make_tuple(a_.ProcessOf(v), a_.Communicator(v), g_.EndNs(v)));
    if (it != keys_.end() && std::get<0>(*it) == a_.ProcessOf(v) && std::get<1>(*it) == a_.Communicator(v))
      return std::get<2>(*it);
    return INT64_MAX;
  }

  // Per GPU node: whether it matches `join`: its name, or the name of a host range (CPU op,
  // annotation, NVTX range) of its launching thread that encloses its launch call — PyTorch's
  // record_function("gemm") tells the consuming GEMM from an independent one of the same kernel.
  std::vector<uint8_t> JoinHits(const RE2& join) const {
    const int32_t n = g_.num_gpu();
    std::vector<uint8_t> hit(n, 0);
    std::vector<int8_t> by_name(t_.strings().size(), -1);  // per StringId: -1 not yet, 0 no, 1 yes
    auto matches = [&](model::StringId id) {
      if (id <= 0 || static_cast<size_t>(id) >= by_name.size()) return false;
      if (by_name[id] < 0) by_name[id] = RE2::PartialMatch(t_.str(id), join) ? 1 : 0;
      return by_name[id] == 1;
    };
    // Matching ranges per thread, merged: a launch inside one is inside a matching range.
    std::vector<std::vector<std::pair<int64_t, int64_t>>> inside;
    for (const model::Range& r : t_.ranges()) {
      if (r.thread < 0 || r.kind == model::RangeKind::kOverhead || !matches(r.name)) continue;
      if (static_cast<size_t>(r.thread) >= inside.size()) inside.resize(r.thread + 1);
      inside[r.thread].push_back({r.start_ns, r.end_ns});
    }
    for (auto& v : inside) {
      std::sort(v.begin(), v.end());
      size_t k = 0;
      for (size_t i = 0; i < v.size(); ++i) {
        if (k > 0 && v[i].first <= v[k - 1].second)
          v[k - 1].second = std::max(v[k - 1].second, v[i].second);
        else
          v[k++] = v[i];
      }
      v.resize(k);
    }
    for (graph::NodeId u = 0; u < n; ++u) {
      if (matches(a_.Name(u))) {
        hit[u] = 1;
        continue;
      }
      const int32_t call = g_.LaunchCall(u);
      if (call < 0 || static_cast<size_t>(call) >= t_.api_calls().size()) continue;
      const model::ApiCall& ac = t_.api_calls()[call];
      if (ac.thread < 0 || static_cast<size_t>(ac.thread) >= inside.size()) continue;
      const auto& v = inside[ac.thread];
      auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(ac.start_ns, INT64_MAX));
      if (it != v.begin() && std::prev(it)->second >= ac.start_ns) hit[u] = 1;
    }
    return hit;
  }

  // Whether u is where moved collective c joins (next_same: NextSame(c)).
  bool Joins(graph::NodeId c, graph::NodeId u, int64_t next_same) const {
    if (a_.iteration[c] != a_.iteration[u]) return true;
    const std::vector<uint8_t>& hit = join_hit_[fx_.join_change[c]];
    if (!hit.empty()) return hit[u] != 0;
    return (a_.CarriesCollective(u) && a_.Communicator(u) == a_.Communicator(c)) || g_.StartNs(u) >= next_same;
  }

  // One sweep per stream over its waiters, in stream order.
  void Join() {
    std::sort(waiters_.begin(), waiters_.end(), [&](const Waiter& x, const Waiter& y) {
      return std::make_tuple(g_.Stream(x.from), x.from, x.collective) <
             std::make_tuple(g_.Stream(y.from), y.from, y.collective);
    });
    size_t i = 0;
    while (i < waiters_.size()) {
      const model::StreamId s = g_.Stream(waiters_[i].from);
      std::vector<std::pair<const Waiter*, int64_t>> pending;  // waiter, NextSame() of its collective
      graph::NodeId u = waiters_[i].from;
      while (u < g_.StreamEnd(s)) {
        while (i < waiters_.size() && g_.Stream(waiters_[i].from) == s && waiters_[i].from <= u) {
          const Waiter* w = &waiters_[i++];
          pending.emplace_back(w, NextSame(w->collective));
        }
        if (!fx_.moved[u]) {
          for (size_t k = 0; k < pending.size();) {
            if (Joins(pending[k].first->collective, u, pending[k].second)) {
              // The wait keeps the recorded gap of the dependency it replaces, the collective's end
              // to its first waiter's start (as the replay keeps every recorded stream-order and
              // event-wait edge's): the GPU's front end starts a dependent activity that long after
              // the collective's end, on its stream or across (1.5-1.6 us after an all-to-all).
              const Waiter& w = *pending[k].first;
              rows_.Add(u, {w.collective, Dep::kAfterEnd, gap_(w.collective, w.from)});
              pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
            } else {
              ++k;
            }
          }
        }
        if (pending.empty()) {
          if (i >= waiters_.size() || g_.Stream(waiters_[i].from) != s) break;
          u = waiters_[i].from;
        } else {
          ++u;
        }
      }
      while (i < waiters_.size() && g_.Stream(waiters_[i].from) == s) ++i;  // joined nowhere: trace end
    }
  }

  const model::Trace& t_;
  const graph::Graph& g_;
  const NodeAttrs& a_;
  const ChangeEffects& fx_;
  const std::vector<graph::NodeId>& anchors_;
  const GapFn& gap_;
  EdgeRows& rows_;
  std::vector<std::unique_ptr<RE2>> joins_;
  std::vector<std::vector<uint8_t>> join_hit_;  // per change with a JOIN: JoinHits()
  std::vector<Waiter> waiters_;
  std::vector<std::tuple<model::ProcessId, model::StringId, int64_t>> keys_;  // NextSameCommunicator()
};

}  // namespace

void AddAsyncEdges(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a, const std::vector<Change>& changes,
                   const ChangeEffects& fx, const std::vector<uint8_t>& restream,
                   const std::vector<graph::NodeId>& anchors, const GapFn& gap, EdgeRows& rows) {
  AsyncBuilder(t, g, a, changes, fx, anchors, gap, rows).Build(restream);
}

std::vector<graph::NodeId> PrefetchAnchors(const model::Trace& t, const graph::Graph& g, const NodeAttrs& a,
                                           const std::vector<Change>& changes, const ChangeEffects& fx) {
  bool any = false;
  for (const Change& c : changes) any |= c.prefetch;
  if (!any) return {};
  std::vector<graph::NodeId> anchor(g.num_gpu(), -1);
  std::vector<uint8_t> seen(t.streams().size() + 1, 0);
  for (graph::NodeId v = 0; v < g.num_gpu(); ++v) {
    const model::StreamId s = g.Stream(v);
    if (!fx.moved[v] || s < 0 || seen[s]) continue;
    seen[s] = 1;
    graph::NodeId first = -1;
    int32_t iter = INT32_MIN;
    for (graph::NodeId u = g.StreamBegin(s); u < g.StreamEnd(s); ++u) {
      if (a.iteration[u] != iter || first < 0) iter = a.iteration[u], first = u;
      if (fx.moved[u] && changes[fx.join_change[u]].prefetch && u != first && iter >= 0) anchor[u] = first;
    }
  }
  return anchor;
}

}  // namespace overlapscope::analyze::replay
