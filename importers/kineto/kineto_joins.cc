// The end-of-file joins and counts of one Kineto file, run by FinishFile (kineto_finish.cc):
// each sync's host thread and each copy's asynchrony from the call with its correlation id, and
// the GPU activities without a launch call and the launch flows that match nothing. In ranges on
// the file's threads (FileContext::pool and merge_pool) where they were started.
#include <algorithm>
#include <atomic>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/run_all.h"
#include "importers/kineto/file_context.h"
#include "importers/kineto/kineto_keys.h"
#include "importers/kineto/task_pool.h"

namespace overlapscope::import {
namespace {

using model::kNoCorrelation;

// Runs a list of tasks (each once, all done on return) on a pool of the file's threads where
// it was started, else on threads started for it.
struct Runner {
  TaskPool* pool;
  int threads;
  void operator()(const std::vector<std::function<void()>>& tasks) const {
    if (pool != nullptr)
      pool->Run(tasks);
    else
      base::RunAll(threads, tasks);
  }
};

// Each sync's host thread and each copy's asynchrony from the call with its correlation id, with
// api_of(id) -> const ApiCall* (the file's first call with that id, or null). The joins write
// disjoint events: in ranges at once. Returns the syncs without a call.
template <typename ApiOf>
int64_t JoinCalls(FileContext& ctx, const ApiOf& api_of) {
  model::TraceData& d = ctx.builder->data();
  constexpr size_t kChunk = 1 << 13;
  std::atomic<int64_t> unattributed_syncs{0};
  base::ParallelForOn(Runner{ctx.pool, ctx.threads}, ctx.threads, d.syncs.size() - ctx.syncs0, kChunk,
                      [&](size_t lo, size_t hi) {
                        int64_t none = 0;
                        for (size_t i = ctx.syncs0 + lo; i < ctx.syncs0 + hi; ++i) {
                          const model::ApiCall* a = api_of(d.syncs[i].correlation_id);
                          if (a)
                            d.syncs[i].thread = a->thread;
                          else
                            ++none;
                        }
                        unattributed_syncs += none;
                      });
  auto copies = [&](auto& v, size_t from) {
    base::ParallelForOn(Runner{ctx.pool, ctx.threads}, ctx.threads, v.size() - from, kChunk, [&](size_t lo, size_t hi) {
      for (size_t i = from + lo; i < from + hi; ++i)
        if (const model::ApiCall* a = api_of(v[i].correlation_id))
          v[i].is_async = CopyApiIsAsync(d.strings.Get(a->name));
    });
  };
  copies(d.memcpys, ctx.memcpys0);
  copies(d.memsets, ctx.memsets0);
  return unattributed_syncs.load();
}

// The correlation ids of the syncs and copies, each with the index of the file's first call with
// that id (-1 until found), in `shards` hash maps by the id's hash: built at once, one thread a
// shard (each scans all the ids, keeps its own), where one map took a thread ~5 ms on the 500 MB
// trace. One shard with one thread: the single map of before.
class WantedIds {
 public:
  WantedIds(const FileContext& ctx, int shards) : maps_(static_cast<size_t>(std::max(shards, 1))) {
    const model::TraceData& d = ctx.builder->data();
    std::vector<std::function<void()>> tasks;
    for (size_t p = 0; p < maps_.size(); ++p)
      tasks.emplace_back([this, &ctx, &d, p] {
        auto& m = maps_[p];
        auto want = [&](const auto& v, size_t from) {
          for (size_t i = from; i < v.size(); ++i) {
            const int64_t c = v[i].correlation_id;
            if (c != kNoCorrelation && Shard(c) == p) m.emplace(c, -1);
          }
        };
        want(d.syncs, ctx.syncs0);
        want(d.memcpys, ctx.memcpys0);
        want(d.memsets, ctx.memsets0);
      });
    Runner{ctx.pool, ctx.threads}(tasks);
  }
  bool empty() const {
    return std::all_of(maps_.begin(), maps_.end(), [](const auto& m) { return m.empty(); });
  }
  // The slot of id, or null when no sync or copy has it.
  int32_t* Find(int64_t id) {
    auto& m = maps_[Shard(id)];
    auto it = m.find(id);
    return it == m.end() ? nullptr : &it->second;
  }
  const int32_t* Find(int64_t id) const { return const_cast<WantedIds*>(this)->Find(id); }

