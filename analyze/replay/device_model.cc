// DeviceModel (device_model.h): the contention model's placement on one GPU.
#include "analyze/replay/device_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace overlapscope::analyze::replay {
namespace {

using placed::Meeting;
using placed::MeetingCursor;
using placed::Placed;
using placed::PrefixMaxEnd;
using placed::SortByStart;

// Share of [lo, hi) covered by merged list u.
double Covered(const std::vector<Span>& u, int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  auto it = std::upper_bound(u.begin(), u.end(), lo, [](int64_t x, const Span& s) { return x < s.second; });
  int64_t c = 0;
  for (; it != u.end() && it->first < hi; ++it) c += std::min(hi, it->second) - std::max(lo, it->first);
  return static_cast<double>(c) / static_cast<double>(hi - lo);
}

}  // namespace

BlockFootprint FootprintOf(const model::Trace& t, const graph::Graph& graph, int32_t v) {
  const model::GpuRef r = graph.Ref(v);
  return r.kind == model::GpuKind::kKernel ? FootprintOfKernel(t.kernels()[r.index]) : BlockFootprint{};
}

int32_t ReleasingKernel(const NodeAttrs& a, const Schedule& s, int32_t v) {
  int32_t u = s.bind_start[v];
  for (int hops = 0; hops < 16 && u >= 0 && u < a.num_gpu; ++hops) {
    if (s.bind_dep[v] != Dep::kAfterEnd) return -1;
    if (a.cls[u] == GpuClass::kCompute || a.cls[u] == GpuClass::kComm) return u;
    v = u;
    u = s.bind_start[u];
  }
  return -1;
}

void DeviceModel::Waits(ContentionFactors& out, const std::vector<uint8_t>& waited, const std::vector<bool>& roots) {
  SortByStart(compute);
  const std::vector<int64_t> max_end = PrefixMaxEnd(compute);
  std::vector<Span> rec_compute;
  rec_compute.reserve(compute.size());
  // Releasing kernel -> the first K it releases; only the communication kernels' releasing
  // kernels are ever looked up (one each at most: no rehash).
  absl::flat_hash_map<int32_t, const Placed*> first_released;
  first_released.reserve(comm.size());
  for (const Placed& k : compute) {
    rec_compute.push_back({g_.rec_start[k.v], g_.RecEnd(k.v)});
    const int32_t root = ReleasingKernel(a_, s_, k.v);
    if (root >= 0 && roots[root]) first_released.try_emplace(root, &k);
  }
  rec_compute = MergeSpans(std::move(rec_compute));
  MeetingCursor running(compute, max_end);
  for (Placed& c : comm) {
    const int64_t ready = s_.start[c.v];
    int64_t free = ready;
    const Placed* by = nullptr;
    LastRoundWait kind = LastRoundWait::kNone;
    // A recorded start inside compute already waited as recorded; a kernel given its wait in an
    // earlier round starts where the schedule put it (a second wait is not added: placing it
    // after that one would slow nothing here that the simulation then runs beside it).
    const bool has_wait = static_cast<size_t>(c.v) < waited.size() && waited[c.v];
    c.in_last_round = has_wait && waited[c.v] == kWaitedInLastRound;
    if (!has_wait && !InsideAny(rec_compute, g_.rec_start[c.v])) {
      auto consider = [&](const Placed& k) {
        LastRoundWait w = LastRoundWait::kNone;
        if (const int64_t at = FreeAt(k, c, ready, &w); at > free) free = at, by = &k, kind = w;
      };
      // Running when the collective became ready (one starting at the same instant: the
      // collective, issued first, gets the SMs).
      running.Each(ready, ready + 1, [&](const Placed& k) {
        if (k.start < ready) consider(k);
      });
      if (auto it = first_released.find(ReleasingKernel(a_, s_, c.v));
          it != first_released.end() && it->second->start >= ready)
        consider(*it->second);
    }
    if (by) {
      // In the last round: a lag on the GEMM's end (the round moves with it if it is slowed).
      if (free >= by->end || kind == LastRoundWait::kInRound)
        out.waits.push_back({by->v, c.v, Dep::kAfterEnd, free - by->end, kind});
      else
        out.waits.push_back({by->v, c.v, Dep::kAfterStart, free - by->start, kind});
      c.in_last_round = kind == LastRoundWait::kInRound;
    }
    c.start = free;
    c.end = s_.end[c.v] + (free - ready);
  }
  SortByStart(comm);
  SortByStart(rec_comm);
}

