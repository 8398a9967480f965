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

namespace {

std::optional<double> Share(int64_t both, int64_t a, int64_t b) {
  const int64_t m = std::min(a, b);
  if (m <= 0) return std::nullopt;
  return static_cast<double>(both) / static_cast<double>(m);
}

// Union length per key and intersection length per pair of keys of one window (keys of one
// window: key / width equal), from activities in start order. Each key is one stream of one
// window, busy at most once at a time after merging, so the active set stays small.
class Sweep {
 public:
  explicit Sweep(int64_t width) : width_(width) {}
  void Add(int64_t key, int64_t s, int64_t e) {
    Retire(s);
    if (active_.empty()) now_ = s;
    Account(s);
    for (Entry& x : active_)
      if (x.key == key) {
        x.end = std::max(x.end, e);
        return;
      }
    active_.push_back({key, e});
  }
  void Finish() { Retire(INT64_MAX); }
  const absl::flat_hash_map<int64_t, int64_t>& single() const { return single_; }
  const absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t>& pair() const { return pair_; }

 private:
  struct Entry {
    int64_t key, end;
  };
  void Retire(int64_t until) {
    while (!active_.empty()) {
      int64_t m = INT64_MAX;
      for (const Entry& x : active_) m = std::min(m, x.end);
      if (m > until) return;
      Account(m);
      active_.erase(std::remove_if(active_.begin(), active_.end(), [&](const Entry& x) { return x.end <= m; }),
                    active_.end());
    }
  }
  void Account(int64_t until) {
    const int64_t len = until - now_;
    if (len <= 0) return;
    now_ = until;
    for (size_t i = 0; i < active_.size(); ++i) {
      single_[active_[i].key] += len;
      for (size_t j = i + 1; j < active_.size(); ++j) {
        const int64_t a = active_[i].key, b = active_[j].key;
        if (a / width_ != b / width_) continue;
        pair_[{std::min(a, b), std::max(a, b)}] += len;
      }
    }
  }
  int64_t width_;
  int64_t now_ = INT64_MIN;
  std::vector<Entry> active_;
  absl::flat_hash_map<int64_t, int64_t> single_;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> pair_;
};

}  // namespace

absl::StatusOr<ConcurrencyResult> AnalyzeStreamConcurrency(const model::Trace& t, const GpuFacts& gpu,
                                                           const IterationAssignment& ia,
                                                           const ConcurrencyOptions& opt) {
  ConcurrencyResult res;
  res.groups = opt.groups;
  for (size_t i = 0; i < opt.groups.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (opt.groups[i].name == opt.groups[j].name)
        return absl::InvalidArgumentError(absl::StrCat("--group ", opt.groups[i].name, ": the name is given twice"));
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
      const model::StreamId s = t.StreamOf(r);
      if (local[s] == kNone) local[s] = static_cast<int32_t>(streams.size()), streams.push_back(s);
      const int32_t it = ia.Of(r);
      if (it != kNone && slot_of[it] == kNone) slot_of[it] = static_cast<int32_t>(slots.size()), slots.push_back(it);
    }
    std::sort(slots.begin(), slots.end());  // iteration order; re-slot
    for (size_t k = 0; k < slots.size(); ++k) slot_of[slots[k]] = static_cast<int32_t>(k);
    const int64_t ns = static_cast<int64_t>(streams.size());
    Sweep whole(ns), per(ns);
    std::vector<std::vector<Interval>> gw(ng), gi(ng * slots.size());
    for (GpuRef r : acts) {
      if (gpu.Cls(r) == ActivityClass::kSync) continue;
      const int64_t s = t.StartNs(r), e = t.EndNs(r);
      if (e <= s) continue;
      const int64_t ls = local[t.StreamOf(r)];
      whole.Add(ls, s, e);
      const int32_t it = ia.Of(r);
      if (it != kNone) per.Add(slot_of[it] * ns + ls, s, e);
      if (ng == 0) continue;
      const uint32_t m = masks[static_cast<int>(r.kind)][r.index];
      for (size_t g = 0; g < ng; ++g) {
        if (!((m >> g) & 1u)) continue;
        gw[g].push_back({s, e});
        if (it != kNone) gi[static_cast<size_t>(slot_of[it]) * ng + g].push_back({s, e});
      }
    }
    whole.Finish();
    per.Finish();
    DeviceConcurrency dc;
    dc.device = static_cast<model::DeviceId>(d);
    dc.process = t.devices()[d].process;
    auto stream_pairs = [&](const Sweep& sw, int64_t base, bool all_busy, std::vector<PairConcurrency>* out) {
      for (int64_t a = 0; a < ns; ++a)
        for (int64_t b = 0; b < ns; ++b) {
          if (a == b || t.streams()[streams[a]].native_id > t.streams()[streams[b]].native_id ||
              (t.streams()[streams[a]].native_id == t.streams()[streams[b]].native_id && a > b))
            continue;
          auto fa = sw.single().find(base + a), fb = sw.single().find(base + b);
          if (fa == sw.single().end() || fb == sw.single().end()) continue;
          auto fp = sw.pair().find({std::min(base + a, base + b), std::max(base + a, base + b)});
          const int64_t both = fp == sw.pair().end() ? 0 : fp->second;
          if (!all_busy && both == 0) continue;
          out->push_back({streams[a], streams[b], both, fa->second, fb->second, Share(both, fa->second, fb->second)});
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
    stream_pairs(whole, 0, true, &dc.whole.streams);
    if (ng > 0) group_pairs(gw.data(), &dc.whole.groups);
    for (size_t k = 0; k < slots.size(); ++k) {
      WindowConcurrency w;
      w.iteration = slots[k];
      w.number = ia.iterations[slots[k]].number;
      stream_pairs(per, static_cast<int64_t>(k) * ns, false, &w.streams);
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
