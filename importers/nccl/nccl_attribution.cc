#include "importers/nccl/nccl_attribution.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "importers/nccl/collective_range.h"
#include "model/bounds.h"

namespace overlapscope::import {

std::string_view NcclRangeOp(std::string_view name) {
  static constexpr std::string_view kOps[] = {"AllGather", "AllReduce", "ReduceScatter", "Broadcast", "Bcast",
                                              "Reduce",    "AlltoAll",  "AllToAll",      "Gather",    "Scatter",
                                              "Send",      "Recv",      "GroupEnd"};
  if (name.substr(0, 4) != "nccl") return {};
  std::string_view op = name.substr(4);
  for (std::string_view k : kOps)
    if (op == k) return op;
  return {};
}

namespace {

// One process's attribution, in steps: its collective ranges per thread (Ranges), the range of
// each API call made inside one (MapCalls), then the kernels and copies those calls launched,
// each range's collective created on first use (LinkActivities).
class RangeAttributor {
 public:
  RangeAttributor(model::TraceBuilder& b, model::ProcessId process) : d_(b.data()), process_(process) {}

  NcclAttribution Run() {
    const model::StringId nccl_domain = d_.strings.Find("NCCL");
    const model::StringId own_domain = d_.strings.Find(kCollectiveRangeDomain);
    if (nccl_domain == model::kNone && own_domain == model::kNone) return std::move(out_);
    Ranges(nccl_domain, own_domain);
    if (by_thread_.empty()) return std::move(out_);
    MapCalls();
    if (corr_to_range_.empty()) return std::move(out_);
    LinkActivities();
    return std::move(out_);
  }

 private:
  void Ranges(model::StringId nccl_domain, model::StringId own_domain);
  void MapCalls();
  model::CollectiveId CollectiveFor(int32_t range, int64_t corr);
  void LinkActivities();