void DeviceModel::Prepare() {
  comm_max_ = PrefixMaxEnd(comm);
  rec_max_ = PrefixMaxEnd(rec_comm);
  pred_at_.emplace(comm, comm_max_);
  rec_at_.emplace(rec_comm, rec_max_);
}

double DeviceModel::FactorWith(const Placed& k, double sd, bool& by_trace) {
  const int64_t r0 = g_.rec_start[k.v], r1 = g_.RecEnd(k.v);
  const int64_t p0 = s_.start[k.v], dur = g_.dur[k.v];
  HoldSteps rec, pred;
  std::vector<Span> rec_u, pred_u;
  // A collective in k's last round holds none of k's SMs (it started inside k, where k put it).
  auto hold_pred = [&](const Placed& c) {
    if (!(c.in_last_round && c.start >= p0)) Hold(c, pred, pred_u);
  };
  rec_at_->Each(r0, r1, [&](const Placed& c) { Hold(c, rec, rec_u); });
  pred_at_->Each(p0, p0 + dur, hold_pred);
  if (rec.empty() && pred.empty()) return 1;
  by_trace = sd > 0;
  if (by_trace) {
    const double o_rec = Covered(MergeSpans(std::move(rec_u)), r0, r1);
    const double o_pred = Covered(MergeSpans(std::move(pred_u)), p0, p0 + dur);
    return (1 + (sd - 1) * o_pred) / (1 + (sd - 1) * o_rec);
  }
  std::sort(rec.begin(), rec.end());
  std::sort(pred.begin(), pred.end());
  const int32_t want = SmsOccupied(Footprint(k), sms_);
  const double alone = r1 > r0 ? static_cast<double>(FluidWork(r0, r1, want, sms_, rec)) / (r1 - r0) : 1.0;
  const int64_t work = static_cast<int64_t>(std::llround(static_cast<double>(dur) * alone));
  int64_t end = FluidEnd(p0, work, want, sms_, pred);
  // Slowed past its own end, it meets more communication: again over the longer span.
  for (int pass = 0; pass < 3 && end > p0 + dur; ++pass) {
    pred.clear();
    Meeting(comm, comm_max_, p0, end, hold_pred);
    std::sort(pred.begin(), pred.end());
    const int64_t next = FluidEnd(p0, work, want, sms_, pred);
    if (next == end) break;
    end = next;
  }
  return dur > 0 ? static_cast<double>(end - p0) / dur : 1.0;
}

bool DeviceModel::InsideAny(const std::vector<Span>& u, int64_t t) {
  auto it = std::upper_bound(u.begin(), u.end(), t, [](int64_t x, const Span& s) { return x < s.second; });
  return it != u.end() && it->first < t;
}

int64_t DeviceModel::FreeAt(const Placed& k, const Placed& c, int64_t ready, LastRoundWait* kind) const {
  const BlockFootprint kfp = Footprint(k);
  const int32_t held = SmsOccupied(c.fp, sms_);
  if (FitsBeside(kfp, c.fp) || sms_ - SmsOccupied(kfp, sms_) >= held) return ready;
  const int64_t per_wave = static_cast<int64_t>(sms_) * BlocksPerSm(kfp);
  const int64_t waves = kfp.blocks > 0 ? (kfp.blocks + per_wave - 1) / per_wave : 1;
  if (waves > 1) return std::min(k.end, std::max(ready, k.start) + (k.end - k.start) / waves);
  const model::GpuRef r = graph_.Ref(k.v);
  if (r.kind != model::GpuKind::kKernel || BlocksPerSm(kfp) != 1) return k.end;
  // A persistent GEMM: its last tile round (last_round.h). A copy-engine collective's rate
  // beside the round was never measured: its end, as before.
  const double rate = c.holds && !shapes_.empty() ? LastRoundRate(t_.str(a_.Name(c.v))) : 0.0;
  return StartInLastRound(t_, shapes_, t_.kernels()[r.index], kfp.blocks, sms_, k.start, k.end, rate, held, ready,
                          kind);
}

void DeviceModel::Hold(const Placed& c, HoldSteps& steps, std::vector<Span>& u) const {
  if (!c.holds) return;
  const int32_t held = SmsOccupied(c.fp, sms_);
  steps.push_back({c.start, held});
  steps.push_back({c.end, -held});
  u.push_back({c.start, c.end});
}

}  // namespace overlapscope::analyze::replay
