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

}  // namespace

absl::StatusOr<ConcurrencyResult> AnalyzeStreamConcurrency(const model::Trace& t, const GpuFacts& gpu,
                                                           const IterationAssignment& ia,
                                                           const ConcurrencyOptions& opt) {
  ConcurrencyResult res;
  res.groups = opt.groups;
  if (absl::Status s = CheckGroups(opt.groups); !s.ok()) return s;
  std::vector<uint32_t> masks[3];
  if (absl::Status s = GroupMasks(t, gpu, opt.groups, masks, &res.group_activities); !s.ok()) return s;
  const size_t ng = opt.groups.size();
  // Local stream index per device; iteration slots per device.
  std::vector<int32_t> local(t.streams().size(), kNone);
  std::vector<int32_t> slot_of(ia.iterations.size(), kNone);
  for (size_t d = 0; d < t.devices().size(); ++d) {
    const auto acts = t.DeviceActivities(static_cast<model::DeviceId>(d));
    if (acts.empty()) continue;
    std::vector<model::StreamId> streams;  // by local index
    std::vector<int32_t> slots;            // iteration by slot
    for (GpuRef r : acts) {
      const model::StreamId s = SpanOf(t, r).stream;
      if (local[s] == kNone) local[s] = static_cast<int32_t>(streams.size()), streams.push_back(s);
      const int32_t it = ia.Of(r);
      if (it != kNone && slot_of[it] == kNone) slot_of[it] = static_cast<int32_t>(slots.size()), slots.push_back(it);
    }
    std::sort(slots.begin(), slots.end());  // iteration order; re-slot
    for (size_t k = 0; k < slots.size(); ++k) slot_of[slots[k]] = static_cast<int32_t>(k);
    const int64_t ns = static_cast<int64_t>(streams.size());
    const int64_t outside = static_cast<int64_t>(slots.size());  // the window of unassigned activities
    Sweep sweep(outside + 1, ns);
    std::vector<std::vector<Interval>> gw(ng), gi(ng * slots.size());
    for (GpuRef r : acts) {
      if (gpu.Cls(r) == ActivityClass::kSync) continue;
      const Span3 sp = SpanOf(t, r);
      const int64_t s = sp.start, e = sp.end;
      if (e <= s) continue;
      const int64_t ls = local[sp.stream];
      const int32_t it = ia.Of(r);
      sweep.Add(it != kNone ? slot_of[it] : outside, ls, s, e);
      if (ng == 0) continue;
      const uint32_t m = masks[static_cast<int>(r.kind)][r.index];
      for (size_t g = 0; g < ng; ++g) {
        if (!((m >> g) & 1u)) continue;
        gw[g].push_back({s, e});
        if (it != kNone) gi[static_cast<size_t>(slot_of[it]) * ng + g].push_back({s, e});
      }
    }
    sweep.Finish();
    DeviceConcurrency dc;
    dc.device = static_cast<model::DeviceId>(d);
    dc.process = t.devices()[d].process;
    // Stream pairs of one window (window < 0: the whole trace), by native id.
    auto stream_pairs = [&](int64_t window, std::vector<PairConcurrency>* out) {
      for (int64_t a = 0; a < ns; ++a)
        for (int64_t b = 0; b < ns; ++b) {
          const int64_t na = t.streams()[streams[a]].native_id, nb = t.streams()[streams[b]].native_id;
          if (a == b || na > nb || (na == nb && a > b)) continue;
          const int64_t la = window < 0 ? sweep.WholeSingle(a) : sweep.Single(window, a);
          const int64_t lb = window < 0 ? sweep.WholeSingle(b) : sweep.Single(window, b);
          if (la == 0 || lb == 0) continue;
          const int64_t lo = std::min(a, b), hi = std::max(a, b);
          const int64_t both = window < 0 ? sweep.WholePair(lo, hi) : sweep.Pair(window, lo, hi);
          if (window >= 0 && both == 0) continue;  // per iteration: only pairs that overlapped
          out->push_back({streams[a], streams[b], both, la, lb, Share(both, la, lb)});
        }
    };
    auto group_pairs = [&](const std::vector<Interval>* lists, std::vector<PairConcurrency>* out) {
      std::vector<IntervalSet> sets(ng);
      for (size_t g = 0; g < ng; ++g) sets[g] = IntervalSet::FromSortedByStart(lists[g]);
      for (size_t a = 0; a < ng; ++a)
        for (size_t b = a + 1; b < ng; ++b) {
          const int64_t la = sets[a].Length(), lb = sets[b].Length();
          if (la == 0 && lb == 0) continue;
          const int64_t both = sets[a].IntersectLength(sets[b]);
          out->push_back({static_cast<int32_t>(a), static_cast<int32_t>(b), both, la, lb, Share(both, la, lb)});
        }
    };
    stream_pairs(-1, &dc.whole.streams);
    if (ng > 0) group_pairs(gw.data(), &dc.whole.groups);
    for (size_t k = 0; k < slots.size(); ++k) {
      WindowConcurrency w;
      w.iteration = slots[k];
      w.number = ia.iterations[slots[k]].number;
      stream_pairs(static_cast<int64_t>(k), &w.streams);
      if (ng > 0) group_pairs(gi.data() + k * ng, &w.groups);
      dc.iterations.push_back(std::move(w));
    }
    for (model::StreamId s : streams) local[s] = kNone;
    for (int32_t it : slots) slot_of[it] = kNone;
    res.devices.push_back(std::move(dc));
  }
  return res;
}

}  // namespace overlapscope::analyze
