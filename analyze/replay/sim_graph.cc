// SimGraph sizing and EdgeRows (sim.h): the simulation graph's compressed predecessor rows.
#include <algorithm>
#include <climits>

#include "analyze/replay/sim.h"

namespace overlapscope::analyze::replay {

void SimGraph::ResizeNodes(int32_t n, int32_t gpu, bool times) {
  num_nodes = n;
  num_gpu = gpu;
  num_groups = 0;
  if (times) {
    rec_start.assign(n, 0);
    rec_dur.assign(n, 0);
    dur.assign(n, 0);
    group.assign(n, -1);
  }
  release_tails.clear();
  transfer = ZeroedVector<int64_t>(n);
}

void SimGraph::SetReleaseTail(int32_t v, int64_t tail) {
  // Builders go in node order: an append.
  auto at = release_tails.empty() || release_tails.back().first < v
                ? release_tails.end()
                : std::lower_bound(release_tails.begin(), release_tails.end(), std::make_pair(v, INT64_MIN));
  if (at != release_tails.end() && at->first == v) {
    at->second = tail;
  } else {
    release_tails.insert(at, {v, tail});
  }
}

int64_t SimGraph::ReleaseTail(int32_t v) const {
  auto at = std::lower_bound(release_tails.begin(), release_tails.end(), std::make_pair(v, INT64_MIN));
  return at != release_tails.end() && at->first == v ? at->second : 0;
}

void SimGraph::Resize(int32_t n, int32_t gpu) {
  ResizeNodes(n, gpu);
  pred_off.assign(static_cast<size_t>(n) + 1, 0);
  pred_from.clear();
  pred_lag.clear();
  pred_dep.clear();
  big_lags.clear();
}

void EdgeRows::Reserve(int32_t n, int64_t edges, int64_t added) {
  // Capacity that is never written costs no page: generous hints are cheap.
  off_.reserve(static_cast<size_t>(n) + 1);
  from_.reserve(static_cast<size_t>(edges + added));
  lag_.reserve(static_cast<size_t>(edges + added));
  dep_.reserve(static_cast<size_t>(edges + added));
  pending_.reserve(static_cast<size_t>(added));
}

void EdgeRows::InlineAdded() {
  // Each run costs a check per node: beyond a few, the merge of Finish() is cheaper.
  constexpr size_t kMaxRuns = 8;
  std::vector<size_t> starts;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (i == 0 || pending_[i].to < pending_[i - 1].to) starts.push_back(i);
    if (starts.size() > kMaxRuns) return;
  }
  for (size_t k = 0; k < starts.size(); ++k) {
    run_next_.push_back(starts[k]);
    run_end_.push_back(k + 1 < starts.size() ? starts[k + 1] : pending_.size());
  }
  added_inline_ = true;
}

void EdgeRows::Finish(SimGraph& g) {
  const int32_t n = g.num_nodes;
  Next(n);              // closes the in-order rows
  if (added_inline_) {  // AppendAdded() placed them all
    pending_.clear();
    pending_.shrink_to_fit();
    run_next_.clear();
    run_end_.clear();
    added_inline_ = false;
  }
  if (!pending_.empty()) {
    // Per target, how many Add()ed edges it has; then, from the last node down, each node's
    // in-order rows move right by the Add()ed edges of the nodes before it (never onto rows not
    // yet moved), leaving the gap after them that the Add()ed edges fill in order.
    ZeroedVector<int32_t> left(n);
    for (const Pending& p : pending_) ++left[p.to];
    // Big lags of the in-order rows move with their rows: their old offsets kept for that.
    const std::vector<RowOffset> old_off = big_.empty() ? std::vector<RowOffset>() : off_;
    const size_t in_order = from_.size();
    from_.resize(in_order + pending_.size());
    lag_.resize(in_order + pending_.size());
    dep_.resize(in_order + pending_.size());
    int64_t shift = static_cast<int64_t>(pending_.size());
    int64_t old_hi = static_cast<int64_t>(in_order);
    for (int32_t v = n - 1; v >= 0; --v) {
      const int64_t old_lo = off_[v];
      off_[v + 1] = static_cast<RowOffset>(old_hi + shift);
      shift -= left[v];
      if (shift > 0) {
        std::copy_backward(from_.begin() + old_lo, from_.begin() + old_hi, from_.begin() + old_hi + shift);
        std::copy_backward(lag_.begin() + old_lo, lag_.begin() + old_hi, lag_.begin() + old_hi + shift);
        std::copy_backward(dep_.begin() + old_lo, dep_.begin() + old_hi, dep_.begin() + old_hi + shift);
      }
      old_hi = old_lo;
    }
    // off_[v + 1] is node v's new end; its Add()ed edges take the last left[v] slots, in order.
    for (auto& [at, lag] : big_) {
      const auto v = std::upper_bound(old_off.begin(), old_off.end(), at) - old_off.begin() - 1;
      at += off_[v] - old_off[v];
    }
    for (const Pending& p : pending_) {
      const int64_t at = off_[p.to + 1] - left[p.to]--;
      Put(static_cast<size_t>(at), p.e);
    }
    pending_.clear();
    pending_.shrink_to_fit();
  }
  std::sort(big_.begin(), big_.end());
  g.pred_off = std::move(off_);
  g.pred_from = std::move(from_);
  g.pred_lag = std::move(lag_);
  g.pred_dep = std::move(dep_);
  g.big_lags = std::move(big_);
  off_.clear();
  from_.clear();
  lag_.clear();
  dep_.clear();
  big_.clear();
}

}  // namespace overlapscope::analyze::replay
