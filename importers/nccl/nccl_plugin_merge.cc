// Merging NCCL profiler plugin records into the model events of one process
// (MergeNcclPlugin, nccl_plugin_records.h).
//
// How a plugin collective finds its model::Collective: by thread and time containment, not by
// order. NCCL opens its NVTX API range and, inside it and on the same thread, starts the
// plugin's CollApi/P2pApi event; when the call launches work directly, the Coll event starts
// there too, and a grouped call's work is launched inside ncclGroupEnd, which the GroupApi
// event's stop lies in. Both clocks are CLOCK_REALTIME on one host and both thread ids are OS
// tids, so containment is exact, survives capture windows that cut a sequence in the middle,
// dropped or missing records on either side and several communicators or streams per thread.
// Matching by order per (communicator, stream) would need the CUDA stream of the NVTX range,
// which CUPTI does not give (the plugin's stream is a cudaStream_t pointer, CUPTI's an id),
// and one missing record would shift every later pair.
//
// Without an NVTX collective (NVTX off, or a call outside any range) the plugin's own API
// events serve as the ranges: GPU work enqueued by a CUDA call on the API's thread within the
// GroupApi event (or the CollApi/P2pApi event when there is no group) belongs to it.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "formats/ovnccl_format.h"
#include "importers/nccl/nccl_plugin_records.h"

namespace overlapscope::import {
namespace {

using formats::kTypeColl;
using formats::kTypeGroupApi;

// One plugin collective: a Coll/P2p event (kernel collectives), or a CollApi/P2pApi call with
// no Coll/P2p event (copy-engine collectives, which NCCL 2.28 runs without a task event).
struct Unit {
  const NcclPluginColl* coll = nullptr;
  const NcclPluginApi* api = nullptr;
  const NcclPluginApi* group = nullptr;
  uint64_t context = 0;
  std::string_view func, dtype;
  int64_t count = 0;
  uint64_t call = 0;      // the event func/dtype/count came from: units of one call count once
  int64_t anchor_ns = 0;  // when the call started (api) or the task started
};

struct RangeRef {
  int64_t start_ns, end_ns;
  model::CollectiveId collective;
};

}  // namespace

std::string NcclCommName(uint64_t comm_id) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "nccl:%016" PRIx64, comm_id);
  return buf;
}

