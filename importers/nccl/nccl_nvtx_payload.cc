#include "importers/nccl/nccl_nvtx_payload.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "importers/nccl/nccl_plugin_records.h"
#include "model/bounds.h"

namespace overlapscope::import {
namespace {

constexpr uint64_t kStaticSchemaStart = uint64_t{1} << 24;  // NVTX_PAYLOAD_SCHEMA_ID_STATIC_START

// NCCL's schema numbers (NVTX_SID_* in NCCL's nvtx.h) of the calls that move data, with the
// struct's size and where root/peer and the reduction sit (-1: not in it). Every struct starts
// with {uint64 comm, size_t bytes}.
struct Layout {
  uint64_t sid;
  std::string_view func;
  size_t size;
  int root_or_peer_at, redop_at;
  bool bytes_times_nranks;  // nccl-tests' size = message size x nranks
};
constexpr Layout kLayouts[] = {
    {4, "AllGather", 16, -1, -1, true},     {5, "AllReduce", 24, -1, 16, false}, {6, "Broadcast", 24, 16, -1, false},
    {7, "ReduceScatter", 24, -1, 16, true}, {8, "Reduce", 24, 16, 20, false},    {9, "Send", 24, 16, -1, false},
    {10, "Recv", 24, 16, -1, false},        {16, "AlltoAll", 16, -1, -1, true},  {17, "Gather", 24, 16, -1, false},
    {18, "Scatter", 24, 16, -1, false},
};

const Layout* LayoutOf(uint64_t schema_id) {
  if (schema_id < kStaticSchemaStart) return nullptr;
  for (const Layout& l : kLayouts)
    if (l.sid == schema_id - kStaticSchemaStart) return &l;
  return nullptr;
}

template <typename T>
T At(std::string_view b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

}  // namespace

std::optional<NcclNvtxFields> DecodeNcclNvtxPayload(uint64_t schema_id, std::string_view bytes) {
  const Layout* l = LayoutOf(schema_id);
  if (l == nullptr || bytes.size() != l->size) return std::nullopt;
  NcclNvtxFields f;
  f.func = l->func;
  f.comm = At<uint64_t>(bytes, 0);
  const uint64_t msg = At<uint64_t>(bytes, 8);
  if (msg <= static_cast<uint64_t>(model::kMaxSize)) f.message_bytes = static_cast<int64_t>(msg);  // else unknown
  if (l->root_or_peer_at >= 0) f.root_or_peer = At<int32_t>(bytes, static_cast<size_t>(l->root_or_peer_at));
  if (l->redop_at >= 0) f.redop = At<int32_t>(bytes, static_cast<size_t>(l->redop_at));
  return f;
}

std::string_view NcclRedOpName(int32_t redop) {
  switch (redop) {  // ncclRedOp_t of nccl.h
    case 0: return "sum";
    case 1: return "prod";
    case 2: return "max";
    case 3: return "min";
    case 4: return "avg";
    default: return "";
  }
}

NcclNvtxMerge ApplyNcclNvtxPayloads(model::TraceBuilder& builder, const NcclAttribution& attribution,
                                    const SpillNvtxSide& nvtx) {
  NcclNvtxMerge out;
  if (nvtx.payloads.empty() || attribution.made.empty()) return out;
  absl::flat_hash_map<uint32_t, const NvtxPayloadRecord*> by_marker;
  for (const NvtxPayloadRecord& p : nvtx.payloads) by_marker.emplace(p.h.marker_id, &p);
  auto& d = builder.data();
  for (const NcclAttribution::Made& m : attribution.made) {
    auto marker = nvtx.marker_of_range.find(m.range);
    if (marker == nvtx.marker_of_range.end()) continue;
    auto payload = by_marker.find(marker->second);
    if (payload == by_marker.end()) continue;
    const auto f = payload->second->h.truncated
                       ? std::nullopt
                       : DecodeNcclNvtxPayload(payload->second->h.schema_id, payload->second->bytes);
    if (!f) {
      ++out.not_nccl_layout;
      continue;
    }
    model::Collective& c = d.collectives[m.collective];
    if (c.communicator == 0) c.communicator = builder.Intern(NcclCommName(f->comm));
    if (f->root_or_peer >= 0) c.root_or_peer = f->root_or_peer;
    if (std::string_view op = NcclRedOpName(f->redop); !op.empty()) c.reduce_op = builder.Intern(op);
    const Layout* l = LayoutOf(payload->second->h.schema_id);
    if (f->message_bytes >= 0) {
      int64_t bytes = -1;
      if (!l->bytes_times_nranks) {
        bytes = f->message_bytes;
      } else if (c.nranks > 0) {
        bytes = model::BytesOf(f->message_bytes, c.nranks);
      }
      // The payload states what the call asked for; it wins over the sum of the copies.
      if (bytes >= 0) c.bytes = bytes;
    }
    ++out.decoded;
  }
  return out;
}

}  // namespace overlapscope::import
