// The end-of-file fix-ups of one Kineto file (FinishFile, file_context.h): what can only be
// known once the whole file was read.
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/phase_log.h"
#include "base/run_all.h"
#include "importers/kineto/file_context.h"
#include "importers/kineto/import.h"
#include "importers/kineto/kineto_keys.h"
#include "model/api_names.h"
#include "model/bounds.h"

namespace overlapscope::import {
namespace {

using model::kNoCorrelation;
using model::kNone;

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
  if (moved > 0) ctx.api_ids_unique = false;  // an External id may repeat a call's id
  for (size_t i = ctx.api0; i < d.api_calls.size(); ++i)
    if (d.api_calls[i].correlation_id != kNoCorrelation) ctx.api_correlations.Insert(d.api_calls[i].correlation_id);
  if (moved > 0) ctx.stats.Add(model::Stat::kKinetoCorrelationFromExternalId, moved);
}

// baseTimeNanoseconds that came after traceEvents is added here, once, to every event of the
// file (MergeOut added it while merging otherwise). An overflow of int64 (or of the supported
// range) is the file's error: its timestamps cannot be placed.
absl::Status AddBaseAtEnd(FileContext& ctx) {
  model::TraceData& d = ctx.builder->data();
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
  return absl::OkStatus();
}

// Which metadata rows name the host process and which name GPU rows: the CPU process is the
// one labelled "CPU" (else the pid of the first host event); GPU rows are pids labelled
// "GPU n" (else pids equal to a device ordinal).
struct MetadataPids {
  absl::flat_hash_set<int64_t> gpu;
  int64_t cpu = -1;
  bool has_cpu = false;
};
MetadataPids ReadMetadataPids(const FileContext& ctx) {
  const model::TraceData& d = ctx.builder->data();
  MetadataPids pids;
  pids.cpu = ctx.cpu_pid;
  pids.has_cpu = ctx.has_cpu_pid;
  bool labelled_gpus = false;
  for (const MetaRecord& m : ctx.metas) {
    if (m.type != MetaRecord::kProcessLabels || !m.pid_is_int) continue;
    if (m.value == "CPU" && !pids.has_cpu) pids.cpu = m.pid, pids.has_cpu = true;
    if (m.value.rfind("GPU ", 0) == 0) pids.gpu.insert(m.pid), labelled_gpus = true;
  }
  if (!labelled_gpus)
    for (size_t i = 0; i < d.devices.size(); ++i)
      if (d.devices[i].process == ctx.process) pids.gpu.insert(d.devices[i].ordinal);
  if (pids.has_cpu) pids.gpu.erase(pids.cpu);
  return pids;
}

// Names from the metadata rows: the process name, thread names (host pids) and stream names
// (GPU pids, by device ordinal and stream id), and device names from deviceProperties.
void ApplyNames(FileContext& ctx, const MetadataPids& pids) {
  model::TraceBuilder& b = *ctx.builder;
  model::TraceData& d = b.data();
  model::Process& proc = d.processes[ctx.process];
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
    if (m.type == MetaRecord::kProcessName && pids.has_cpu && m.pid == pids.cpu) proc.name = b.Intern(m.value);
    if (m.type != MetaRecord::kThreadName || !m.tid_is_int) continue;
    if (pids.gpu.contains(m.pid)) {
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
}

// The process: its host (the one the trace records, else the one PyTorch's default file name
// states), pid, names, rank and world size (also on its collectives).
void ApplyMetadata(FileContext& ctx) {
  model::TraceBuilder& b = *ctx.builder;
  model::TraceData& d = b.data();
  model::Process& proc = d.processes[ctx.process];
  proc.host = b.Intern(!ctx.host_name.empty() ? ctx.host_name : HostFromTraceFileName(ctx.path));
  const MetadataPids pids = ReadMetadataPids(ctx);
  if (pids.has_cpu) proc.pid = pids.cpu;
  ApplyNames(ctx, pids);
  if (ctx.has_rank) {
    proc.rank = ctx.rank >= 0 && ctx.rank <= INT32_MAX ? static_cast<int32_t>(ctx.rank) : kNone;
    proc.world_size = ctx.world_size > 0 && ctx.world_size <= INT32_MAX ? static_cast<int32_t>(ctx.world_size) : kNone;
  }
  for (size_t i = ctx.collectives0; i < d.collectives.size(); ++i) d.collectives[i].rank = proc.rank;
}

// The file's SourceStats, stored in the builder (ctx.stats is moved out).
void StoreStats(FileContext& ctx, int64_t total_bytes, bool compressed) {
  model::TraceData& d = ctx.builder->data();
  model::SourceStats& st = ctx.stats;
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
}

}  // namespace

absl::Status FinishFile(FileContext& ctx, int64_t total_bytes, bool compressed) {
  base::PhaseSpan f_("finish file");
  if (absl::Status s = AddBaseAtEnd(ctx); !s.ok()) return s;
  {
    base::PhaseSpan s_("corr from external id");
    CorrelationFromExternalId(ctx);
  }
  // The joins write the syncs' threads and the copies' asynchrony, the count reads correlation
  // ids: at once, the joins on the parser threads, the count on the merge's, where both were
  // started (else one after the other, each on every thread).
  int64_t unattributed_syncs = 0;
  std::pair<int64_t, int64_t> unmatched;
  auto join = [&] {
    base::PhaseSpan s_("join calls");
    unattributed_syncs = JoinCallsByCorrelation(ctx);
  };
  auto count = [&] {
    base::PhaseSpan s_("count unmatched");
    unmatched = CountUnmatchedIds(ctx);
  };
  if (ctx.pool != nullptr && ctx.merge_pool != nullptr) {
    base::RunAll(2, {join, count});
  } else {
    join();
    count();
  }
  if (unattributed_syncs > 0) ctx.stats.Add(model::Stat::kKinetoSyncWithoutCall, unattributed_syncs);
  if (unmatched.first > 0) ctx.stats.Add(model::Stat::kGpuWithoutLaunch, unmatched.first);
  if (unmatched.second > 0) ctx.stats.Add(model::Stat::kKinetoFlowIdUnmatched, unmatched.second);
  ApplyMetadata(ctx);
  StoreStats(ctx, total_bytes, compressed);
  return absl::OkStatus();
}

}  // namespace overlapscope::import