NcclMergeResult MergeNcclPlugin(NcclPluginFile f, const NcclAttribution& nvtx, model::TraceBuilder& b,
                                model::ProcessId process, const NcclMergeOptions& opt) {
  NcclMergeResult res;
  model::TraceData& d = b.data();
  model::SourceStats& st = f.stats;

  absl::flat_hash_map<uint64_t, const NcclPluginComm*> comm_of;
  for (const auto& c : f.comms) comm_of[c.context] = &c;
  absl::flat_hash_map<uint64_t, const NcclPluginApi*> api_of;
  for (const auto& a : f.apis) api_of[a.id] = &a;
  // (context, func) pairs that have NCCL task events: their sequence numbers come from NCCL.
  absl::flat_hash_set<std::pair<uint64_t, std::string>> has_task_seq;
  absl::flat_hash_set<uint64_t> api_with_task, ctx_with_task_seq;
  for (const auto& c : f.colls) {
    if (c.type == formats::kTypeColl) has_task_seq.insert({c.context, c.func}), ctx_with_task_seq.insert(c.context);
    api_with_task.insert(c.parent);
  }

  // Units, with their parents.
  std::vector<Unit> units;
  auto group_of = [&](const NcclPluginApi* a) -> const NcclPluginApi* {
    if (!a) return nullptr;
    auto it = api_of.find(a->parent);
    return it != api_of.end() && it->second->type == formats::kTypeGroupApi ? it->second : nullptr;
  };
  for (const auto& c : f.colls) {
    Unit u;
    u.coll = &c;
    if (auto it = api_of.find(c.parent); it != api_of.end()) u.api = it->second;
    u.group = group_of(u.api);
    u.context = c.context;
    // What the user called (NCCL's tasks restate an all-gather in bytes of ncclInt8 and an
    // all-to-all as sends and receives): the API event's func/count/dtype when there is one.
    if (u.api && u.api->type != formats::kTypeGroupApi) {
      u.func = u.api->func, u.dtype = u.api->dtype, u.count = static_cast<int64_t>(u.api->count), u.call = u.api->id;
    } else {
      u.func = c.func, u.dtype = c.dtype, u.count = static_cast<int64_t>(c.count), u.call = c.id;
    }
    u.anchor_ns = u.api ? u.api->start_ns : c.start_ns;
    units.push_back(u);
  }
  for (const auto& a : f.apis) {
    if (a.type == formats::kTypeGroupApi || api_with_task.contains(a.id)) continue;
    Unit u;
    u.api = &a;
    u.group = group_of(&a);
    u.context = a.context, u.func = a.func, u.dtype = a.dtype, u.count = static_cast<int64_t>(a.count), u.call = a.id;
    u.anchor_ns = a.start_ns;
    units.push_back(u);
  }

  // This process's threads by OS tid, and the NVTX-made collectives' ranges per thread.
  absl::flat_hash_map<int64_t, model::ThreadId> thread_of;
  for (size_t t = 0; t < d.threads.size(); ++t)
    if (d.threads[t].process == process) thread_of[d.threads[t].tid] = static_cast<model::ThreadId>(t);
  absl::flat_hash_map<model::ThreadId, std::vector<RangeRef>> ranges;
  for (const auto& m : nvtx.made) {
    const model::Range& r = d.ranges[m.range];
    ranges[r.thread].push_back({r.start_ns, r.end_ns, m.collective});
  }
  for (auto& [t, v] : ranges)
    std::sort(v.begin(), v.end(), [](const RangeRef& a, const RangeRef& c) { return a.start_ns < c.start_ns; });
  auto nvtx_at = [&](int64_t tid, int64_t t) -> model::CollectiveId {
    auto th = thread_of.find(tid);
    if (th == thread_of.end() || t < 0) return model::kNone;
    auto it = ranges.find(th->second);
    if (it == ranges.end()) return model::kNone;
    const auto& v = it->second;
    auto pos = std::upper_bound(v.begin(), v.end(), t, [](int64_t x, const RangeRef& r) { return x < r.start_ns; });
    while (pos != v.begin()) {
      --pos;
      if (pos->end_ns >= t) return pos->collective;
      if (t - pos->start_ns > int64_t{60} * 1000 * 1000 * 1000) break;
    }
    return model::kNone;
  };

  // Fallback: CUDA calls of this process per thread (sorted) and unlinked GPU work by correlation.
  absl::flat_hash_map<model::ThreadId, std::vector<int32_t>> calls;
  absl::flat_hash_map<int64_t, std::vector<int32_t>> kernels_of, memcpys_of;
  bool fallback_ready = false;
  auto prepare_fallback = [&] {
    if (fallback_ready) return;
    fallback_ready = true;
    for (size_t i = 0; i < d.api_calls.size(); ++i) {
      const auto& a = d.api_calls[i];
      if (a.thread != model::kNone && d.threads[a.thread].process == process)
        calls[a.thread].push_back(static_cast<int32_t>(i));
    }
    for (auto& [t, v] : calls)
      std::sort(v.begin(), v.end(),
                [&](int32_t x, int32_t y) { return d.api_calls[x].start_ns < d.api_calls[y].start_ns; });
    auto mine = [&](model::DeviceId dev) { return dev != model::kNone && d.devices[dev].process == process; };
    for (size_t i = 0; i < d.kernels.size(); ++i)
      if (d.kernels[i].collective == model::kNone && mine(d.kernels[i].device))
        kernels_of[d.kernels[i].correlation_id].push_back(static_cast<int32_t>(i));
    for (size_t i = 0; i < d.memcpys.size(); ++i)
      if (d.memcpys[i].collective == model::kNone && mine(d.memcpys[i].device))
        memcpys_of[d.memcpys[i].correlation_id].push_back(static_cast<int32_t>(i));
  };
  // Links the unlinked GPU work of CUDA calls on `tid` within [start, end] to a new collective;
  // kNone when there is none.
  auto make_from_window = [&](int64_t tid, int64_t start, int64_t end) -> model::CollectiveId {
    prepare_fallback();
    auto th = thread_of.find(tid);
    if (th == thread_of.end() || end < start) return model::kNone;
    auto it = calls.find(th->second);
    if (it == calls.end()) return model::kNone;
    const auto& v = it->second;
    auto pos =
        std::lower_bound(v.begin(), v.end(), start, [&](int32_t i, int64_t s) { return d.api_calls[i].start_ns < s; });
    model::CollectiveId id = model::kNone;
    for (; pos != v.end() && d.api_calls[*pos].start_ns <= end; ++pos) {
      const model::ApiCall& a = d.api_calls[*pos];
      if (a.end_ns > end || a.correlation_id == model::kNoCorrelation) continue;
      auto k = kernels_of.find(a.correlation_id);
      auto m = memcpys_of.find(a.correlation_id);
      const bool any = (k != kernels_of.end() && !k->second.empty()) || (m != memcpys_of.end() && !m->second.empty());
      if (!any) continue;
      if (id == model::kNone) {
        id = static_cast<model::CollectiveId>(d.collectives.size());
        model::Collective c;
        c.process = process;
        c.correlation_id = a.correlation_id;
        d.collectives.push_back(c);
        ++res.created;
      }
      if (k != kernels_of.end()) {
        for (int32_t i : k->second) d.kernels[i].collective = id, ++res.kernels;
        k->second.clear();
      }
      if (m != memcpys_of.end()) {
        for (int32_t i : m->second) d.memcpys[i].collective = id, ++res.memcpys;
        m->second.clear();
      }
    }
    return id;
  };

  // Place every unit.
  std::map<model::CollectiveId, std::vector<const Unit*>> placed;
  absl::flat_hash_map<uint64_t, model::CollectiveId> window_coll;  // fallback window event id -> collective
  for (const Unit& u : units) {
    if (u.anchor_ns < opt.window_start_ns || u.anchor_ns > opt.window_end_ns) {
      ++res.outside_window;
      continue;
    }
    model::CollectiveId c = model::kNone;
    if (u.coll) c = nvtx_at(u.coll->tid, u.coll->start_ns);
    if (c == model::kNone && u.api) c = nvtx_at(u.api->tid, u.api->start_ns);
    if (c == model::kNone && u.group) c = nvtx_at(u.group->tid, u.group->end_ns);
    if (c != model::kNone) {
      ++res.linked_to_nvtx;
    } else {
      const NcclPluginApi* w = u.group ? u.group : u.api;
      if (w) {
        auto [it, fresh] = window_coll.try_emplace(w->id, model::kNone);
        if (fresh) it->second = make_from_window(w->tid, w->start_ns, w->end_ns);
        c = it->second;
      }
    }
    if (c == model::kNone) {
      ++res.unmatched;
      st.Skip("plugin collective matched no NCCL range and no GPU work",
              absl::StrCat(std::string(u.func), " count ", u.count, " at ", u.anchor_ns, " ns"));
      continue;
    }
    placed[c].push_back(&u);
  }

  // Fill the collectives.
  int64_t seq_from_order = 0, seq_from_group = 0, mixed = 0;
  for (const auto& [cid, us] : placed) {
    model::Collective& c = d.collectives[cid];
    const Unit& first = *us.front();
    bool same_func = true, same_ctx = true;
    for (const Unit* u : us) same_func &= u->func == first.func, same_ctx &= u->context == first.context;
    auto comm = comm_of.find(first.context);
    if (same_ctx && comm != comm_of.end()) {
      c.communicator = b.Intern(NcclCommName(comm->second->comm_id));
      c.rank = comm->second->rank;
      c.nranks = comm->second->nranks;
    } else if (!same_ctx) {
      ++mixed;
    }
    bool all_p2p = true;
    for (const Unit* u : us) all_p2p &= u->func == "Send" || u->func == "Recv";
    const std::string_view op = d.strings.Get(c.op);
    if (c.op == 0 || op == "GroupEnd") {
      if (same_func)
        c.op = b.Intern(first.func);
      else if (all_p2p)
        c.op = b.Intern("SendRecv");  // a group of sends and receives
    }
    const int64_t esize = NcclDtypeBytes(first.dtype);
    bool same_dtype = true;
    for (const Unit* u : us) same_dtype &= u->dtype == first.dtype;
    if (same_dtype) c.dtype = b.Intern(NcclDtypeName(first.dtype));
    // Elements: summed over the units of one op (a group of all-gathers), or sends vs receives
    // for a group of point-to-point calls (all-to-all written as send/recv).
    int64_t in = 0, out = 0;
    bool known = same_dtype && c.nranks > 0;
    absl::flat_hash_set<uint64_t> counted;
    for (const Unit* u : us) {
      if (!counted.insert(u->call).second) continue;  // e.g. the sends/receives of one all-to-all
      int64_t i = -1, o = -1;
      NcclElements(u->func, u->count, c.nranks, i, o);
      known &= i >= 0 && o >= 0 && (same_func || u->func == "Send" || u->func == "Recv");
      in += i, out += o;
    }
    if (known) {
      c.in_elements = in, c.out_elements = out;
      if (esize > 0) c.bytes = std::max(in, out) * esize;
    }
    // Sequence: NCCL's number of the (first) task; for calls without task events (copy-engine
    // collectives) the API call's ordinal per (communicator, func), when that pair has no NCCL
    // numbers in this file, so that the two counters never mix.
    int64_t seq = -1;
    for (const Unit* u : us)
      if (u->coll && u->coll->type == formats::kTypeColl && u->coll->seq >= 0 && (seq < 0 || u->coll->seq < seq))
        seq = u->coll->seq;
    if (seq < 0 && same_ctx && same_func && first.api && first.api->ordinal >= 0 &&
        !has_task_seq.contains({first.context, std::string(first.func)}) && first.api->type != formats::kTypeGroupApi &&
        first.func != "Send" && first.func != "Recv") {
      seq = first.api->ordinal;
      ++seq_from_order;
    }
    // Point-to-point groups (send/recv, all-to-all) have no NCCL number: the group's ordinal
    // on its communicator, the same on every rank, when that communicator has no NCCL numbers.
    const bool p2p_only = all_p2p && same_ctx && first.group && first.group->ordinal >= 0;
    if (seq < 0 && p2p_only && !ctx_with_task_seq.contains(first.context)) {
      seq = first.group->ordinal;
      ++seq_from_group;
    }
    if (seq >= 0) c.sequence = seq;
    int64_t ch_first = -1, ch_last = -1;
    for (const Unit* u : us) {
      if (!u->coll) continue;
      if (c.algorithm == 0 && !u->coll->algo.empty()) c.algorithm = b.Intern(u->coll->algo);
      if (c.protocol == 0 && !u->coll->proto.empty()) c.protocol = b.Intern(u->coll->proto);
      if (u->coll->nchannels > 0) c.channels = std::max(c.channels, u->coll->nchannels);
      if (u->coll->channels_stopped > 0 && u->coll->channel_first_start >= 0) {
        if (ch_first < 0 || u->coll->channel_first_start < ch_first) ch_first = u->coll->channel_first_start;
        ch_last = std::max(ch_last, u->coll->channel_last_stop);
      }
    }
    if (ch_first >= 0 && ch_last >= ch_first) c.channel_span_ns = ch_last - ch_first;
  }
  if (res.linked_to_nvtx) st.notes["plugin collectives merged into NCCL-range collectives"] += res.linked_to_nvtx;
  if (res.created) st.notes["collectives created from plugin records (no NCCL range)"] += res.created;
  if (res.outside_window) st.notes["plugin collectives outside the capture window"] += res.outside_window;
  if (seq_from_order) st.notes["sequence from API call order (no NCCL task event: copy-engine)"] += seq_from_order;
  if (seq_from_group) st.notes["sequence from the group's order (send/recv groups)"] += seq_from_group;
  if (mixed) st.notes["collectives spanning several communicators (communicator left empty)"] += mixed;
  d.sources.push_back(std::move(f.stats));
  return res;
}

}  // namespace overlapscope::import
