#include "analyze/findings/finding_rule.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/run_all.h"
#include "model/api_names.h"

namespace overlapscope::analyze {

const std::vector<std::string_view>& FindingKinds() {
  static const std::vector<std::string_view> kinds = [] {
    std::vector<std::string_view> v;
    for (const findings::FindingRule* r : findings::Rules()) v.push_back(r->kind());
    return v;
  }();
  return kinds;
}

int32_t FindingKindIndex(std::string_view kind) {
  const auto& kinds = FindingKinds();
  auto it = std::find(kinds.begin(), kinds.end(), kind);
  return it == kinds.end() ? -1 : static_cast<int32_t>(it - kinds.begin());
}

int64_t SyncResult::Count(std::string_view kind) const {
  const int32_t k = FindingKindIndex(kind);
  return k < 0 || static_cast<size_t>(k) >= finding_count.size() ? 0 : finding_count[k];
}

int64_t SyncResult::CostNs(std::string_view kind) const {
  const int32_t k = FindingKindIndex(kind);
  return k < 0 || static_cast<size_t>(k) >= finding_cost_ns.size() ? 0 : finding_cost_ns[k];
}

namespace findings {

int64_t FindingInputs::IterationEnd(int32_t it) const {
  return it == model::kNone ? INT64_MAX : iters.iterations[it].end_ns;
}
std::string FindingInputs::At(int64_t ns) const {
  if (mark_times) return absl::StrCat(std::string(1, kTimeMarker), ns, std::string(1, kTimeMarker));
  return absl::StrFormat("+%.3f ms", static_cast<double>(ns - t.start_ns()) / 1e6);
}
std::string RewriteMarkedTimes(const std::string& s, std::string_view marker,
                               const std::function<std::string(int64_t)>& write) {
  if (s.find(marker) == std::string::npos) return s;
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t a = s.find(marker, i), b = a == std::string::npos ? a : s.find(marker, a + marker.size());
    if (b == std::string::npos) {
      out.append(s, i, std::string::npos);
      break;
    }
    out.append(s, i, a - i);
    out += write(std::strtoll(s.substr(a + marker.size(), b - a - marker.size()).c_str(), nullptr, 10));
    i = b + marker.size();
  }
  return out;
}

std::string UnmarkTimes(const std::string& s, int64_t origin_ns, std::string_view marker) {
  return RewriteMarkedTimes(s, marker, [origin_ns](int64_t ns) {
    return absl::StrFormat("+%.3f ms", static_cast<double>(ns - origin_ns) / 1e6);
  });
}

std::string FindingInputs::Us(int64_t ns) const { return absl::StrFormat("%.1f µs", static_cast<double>(ns) / 1e3); }
std::string FindingInputs::Thread(model::ThreadId th) const {
  if (th == model::kNone) return "thread ?";
  return absl::StrFormat("thread %d", t.threads()[th].tid);
}
std::string FindingInputs::Stream(model::StreamId s) const {
  if (s == model::kNone) return "stream ?";
  return absl::StrFormat("stream %d", t.streams()[s].native_id);
}

Finding FindingOfCollective(std::string_view kind, const FindingInputs& in, const CollectiveOverlap& co) {
  const model::Trace& t = in.t;
  Finding fd;
  fd.kind = kind;
  fd.time_ns = co.start_ns;
  fd.end_ns = co.end_ns;
  fd.process = t.ProcessOfDevice(t.streams()[co.stream].device);
  fd.stream = co.stream;
  fd.call = co.name;
  fd.api_call = t.LaunchOf(co.first_activity);
  if (fd.api_call != model::kNone) fd.thread = t.api_calls()[fd.api_call].thread;
  fd.iteration = in.iters.Of(co.first_activity);
  // The part spent waiting for a late peer is the straggler's cost (METRICS §2 transfer and
  // waiting, §6): this collective's own placement would not win it back.
  fd.cost_ns = co.own_ns - co.hidden_ns - co.exposed_wait_ns;
  return fd;
}

void ForEachCollective(
    const FindingInputs& in, std::vector<Emitted>* out,
    const std::function<void(const DeviceOverlap&, const CollectiveOverlap&, std::vector<Emitted>*)>& look) {
  std::vector<std::pair<int32_t, int32_t>> all;
  for (size_t d = 0; d < in.overlap.size(); ++d)
    for (size_t c = 0; c < in.overlap[d].collectives.size(); ++c)
      all.emplace_back(static_cast<int32_t>(d), static_cast<int32_t>(c));
  if (all.empty()) return;
  base::ParallelAppend(in.threads, all.size(), 256, out, [&](size_t lo, size_t hi, std::vector<Emitted>* o) {
    for (size_t i = lo; i < hi; ++i) {
      const DeviceOverlap& dv = in.overlap[all[i].first];
      look(dv, dv.collectives[all[i].second], o);
    }
  });
}

std::string PeerWaitNote(const FindingInputs& in, const CollectiveOverlap& co) {
  if (co.exposed_wait_ns <= 0) return "";
  const std::string who =
      co.waited_for_rank != model::kNone ? absl::StrFormat("rank %d", co.waited_for_rank) : "the last peer";
  return absl::StrFormat(
      "; a further %s exposed was waiting for %s, the last to arrive: the straggler's cost (the report's "
      "`waiting` and `times last`), not counted here",
      in.Us(co.exposed_wait_ns), who);
}

std::vector<uint8_t> ComputeStreams(const FindingInputs& in) {
  const model::Trace& t = in.t;
  std::vector<int64_t> most(t.devices().size(), 0);
  const size_t ns = t.streams().size();
  for (size_t s = 0; s < ns; ++s)
    if (const model::DeviceId d = t.streams()[s].device; d != model::kNone && static_cast<size_t>(d) < most.size())
      most[d] = std::max(most[d], in.stream_compute_ns[s]);
  std::vector<uint8_t> out(ns, 0);
  for (size_t s = 0; s < ns; ++s) {
    const model::DeviceId d = t.streams()[s].device;
    const int64_t own = in.stream_compute_ns[s];
    out[s] = own > 0 && d != model::kNone && static_cast<size_t>(d) < most.size() && 10 * own >= most[d];
  }
  return out;
}

Finding FindingOfBlocked(std::string_view kind, const FindingInputs& in, int32_t interval) {
  const SyncPoint& p = in.points[interval];
  Finding fd;
  fd.kind = kind;
  fd.time_ns = p.start_ns;
  fd.end_ns = p.end_ns;
  fd.process = p.process;
  fd.thread = p.thread;
  fd.stream = p.stream;
  fd.call = p.name;
  fd.api_call = p.api_call;
  fd.iteration = in.blocking.intervals[interval].iteration;
  fd.cost_ns = p.blocked_ns;
  return fd;
}

}  // namespace findings
}  // namespace overlapscope::analyze

namespace overlapscope::analyze::findings {

bool IsHipCall(const model::Trace& t, model::StringId call) {
  return model::ApiVendorOf(t.str(call)) == model::ApiVendor::kHip;
}

int64_t DeviceComputeNs(const FindingInputs& in, model::DeviceId device) {
  int64_t ns = 0;
  for (size_t s = 0; s < in.t.streams().size(); ++s)
    if (in.t.streams()[s].device == device) ns += in.stream_compute_ns[s];
  return ns;
}

bool OnComputeStream(const FindingInputs& in, const DeviceOverlap& dv, const CollectiveOverlap& co) {
  if (co.stream == model::kNone) return false;
  const int64_t device_compute = DeviceComputeNs(in, dv.device);
  return device_compute > 0 && in.stream_compute_ns[co.stream] * 10 >= device_compute;
}

}  // namespace overlapscope::analyze::findings