  model::TraceData& d_;
  const model::ProcessId process_;
  NcclAttribution out_;
  absl::flat_hash_map<model::ThreadId, std::vector<int32_t>> by_thread_;  // range indexes by start
  absl::flat_hash_map<int32_t, CollectiveRangeFields> own_;               // our own ranges' fields
  absl::flat_hash_map<int64_t, int32_t> corr_to_range_;
  absl::flat_hash_map<int32_t, model::CollectiveId> range_to_coll_;
};

// Collective ranges (NCCL's and our own) of this process, per thread, sorted by start; the
// fields of our own ranges by range index. Ranges of non-collective NCCL calls are skipped,
// malformed own ranges counted.
void RangeAttributor::Ranges(model::StringId nccl_domain, model::StringId own_domain) {
  for (size_t i = 0; i < d_.ranges.size(); ++i) {
    const model::Range& r = d_.ranges[i];
    if (r.kind != model::RangeKind::kNvtx || r.thread == model::kNone) continue;
    if (r.domain == model::kNone || (r.domain != nccl_domain && r.domain != own_domain)) continue;
    if (d_.threads[r.thread].process != process_) continue;
    if (r.domain == own_domain) {
      auto f = ParseCollectiveRange(d_.strings.Get(r.name));
      if (!f) {
        ++out_.own_malformed;
        continue;
      }
      own_.emplace(static_cast<int32_t>(i), *f);
      ++out_.own_ranges;
    } else if (NcclRangeOp(d_.strings.Get(r.name)).empty()) {
      continue;
    } else {
      ++out_.nccl_ranges;
    }
    by_thread_[r.thread].push_back(static_cast<int32_t>(i));
  }
  for (auto& [t, v] : by_thread_)
    std::sort(v.begin(), v.end(), [&](int32_t a, int32_t c) { return d_.ranges[a].start_ns < d_.ranges[c].start_ns; });
}

// Correlation id of each API call inside a range -> the innermost enclosing range. NCCL ranges
// do not overlap on one thread, but nesting (a group inside a range) is tolerated by walking
// back from the last range that starts before the call.
void RangeAttributor::MapCalls() {
  for (const model::ApiCall& a : d_.api_calls) {
    if (a.correlation_id == model::kNoCorrelation || a.thread == model::kNone) continue;
    auto it = by_thread_.find(a.thread);
    if (it == by_thread_.end()) continue;
    const std::vector<int32_t>& v = it->second;
    auto pos = std::upper_bound(v.begin(), v.end(), a.start_ns,
                                [&](int64_t s, int32_t r) { return s < d_.ranges[r].start_ns; });
    for (auto r = pos; r != v.begin();) {
      --r;
      const model::Range& range = d_.ranges[*r];
      if (range.end_ns >= a.end_ns) {
        corr_to_range_.emplace(a.correlation_id, *r);
        break;
      }
      if (a.start_ns - range.start_ns > int64_t{60} * 1000 * 1000 * 1000) break;  // far behind: stop
    }
  }
}

// The collective of a range, created when the range's first activity is linked: from our own
// range's message, or from the NCCL range's name (its payload and the plugin fill in the rest).
model::CollectiveId RangeAttributor::CollectiveFor(int32_t range, int64_t corr) {
  auto [it, inserted] = range_to_coll_.try_emplace(range, static_cast<model::CollectiveId>(d_.collectives.size()));
  if (!inserted) return it->second;
  model::Collective c;
  c.process = process_;
  c.correlation_id = corr;
  if (auto f = own_.find(range); f != own_.end()) {
    // Everything the cross-rank matching needs is in the message (collective_range.h).
    const CollectiveRangeFields& x = f->second;
    c.op = d_.strings.Intern(x.op);
    c.communicator = d_.strings.Intern(CollectiveRangeCommName(x.comm));
    c.sequence = x.sequence;
    c.bytes = x.bytes;
    c.rank = x.rank;
    c.nranks = x.nranks;
    if (!x.dtype.empty()) c.dtype = d_.strings.Intern(x.dtype);
    if (!x.redop.empty()) c.reduce_op = d_.strings.Intern(x.redop);
    ++out_.own_collectives;
  } else {
    c.op = d_.strings.Intern(NcclRangeOp(d_.strings.Get(d_.ranges[range].name)));
    c.rank = d_.processes[process_].rank;
    c.nranks = d_.processes[process_].world_size;
    out_.made.push_back({range, it->second});  // NCCL's payload and plugin records go by these
  }
  d_.collectives.push_back(c);
  ++out_.collectives;
  return it->second;
}

// Kernels and copies of this process launched inside a collective range join its collective.
void RangeAttributor::LinkActivities() {
  auto in_process = [&](model::DeviceId dev) { return dev != model::kNone && d_.devices[dev].process == process_; };
  // Copy-engine collectives: NCCL (2.28, ce_coll.cc) copies each rank's chunk once per
  // destination, itself included when out of place, so the copies of one all-gather or
  // all-to-all on a rank add up to nccl-tests' size (n x chunk). Only for collectives that no
  // kernel carries (NCCL's first call also runs lazy set-up copies next to its kernel), and only
  // device-to-device and peer copies: the data path (that first call also copies small argument
  // blocks from the host inside the same range, 56 B seen on 2xH200). Collectives are only
  // created in these two loops, so what they link is all there is to count.
  absl::flat_hash_map<model::CollectiveId, int64_t> copy_bytes;
  absl::flat_hash_set<model::CollectiveId> with_kernel;
  const auto data_path = [](model::MemcpyKind k) {
    return k == model::MemcpyKind::kDtoD || k == model::MemcpyKind::kPtoP;
  };
  for (model::Kernel& k : d_.kernels) {
    if (k.collective != model::kNone || !in_process(k.device)) continue;
    auto it = corr_to_range_.find(k.correlation_id);
    if (it == corr_to_range_.end()) continue;
    k.collective = CollectiveFor(it->second, k.correlation_id);
    with_kernel.insert(k.collective);
    ++out_.kernels;
  }
  for (model::Memcpy& m : d_.memcpys) {
    if (m.collective != model::kNone || !in_process(m.device)) continue;
    auto it = corr_to_range_.find(m.correlation_id);
    if (it == corr_to_range_.end()) continue;
    m.collective = CollectiveFor(it->second, m.correlation_id);
    if (m.bytes > 0 && data_path(m.kind)) copy_bytes[m.collective] = model::SatAdd(copy_bytes[m.collective], m.bytes);
    ++out_.memcpys;
  }
  for (const auto& [c, bytes] : copy_bytes) {
    if (with_kernel.contains(c) || d_.collectives[c].bytes >= 0 || !model::SizeInBounds(bytes)) continue;
    d_.collectives[c].bytes = bytes;
    ++out_.bytes_from_copies;
  }
}

}  // namespace

NcclAttribution AttributeNcclRanges(model::TraceBuilder& b, model::ProcessId process) {
  return RangeAttributor(b, process).Run();
}

}  // namespace overlapscope::import