 private:
  size_t Shard(int64_t id) const {
    return maps_.size() == 1 ? 0 : ((static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull) >> 40) % maps_.size();
  }
  std::vector<absl::flat_hash_map<int64_t, int32_t>> maps_;
};

}  // namespace

// Host thread of each sync and asynchrony of each copy/memset: Kineto's sync and copy rows do
// not say them, the API call with the same correlation id does. Only the ids asked for are
// indexed, so this stays small on huge files. Returns the syncs without a call (counted by the
// caller: this runs beside CountUnmatchedIds, which reads other members of the same events).
int64_t JoinCallsByCorrelation(FileContext& ctx) {
  model::TraceData& d = ctx.builder->data();
  WantedIds wanted(ctx, std::min(ctx.threads, 16));
  if (!wanted.empty()) {
    // Each wanted id's first call: the calls are looked up in ranges at once (the maps are only
    // read). Where each id is on one call at most (the duplicate check kept one call per id),
    // each slot has one writer; else each range's hits are kept in order, then taken in range
    // order: the first hit wins (one thread: one range, the same order).
    const size_t n = d.api_calls.size() - ctx.api0;
    constexpr size_t kChunk = 1 << 13;
    if (ctx.api_ids_unique) {
      base::ParallelForOn(Runner{ctx.pool, ctx.threads}, ctx.threads, n, kChunk, [&](size_t lo, size_t hi) {
        for (size_t i = ctx.api0 + lo; i < ctx.api0 + hi; ++i)
          if (int32_t* slot = wanted.Find(d.api_calls[i].correlation_id)) *slot = static_cast<int32_t>(i);
      });
    } else {
      struct Hit {
        int32_t* slot;
        int32_t call;
      };
      std::vector<Hit> hits;
      base::ParallelAppendOn(Runner{ctx.pool, ctx.threads}, ctx.threads, n, kChunk, &hits,
                             [&](size_t lo, size_t hi, std::vector<Hit>* out) {
                               for (size_t i = ctx.api0 + lo; i < ctx.api0 + hi; ++i)
                                 if (int32_t* slot = wanted.Find(d.api_calls[i].correlation_id))
                                   out->push_back({slot, static_cast<int32_t>(i)});
                             });
      for (const Hit& h : hits)
        if (*h.slot < 0) *h.slot = h.call;
    }
  }
  return JoinCalls(ctx, [&](int64_t corr) -> const model::ApiCall* {
    const int32_t* slot = wanted.Find(corr);
    return slot == nullptr || *slot < 0 ? nullptr : &d.api_calls[static_cast<size_t>(*slot)];
  });
}

// ac2g flow ids must be correlation ids of this file; GPU work launched before the capture
// window has no API call in the file. Both are counted, neither is an error. The API ids are
// already in a set (the duplicate check's IdSet). A flow id that misses it can only equal an id
// that misses it too: the GPU activities' and syncs' ids outside the set are gathered (in
// ranges at once; the GPU ones are the orphans) and only they are searched. Frees the flow ids
// and the API id set: nothing needs them after this. Returns the counts of GPU activities
// without a launch and of flows that match nothing (added by the caller).
std::pair<int64_t, int64_t> CountUnmatchedIds(FileContext& ctx) {
  model::TraceData& d = ctx.builder->data();
  const auto& api_ids = ctx.api_correlations;
  std::vector<int64_t> other;  // ids outside the API ids (kNoCorrelation among them)
  auto gather = [&](const auto& v, size_t from) {
    base::ParallelAppendOn(Runner{ctx.merge_pool, ctx.threads}, ctx.threads, v.size() - from, size_t{1} << 13, &other,
                           [&](size_t lo, size_t hi, std::vector<int64_t>* out) {
                             for (size_t i = from + lo; i < from + hi; ++i)
                               if (!api_ids.Contains(v[i].correlation_id)) out->push_back(v[i].correlation_id);
                           });
  };
  gather(d.kernels, ctx.kernels0);
  gather(d.memcpys, ctx.memcpys0);
  gather(d.memsets, ctx.memsets0);
  const int64_t orphans = std::count_if(other.begin(), other.end(), [](int64_t c) { return c != kNoCorrelation; });
  int64_t mismatches = 0;
  std::vector<int64_t> missed;
  base::ParallelAppendOn(Runner{ctx.merge_pool, ctx.threads}, ctx.threads, ctx.flow_ids.size(), size_t{1} << 16,
                         &missed, [&](size_t lo, size_t hi, std::vector<int64_t>* out) {
                           for (size_t i = lo; i < hi; ++i)
                             if (!api_ids.Contains(ctx.flow_ids[i])) out->push_back(ctx.flow_ids[i]);
                         });
  if (!missed.empty()) {
    gather(d.syncs, ctx.syncs0);
    std::sort(other.begin(), other.end());
    std::atomic<int64_t> sum{0};
    base::ParallelForOn(Runner{ctx.merge_pool, ctx.threads}, ctx.threads, missed.size(), size_t{1} << 12,
                        [&](size_t lo, size_t hi) {
                          int64_t k = 0;
                          for (size_t i = lo; i < hi; ++i)
                            k += !std::binary_search(other.begin(), other.end(), missed[i]);
                          sum += k;
                        });
    mismatches = sum.load();
  }
  std::vector<int64_t>().swap(ctx.flow_ids);
  ctx.api_correlations.Clear();
  return {orphans, mismatches};
}

}  // namespace overlapscope::import
