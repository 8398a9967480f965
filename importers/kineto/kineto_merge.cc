// Merging parser-thread output into the builder (the end-of-file fix-ups: kineto_finish.cc).
#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/run_all.h"
#include "importers/kineto/file_context.h"
#include "importers/kineto/import.h"
#include "importers/kineto/task_pool.h"
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

// Where one output's events go in the builder's vectors: the index of its first element of each
// kind (the vectors were sized for the whole window before the copies start).
struct Slots {
  size_t collectives = 0, kernels = 0, memcpys = 0, memsets = 0, gpu_ranges = 0, syncs = 0, ranges = 0, api_calls = 0,
         op_shapes = 0;
};

// GPU side: collectives first (kernels refer to them by the chunk's index), then kernels,
// copies, memsets and GPU ranges, each with its stream and name mapped to the builder's,
// written to the output's own slots.
void MergeGpu(Remapper& r, const Slots& at) {
  ThreadOut& out = r.out;
  model::TraceData& d = r.b.data();
  for (size_t i = 0; i < out.collectives.size(); ++i) {
    model::Collective c = out.collectives[i];
    r.Rebase(c);
    c.op = r.Str(c.op);
    c.communicator = r.Str(c.communicator);
    c.dtype = r.Str(c.dtype);
    c.process = r.ctx.process;
    d.collectives[at.collectives + i] = c;
  }
  for (size_t i = 0; i < out.kernels.size(); ++i) {
    model::Kernel k = out.kernels[i];
    r.Rebase(k);
    auto [dev, stream] = r.Stream(k.stream);
    k.device = dev, k.stream = stream, k.name = r.Str(k.name);
    if (k.collective != kNone) {
      k.collective += static_cast<int32_t>(at.collectives);  // one of this output's collectives
      d.collectives[k.collective].device = dev;
      d.collectives[k.collective].stream = stream;
    }
    d.kernels[at.kernels + i] = k;
  }
  // Copies, memsets and GPU ranges need the same three remaps: time base, stream, name.
  auto move_gpu = [&](const auto& from, auto& to, size_t first) {
    for (size_t i = 0; i < from.size(); ++i) {
      auto e = from[i];
      r.Rebase(e);
      auto [dev, stream] = r.Stream(e.stream);
      e.device = dev, e.stream = stream, e.name = r.Str(e.name);
      to[first + i] = e;
    }
  };
  move_gpu(out.memcpys, d.memcpys, at.memcpys);
  move_gpu(out.memsets, d.memsets, at.memsets);
  move_gpu(out.gpu_ranges, d.gpu_ranges, at.gpu_ranges);
}

// Host side: syncs (their streams; their device was mapped with the ids) and host ranges (their
// thread).
void MergeHost(Remapper& r, const Slots& at) {
  ThreadOut& out = r.out;
  model::TraceData& d = r.b.data();
  for (size_t i = 0; i < out.syncs.size(); ++i) {
    model::Sync y = out.syncs[i];
    r.Rebase(y);
    if (y.stream != kNone) y.stream = r.Stream(y.stream).second;
    if (y.wait_on_stream != kNone) y.wait_on_stream = r.Stream(y.wait_on_stream).second;
    y.name = r.Str(y.name);
    d.syncs[at.syncs + i] = y;
  }
  for (size_t i = 0; i < out.ranges.size(); ++i) {
    model::Range g = out.ranges[i];
    r.Rebase(g);
    g.thread = r.Thread(g.thread), g.name = r.Str(g.name);
    d.ranges[at.ranges + i] = g;
  }
  for (size_t i = 0; i < out.op_shapes.size(); ++i) {
    model::OpShape s = out.op_shapes[i];
    s.thread = r.Thread(s.thread), s.op = r.Str(s.op);
    d.op_shapes[at.op_shapes + i] = s;
  }
}

// Runtime/driver calls, every one of the output's (the duplicates, found by the ordered pass
// beside this, are taken out after).
void MergeApiCalls(Remapper& r, const Slots& at) {
  ThreadOut& out = r.out;
  model::TraceData& d = r.b.data();
  for (size_t i = 0; i < out.api_calls.size(); ++i) {
    model::ApiCall a = out.api_calls[i];
    a.thread = r.Thread(a.thread), a.name = r.Str(a.name);
    r.Rebase(a);
    d.api_calls[at.api_calls + i] = a;
  }
}

// The duplicate check, in file order: a correlation id already seen in the file is skipped (its
// GPU work would be joined to two calls): counted with the chunk's other skips, in file order
// (*skips: the output's skip records, sorted by offset when a duplicate joined them). Appends
// the builder indices of the duplicates (increasing) to *dropped.
void FindDuplicateCalls(ThreadOut& out, FileContext& ctx, size_t first, std::vector<SkipRecord>* skips,
                        std::vector<size_t>* dropped) {
  *skips = std::move(out.skips);
  out.skips.clear();
  int64_t duplicates = 0;
  for (size_t i = 0; i < out.api_calls.size(); ++i) {
    const model::ApiCall& a = out.api_calls[i];
    if (a.correlation_id == kNoCorrelation || ctx.api_correlations.Insert(a.correlation_id)) continue;
    skips->push_back({out.api_offsets[i], model::Stat::kKinetoRuntimeEventSkipped, "duplicate correlation id"});
    ++duplicates;
    --out.kept[static_cast<size_t>(a.kind == model::ApiKind::kRuntime ? Category::kCudaRuntime
                                                                      : Category::kCudaDriver)];
    dropped->push_back(first + i);
  }
  if (duplicates > 0)
    std::stable_sort(skips->begin(), skips->end(), [](const auto& x, const auto& y) { return x.offset < y.offset; });
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
  // Each sync's device (an ordinal until now), made here, in this order.
  for (model::Sync& y : out.syncs) y.device = r.b.GetOrAddDevice(ctx.process, y.device);
  if (!ctx.has_base && out.events_read > 0) ctx.merged_without_base = true;
}

}  // namespace

