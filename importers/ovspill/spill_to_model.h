// The decoded records of one spill file, and their conversion into model events of one
// process. Internal to capture/cupti (used by spill_reader.cc); model-only, no CUDA.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "importers/ovspill/spill_reader.h"
#include "model/source_stats.h"
#include "model/trace_builder.h"

namespace overlapscope::import {

// An NVTX extended payload as read from the spill (header and its bytes).
struct NvtxPayloadRecord {
  formats::SpillNvtxPayload h{};
  std::string bytes;
};

// What the NCCL-payload decoding after attribution needs from the conversion: the model range
// (index into builder.data().ranges) made from each NVTX start record, by marker id, and the
// payloads themselves.
struct SpillNvtxSide {
  absl::flat_hash_map<int32_t, uint32_t> marker_of_range;
  std::vector<NvtxPayloadRecord> payloads;
};

struct SpillRecords {
  bool have_process = false, have_stats = false, have_end = false;
  formats::SpillProcess process{};
  formats::SpillStats capture_stats{};
  formats::SpillEnd end{};
  absl::flat_hash_map<uint32_t, model::StringId> strings;  // spill string id -> interned id
  std::vector<formats::SpillKernel> kernels;
  std::vector<formats::SpillMemcpy> memcpys;
  std::vector<formats::SpillMemset> memsets;
  std::vector<formats::SpillApi> apis;
  std::vector<formats::SpillSync> syncs;
  std::vector<formats::SpillCudaEvent> events;
  std::vector<formats::SpillExternalCorrelation> externals;
  std::vector<formats::SpillMarker> markers;
  std::vector<formats::SpillMarkerData> marker_data;
  std::vector<NvtxPayloadRecord> nvtx_payloads;
  std::vector<formats::SpillOverhead> overheads;
  std::vector<formats::SpillDevice> devices;
  std::vector<formats::SpillContext> contexts;
  std::vector<formats::SpillStream> streams;
  std::vector<formats::SpillName> names;
  std::vector<formats::SpillWindow> windows;  // as written: an open record (end 0) and, later, the closed one
  model::SourceStats stats;
  // Records that describe rather than happen (process, strings, devices, contexts, streams,
  // names, stats, end): kept as "metadata records" so read = kept + skipped + unknown.
  int64_t metadata_records = 0;
};

// Adds one process with its events to `builder`; counts kept/skipped records in r.stats and
// appends r.stats to builder.data().sources.
absl::Status SpillRecordsToModel(SpillRecords r, model::TraceBuilder& builder, SpillNvtxSide* nvtx = nullptr);

}  // namespace overlapscope::import
