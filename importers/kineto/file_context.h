// State of one Kineto file being imported into a TraceBuilder (internal to importers/kineto).
//
// kineto_file.cc reads and parses; MergeOut moves a parser thread's chunk output into the
// builder (mapping local ids to global ones, in file order); FinishFile applies what can only
// be known at the end: baseTimeNanoseconds (may follow traceEvents), metadata names, rank,
// device names, sync threads and copy asynchrony by correlation id, flow-id checks and stats.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "importers/kineto/event_parser.h"
#include "importers/kineto/id_set.h"
#include "model/source_stats.h"
#include "model/trace_builder.h"

namespace overlapscope::import {

// Parser threads of one file at most (ImportOptions::threads is clamped to it).
inline constexpr int kMaxParserThreads = 32;
// Threads of one window's merge at most (beside the next window's parse, which has the others).
inline constexpr int kMaxMergeThreads = 8;

class TaskPool;  // task_pool.h

// A measurement aid's setting (OVERLAPSCOPE_WINDOW_MB and the like, README): the variable's value
// where it is a positive integer, else 0 (unset, empty, zero, negative or not a number).
inline int PositiveEnv(const char* name) {
  const char* v = std::getenv(name);
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : 0;
}

struct FileContext {
  std::string path;
  model::TraceBuilder* builder = nullptr;
  model::ProcessId process = model::kNone;
  model::SourceStats stats;
  int threads = 1;                 // parser threads of this file (also what the end-of-file checks may use)
  TaskPool* merge_pool = nullptr;  // the merge's threads (kMaxMergeThreads at most), where started
  TaskPool* pool = nullptr;        // the parser threads, where started: FinishFile's steps run on them

  // Local -> global id maps per parser output (two sets of kMaxParserThreads: a window's parts
  // parse into one set while the other window's are merged), extended at each merge in the
  // order the part's parse met the ids (DropOut forgets an output's ids after a discarded
  // speculative parse, so that none of them reaches the builder).
  static constexpr int kOutputs = 2 * kMaxParserThreads;
  std::vector<model::StringId> str_remap[kOutputs];
  std::vector<model::ThreadId> thread_remap[kOutputs];
  std::vector<std::pair<model::DeviceId, model::StreamId>> stream_remap[kOutputs];

  IdSet api_correlations;      // duplicate detection within the file
  bool api_ids_unique = true;  // each correlation id on at most one of the file's calls
  std::vector<MetaRecord> metas;
  std::vector<int64_t> flow_ids;
  bool has_cpu_pid = false;
  int64_t cpu_pid = -1;

  // Where this file's events start in the builder's vectors.
  size_t kernels0 = 0, memcpys0 = 0, memsets0 = 0, api0 = 0, syncs0 = 0, ranges0 = 0, gpu_ranges0 = 0, collectives0 = 0;

  // Top-level facts.
  bool has_base = false;
  int64_t base_ns = 0, base_offset = 0;
  // baseTimeNanoseconds is added while merging when it came before traceEvents (the usual
  // order), else once at the end; these record which happened and whether int64 overflowed.
  bool merged_without_base = false;
  bool base_overflow = false;
  bool array_top_level = false;  // the file is a bare array of events (no top-level object)
  int64_t with_correlation = 0;  // runtime calls and GPU activities with a "correlation" arg
  std::string host_name;         // the host the trace records (top-level "host_name"), else empty
  bool has_rank = false;
  int64_t rank = -1, world_size = -1;
  std::vector<std::pair<int64_t, std::string>> device_names;  // deviceProperties: id -> name
};

// Appends `out` (the chunk output `which`, < FileContext::kOutputs) to the builder; clears it.
void MergeOut(ThreadOut& out, int which, FileContext& ctx);
// MergeOut of outs[k] (output which[k]) for k in order, with the same result: each output's
// events copied to their own slots of the builder's vectors at once (on merge_pool where
// started), beside the duplicate check of the API calls in file order (one fork-join a window).
void MergeOuts(absl::Span<ThreadOut* const> outs, absl::Span<const int> which, FileContext& ctx);

// Forgets `out` whole (events and the ids its parse met) and output `which`'s id maps:
// the output of a speculative parse that started at a wrong guess.
void DropOut(ThreadOut& out, int which, FileContext& ctx);

// The end-of-file joins (kineto_joins.cc): each sync's host thread and each copy's asynchrony
// from the file's first call with its correlation id; returns the syncs without a call.
int64_t JoinCallsByCorrelation(FileContext& ctx);
// The GPU activities without a launch call and the launch flows whose id matches nothing (see
// kineto_joins.cc); frees the flow ids and the API id set.
std::pair<int64_t, int64_t> CountUnmatchedIds(FileContext& ctx);

// Applies end-of-file facts (see above) and stores ctx.stats in the builder. Fails only when
// baseTimeNanoseconds + ts overflows int64.
absl::Status FinishFile(FileContext& ctx, int64_t total_bytes, bool compressed);

}  // namespace overlapscope::import