void MergeOuts(absl::Span<ThreadOut* const> outs, absl::Span<const int> which, FileContext& ctx) {
  model::TraceData& d = ctx.builder->data();
  std::vector<Remapper> gpu, api, host;
  std::vector<Slots> at(outs.size());
  Slots end{d.collectives.size(), d.kernels.size(), d.memcpys.size(),   d.memsets.size(),  d.gpu_ranges.size(),
            d.syncs.size(),       d.ranges.size(),  d.api_calls.size(), d.op_shapes.size()};
  size_t events = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    gpu.push_back(Remapper{ctx, *outs[k], which[k]});
    MapIds(gpu.back());
    api.push_back(gpu.back());
    host.push_back(gpu.back());
    const ThreadOut& o = *outs[k];
    at[k] = end;
    end.collectives += o.collectives.size(), end.kernels += o.kernels.size(), end.memcpys += o.memcpys.size();
    end.memsets += o.memsets.size(), end.gpu_ranges += o.gpu_ranges.size(), end.syncs += o.syncs.size();
    end.ranges += o.ranges.size(), end.api_calls += o.api_calls.size(), end.op_shapes += o.op_shapes.size();
    events += static_cast<size_t>(o.events_read);
  }
  // Each kind's vector grows once, by a task of its own; then each output's events go to their
  // own slots (one task per output and side), beside the ordered duplicate check of the API
  // calls. Tasks are taken in list order, so a copy starts only after every resize has been
  // taken: it waits for those of its side (they wait for nothing). One thread: the list's order.
  enum Side { kApi, kHost, kGpu, kSides };
  std::atomic<int> resized[kSides] = {};
  int resizes[kSides] = {};
  std::atomic<bool> failed{false};
  std::vector<std::function<void()>> tasks;
  auto grow = [&](Side side, auto& v, size_t size) {
    ++resizes[side];
    tasks.emplace_back([&v, size, &done = resized[side], &failed] {
      struct Count {
        std::atomic<int>& n;
        ~Count() { n.fetch_add(1, std::memory_order_release); }
      } count{done};
      try {
        v.resize(size);
      } catch (...) {
        failed = true;
        throw;  // rethrown by RunAll on the calling thread
      }
    });
  };
  grow(kApi, d.api_calls, end.api_calls), grow(kHost, d.ranges, end.ranges), grow(kGpu, d.kernels, end.kernels);
  grow(kHost, d.syncs, end.syncs), grow(kGpu, d.gpu_ranges, end.gpu_ranges), grow(kGpu, d.memsets, end.memsets);
  grow(kGpu, d.memcpys, end.memcpys), grow(kGpu, d.collectives, end.collectives);
  grow(kHost, d.op_shapes, end.op_shapes);
  std::vector<std::vector<SkipRecord>> skips(outs.size());
  std::vector<size_t> dropped;  // builder indices of duplicate calls
  tasks.emplace_back([&] {
    for (size_t k = 0; k < outs.size(); ++k) FindDuplicateCalls(*outs[k], ctx, at[k].api_calls, &skips[k], &dropped);
  });
  auto copy = [&](Side side, std::vector<Remapper>& rs, void (*merge)(Remapper&, const Slots&)) {
    for (size_t k = 0; k < rs.size(); ++k)
      tasks.emplace_back([&, side, k, merge] {
        while (resized[side].load(std::memory_order_acquire) < resizes[side]) std::this_thread::yield();
        if (!failed) merge(rs[k], at[k]);
      });
  };
  copy(kHost, host, MergeHost), copy(kGpu, gpu, MergeGpu), copy(kApi, api, MergeApiCalls);
  // A thread per ~4,000 events, at most kMaxMergeThreads: the file's merge threads where the
  // window is worth them, else this one.
  const size_t threads = std::min<size_t>({static_cast<size_t>(ctx.threads), kMaxMergeThreads, 1 + events / 4096});
  if (threads >= 2 && ctx.merge_pool != nullptr)
    ctx.merge_pool->Run(tasks);
  else
    base::RunAll(static_cast<int>(threads), tasks);
  if (!dropped.empty()) {  // rare: the duplicates leave, the calls after them move up
    size_t to = dropped.front(), next = 0;
    for (size_t from = to; from < d.api_calls.size(); ++from) {
      if (next < dropped.size() && dropped[next] == from) {
        ++next;
        continue;
      }
      d.api_calls[to++] = d.api_calls[from];
    }
    d.api_calls.resize(to);
  }
  for (const std::vector<SkipRecord>& sk : skips)
    for (const SkipRecord& s : sk) ctx.stats.Skip(s.stat, s.reason, absl::StrCat("offset ", s.offset, ": ", s.reason));
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
