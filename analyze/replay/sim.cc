// The forward simulation (sim.h). At 10 M nodes its cost is mostly memory touched for the first
// time (page faults): it keeps one array per thing it must know per node, keeps its ready queue
// as a small ring, and a one-shot Simulate() hands the plan's counts to the run instead of
// copying them.
#include "analyze/replay/sim.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <numeric>
#include <utility>

#include "analyze/replay/fresh.h"
#include "analyze/replay/sim_plan.h"

namespace overlapscope::analyze::replay {

namespace {

constexpr int64_t kUnset = INT64_MIN;
// A count once its event has fired (no array of fired flags: the count sits in the cache line
// the event's offers touch anyway).
constexpr int32_t kFired = INT32_MIN;

// First-in first-out queue of event ids in a ring that doubles when full (the number of events
// ready at once is small next to the number of events).
class Fifo {
 public:
  Fifo() : buf_(1024) {}
  bool empty() const { return head_ == tail_; }
  void push(int32_t x) {
    if (tail_ - head_ == buf_.size()) Grow();
    buf_[tail_++ & (buf_.size() - 1)] = x;
  }
  int32_t pop() { return buf_[head_++ & (buf_.size() - 1)]; }

 private:
  void Grow() {
    std::vector<int32_t> b(2 * buf_.size());
    for (size_t i = 0; head_ + i < tail_; ++i) b[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    tail_ -= head_;
    head_ = 0;
    buf_ = std::move(b);
  }
  std::vector<int32_t> buf_;  // size a power of two
  size_t head_ = 0, tail_ = 0;
};

using Plan = Simulation::Plan;

// A run's per-node state before its first event: nothing known yet.
struct RunState {
  Schedule s;
};

void InitTimes(int32_t n, Schedule& s) {
  AssignFresh(s.start, n, kUnset);
  // Until a node's end fires, end[] holds the latest release offered to it (kUnset: none).
  AssignFresh(s.end, n, kUnset);
}

// Nothing bound yet.
void InitBindings(int32_t n, Schedule& s) {
  AssignFresh(s.bind_start, n, -1);
  AssignFresh(s.bind_dep, n, Dep::kAfterEnd);
  AssignFresh(s.bind_end, n, -1);
}

void InitRun(int32_t n, RunState& r) {
  InitTimes(n, r.s);
  InitBindings(n, r.s);
}

class Simulator {
 public:
  // `cnt_s` / `cnt_e`: the plan's initial counts (copied, or moved out of a one-shot plan);
  // `init`: InitRun()'s state.
  Simulator(const SimGraph& g, const Plan& p, const std::vector<int64_t>& dur, const std::vector<ExtraEdge>* extra,
            std::vector<int32_t> cnt_s, std::vector<int32_t> cnt_e, RunState init)
      : g_(g),
        p_(p),
        dur_(dur),
        succ_(p.succ),
        group_off_(p.group_off),
        members_(p.members),
        s_(std::move(init.s)),
        cnt_s_(std::move(cnt_s)),
        cnt_e_(std::move(cnt_e)) {
    if (extra) extra_ = *extra;
    std::sort(extra_.begin(), extra_.end(), [](const ExtraEdge& x, const ExtraEdge& y) { return x.from < y.from; });
  }

  // The count buffers, after Run() (for the next run to refill).
  void TakeCounts(std::vector<int32_t>& cnt_s, std::vector<int32_t>& cnt_e) {
    cnt_s = std::move(cnt_s_);
    cnt_e = std::move(cnt_e_);
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
      while (!queue_.empty()) Fire(queue_.pop());
      if (fired_ == 2 * static_cast<int64_t>(n)) break;
      // Something waits on a cycle: release the earliest recorded start not yet fired.
      if (by_time.empty()) {
        by_time.resize(n);
        std::iota(by_time.begin(), by_time.end(), 0);
        std::stable_sort(by_time.begin(), by_time.end(),
                         [&](int32_t a, int32_t b) { return g_.rec_start[a] < g_.rec_start[b]; });
      }
      while (next_forced < by_time.size() && cnt_s_[by_time[next_forced]] == kFired) ++next_forced;
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
    for (const ExtraEdge& e : extra_) ++cnt_s_[e.to];
    group_cnt_ = p_.group_cnt;
    group_max_.assign(g_.num_groups, kUnset);
    group_last_.assign(g_.num_groups, -1);
  }

  void Push(int32_t ev) { queue_.push(ev); }

  void DecEnd(int32_t v) {
    int32_t& c = cnt_e_[v];
    if (c != kFired && --c == 0) Push(2 * v + 1);
  }

  void Fire(int32_t ev) {
    const int32_t v = ev >> 1;
    int32_t& c = (ev & 1) == 0 ? cnt_s_[v] : cnt_e_[v];
    if (c == kFired) return;  // queued twice (a cycle forced it first)
    c = kFired;
    ++fired_;
    if ((ev & 1) == 0) {
      FireStart(v);
    } else {
      FireEnd(v);
    }
  }

