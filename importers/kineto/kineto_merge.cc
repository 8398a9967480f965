// Merging parser-thread output into the builder, and the end-of-file fix-ups.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "importers/kineto/file_context.h"
#include "importers/kineto/import.h"
#include "model/bounds.h"

namespace overlapscope::import {
namespace {

using model::kNoCorrelation;
using model::kNone;

// Maps of one parser thread's local ids to global ones, filled on first use.
struct Remapper {
  FileContext& ctx;
  ThreadOut& out;
  int which;
  model::TraceBuilder& b = *ctx.builder;

  model::StringId Str(model::StringId local) {
    if (local == 0) return 0;
    auto& m = ctx.str_remap[which];
    if (m.size() <= static_cast<size_t>(local)) m.resize(out.strings.size(), -1);
    if (m[local] < 0) m[local] = b.Intern(out.strings.Get(local));
    return m[local];
  }
  model::ThreadId Thread(int32_t local) {
    auto& m = ctx.thread_remap[which];
    if (m.size() <= static_cast<size_t>(local)) m.resize(out.thread_tids.size(), -1);
    if (m[local] < 0) m[local] = b.GetOrAddThread(ctx.process, out.thread_tids[local]);
    return m[local];
  }
  std::pair<model::DeviceId, model::StreamId> Stream(int32_t local) {
    auto& m = ctx.stream_remap[which];
    if (m.size() <= static_cast<size_t>(local)) m.resize(out.stream_keys.size(), {-1, -1});
    if (m[local].first < 0) {
      model::DeviceId d = b.GetOrAddDevice(ctx.process, out.stream_keys[local].first);
      m[local] = {d, b.GetOrAddStream(d, out.stream_keys[local].second)};
    }
    return m[local];
  }
};

template <typename T>
void AddBase(std::vector<T>& v, size_t from, int64_t base, bool* overflow) {
  for (size_t i = from; i < v.size(); ++i) {
    *overflow |= __builtin_add_overflow(v[i].start_ns, base, &v[i].start_ns);
    *overflow |= __builtin_add_overflow(v[i].end_ns, base, &v[i].end_ns);
    *overflow |= !model::TimeInBounds(v[i].start_ns) || !model::TimeInBounds(v[i].end_ns);
  }
}

// roctracer-era ROCm traces (Kineto 2021-2023) write each HIP call's and each GPU operation's
// correlation id as "External id" and no "correlation" at all. In a file where nothing carries
// "correlation" and HIP calls are present, the External ids of calls and GPU activities are
// their correlation ids (host ranges keep theirs: those are operator ids).
void CorrelationFromExternalId(FileContext& ctx) {
  model::TraceData& d = ctx.builder->data();
  if (ctx.with_correlation > 0) return;
  bool hip = false;
  for (size_t i = ctx.api0; i < d.api_calls.size() && !hip; ++i)
    hip = model::ApiVendorOf(d.strings.Get(d.api_calls[i].name)) == model::ApiVendor::kHip;
  if (!hip) return;
  int64_t moved = 0;
  auto move = [&](auto& v, size_t from) {
    for (size_t i = from; i < v.size(); ++i) {
      if (v[i].correlation_id != kNoCorrelation || v[i].external_id == kNoCorrelation) continue;
      v[i].correlation_id = v[i].external_id;
      v[i].external_id = kNoCorrelation;
      ++moved;
    }
  };
  move(d.api_calls, ctx.api0);
  move(d.kernels, ctx.kernels0);
  move(d.memcpys, ctx.memcpys0);
  move(d.memsets, ctx.memsets0);
  for (size_t i = ctx.api0; i < d.api_calls.size(); ++i)
    if (d.api_calls[i].correlation_id != kNoCorrelation) ctx.api_correlations.insert(d.api_calls[i].correlation_id);
  if (moved > 0) ctx.stats.Add(model::Stat::kKinetoCorrelationFromExternalId, moved);
}

}  // namespace

void MergeOut(ThreadOut& out, int which, FileContext& ctx) {
  Remapper r{ctx, out, which};
  model::TraceData& d = ctx.builder->data();
  model::SourceStats& st = ctx.stats;
  // The base is added here, while the event is in cache, when it is already known.
  const int64_t base = ctx.has_base ? ctx.base_ns : 0;
  if (!ctx.has_base && out.events_read > 0) ctx.merged_without_base = true;
  bool overflow = false;
  auto rebase = [&](auto& e) {
    if (base == 0) return;  // bounds were checked at parse time
    overflow |= __builtin_add_overflow(e.start_ns, base, &e.start_ns);
    overflow |= __builtin_add_overflow(e.end_ns, base, &e.end_ns);
    overflow |= !model::TimeInBounds(e.start_ns) || !model::TimeInBounds(e.end_ns);
  };

  const size_t coll_base = d.collectives.size();
  for (model::Collective c : out.collectives) {
    rebase(c);
    c.op = r.Str(c.op);
    c.communicator = r.Str(c.communicator);
    c.dtype = r.Str(c.dtype);
    c.process = ctx.process;
    d.collectives.push_back(c);
  }
  d.kernels.reserve(d.kernels.size() + out.kernels.size());
  for (model::Kernel k : out.kernels) {
    rebase(k);
    auto [dev, stream] = r.Stream(k.stream);
    k.device = dev, k.stream = stream, k.name = r.Str(k.name);
    if (k.collective != kNone) {
      k.collective += static_cast<int32_t>(coll_base);
      d.collectives[k.collective].device = dev;
      d.collectives[k.collective].stream = stream;
    }
    d.kernels.push_back(k);
  }
  // Copies, memsets and GPU ranges need the same three remaps: time base, stream, name.
  auto move_gpu = [&](const auto& from, auto& to) {
    for (auto e : from) {
      rebase(e);
      auto [dev, stream] = r.Stream(e.stream);
      e.device = dev, e.stream = stream, e.name = r.Str(e.name);
      to.push_back(e);
    }
  };
  move_gpu(out.memcpys, d.memcpys);
  move_gpu(out.memsets, d.memsets);
  move_gpu(out.gpu_ranges, d.gpu_ranges);
  for (model::Sync y : out.syncs) {
    rebase(y);
    if (y.stream != kNone) y.stream = r.Stream(y.stream).second;
    if (y.wait_on_stream != kNone) y.wait_on_stream = r.Stream(y.wait_on_stream).second;
    y.device = ctx.builder->GetOrAddDevice(ctx.process, y.device);
    y.name = r.Str(y.name);
    d.syncs.push_back(y);
  }
  d.ranges.reserve(d.ranges.size() + out.ranges.size());
  for (model::Range g : out.ranges) {
    rebase(g);
    g.thread = r.Thread(g.thread), g.name = r.Str(g.name);
    d.ranges.push_back(g);
  }
  // Skips of this chunk, in file order with the duplicate-correlation ones interleaved.
  std::vector<SkipRecord> skips = std::move(out.skips);
  out.skips.clear();
  int64_t duplicates = 0;
  d.api_calls.reserve(d.api_calls.size() + out.api_calls.size());
  for (size_t i = 0; i < out.api_calls.size(); ++i) {
    model::ApiCall a = out.api_calls[i];
    if (a.correlation_id != kNoCorrelation && !ctx.api_correlations.insert(a.correlation_id).second) {
      skips.push_back({out.api_offsets[i], model::Stat::kKinetoRuntimeEventSkipped, "duplicate correlation id"});
      ++duplicates;
      --out.kept[static_cast<size_t>(a.kind == model::ApiKind::kRuntime ? Category::kCudaRuntime
                                                                        : Category::kCudaDriver)];
      continue;
    }
    a.thread = r.Thread(a.thread), a.name = r.Str(a.name);
    rebase(a);
    d.api_calls.push_back(a);
  }
  if (duplicates > 0)
    std::stable_sort(skips.begin(), skips.end(), [](const auto& x, const auto& y) { return x.offset < y.offset; });
  for (const SkipRecord& s : skips) st.Skip(s.stat, s.reason, absl::StrCat("offset ", s.offset, ": ", s.reason));

  ctx.base_overflow |= overflow;
  st.events_read += out.events_read;
  for (size_t c = 0; c < static_cast<size_t>(Category::kCount); ++c)
    if (out.kept[c] > 0) st.kept_by_category[std::string(CategoryName(static_cast<Category>(c)))] += out.kept[c];
  if (out.kept_meta > 0) st.kept_by_category["M"] += out.kept_meta;
  // Counts with a detail are in stat_details too: add them from there only.
  for (const auto& [key, n] : out.stat_details) {
    st.Add(key.first, n, key.second);
    out.stats[static_cast<size_t>(key.first)] -= n;
  }
  for (size_t i = 0; i < model::kStatCount; ++i)
    if (out.stats[i] != 0) st.Add(static_cast<model::Stat>(i), out.stats[i]);
  ctx.with_correlation += out.with_correlation;
  for (MetaRecord& m : out.metas) ctx.metas.push_back(std::move(m));
  ctx.flow_ids.insert(ctx.flow_ids.end(), out.flow_ids.begin(), out.flow_ids.end());
  if (!ctx.has_cpu_pid && out.has_cpu_pid) {
    ctx.has_cpu_pid = true;
    ctx.cpu_pid = out.first_cpu_pid;
  }
  out.ClearChunk();
}

absl::Status FinishFile(FileContext& ctx, int64_t total_bytes, bool compressed) {
  model::TraceBuilder& b = *ctx.builder;
  model::TraceData& d = b.data();
  model::SourceStats& st = ctx.stats;

  // baseTimeNanoseconds after traceEvents: added here, once (MergeOut added it otherwise).
  bool overflow = ctx.base_overflow;
  if (ctx.has_base && ctx.base_ns != 0 && ctx.merged_without_base) {
    AddBase(d.kernels, ctx.kernels0, ctx.base_ns, &overflow);
    AddBase(d.memcpys, ctx.memcpys0, ctx.base_ns, &overflow);
    AddBase(d.memsets, ctx.memsets0, ctx.base_ns, &overflow);
    AddBase(d.api_calls, ctx.api0, ctx.base_ns, &overflow);
    AddBase(d.syncs, ctx.syncs0, ctx.base_ns, &overflow);
    AddBase(d.ranges, ctx.ranges0, ctx.base_ns, &overflow);
    AddBase(d.gpu_ranges, ctx.gpu_ranges0, ctx.base_ns, &overflow);
    AddBase(d.collectives, ctx.collectives0, ctx.base_ns, &overflow);
  }
  if (overflow)
    return absl::InvalidArgumentError(
        absl::StrCat(ctx.path, ": offset ", ctx.base_offset,
                     ": baseTimeNanoseconds + ts beyond the supported range (|t| <= 4e18 ns)"));

  CorrelationFromExternalId(ctx);
  // Host thread of each sync and asynchrony of each copy/memset: the API call with the same
  // correlation id. Only the ids asked for are indexed, so this stays small on huge files.
  absl::flat_hash_map<int64_t, int32_t> wanted;
  for (size_t i = ctx.syncs0; i < d.syncs.size(); ++i)
    if (d.syncs[i].correlation_id != kNoCorrelation) wanted.emplace(d.syncs[i].correlation_id, -1);
  for (size_t i = ctx.memcpys0; i < d.memcpys.size(); ++i)
    if (d.memcpys[i].correlation_id != kNoCorrelation) wanted.emplace(d.memcpys[i].correlation_id, -1);
  for (size_t i = ctx.memsets0; i < d.memsets.size(); ++i)
    if (d.memsets[i].correlation_id != kNoCorrelation) wanted.emplace(d.memsets[i].correlation_id, -1);
  if (!wanted.empty()) {
    for (size_t i = ctx.api0; i < d.api_calls.size(); ++i) {
      auto it = wanted.find(d.api_calls[i].correlation_id);
      if (it != wanted.end() && it->second < 0) it->second = static_cast<int32_t>(i);
    }
  }
  auto api_of = [&](int64_t corr) -> const model::ApiCall* {
    auto it = wanted.find(corr);
    return it == wanted.end() || it->second < 0 ? nullptr : &d.api_calls[it->second];
  };
  int64_t unattributed_syncs = 0;
  for (size_t i = ctx.syncs0; i < d.syncs.size(); ++i) {
    const model::ApiCall* a = api_of(d.syncs[i].correlation_id);
    if (a)
      d.syncs[i].thread = a->thread;
    else
      ++unattributed_syncs;
  }
  if (unattributed_syncs > 0) st.Add(model::Stat::kKinetoSyncWithoutCall, unattributed_syncs);
  for (size_t i = ctx.memcpys0; i < d.memcpys.size(); ++i)
    if (const model::ApiCall* a = api_of(d.memcpys[i].correlation_id))
      d.memcpys[i].is_async = CopyApiIsAsync(b.data().strings.Get(a->name));
  for (size_t i = ctx.memsets0; i < d.memsets.size(); ++i)
    if (const model::ApiCall* a = api_of(d.memsets[i].correlation_id))
      d.memsets[i].is_async = CopyApiIsAsync(b.data().strings.Get(a->name));

  // ac2g flow ids must be correlation ids of this file; GPU work launched before the capture
  // window has no API call in the file. Both are counted, neither is an error. The API ids are
  // already in a hash set (duplicate check); GPU ids are only gathered for flows that miss it.
  const auto& api_ids = ctx.api_correlations;
  int64_t orphans = 0;
  auto for_gpu_ids = [&](auto&& fn) {
    for (size_t i = ctx.kernels0; i < d.kernels.size(); ++i) fn(d.kernels[i].correlation_id);
    for (size_t i = ctx.memcpys0; i < d.memcpys.size(); ++i) fn(d.memcpys[i].correlation_id);
    for (size_t i = ctx.memsets0; i < d.memsets.size(); ++i) fn(d.memsets[i].correlation_id);
  };
  for_gpu_ids([&](int64_t c) { orphans += c != kNoCorrelation && !api_ids.contains(c); });
  if (orphans > 0) st.Add(model::Stat::kGpuWithoutLaunch, orphans);
  std::vector<int64_t> missed;
  for (int64_t id : ctx.flow_ids)
    if (!api_ids.contains(id)) missed.push_back(id);
  if (!missed.empty()) {
    std::vector<int64_t> other;
    for_gpu_ids([&](int64_t c) { other.push_back(c); });
    for (size_t i = ctx.syncs0; i < d.syncs.size(); ++i) other.push_back(d.syncs[i].correlation_id);
    std::sort(other.begin(), other.end());
    int64_t mismatches = 0;
    for (int64_t id : missed) mismatches += !std::binary_search(other.begin(), other.end(), id);
    if (mismatches > 0) st.Add(model::Stat::kKinetoFlowIdUnmatched, mismatches);
  }
  std::vector<int64_t>().swap(ctx.flow_ids);
  absl::flat_hash_set<int64_t>().swap(ctx.api_correlations);

  // Metadata: the CPU process is the one labelled "CPU" (else the pid of the first host event);
  // GPU rows are pids labelled "GPU n" (else pids equal to a device ordinal).
  model::Process& proc = d.processes[ctx.process];
  // The host the trace records, else the one PyTorch's default file name states.
  proc.host = b.Intern(!ctx.host_name.empty() ? ctx.host_name : HostFromTraceFileName(ctx.path));
  absl::flat_hash_set<int64_t> gpu_pids;
  int64_t cpu_pid = ctx.cpu_pid;
  bool has_cpu_pid = ctx.has_cpu_pid;
  bool labelled_gpus = false;
  for (const MetaRecord& m : ctx.metas) {
    if (m.type != MetaRecord::kProcessLabels || !m.pid_is_int) continue;
    if (m.value == "CPU" && !has_cpu_pid) cpu_pid = m.pid, has_cpu_pid = true;
    if (m.value.rfind("GPU ", 0) == 0) gpu_pids.insert(m.pid), labelled_gpus = true;
  }
  if (!labelled_gpus)
    for (size_t i = 0; i < d.devices.size(); ++i)
      if (d.devices[i].process == ctx.process) gpu_pids.insert(d.devices[i].ordinal);
  if (has_cpu_pid) {
    gpu_pids.erase(cpu_pid);
    proc.pid = cpu_pid;
  }
  absl::flat_hash_map<int64_t, model::ThreadId> threads;
  for (size_t i = 0; i < d.threads.size(); ++i)
    if (d.threads[i].process == ctx.process) threads.emplace(d.threads[i].tid, static_cast<model::ThreadId>(i));
  absl::flat_hash_map<std::pair<int64_t, int64_t>, model::StreamId> streams;
  for (size_t i = 0; i < d.streams.size(); ++i) {
    const model::Device& dev = d.devices[d.streams[i].device];
    if (dev.process == ctx.process) streams.emplace(std::make_pair(int64_t{dev.ordinal}, d.streams[i].native_id), i);
  }
  for (const MetaRecord& m : ctx.metas) {
    if (!m.pid_is_int) continue;
    if (m.type == MetaRecord::kProcessName && has_cpu_pid && m.pid == cpu_pid) proc.name = b.Intern(m.value);
    if (m.type != MetaRecord::kThreadName || !m.tid_is_int) continue;
    if (gpu_pids.contains(m.pid)) {
      auto it = streams.find({m.pid, m.tid});
      if (it != streams.end()) d.streams[it->second].name = b.Intern(m.value);
    } else {
      auto it = threads.find(m.tid);
      if (it != threads.end()) d.threads[it->second].name = b.Intern(m.value);
    }
  }
  for (size_t i = 0; i < d.devices.size(); ++i) {
    if (d.devices[i].process != ctx.process) continue;
    for (const auto& [id, name] : ctx.device_names)
      if (id == d.devices[i].ordinal) d.devices[i].name = b.Intern(name);
  }
  if (ctx.has_rank) {
    proc.rank = ctx.rank >= 0 && ctx.rank <= INT32_MAX ? static_cast<int32_t>(ctx.rank) : kNone;
    proc.world_size = ctx.world_size > 0 && ctx.world_size <= INT32_MAX ? static_cast<int32_t>(ctx.world_size) : kNone;
  }
  for (size_t i = ctx.collectives0; i < d.collectives.size(); ++i) d.collectives[i].rank = proc.rank;

  if (ctx.array_top_level) {
    // Pre-1.8 Kineto wrote its events like later versions, just without the object around them;
    // the legacy autograd profiler's export has no Kineto categories at all: nothing to read.
    int64_t kept = 0;
    for (const auto& [k, v] : st.kept_by_category) kept += k == "M" ? 0 : v;
    st.Add(kept > 0 ? model::Stat::kKinetoArrayTopLevel : model::Stat::kKinetoNoKinetoEvents);
  }
  st.path = ctx.path;
  st.format = compressed ? "kineto-json.gz" : "kineto-json";
  st.bytes = total_bytes;
  st.base_time_ns = ctx.has_base ? ctx.base_ns : 0;
  st.events_kept = 0;
  for (const auto& [k, v] : st.kept_by_category) st.events_kept += v;
  st.gpu_activities_kept = static_cast<int64_t>((d.kernels.size() - ctx.kernels0) + (d.memcpys.size() - ctx.memcpys0) +
                                                (d.memsets.size() - ctx.memsets0));
  d.sources.push_back(std::move(st));
  return absl::OkStatus();
}

}  // namespace overlapscope::import
