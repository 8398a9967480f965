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
#include "model/bounds.h"

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

namespace {

// The merge of one plugin file into one process (see the top of this file). Units are built from
// the plugin's events, placed into collectives (NVTX-made, or made from a fallback window), then
// each collective is filled from its units.
class PluginMerger {
 public:
  PluginMerger(NcclPluginFile& f, const NcclAttribution& nvtx, model::TraceBuilder& b, model::ProcessId process,
               const NcclMergeOptions& opt)
      : f_(f), nvtx_(nvtx), b_(b), d_(b.data()), process_(process), opt_(opt) {}

  NcclMergeResult Run() {
    BuildUnits();
    IndexRanges();
    std::map<model::CollectiveId, std::vector<const Unit*>> placed = Place();
    for (const auto& [cid, us] : placed) Fill(d_.collectives[cid], us);
    model::SourceStats& st = f_.stats;
    const auto note = [&st](int64_t n, const char* what) {
      if (n) st.Add(model::Stat::kNcclPluginMerge, n, what);
    };
    note(res_.linked_to_nvtx, "plugin collectives merged into NCCL-range collectives");
    note(res_.created, "collectives created from plugin records (no NCCL range)");
    note(res_.outside_window, "plugin collectives outside the capture window");
    note(seq_from_order_, "sequence from API call order (no NCCL task event: copy-engine)");
    note(seq_from_group_, "sequence from the group's order (send/recv groups)");
    note(mixed_, "collectives spanning several communicators (communicator left empty)");
    d_.sources.push_back(std::move(f_.stats));
    return res_;
  }

 private:
  void BuildUnits();
  void IndexRanges();
  model::CollectiveId NvtxAt(int64_t tid, int64_t t) const;
  void PrepareFallback();
  model::CollectiveId MakeFromWindow(int64_t tid, int64_t start, int64_t end);
  std::map<model::CollectiveId, std::vector<const Unit*>> Place();
  void Fill(model::Collective& c, const std::vector<const Unit*>& us);
  void FillSizes(model::Collective& c, const std::vector<const Unit*>& us, bool same_func, bool same_dtype);
  void FillSequence(model::Collective& c, const std::vector<const Unit*>& us, bool same_ctx, bool same_func,
                    bool all_p2p);

  NcclPluginFile& f_;
  const NcclAttribution& nvtx_;
  model::TraceBuilder& b_;
  model::TraceData& d_;
  const model::ProcessId process_;
  const NcclMergeOptions& opt_;
  NcclMergeResult res_;
  int64_t seq_from_order_ = 0, seq_from_group_ = 0, mixed_ = 0;

