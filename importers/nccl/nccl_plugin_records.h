// Reading the NCCL profiler plugin's .ovnccl file (nccl_plugin/ovnccl_format.h) and merging it
// into the model events of the process that wrote it. Model-only: no CUDA, no NCCL.
//
// The plugin gives what CUPTI cannot see: per collective the communicator (NCCL's commId, the
// same on every rank), the rank in it, NCCL's sequence number, algorithm, protocol, channel
// count and the GPU time of each channel. MergeNcclPlugin() hangs these onto the
// model::Collective that NCCL attribution (nccl_attribution.h) made from the NCCL API range,
// or creates the collective from the plugin when there was no such range (NVTX off).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "importers/nccl/nccl_attribution.h"
#include "model/source_stats.h"
#include "model/trace_builder.h"

namespace overlapscope::import {

struct NcclPluginComm {
  uint64_t context = 0, comm_id = 0;
  int32_t nnodes = -1, nranks = -1, rank = -1;
  std::string name;
  int64_t init_ns = -1;
};

// A GroupApi, CollApi or P2pApi event: one NCCL API call (group: from the first call of the
// outermost group to the end of ncclGroupEnd) on the calling thread.
struct NcclPluginApi {
  uint64_t id = 0, parent = 0, context = 0;
  uint32_t type = 0;  // ovnccl formats::kTypeGroupApi / formats::kTypeCollApi / formats::kTypeP2pApi
  int64_t start_ns = -1, end_ns = -1, tid = -1;
  int32_t root = -1;
  uint64_t count = 0, stream = 0;
  int64_t ordinal = -1;
  bool graph_captured = false;
  std::string func, dtype;
};

// A Coll or P2p event (one task of a launched kernel plan), with its kernel channels folded in.
struct NcclPluginColl {
  uint64_t id = 0, parent = 0, context = 0;  // parent: the CollApi/P2pApi event
  uint32_t type = 0;                         // formats::kTypeColl / formats::kTypeP2p
  int64_t start_ns = -1, end_ns = -1, tid = -1;
  int32_t rank = -1, root_or_peer = -1;
  int64_t seq = -1;
  uint64_t count = 0;
  int32_t nchannels = 0, nwarps = 0;
  std::string func, dtype, algo, proto;
  // Kernel channels: how many reported start / stop, first start and last stop (GPU globaltimer).
  int32_t channels_started = 0, channels_stopped = 0;
  int64_t channel_first_start = -1, channel_last_stop = -1;
};

struct NcclPluginFile {
  std::string path;
  int64_t pid = -1;
  std::vector<NcclPluginComm> comms;
  std::vector<NcclPluginApi> apis;
  std::vector<NcclPluginColl> colls;
  // Plugin counters from its last kStats record.
  int64_t plugin_dropped = 0, plugin_internal_errors = 0, plugin_write_errors = 0;
  model::SourceStats stats;  // records read/kept/skipped while parsing (format "nccl-plugin")
};

// Parses a whole file. Errors (InvalidArgument "<path>: offset N: reason"): bad magic, unknown
// version, a damaged block or a record crossing its block's end. What is read is counted in
// stats (model/import_stats.h): a tail cut off mid-record (kOvncclTruncatedTail), short records,
// unknown record kinds, records contradicting the file (kOvncclBadRecord, e.g. a stop whose start
// is missing), events without a stop record (kOvncclOpenEvent, kept); kept records by kind in
// stats.kept_by_category.
absl::StatusOr<NcclPluginFile> ParseNcclPluginBytes(std::string_view bytes, const std::string& path);
absl::StatusOr<NcclPluginFile> ReadNcclPluginFile(const std::string& path);

// "<dir of spill_path>/nccl.<pid>.ovnccl".
std::string NcclPluginFileNextTo(const std::string& spill_path, int64_t pid);

struct NcclMergeOptions {
  // Only plugin collectives whose API call started in [window_start_ns, window_end_ns] are
  // merged (an in-process session reads a file that covers the whole process lifetime).
  int64_t window_start_ns = std::numeric_limits<int64_t>::min();
  int64_t window_end_ns = std::numeric_limits<int64_t>::max();
};

struct NcclMergeResult {
  int64_t linked_to_nvtx = 0;        // plugin collectives merged into an NVTX-made collective
  int64_t created = 0;               // collectives created from plugin records (no NVTX range)
  int64_t unmatched = 0;             // plugin collectives that matched nothing (counted skipped)
  int64_t outside_window = 0;        // not in the session's window (not an error)
  int64_t kernels = 0, memcpys = 0;  // activities linked to created collectives
};

// Merges `f` into the events of `process` (already in `builder`, with NVTX attribution
// `nvtx` applied). Adds f.stats as a source of its own (format "nccl-plugin") with kept,
// skipped (with reasons) and notes. Never fails on content: what cannot be placed is counted.
NcclMergeResult MergeNcclPlugin(NcclPluginFile f, const NcclAttribution& nvtx, model::TraceBuilder& builder,
                                model::ProcessId process, const NcclMergeOptions& options = {});

// Normalized datatype name ("ncclFloat16" -> "float16", spelled as analyze's DtypeBytes knows
// it) and its element size in bytes (0 when unknown).
std::string NcclDtypeName(std::string_view nccl_dtype);

// "nccl:<commId as 16 hex digits>": the communicator name of NCCL's id (commHash), the same on
// every rank (the profiler plugin's and the NVTX payload's).
std::string NcclCommName(uint64_t comm_id);
int64_t NcclDtypeBytes(std::string_view nccl_dtype);

// Input and output elements of one rank for an NCCL call of `func` with `count`, as NCCL's API
// defines count (all-gather: per-rank input; reduce-scatter: per-rank output; all-to-all: per
// peer). -1 when func is unknown.
void NcclElements(std::string_view func, int64_t count, int32_t nranks, int64_t& in, int64_t& out);

}  // namespace overlapscope::import
