// Merging parser-thread output into the builder (the end-of-file fix-ups: kineto_finish.cc).
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/run_all.h"
#include "importers/kineto/file_context.h"
#include "importers/kineto/import.h"
#include "model/bounds.h"

namespace overlapscope::import {
namespace {

using model::kNoCorrelation;
using model::kNone;

// Maps of one parser thread's local ids to global ones (filled by MergeOut before the events).
struct Remapper {
  FileContext& ctx;
  ThreadOut& out;
  int which;
  model::TraceBuilder& b = *ctx.builder;
  // baseTimeNanoseconds, added here while the event is in cache when it is already known
  // (FinishFile adds it otherwise); `overflow` says an event left the supported range.
  int64_t base = ctx.has_base ? ctx.base_ns : 0;
  bool overflow = false;

  template <typename E>
  void Rebase(E& e) {
    if (base == 0) return;  // bounds were checked at parse time
    overflow |= __builtin_add_overflow(e.start_ns, base, &e.start_ns);
    overflow |= __builtin_add_overflow(e.end_ns, base, &e.end_ns);
    overflow |= !model::TimeInBounds(e.start_ns) || !model::TimeInBounds(e.end_ns);
  }

  // Every id of the chunk was mapped when MergeOut began.
  model::StringId Str(model::StringId local) const { return ctx.str_remap[which][local]; }
  model::ThreadId Thread(int32_t local) const { return ctx.thread_remap[which][local]; }
  std::pair<model::DeviceId, model::StreamId> Stream(int32_t local) const { return ctx.stream_remap[which][local]; }
};

// GPU side: collectives first (kernels refer to them by the chunk's index), then kernels,
// copies, memsets and GPU ranges, each with its stream and name mapped to the builder's.
void MergeGpu(Remapper& r) {
  ThreadOut& out = r.out;
  model::TraceData& d = r.b.data();
  const size_t coll_base = d.collectives.size();
  for (model::Collective c : out.collectives) {
    r.Rebase(c);
    c.op = r.Str(c.op);
    c.communicator = r.Str(c.communicator);
    c.dtype = r.Str(c.dtype);
    c.process = r.ctx.process;
    d.collectives.push_back(c);
  }
  d.kernels.reserve(d.kernels.size() + out.kernels.size());
  for (model::Kernel k : out.kernels) {
    r.Rebase(k);
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
      r.Rebase(e);
      auto [dev, stream] = r.Stream(e.stream);
      e.device = dev, e.stream = stream, e.name = r.Str(e.name);
      to.push_back(e);
    }
  };
  move_gpu(out.memcpys, d.memcpys);
  move_gpu(out.memsets, d.memsets);
  move_gpu(out.gpu_ranges, d.gpu_ranges);
}

// Host side: syncs (their streams and device) and host ranges (their thread).
void MergeHost(Remapper& r) {
  ThreadOut& out = r.out;
  model::TraceData& d = r.b.data();
  for (model::Sync y : out.syncs) {
    r.Rebase(y);
    if (y.stream != kNone) y.stream = r.Stream(y.stream).second;
    if (y.wait_on_stream != kNone) y.wait_on_stream = r.Stream(y.wait_on_stream).second;
    y.device = r.b.GetOrAddDevice(r.ctx.process, y.device);
    y.name = r.Str(y.name);
    d.syncs.push_back(y);
  }
  d.ranges.reserve(d.ranges.size() + out.ranges.size());
  for (model::Range g : out.ranges) {
    r.Rebase(g);
    g.thread = r.Thread(g.thread), g.name = r.Str(g.name);
    d.ranges.push_back(g);
  }
  for (model::OpShape s : out.op_shapes) {
    s.thread = r.Thread(s.thread), s.op = r.Str(s.op);
    d.op_shapes.push_back(s);
  }
}

// Runtime/driver calls. A correlation id already seen in the file is skipped (its GPU work
// would be joined to two calls): counted with the chunk's other skips, in file order.
void MergeApiCalls(Remapper& r) {
  ThreadOut& out = r.out;
  FileContext& ctx = r.ctx;
  model::TraceData& d = r.b.data();
  std::vector<SkipRecord> skips = std::move(out.skips);
  out.skips.clear();
  int64_t duplicates = 0;
  d.api_calls.reserve(d.api_calls.size() + out.api_calls.size());
  for (size_t i = 0; i < out.api_calls.size(); ++i) {
    model::ApiCall a = out.api_calls[i];
    if (a.correlation_id != kNoCorrelation && !ctx.api_correlations.Insert(a.correlation_id)) {
      skips.push_back({out.api_offsets[i], model::Stat::kKinetoRuntimeEventSkipped, "duplicate correlation id"});
      ++duplicates;
      --out.kept[static_cast<size_t>(a.kind == model::ApiKind::kRuntime ? Category::kCudaRuntime
                                                                        : Category::kCudaDriver)];
      continue;
    }
    a.thread = r.Thread(a.thread), a.name = r.Str(a.name);
    r.Rebase(a);
    d.api_calls.push_back(a);
  }
  if (duplicates > 0)
    std::stable_sort(skips.begin(), skips.end(), [](const auto& x, const auto& y) { return x.offset < y.offset; });
  for (const SkipRecord& s : skips) ctx.stats.Skip(s.stat, s.reason, absl::StrCat("offset ", s.offset, ": ", s.reason));
}

// The chunk's counts into the file's SourceStats, and what FinishFile needs later (metadata,
// flow ids, the CPU pid).
void MergeCounts(ThreadOut& out, FileContext& ctx) {
  model::SourceStats& st = ctx.stats;
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
}

}  // namespace