  absl::flat_hash_map<uint64_t, const NcclPluginComm*> comm_of_;
  absl::flat_hash_map<uint64_t, const NcclPluginApi*> api_of_;
  // (context, func) pairs that have NCCL task events: their sequence numbers come from NCCL.
  absl::flat_hash_set<std::pair<uint64_t, std::string>> has_task_seq_;
  absl::flat_hash_set<uint64_t> ctx_with_task_seq_;
  std::vector<Unit> units_;
  // This process's threads by OS tid, and the NVTX-made collectives' ranges per thread.
  absl::flat_hash_map<int64_t, model::ThreadId> thread_of_;
  absl::flat_hash_map<model::ThreadId, std::vector<RangeRef>> ranges_;
  // Fallback: CUDA calls of this process per thread (sorted) and unlinked GPU work by correlation.
  bool fallback_ready_ = false;
  absl::flat_hash_map<model::ThreadId, std::vector<int32_t>> calls_;
  absl::flat_hash_map<int64_t, std::vector<int32_t>> kernels_of_, memcpys_of_;
};

void PluginMerger::BuildUnits() {
  for (const auto& c : f_.comms) comm_of_[c.context] = &c;
  for (const auto& a : f_.apis) api_of_[a.id] = &a;
  absl::flat_hash_set<uint64_t> api_with_task;
  for (const auto& c : f_.colls) {
    if (c.type == formats::kTypeColl) has_task_seq_.insert({c.context, c.func}), ctx_with_task_seq_.insert(c.context);
    api_with_task.insert(c.parent);
  }
  auto group_of = [&](const NcclPluginApi* a) -> const NcclPluginApi* {
    if (!a) return nullptr;
    auto it = api_of_.find(a->parent);
    return it != api_of_.end() && it->second->type == formats::kTypeGroupApi ? it->second : nullptr;
  };
  for (const auto& c : f_.colls) {
    Unit u;
    u.coll = &c;
    if (auto it = api_of_.find(c.parent); it != api_of_.end()) u.api = it->second;
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
    units_.push_back(u);
  }
  for (const auto& a : f_.apis) {
    if (a.type == formats::kTypeGroupApi || api_with_task.contains(a.id)) continue;
    Unit u;
    u.api = &a;
    u.group = group_of(&a);
    u.context = a.context, u.func = a.func, u.dtype = a.dtype, u.count = static_cast<int64_t>(a.count), u.call = a.id;
    u.anchor_ns = a.start_ns;
    units_.push_back(u);
  }
}

void PluginMerger::IndexRanges() {
  for (size_t t = 0; t < d_.threads.size(); ++t)
    if (d_.threads[t].process == process_) thread_of_[d_.threads[t].tid] = static_cast<model::ThreadId>(t);
  for (const auto& m : nvtx_.made) {
    const model::Range& r = d_.ranges[m.range];
    ranges_[r.thread].push_back({r.start_ns, r.end_ns, m.collective});
  }
  for (auto& [t, v] : ranges_)
    std::sort(v.begin(), v.end(), [](const RangeRef& a, const RangeRef& c) { return a.start_ns < c.start_ns; });
}

// The NVTX-made collective whose range on thread `tid` contains time t; kNone when none.
model::CollectiveId PluginMerger::NvtxAt(int64_t tid, int64_t t) const {
  auto th = thread_of_.find(tid);
  if (th == thread_of_.end() || t < 0) return model::kNone;
  auto it = ranges_.find(th->second);
  if (it == ranges_.end()) return model::kNone;
  const auto& v = it->second;
  auto pos = std::upper_bound(v.begin(), v.end(), t, [](int64_t x, const RangeRef& r) { return x < r.start_ns; });
  while (pos != v.begin()) {
    --pos;
    if (pos->end_ns >= t) return pos->collective;
    if (t - pos->start_ns > int64_t{60} * 1000 * 1000 * 1000) break;
  }
  return model::kNone;
}

void PluginMerger::PrepareFallback() {
  if (fallback_ready_) return;
  fallback_ready_ = true;
  for (size_t i = 0; i < d_.api_calls.size(); ++i) {
    const auto& a = d_.api_calls[i];
    if (a.thread != model::kNone && d_.threads[a.thread].process == process_)
      calls_[a.thread].push_back(static_cast<int32_t>(i));
  }
  for (auto& [t, v] : calls_)
    std::sort(v.begin(), v.end(),
              [&](int32_t x, int32_t y) { return d_.api_calls[x].start_ns < d_.api_calls[y].start_ns; });
  auto mine = [&](model::DeviceId dev) { return dev != model::kNone && d_.devices[dev].process == process_; };
  for (size_t i = 0; i < d_.kernels.size(); ++i)
    if (d_.kernels[i].collective == model::kNone && mine(d_.kernels[i].device))
      kernels_of_[d_.kernels[i].correlation_id].push_back(static_cast<int32_t>(i));
  for (size_t i = 0; i < d_.memcpys.size(); ++i)
    if (d_.memcpys[i].collective == model::kNone && mine(d_.memcpys[i].device))
      memcpys_of_[d_.memcpys[i].correlation_id].push_back(static_cast<int32_t>(i));
}

// Links the unlinked GPU work of CUDA calls on `tid` within [start, end] to a new collective;
// kNone when there is none.
model::CollectiveId PluginMerger::MakeFromWindow(int64_t tid, int64_t start, int64_t end) {
  PrepareFallback();
  auto th = thread_of_.find(tid);
  if (th == thread_of_.end() || end < start) return model::kNone;
  auto it = calls_.find(th->second);
  if (it == calls_.end()) return model::kNone;
  const auto& v = it->second;
  auto pos =
      std::lower_bound(v.begin(), v.end(), start, [&](int32_t i, int64_t s) { return d_.api_calls[i].start_ns < s; });
  model::CollectiveId id = model::kNone;
  for (; pos != v.end() && d_.api_calls[*pos].start_ns <= end; ++pos) {
    const model::ApiCall& a = d_.api_calls[*pos];
    if (a.end_ns > end || a.correlation_id == model::kNoCorrelation) continue;
    auto k = kernels_of_.find(a.correlation_id);
    auto m = memcpys_of_.find(a.correlation_id);
    const bool any = (k != kernels_of_.end() && !k->second.empty()) || (m != memcpys_of_.end() && !m->second.empty());
    if (!any) continue;
    if (id == model::kNone) {
      id = static_cast<model::CollectiveId>(d_.collectives.size());
      model::Collective c;
      c.process = process_;
      c.correlation_id = a.correlation_id;
      d_.collectives.push_back(c);
      ++res_.created;
    }
    if (k != kernels_of_.end()) {
      for (int32_t i : k->second) d_.kernels[i].collective = id, ++res_.kernels;
      k->second.clear();
    }
    if (m != memcpys_of_.end()) {
      for (int32_t i : m->second) d_.memcpys[i].collective = id, ++res_.memcpys;
      m->second.clear();
    }
  }
  return id;
}

std::map<model::CollectiveId, std::vector<const Unit*>> PluginMerger::Place() {
  std::map<model::CollectiveId, std::vector<const Unit*>> placed;
  absl::flat_hash_map<uint64_t, model::CollectiveId> window_coll;  // fallback window event id -> collective
  for (const Unit& u : units_) {
    if (u.anchor_ns < opt_.window_start_ns || u.anchor_ns > opt_.window_end_ns) {
      ++res_.outside_window;
      continue;
    }
    model::CollectiveId c = model::kNone;
    if (u.coll) c = NvtxAt(u.coll->tid, u.coll->start_ns);
    if (c == model::kNone && u.api) c = NvtxAt(u.api->tid, u.api->start_ns);
    if (c == model::kNone && u.group) c = NvtxAt(u.group->tid, u.group->end_ns);
    if (c != model::kNone) {
      ++res_.linked_to_nvtx;
    } else if (const NcclPluginApi* w = u.group ? u.group : u.api) {
      auto [it, fresh] = window_coll.try_emplace(w->id, model::kNone);
      if (fresh) it->second = MakeFromWindow(w->tid, w->start_ns, w->end_ns);
      c = it->second;
    }
    if (c == model::kNone) {
      ++res_.unmatched;
      f_.stats.Skip(model::Stat::kNcclPluginUnmatched, {},
                    absl::StrCat(std::string(u.func), " count ", u.count, " at ", u.anchor_ns, " ns"));
      continue;
    }
    placed[c].push_back(&u);
  }
  return placed;
}

void PluginMerger::Fill(model::Collective& c, const std::vector<const Unit*>& us) {
  const Unit& first = *us.front();
  bool same_func = true, same_ctx = true, same_dtype = true, all_p2p = true;
  for (const Unit* u : us) {
    same_func &= u->func == first.func, same_ctx &= u->context == first.context;
    same_dtype &= u->dtype == first.dtype;
    all_p2p &= u->func == "Send" || u->func == "Recv";
  }
  auto comm = comm_of_.find(first.context);
  if (same_ctx && comm != comm_of_.end()) {
    c.communicator = b_.Intern(NcclCommName(comm->second->comm_id));
    c.rank = comm->second->rank;
    c.nranks = comm->second->nranks;
  } else if (!same_ctx) {
    ++mixed_;
  }
  const std::string_view op = d_.strings.Get(c.op);
  if (c.op == 0 || op == "GroupEnd") {
    if (same_func)
      c.op = b_.Intern(first.func);
    else if (all_p2p)
      c.op = b_.Intern("SendRecv");  // a group of sends and receives
  }
  if (same_dtype) c.dtype = b_.Intern(NcclDtypeName(first.dtype));
  FillSizes(c, us, same_func, same_dtype);
  FillSequence(c, us, same_ctx, same_func, all_p2p);
  int64_t ch_first = -1, ch_last = -1;
  for (const Unit* u : us) {
    if (!u->coll) continue;
    if (c.algorithm == 0 && !u->coll->algo.empty()) c.algorithm = b_.Intern(u->coll->algo);
    if (c.protocol == 0 && !u->coll->proto.empty()) c.protocol = b_.Intern(u->coll->proto);
    if (u->coll->nchannels > 0) c.channels = std::max(c.channels, u->coll->nchannels);
    if (u->coll->channels_stopped > 0 && u->coll->channel_first_start >= 0) {
      if (ch_first < 0 || u->coll->channel_first_start < ch_first) ch_first = u->coll->channel_first_start;
      ch_last = std::max(ch_last, u->coll->channel_last_stop);
    }
  }
  if (ch_first >= 0 && ch_last >= ch_first) c.channel_span_ns = ch_last - ch_first;
}

// Elements: summed over the units of one op (a group of all-gathers), or sends vs receives for a
// group of point-to-point calls (all-to-all written as send/recv). Bytes: the larger side times
// the element size. Every product and sum is checked against model/bounds.h: a count the
// plugin reports beyond it (2^62 elements) leaves the sizes unknown instead of wrapping.
void PluginMerger::FillSizes(model::Collective& c, const std::vector<const Unit*>& us, bool same_func,
                             bool same_dtype) {
  int64_t in = 0, out = 0;
  bool known = same_dtype && c.nranks > 0;
  absl::flat_hash_set<uint64_t> counted;
  for (const Unit* u : us) {
    if (!counted.insert(u->call).second) continue;  // e.g. the sends/receives of one all-to-all
    int64_t i = -1, o = -1;
    NcclElements(u->func, u->count, c.nranks, i, o);
    known &= i >= 0 && o >= 0 && (same_func || u->func == "Send" || u->func == "Recv");
    if (known) in = model::SatAdd(in, i), out = model::SatAdd(out, o);
  }
  if (!known) return;
  if (!model::SizeInBounds(in) || !model::SizeInBounds(out)) {
    f_.stats.Add(model::Stat::kSizeOutOfBounds);
    return;
  }
  c.in_elements = in, c.out_elements = out;
  const int64_t esize = NcclDtypeBytes(us.front()->dtype);
  if (esize > 0) {
    c.bytes = model::BytesOf(std::max(in, out), esize);
    if (c.bytes < 0) f_.stats.Add(model::Stat::kSizeOutOfBounds);
  }
}

// Sequence: NCCL's number of the (first) task; for calls without task events (copy-engine
// collectives) the API call's ordinal per (communicator, func), when that pair has no NCCL
// numbers in this file, so that the two counters never mix.
void PluginMerger::FillSequence(model::Collective& c, const std::vector<const Unit*>& us, bool same_ctx, bool same_func,
                                bool all_p2p) {
  const Unit& first = *us.front();
  int64_t seq = -1;
  for (const Unit* u : us)
    if (u->coll && u->coll->type == formats::kTypeColl && u->coll->seq >= 0 && (seq < 0 || u->coll->seq < seq))
      seq = u->coll->seq;
  if (seq < 0 && same_ctx && same_func && first.api && first.api->ordinal >= 0 &&
      !has_task_seq_.contains({first.context, std::string(first.func)}) && first.api->type != formats::kTypeGroupApi &&
      first.func != "Send" && first.func != "Recv") {
    seq = first.api->ordinal;
    ++seq_from_order_;
  }
  // Point-to-point groups (send/recv, all-to-all) have no NCCL number: the group's ordinal on
  // its communicator, the same on every rank, when that communicator has no NCCL numbers.
  const bool p2p_only = all_p2p && same_ctx && first.group && first.group->ordinal >= 0;
  if (seq < 0 && p2p_only && !ctx_with_task_seq_.contains(first.context)) {
    seq = first.group->ordinal;
    ++seq_from_group_;
  }
  if (seq >= 0) c.sequence = seq;
}

}  // namespace

NcclMergeResult MergeNcclPlugin(NcclPluginFile f, const NcclAttribution& nvtx, model::TraceBuilder& b,
                                model::ProcessId process, const NcclMergeOptions& opt) {
  return PluginMerger(f, nvtx, b, process, opt).Run();
}

}  // namespace overlapscope::import
