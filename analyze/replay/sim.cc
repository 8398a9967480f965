#include "analyze/replay/sim.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <numeric>

namespace overlapscope::analyze::replay {

void SimGraph::Resize(int32_t n, int32_t gpu) {
  num_nodes = n;
  num_gpu = gpu;
  num_groups = 0;
  rec_start.assign(n, 0);
  rec_end.assign(n, 0);
  dur.assign(n, 0);
  release_tail.assign(n, 0);
  group.assign(n, -1);
  transfer.assign(n, 0);
  pred_off.assign(static_cast<size_t>(n) + 1, 0);
  preds.clear();
}

void EdgeRows::Finish(SimGraph& g) {
  const int32_t n = g.num_nodes;
  Next(n);  // closes the in-order rows
  std::vector<int64_t>& off = g.pred_off;
  if (pending_.empty()) {
    off = std::move(off_);
    g.preds = std::move(in_order_);
    return;
  }
  off.assign(static_cast<size_t>(n) + 1, 0);
  for (int32_t v = 0; v < n; ++v) off[v + 1] = off_[v + 1] - off_[v];
  for (const Pending& p : pending_) ++off[p.to + 1];
  for (int32_t v = 0; v < n; ++v) off[v + 1] += off[v];
  g.preds.resize(in_order_.size() + pending_.size());
  std::vector<int64_t> fill(off.begin(), off.end() - 1);
  for (int32_t v = 0; v < n; ++v) {
    for (int64_t i = off_[v]; i < off_[v + 1]; ++i) g.preds[fill[v]++] = in_order_[i];
  }
  for (const Pending& p : pending_) g.preds[fill[p.to]++] = p.e;
  pending_.clear();
  in_order_.clear();
  off_.clear();
}

namespace {

constexpr int64_t kUnset = INT64_MIN;

struct SuccEdge {
  int32_t to;
  Dep dep;
  int64_t lag;
};

// The successors fired by each node's start (kAfterStart) and by its end (the others).
struct Succs {
  std::vector<int64_t> off_s, off_e;
  std::vector<SuccEdge> on_start, on_end;
};

Succs BuildSuccs(const SimGraph& g) {
  Succs s;
  s.off_s.assign(static_cast<size_t>(g.num_nodes) + 1, 0);
  s.off_e.assign(static_cast<size_t>(g.num_nodes) + 1, 0);
  for (const SimEdge& e : g.preds) ++(e.dep == Dep::kAfterStart ? s.off_s : s.off_e)[e.from + 1];
  for (int32_t n = 0; n < g.num_nodes; ++n) {
    s.off_s[n + 1] += s.off_s[n];
    s.off_e[n + 1] += s.off_e[n];
  }
  s.on_start.resize(static_cast<size_t>(s.off_s.back()));
  s.on_end.resize(static_cast<size_t>(s.off_e.back()));
  std::vector<int64_t> fs(s.off_s.begin(), s.off_s.end() - 1), fe(s.off_e.begin(), s.off_e.end() - 1);
  for (int32_t to = 0; to < g.num_nodes; ++to) {
    for (int64_t i = g.pred_off[to]; i < g.pred_off[to + 1]; ++i) {
      const SimEdge& e = g.preds[i];
      if (e.dep == Dep::kAfterStart) {
        s.on_start[fs[e.from]++] = {to, e.dep, e.lag_ns};
      } else {
        s.on_end[fe[e.from]++] = {to, e.dep, e.lag_ns};
      }
    }
  }
  return s;
}

}  // namespace

// What every run on one graph shares: successors, initial counts, collective groups.
struct Simulation::Plan {
  Succs succ;
  std::vector<int32_t> cnt_s, cnt_e;
  std::vector<uint8_t> has_release;
  std::vector<int32_t> group_cnt, members;
  std::vector<int64_t> group_off;
};

namespace {

using Plan = Simulation::Plan;

void BuildPlan(const SimGraph& g, Plan& p) {
  const int32_t n = g.num_nodes;
  p.succ = BuildSuccs(g);
  p.cnt_s.assign(n, 0);
  p.cnt_e.assign(n, 1);
  p.has_release.assign(n, 0);
  for (int32_t v = 0; v < n; ++v) {
    for (int64_t i = g.pred_off[v]; i < g.pred_off[v + 1]; ++i) {
      if (g.preds[i].dep == Dep::kRelease) {
        ++p.cnt_e[v];
        p.has_release[v] = 1;
      } else {
        ++p.cnt_s[v];
      }
    }
    if (g.group[v] >= 0) ++p.cnt_e[v];
  }
  p.group_cnt.assign(g.num_groups, 0);
  p.group_off.assign(static_cast<size_t>(g.num_groups) + 1, 0);
  for (int32_t v = 0; v < n; ++v) {
    if (g.group[v] >= 0) ++p.group_off[g.group[v] + 1];
  }
  for (int32_t k = 0; k < g.num_groups; ++k) {
    p.group_cnt[k] = static_cast<int32_t>(p.group_off[k + 1]);
    p.group_off[k + 1] += p.group_off[k];
  }
  p.members.resize(static_cast<size_t>(p.group_off.back()));
  std::vector<int64_t> fill(p.group_off.begin(), p.group_off.end() - 1);
  for (int32_t v = 0; v < n; ++v) {
    if (g.group[v] >= 0) p.members[fill[g.group[v]]++] = v;
  }
}

class Simulator {
 public:
  Simulator(const SimGraph& g, const Plan& p, const std::vector<int64_t>& dur, const std::vector<ExtraEdge>* extra)
      : g_(g), p_(p), dur_(dur), succ_(p.succ), group_off_(p.group_off), members_(p.members) {
    if (extra) extra_ = *extra;
    std::sort(extra_.begin(), extra_.end(), [](const ExtraEdge& x, const ExtraEdge& y) { return x.from < y.from; });
  }

