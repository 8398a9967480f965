#include "importers/nccl/nccl_attribution.h"

#include <algorithm>
#include <string_view>
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

NcclAttribution AttributeNcclRanges(model::TraceBuilder& b, model::ProcessId process) {
  NcclAttribution out;
  model::TraceData& d = b.data();
  const model::StringId nccl_domain = d.strings.Find("NCCL");
  const model::StringId own_domain = d.strings.Find(kCollectiveRangeDomain);
  if (nccl_domain == model::kNone && own_domain == model::kNone) return out;

  // Collective ranges (NCCL's and our own) of this process, per thread, sorted by start; the
  // fields of our own ranges by range index.
  absl::flat_hash_map<model::ThreadId, std::vector<int32_t>> by_thread;
  absl::flat_hash_map<int32_t, CollectiveRangeFields> own;
  for (size_t i = 0; i < d.ranges.size(); ++i) {
    const model::Range& r = d.ranges[i];
    if (r.kind != model::RangeKind::kNvtx || r.thread == model::kNone) continue;
    if (r.domain == model::kNone || (r.domain != nccl_domain && r.domain != own_domain)) continue;
    if (d.threads[r.thread].process != process) continue;
    if (r.domain == own_domain) {
      auto f = ParseCollectiveRange(d.strings.Get(r.name));
      if (!f) {
        ++out.own_malformed;
        continue;
      }
      own.emplace(static_cast<int32_t>(i), *f);
      ++out.own_ranges;
    } else if (NcclRangeOp(d.strings.Get(r.name)).empty()) {
      continue;
    } else {
      ++out.nccl_ranges;
    }
    by_thread[r.thread].push_back(static_cast<int32_t>(i));
  }
  if (by_thread.empty()) return out;
  for (auto& [t, v] : by_thread)
    std::sort(v.begin(), v.end(), [&](int32_t a, int32_t c) { return d.ranges[a].start_ns < d.ranges[c].start_ns; });

  // Correlation id of each API call inside a range -> the innermost enclosing range. NCCL
  // ranges do not overlap on one thread, but nesting (a group inside a range) is tolerated by
  // walking back from the last range that starts before the call.
  absl::flat_hash_map<int64_t, int32_t> corr_to_range;
  for (const model::ApiCall& a : d.api_calls) {
    if (a.correlation_id == model::kNoCorrelation || a.thread == model::kNone) continue;
    auto it = by_thread.find(a.thread);
    if (it == by_thread.end()) continue;
    const std::vector<int32_t>& v = it->second;
    auto pos = std::upper_bound(v.begin(), v.end(), a.start_ns,
                                [&](int64_t s, int32_t r) { return s < d.ranges[r].start_ns; });
    for (auto r = pos; r != v.begin();) {
      --r;
      const model::Range& range = d.ranges[*r];
      if (range.end_ns >= a.end_ns) {
        corr_to_range.emplace(a.correlation_id, *r);
        break;
      }
      if (a.start_ns - range.start_ns > int64_t{60} * 1000 * 1000 * 1000) break;  // far behind: stop
    }
  }
  if (corr_to_range.empty()) return out;

  absl::flat_hash_map<int32_t, model::CollectiveId> range_to_coll;
  auto collective_for = [&](int32_t range, int64_t corr) {
    auto [it, inserted] = range_to_coll.try_emplace(range, static_cast<model::CollectiveId>(d.collectives.size()));
    if (inserted) {
      model::Collective c;
      c.process = process;
      c.correlation_id = corr;
      if (auto f = own.find(range); f != own.end()) {
        // Everything the cross-rank matching needs is in the message (collective_range.h).
        const CollectiveRangeFields& x = f->second;
        c.op = d.strings.Intern(x.op);
        c.communicator = d.strings.Intern(CollectiveRangeCommName(x.comm));
        c.sequence = x.sequence;
        c.bytes = x.bytes;
        c.rank = x.rank;
        c.nranks = x.nranks;
        if (!x.dtype.empty()) c.dtype = d.strings.Intern(x.dtype);
        if (!x.redop.empty()) c.reduce_op = d.strings.Intern(x.redop);
        ++out.own_collectives;
      } else {
        c.op = d.strings.Intern(NcclRangeOp(d.strings.Get(d.ranges[range].name)));
        c.rank = d.processes[process].rank;
        c.nranks = d.processes[process].world_size;
        out.made.push_back({range, it->second});  // NCCL's payload and plugin records go by these
      }
      d.collectives.push_back(c);
      ++out.collectives;
    }
    return it->second;
  };
  auto in_process = [&](model::DeviceId dev) { return dev != model::kNone && d.devices[dev].process == process; };
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
  for (model::Kernel& k : d.kernels) {
    if (k.collective != model::kNone || !in_process(k.device)) continue;
    auto it = corr_to_range.find(k.correlation_id);
    if (it == corr_to_range.end()) continue;
    k.collective = collective_for(it->second, k.correlation_id);
    with_kernel.insert(k.collective);
    ++out.kernels;
  }
  for (model::Memcpy& m : d.memcpys) {
    if (m.collective != model::kNone || !in_process(m.device)) continue;
    auto it = corr_to_range.find(m.correlation_id);
    if (it == corr_to_range.end()) continue;
    m.collective = collective_for(it->second, m.correlation_id);
    if (m.bytes > 0 && data_path(m.kind)) copy_bytes[m.collective] = model::SatAdd(copy_bytes[m.collective], m.bytes);
    ++out.memcpys;
  }
  for (const auto& [c, bytes] : copy_bytes) {
    if (with_kernel.contains(c) || d.collectives[c].bytes >= 0 || !model::SizeInBounds(bytes)) continue;
    d.collectives[c].bytes = bytes;
    ++out.bytes_from_copies;
  }
  return out;
}

}  // namespace overlapscope::import