  void FireStart(int32_t v) {
    int64_t t = s_.start[v] == kUnset ? g_.rec_start[v] : s_.start[v];
    s_.start[v] = t;
    for (int64_t i = succ_.off[v]; i < succ_.off[v + 1]; ++i) {
      const int32_t to = succ_.on[i].to;
      if (to >= Succs::kStartEdge) Offer(to - Succs::kStartEdge, Dep::kAfterStart, v, t + succ_.Lag(i));
    }
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
    if (cnt_s_[v] != kFired) {  // forced out of a cycle before its start
      cnt_s_[v] = kFired;
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
    } else if (p_.releases.Has(v)) {
      t = st + p_.releases.Tail(v);
      if (const int64_t released = s_.end[v]; released > t)
        t = released;
      else
        s_.bind_end[v] = -1;
    } else {
      t = st + dur_[v];
    }
    s_.end[v] = t;
    for (int64_t i = succ_.off[v]; i < succ_.off[v + 1]; ++i) {
      const SuccEdge& e = succ_.on[i];
      if (e.to >= Succs::kStartEdge) continue;  // fired by v's start
      const int64_t at = t + succ_.Lag(i);
      if (e.to < 0) {  // a release: ~target
        const int32_t to = ~e.to;
        if (cnt_e_[to] == kFired) continue;
        if (at > s_.end[to]) {
          s_.end[to] = at;
          s_.bind_end[to] = v;
        }
        DecEnd(to);
      } else {
        Offer(e.to, Dep::kAfterEnd, v, at);
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
      if (it->dep == dep) Offer(it->to, it->dep, v, t + it->lag_ns);
  }

  // A start constraint from `from` reaches `to`: start(to) >= at.
  void Offer(int32_t to, Dep dep, int32_t from, int64_t at) {
    if (cnt_s_[to] == kFired) return;  // already forced out of a cycle
    if (s_.start[to] == kUnset || at > s_.start[to]) {
      s_.start[to] = at;
      s_.bind_start[to] = from;
      s_.bind_dep[to] = dep;
    }
    if (--cnt_s_[to] == 0) Push(2 * to);
  }

  // Every start has fired but some ends wait on a group or release that a cycle holds.
  void ForceEnds() {
    for (int32_t v = 0; v < g_.num_nodes; ++v) {
      if (cnt_e_[v] != kFired) {
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
  std::vector<int32_t> group_cnt_, group_last_;
  std::vector<int64_t> group_max_;
  Fifo queue_;
  int64_t fired_ = 0;
};

}  // namespace

Simulation::Simulation(const SimGraph& g, PlanBuffers* buffers, std::vector<RowOffset>* row_offsets)
    : g_(g), plan_(std::make_unique<Plan>()) {
  BuildPlan(g, *plan_, buffers, row_offsets);
}
Simulation::~Simulation() = default;

Schedule Simulation::Run(const std::vector<int64_t>& dur, const std::vector<ExtraEdge>* extra,
                         Schedule* initial) const {
  std::vector<int32_t> cnt_s, cnt_e;
  if (!counts_taken_) {
    cnt_s = std::move(plan_->cnt_s);
    cnt_e = std::move(plan_->cnt_e);
    counts_taken_ = true;
  } else {
    cnt_s = std::move(spare_s_);
    cnt_e = std::move(spare_e_);
    InitialCounts(g_, plan_->succ, cnt_s, cnt_e);
  }
  RunState init;
  if (initial != nullptr && static_cast<int32_t>(initial->start.size()) == g_.num_nodes) {
    init.s = std::move(*initial);  // InitRun()'s values already
  } else {
    InitRun(g_.num_nodes, init);
  }
  Simulator sim(g_, *plan_, dur, extra, std::move(cnt_s), std::move(cnt_e), std::move(init));
  Schedule s = sim.Run();
  sim.TakeCounts(spare_s_, spare_e_);
  return s;
}

Schedule Simulate(const SimGraph& g) { return Simulation(g).Run(g.dur, nullptr); }

void ResetSchedule(int32_t n, Schedule& s) {
  RunState r{std::move(s)};
  InitRun(n, r);  // within the arrays' capacity: writes, no fresh pages
  r.s.cycles_broken = 0;
  s = std::move(r.s);
}

Schedule InitialTimes(int32_t n) {
  Schedule s;
  InitTimes(n, s);
  return s;
}

Schedule ScheduleFromRows(SimGraph& g, Schedule times) {
  const int32_t n = g.num_nodes;
  Schedule s = std::move(times);
  if (static_cast<int32_t>(s.start.size()) != n || static_cast<int32_t>(s.end.size()) != n) InitTimes(n, s);
  // The rows' arrays hold one entry an edge, written when the graph was built: where the graph
  // has at least an edge a node, these fills stay within pages touched already.
  s.bind_start = std::move(g.pred_from);
  s.bind_end = std::move(g.pred_lag);
  s.bind_dep = std::move(g.pred_dep);
  InitBindings(n, s);
  s.cycles_broken = 0;
  std::vector<RowOffset>().swap(g.pred_off);
  BigLags().swap(g.big_lags);
  return s;
}

}  // namespace overlapscope::analyze::replay
