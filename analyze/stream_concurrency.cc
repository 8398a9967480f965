// Stream concurrency (METRICS §9): a sweep per device for stream pairs, interval sets for groups.
#include "analyze/stream_concurrency.h"

#include <algorithm>
#include <climits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analyze/interval_set.h"
#include "analyze/stream_groups.h"

namespace overlapscope::analyze {

using model::GpuRef;
using model::kNone;

absl::StatusOr<GroupSpec> ParseGroupSpec(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    return absl::InvalidArgumentError(
        absl::StrCat("--group '", std::string(text), "': expected NAME=REGEX (a name, '=', a regex)"));
  return GroupSpec{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

absl::Status CheckGroups(const std::vector<GroupSpec>& groups) {
  for (size_t i = 0; i < groups.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (groups[i].name == groups[j].name)
        return absl::InvalidArgumentError(absl::StrCat("--group ", groups[i].name, ": the name is given twice"));
  return CompileGroups(groups).status();
}

namespace {

// Start, end and stream of an activity in one dispatch.
struct Span3 {
  int64_t start, end;
  model::StreamId stream;
};
inline Span3 SpanOf(const model::Trace& t, GpuRef r) {
  switch (r.kind) {
    case model::GpuKind::kKernel: {
      const model::Kernel& k = t.kernels()[r.index];
      return {k.start_ns, k.end_ns, k.stream};
    }
    case model::GpuKind::kMemcpy: {
      const model::Memcpy& m = t.memcpys()[r.index];
      return {m.start_ns, m.end_ns, m.stream};
    }
    case model::GpuKind::kMemset: break;
  }
  const model::Memset& m = t.memsets()[r.index];
  return {m.start_ns, m.end_ns, m.stream};
}

std::optional<double> Share(int64_t both, int64_t a, int64_t b) {
  const int64_t m = std::min(a, b);
  if (m <= 0) return std::nullopt;
  return static_cast<double>(both) / static_cast<double>(m);
}

// One sweep over a device's activities in start order gives, per window (an iteration slot, or
// the last slot for activities outside any iteration) and for the whole trace, the union length
// of each stream and the time each pair of streams was busy together. An entry is one stream of
// one window, busy until `end` (overlapping activities of the entry merge), so the active set
// stays small. A stream runs one activity at a time, so its entries of different windows
// overlap only in bad data; the whole-trace sums count each stream once at any moment anyway.
class Sweep {
 public:
  Sweep(int64_t windows, int64_t width)
      : width_(width),
        single_(static_cast<size_t>(windows * width), 0),
        whole_single_(static_cast<size_t>(width), 0),
        whole_pair_(static_cast<size_t>(width * width), 0),
        dense_pairs_(windows * width * width <= (1 << 22)) {
    if (dense_pairs_) pair_.assign(static_cast<size_t>(windows * width * width), 0);
  }
  void Add(int64_t window, int64_t stream, int64_t s, int64_t e) {
    Retire(s);
    if (active_.empty()) now_ = s;
    Account(s);
    const int64_t key = window * width_ + stream;
    for (Entry& x : active_)
      if (x.key == key) {
        x.end = std::max(x.end, e);
        return;
      }
    active_.push_back({key, e, window, stream});
  }
  void Finish() { Retire(INT64_MAX); }
  int64_t Single(int64_t window, int64_t stream) const {
    return single_[static_cast<size_t>(window * width_ + stream)];
  }
  // Both busy in one window: streams a < b (local indexes).
  int64_t Pair(int64_t window, int64_t a, int64_t b) const {
    if (dense_pairs_) return pair_[static_cast<size_t>((window * width_ + a) * width_ + b)];
    auto it = sparse_.find({window * width_ + a, window * width_ + b});
    return it == sparse_.end() ? 0 : it->second;
  }
  int64_t WholeSingle(int64_t stream) const { return whole_single_[static_cast<size_t>(stream)]; }
  int64_t WholePair(int64_t a, int64_t b) const { return whole_pair_[static_cast<size_t>(a * width_ + b)]; }

 private:
  struct Entry {
    int64_t key, end, window, stream;
  };
  void Retire(int64_t until) {
    while (!active_.empty()) {
      int64_t m = INT64_MAX;
      for (const Entry& x : active_) m = std::min(m, x.end);
      if (m > until) return;
      Account(m);
      size_t k = 0;
      for (size_t i = 0; i < active_.size(); ++i)
        if (active_[i].end > m) active_[k++] = active_[i];
      active_.resize(k);
    }
  }
  void Account(int64_t until) {
    const int64_t len = until - now_;
    if (len <= 0) return;
    now_ = until;
    const size_t n = active_.size();
    distinct_.clear();  // streams busy now, each once (whole-trace sums)
    for (size_t i = 0; i < n; ++i) {
      const Entry& x = active_[i];
      single_[static_cast<size_t>(x.key)] += len;
      if (std::find(distinct_.begin(), distinct_.end(), x.stream) == distinct_.end()) distinct_.push_back(x.stream);
      for (size_t j = i + 1; j < n; ++j) {
        const Entry& y = active_[j];
        if (x.window != y.window || x.stream == y.stream) continue;
        const int64_t a = std::min(x.stream, y.stream), b = std::max(x.stream, y.stream);
        if (dense_pairs_)
          pair_[static_cast<size_t>((x.window * width_ + a) * width_ + b)] += len;
        else
          sparse_[{x.window * width_ + a, x.window * width_ + b}] += len;
      }
    }
    for (size_t i = 0; i < distinct_.size(); ++i) {
      whole_single_[static_cast<size_t>(distinct_[i])] += len;
      for (size_t j = i + 1; j < distinct_.size(); ++j) {
        const int64_t a = std::min(distinct_[i], distinct_[j]), b = std::max(distinct_[i], distinct_[j]);
        whole_pair_[static_cast<size_t>(a * width_ + b)] += len;
      }
    }
  }
  int64_t width_;
  int64_t now_ = INT64_MIN;
  std::vector<Entry> active_;
  std::vector<int64_t> distinct_;
  std::vector<int64_t> single_, whole_single_, whole_pair_;
  bool dense_pairs_;
  std::vector<int64_t> pair_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> sparse_;
};

// The concurrency of one device, in steps: its streams (local indexes) and the iterations its
// activities belong to (Index), one sweep over its activities that also gathers each group's
// intervals (SweepActivities), then the pairs of streams and of groups for the whole trace and
// per iteration (StreamPairs, GroupPairs). `local` and `slot_of` are shared by all devices
// (sized for the trace) and left as they came (kNone).
class DeviceRun {
 public:
  DeviceRun(const model::Trace& t, const GpuFacts& gpu, const IterationAssignment& ia,
            const std::vector<uint32_t>* masks, size_t ng, std::vector<int32_t>& local, std::vector<int32_t>& slot_of)
      : t_(t), gpu_(gpu), ia_(ia), masks_(masks), ng_(ng), local_(local), slot_of_(slot_of) {}

  DeviceConcurrency Run(model::DeviceId d, absl::Span<const GpuRef> acts) {
    Index(acts);
    const int64_t ns = static_cast<int64_t>(streams_.size());
    Sweep sweep(static_cast<int64_t>(slots_.size()) + 1, ns);
    SweepActivities(acts, sweep);
    DeviceConcurrency dc;
    dc.device = d;
    dc.process = t_.devices()[d].process;
    StreamPairs(sweep, -1, &dc.whole.streams);
    if (ng_ > 0) GroupPairs(gw_.data(), &dc.whole.groups);
    for (size_t k = 0; k < slots_.size(); ++k) {
      WindowConcurrency w;
      w.iteration = slots_[k];
      w.number = ia_.iterations[slots_[k]].number;
      StreamPairs(sweep, static_cast<int64_t>(k), &w.streams);
      if (ng_ > 0) GroupPairs(gi_.data() + k * ng_, &w.groups);
      dc.iterations.push_back(std::move(w));
    }
    for (model::StreamId s : streams_) local_[s] = kNone;
    for (int32_t it : slots_) slot_of_[it] = kNone;
    return dc;
  }

 private:
  // Local stream index (first-seen order) and iteration slot (iteration order) of the device.
  void Index(absl::Span<const GpuRef> acts) {
    for (GpuRef r : acts) {
      const model::StreamId s = SpanOf(t_, r).stream;
      if (local_[s] == kNone) local_[s] = static_cast<int32_t>(streams_.size()), streams_.push_back(s);
      const int32_t it = ia_.Of(r);
      if (it != kNone && slot_of_[it] == kNone)
        slot_of_[it] = static_cast<int32_t>(slots_.size()), slots_.push_back(it);
    }
    std::sort(slots_.begin(), slots_.end());  // iteration order; re-slot
    for (size_t k = 0; k < slots_.size(); ++k) slot_of_[slots_[k]] = static_cast<int32_t>(k);
  }

  // Every non-sync activity into the sweep (its iteration's window, or the last window outside
  // iterations) and into the interval lists of the groups it belongs to (whole trace and its
  // iteration).
  void SweepActivities(absl::Span<const GpuRef> acts, Sweep& sweep) {
    const int64_t outside = static_cast<int64_t>(slots_.size());  // the window of unassigned activities
    gw_.assign(ng_, {});
    gi_.assign(ng_ * slots_.size(), {});
    for (GpuRef r : acts) {
      if (gpu_.Cls(r) == ActivityClass::kSync) continue;
      const Span3 sp = SpanOf(t_, r);
      const int64_t s = sp.start, e = sp.end;
      if (e <= s) continue;
      const int64_t ls = local_[sp.stream];
      const int32_t it = ia_.Of(r);
      sweep.Add(it != kNone ? slot_of_[it] : outside, ls, s, e);
      if (ng_ == 0) continue;
      const uint32_t m = masks_[static_cast<int>(r.kind)][r.index];
      for (size_t g = 0; g < ng_; ++g) {
        if (!((m >> g) & 1u)) continue;
        gw_[g].push_back({s, e});
        if (it != kNone) gi_[static_cast<size_t>(slot_of_[it]) * ng_ + g].push_back({s, e});
      }
    }
    sweep.Finish();
  }

  // Stream pairs of one window (window < 0: the whole trace), by native id.
  void StreamPairs(const Sweep& sweep, int64_t window, std::vector<PairConcurrency>* out) const {
    const int64_t ns = static_cast<int64_t>(streams_.size());
    for (int64_t a = 0; a < ns; ++a)
      for (int64_t b = 0; b < ns; ++b) {
        const int64_t na = t_.streams()[streams_[a]].native_id, nb = t_.streams()[streams_[b]].native_id;
        if (a == b || na > nb || (na == nb && a > b)) continue;
        const int64_t la = window < 0 ? sweep.WholeSingle(a) : sweep.Single(window, a);
        const int64_t lb = window < 0 ? sweep.WholeSingle(b) : sweep.Single(window, b);
        if (la == 0 || lb == 0) continue;
        const int64_t lo = std::min(a, b), hi = std::max(a, b);
        const int64_t both = window < 0 ? sweep.WholePair(lo, hi) : sweep.Pair(window, lo, hi);
        if (window >= 0 && both == 0) continue;  // per iteration: only pairs that overlapped
        out->push_back({streams_[a], streams_[b], both, la, lb, Share(both, la, lb)});
      }
  }

  // Group pairs from each group's interval list (ng_ lists from `lists`).
  void GroupPairs(const std::vector<Interval>* lists, std::vector<PairConcurrency>* out) const {
    std::vector<IntervalSet> sets(ng_);
    for (size_t g = 0; g < ng_; ++g) sets[g] = IntervalSet::FromSortedByStart(lists[g]);
    for (size_t a = 0; a < ng_; ++a)
      for (size_t b = a + 1; b < ng_; ++b) {
        const int64_t la = sets[a].Length(), lb = sets[b].Length();
        if (la == 0 && lb == 0) continue;
        const int64_t both = sets[a].IntersectLength(sets[b]);
        out->push_back({static_cast<int32_t>(a), static_cast<int32_t>(b), both, la, lb, Share(both, la, lb)});
      }
  }

  const model::Trace& t_;
  const GpuFacts& gpu_;
  const IterationAssignment& ia_;
  const std::vector<uint32_t>* masks_;  // per GPU kind, per activity: group bits
  const size_t ng_;
  std::vector<int32_t>& local_;
  std::vector<int32_t>& slot_of_;
  std::vector<model::StreamId> streams_;  // by local index
  std::vector<int32_t> slots_;            // iteration by slot
  std::vector<std::vector<Interval>> gw_, gi_;
};

}  // namespace

absl::StatusOr<ConcurrencyResult> AnalyzeStreamConcurrency(const model::Trace& t, const GpuFacts& gpu,
                                                           const IterationAssignment& ia,
                                                           const ConcurrencyOptions& opt) {
  ConcurrencyResult res;
  res.groups = opt.groups;
  if (absl::Status s = CheckGroups(opt.groups); !s.ok()) return s;
  std::vector<uint32_t> masks[3];
  if (absl::Status s = GroupMasks(t, gpu, opt.groups, masks, &res.group_activities); !s.ok()) return s;
  // Local stream index per device; iteration slots per device.
  std::vector<int32_t> local(t.streams().size(), kNone);
  std::vector<int32_t> slot_of(ia.iterations.size(), kNone);
  for (size_t d = 0; d < t.devices().size(); ++d) {
    const auto acts = t.DeviceActivities(static_cast<model::DeviceId>(d));
    if (acts.empty()) continue;
    DeviceRun run(t, gpu, ia, masks, opt.groups.size(), local, slot_of);
    res.devices.push_back(run.Run(static_cast<model::DeviceId>(d), acts));
  }
  return res;
}

}  // namespace overlapscope::analyze
