// Attribution of GPU activities to NCCL collectives by the NCCL API range (NVTX domain "NCCL")
// that enqueued them (METRICS.md §1). NCCL wraps each API call (ncclAllGather, ncclSend,
// ncclGroupEnd, ...) in a range on the calling thread; a kernel launch or copy issued inside
// that range on the same thread belongs to that collective. This is what makes copy-engine
// collectives (NCCL_CTA_POLICY_ZERO: cudaMemcpyBatchAsync copies, no NCCL kernel) count as
// communication.
//
// The same is done for the ranges of the domain "overlapscope.collective" (collective_range.h:
// our own all-reduce kernels and other non-NCCL collectives), whose message gives the op,
// communicator, sequence, bytes, rank and rank count.
//
// Runs on a builder before Finalize(), for one process. Activities already linked to a
// collective are left alone. Ranges of non-collective calls (ncclCommInitRank, ...) create
// nothing. Model-only: no CUDA.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/trace_builder.h"

namespace overlapscope::import {

struct NcclAttribution {
  int64_t nccl_ranges = 0;        // NCCL-domain ranges of collective calls seen
  int64_t collectives = 0;        // collectives created (ranges that enqueued GPU work)
  int64_t kernels = 0;            // kernels linked to them
  int64_t memcpys = 0;            // copies linked to them (copy-engine collectives)
  int64_t bytes_from_copies = 0;  // copy-only collectives whose bytes = Σ their copies' bytes
  // Ranges of the domain "overlapscope.collective": well-formed ones, those that enqueued GPU
  // work (counted in `collectives` too), and malformed messages (ignored).
  int64_t own_ranges = 0, own_collectives = 0, own_malformed = 0;
  // Each collective created from an NCCL range, with the index (in builder.data().ranges) of
  // that range: the NCCL profiler plugin merge (nccl_plugin_records.h) places its records by it.
  struct Made {
    int32_t range = -1;
    model::CollectiveId collective = model::kNone;
  };
  std::vector<Made> made;
};

// The collective op of an NCCL API range name ("ncclAllGather" -> "AllGather"), or "" when
// the range is not a collective/point-to-point call.
std::string_view NcclRangeOp(std::string_view range_name);

NcclAttribution AttributeNcclRanges(model::TraceBuilder& builder, model::ProcessId process);

}  // namespace overlapscope::import