  Schedule Run() {
    const int32_t n = g_.num_nodes;
    Init();
    for (int32_t v = 0; v < n; ++v) {
      if (cnt_s_[v] == 0) Push(2 * v);
    }
    std::vector<int32_t> by_time;  // for breaking cycles, built only when needed
    size_t next_forced = 0;
    while (true) {
      while (head_ < queue_.size()) Fire(queue_[head_++]);
      if (fired_ == 2 * static_cast<int64_t>(n)) break;
      // Something waits on a cycle: release the earliest recorded start not yet fired.
      if (by_time.empty()) {
        by_time.resize(n);
        std::iota(by_time.begin(), by_time.end(), 0);
        std::stable_sort(by_time.begin(), by_time.end(),
                         [&](int32_t a, int32_t b) { return g_.rec_start[a] < g_.rec_start[b]; });
      }
      while (next_forced < by_time.size() && done_[2 * by_time[next_forced]]) ++next_forced;
      if (next_forced == by_time.size()) {
        ForceEnds();
        continue;
      }
      ++s_.cycles_broken;
      Push(2 * by_time[next_forced]);
    }
    return std::move(s_);
  }

 private:
  void Init() {
    const int32_t n = g_.num_nodes;
    s_.start.assign(n, kUnset);
    s_.end.assign(n, kUnset);
    s_.bind_start.assign(n, -1);
    s_.bind_dep.assign(n, Dep::kAfterEnd);
    s_.bind_end.assign(n, -1);
    cnt_s_ = p_.cnt_s;
    for (const ExtraEdge& e : extra_) ++cnt_s_[e.to];
    cnt_e_ = p_.cnt_e;
    rel_end_.assign(n, kUnset);
    group_cnt_ = p_.group_cnt;
    group_max_.assign(g_.num_groups, kUnset);
    group_last_.assign(g_.num_groups, -1);
    queue_.clear();
    queue_.reserve(2 * static_cast<size_t>(n));
    done_.assign(2 * static_cast<size_t>(n), 0);
  }

  void Push(int32_t ev) { queue_.push_back(ev); }

  void DecEnd(int32_t v) {
    if (--cnt_e_[v] == 0) Push(2 * v + 1);
  }

  void Fire(int32_t ev) {
    if (done_[ev]) return;
    done_[ev] = 1;
    ++fired_;
    const int32_t v = ev >> 1;
    if ((ev & 1) == 0) {
      FireStart(v);
    } else {
      FireEnd(v);
    }
  }

  void FireStart(int32_t v) {
    int64_t t = s_.start[v] == kUnset ? g_.rec_start[v] : s_.start[v];
    s_.start[v] = t;
    for (int64_t i = succ_.off_s[v]; i < succ_.off_s[v + 1]; ++i) Offer(succ_.on_start[i], v, t);
    OfferExtra(v, Dep::kAfterStart, t);
    DecEnd(v);
    const int32_t k = g_.group[v];
    if (k < 0) return;
    if (t > group_max_[k]) {
      group_max_[k] = t;
      group_last_[k] = v;
    }
    if (--group_cnt_[k] == 0) {
      for (int64_t i = group_off_[k]; i < group_off_[k + 1]; ++i) DecEnd(members_[i]);
    }
  }

