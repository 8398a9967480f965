// NCCL's NVTX payloads: what each NCCL API range (NVTX domain "NCCL") carries as an NVTX 3
// extended payload — communicator id, message size, root or peer, reduction — decoded and put
// on the collective that range made (nccl_attribution.h). CUPTI 13 hands the payload over in the
// MARKER_DATA record (kind NVTX_EXTENDED_PAYLOAD); the collector copies its bytes into the spill.
//
// Layout: NCCL registers one static schema per API (src/include/nvtx_payload_schemas.h, NCCL
// 2.2x-2.28): a plain C struct whose schema id is NVTX_PAYLOAD_SCHEMA_ID_STATIC_START (1 << 24)
// plus a per-API number, e.g. AllGather {uint64 comm, size_t bytes} (16 bytes), AllReduce
// {uint64 comm, size_t bytes, ncclRedOp_t op} (24 with padding). A payload is decoded only when
// both its schema number and its size match that layout; anything else is counted and left
// alone, never guessed. "Message size" is what NCCL computes from the call: count x type size
// of one rank's send (all-gather), per peer (all-to-all) or receive (reduce-scatter) buffer.
//
// Model-only (no CUDA): unit-tested with hand-made payloads.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "importers/nccl/nccl_attribution.h"
#include "importers/ovspill/spill_to_model.h"
#include "model/trace_builder.h"

namespace overlapscope::import {

struct NcclNvtxFields {
  std::string_view func;  // "AllGather", "AllReduce", ... (from the schema number)
  uint64_t comm = 0;      // NCCL communicator id (commHash), the plugin's commId
  int64_t message_bytes = -1;
  int32_t root_or_peer = -1;  // root (Broadcast, Reduce, Gather, Scatter) or peer (Send, Recv)
  int32_t redop = -1;         // ncclRedOp_t (AllReduce, Reduce, ReduceScatter)
};

// Decodes one payload of NCCL's layout; nullopt for other schemas or sizes.
std::optional<NcclNvtxFields> DecodeNcclNvtxPayload(uint64_t schema_id, std::string_view bytes);

// "sum", "prod", "max", "min", "avg"; "" for others (user-defined reductions).
std::string_view NcclRedOpName(int32_t redop);

struct NcclNvtxMerge {
  int64_t decoded = 0;          // collectives that got fields from their range's payload
  int64_t not_nccl_layout = 0;  // payloads of NCCL collective ranges not in NCCL's layout
};

// For each collective attribution made from an NCCL range with a payload: communicator
// "nccl:<id hex>" (the plugin's naming) when it has none, root/peer, reduction, and bytes as
// nccl-tests counts them when still unknown (message size; x nranks for all-gather, all-to-all
// and reduce-scatter when nranks is known).
NcclNvtxMerge ApplyNcclNvtxPayloads(model::TraceBuilder& builder, const NcclAttribution& attribution,
                                    const SpillNvtxSide& nvtx);

}  // namespace overlapscope::import