namespace {

// Ids the parse met first (strings, threads, streams; the devices of syncs after them) get their
// global ids now, in the order the parse met them: the builder's order is then that of first
// appearance in the file, whatever the split into parts, windows and threads (the Perfetto
// export's interned ids, the order of threads, devices and streams in every output). Mapping
// them while merging, kind by kind, would order them by the split.
void MapIds(Remapper& r) {
  FileContext& ctx = r.ctx;
  ThreadOut& out = r.out;
  auto& sm = ctx.str_remap[r.which];
  for (size_t i = sm.size(); i < out.strings.size(); ++i) sm.push_back(i == 0 ? 0 : r.b.Intern(out.strings.Get(i)));
  auto& tm = ctx.thread_remap[r.which];
  for (size_t i = tm.size(); i < out.thread_tids.size(); ++i)
    tm.push_back(r.b.GetOrAddThread(ctx.process, out.thread_tids[i]));
  auto& stm = ctx.stream_remap[r.which];
  for (size_t i = stm.size(); i < out.stream_keys.size(); ++i) {
    const model::DeviceId d = r.b.GetOrAddDevice(ctx.process, out.stream_keys[i].first);
    stm.emplace_back(d, r.b.GetOrAddStream(d, out.stream_keys[i].second));
  }
  // MergeHost gives each sync its device; made here, in this order, MergeHost only finds them.
  for (const model::Sync& y : out.syncs) r.b.GetOrAddDevice(ctx.process, y.device);
  if (!ctx.has_base && out.events_read > 0) ctx.merged_without_base = true;
}

}  // namespace

void MergeOuts(absl::Span<ThreadOut* const> outs, absl::Span<const int> which, FileContext& ctx) {
  std::vector<Remapper> gpu, api, host;
  for (size_t k = 0; k < outs.size(); ++k) {
    gpu.push_back(Remapper{ctx, *outs[k], which[k]});
    MapIds(gpu.back());
    api.push_back(gpu.back());
    host.push_back(gpu.back());
  }
  // GPU work, host ranges and syncs, API calls: each kind goes to its own vectors of the
  // builder (only MergeApiCalls touches the stats and the id set), output after output: on up
  // to three threads, with the same result as in this order.
  base::RunAll(std::min(ctx.threads, 3), {[&] {
                                            for (Remapper& r : gpu) MergeGpu(r);
                                          },
                                          [&] {
                                            for (Remapper& r : api) MergeApiCalls(r);
                                          },
                                          [&] {
                                            for (Remapper& r : host) MergeHost(r);
                                          }});
  for (size_t k = 0; k < outs.size(); ++k) {
    ctx.base_overflow |= gpu[k].overflow || host[k].overflow || api[k].overflow;
    MergeCounts(*outs[k], ctx);
    outs[k]->ClearChunk();
  }
}

void MergeOut(ThreadOut& out, int which, FileContext& ctx) {
  ThreadOut* const outs[] = {&out};
  const int whiches[] = {which};
  MergeOuts(outs, whiches, ctx);
}

void DropOut(ThreadOut& out, int which, FileContext& ctx) {
  out = ThreadOut();
  ctx.str_remap[which].clear();
  ctx.thread_remap[which].clear();
  ctx.stream_remap[which].clear();
}

}  // namespace overlapscope::import