  void FireEnd(int32_t v) {
    if (done_[2 * v] == 0) {  // forced out of a cycle before its start
      done_[2 * v] = 1;
      ++fired_;
      if (s_.start[v] == kUnset) s_.start[v] = g_.rec_start[v];
    }
    const int64_t st = s_.start[v];
    int64_t t;
    const int32_t k = g_.group[v];
    if (k >= 0) {
      const int64_t last = std::max(st, group_max_[k]);
      t = last + g_.transfer[v];
      if (group_last_[k] != v && group_max_[k] > st) s_.bind_end[v] = group_last_[k];
    } else if (p_.has_release[v]) {
      t = st + g_.release_tail[v];
      if (rel_end_[v] > t)
        t = rel_end_[v];
      else
        s_.bind_end[v] = -1;
    } else {
      t = st + dur_[v];
    }
    s_.end[v] = t;
    for (int64_t i = succ_.off_e[v]; i < succ_.off_e[v + 1]; ++i) {
      const SuccEdge& e = succ_.on_end[i];
      if (e.dep == Dep::kRelease) {
        if (done_[2 * e.to + 1]) continue;
        if (t + e.lag > rel_end_[e.to]) {
          rel_end_[e.to] = t + e.lag;
          s_.bind_end[e.to] = v;
        }
        DecEnd(e.to);
      } else {
        Offer(e, v, t);
      }
    }
    OfferExtra(v, Dep::kAfterEnd, t);
  }

  // The extra constraints from v of kind `dep` (t: v's start or end).
  void OfferExtra(int32_t v, Dep dep, int64_t t) {
    if (extra_.empty()) return;
    auto it =
        std::lower_bound(extra_.begin(), extra_.end(), v, [](const ExtraEdge& e, int32_t x) { return e.from < x; });
    for (; it != extra_.end() && it->from == v; ++it)
      if (it->dep == dep) Offer(SuccEdge{it->to, it->dep, it->lag_ns}, v, t);
  }

  // A start constraint from `from` (at time t) reaches e.to.
  void Offer(const SuccEdge& e, int32_t from, int64_t t) {
    const int64_t at = t + e.lag;
    if (done_[2 * e.to]) return;  // already forced out of a cycle
    if (s_.start[e.to] == kUnset || at > s_.start[e.to]) {
      s_.start[e.to] = at;
      s_.bind_start[e.to] = from;
      s_.bind_dep[e.to] = e.dep;
    }
    if (--cnt_s_[e.to] == 0) Push(2 * e.to);
  }

  // Every start has fired but some ends wait on a group or release that a cycle holds.
  void ForceEnds() {
    for (int32_t v = 0; v < g_.num_nodes; ++v) {
      if (!done_[2 * v + 1]) {
        ++s_.cycles_broken;
        if (g_.group[v] >= 0 && group_max_[g_.group[v]] == kUnset) group_max_[g_.group[v]] = s_.start[v];
        Push(2 * v + 1);
      }
    }
  }

  const SimGraph& g_;
  const Plan& p_;
  const std::vector<int64_t>& dur_;
  std::vector<ExtraEdge> extra_;  // sorted by from
  const Succs& succ_;
  const std::vector<int64_t>& group_off_;
  const std::vector<int32_t>& members_;
  Schedule s_;
  std::vector<int32_t> cnt_s_, cnt_e_;
  std::vector<int64_t> rel_end_;
  std::vector<uint8_t> done_;
  std::vector<int32_t> group_cnt_, group_last_;
  std::vector<int64_t> group_max_;
  std::vector<int32_t> queue_;
  size_t head_ = 0;
  int64_t fired_ = 0;
};

}  // namespace

Simulation::Simulation(const SimGraph& g) : g_(g), plan_(std::make_unique<Plan>()) { BuildPlan(g, *plan_); }
Simulation::~Simulation() = default;

Schedule Simulation::Run(const std::vector<int64_t>& dur, const std::vector<ExtraEdge>* extra) const {
  return Simulator(g_, *plan_, dur, extra).Run();
}

Schedule Simulate(const SimGraph& g) { return Simulation(g).Run(g.dur, nullptr); }

}  // namespace overlapscope::analyze::replay
