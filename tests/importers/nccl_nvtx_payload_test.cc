// NCCL's NVTX payloads (importers/nccl/nccl_nvtx_payload.h): decoding NCCL's static layouts, and
// a spill whose NCCL range carries one, read into the model. Hand-made payloads; the layouts are
// NCCL 2.28's (src/include/nvtx_payload_schemas.h).
#include "importers/nccl/nccl_nvtx_payload.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "importers/ovspill/spill_reader.h"

namespace overlapscope::import {
using namespace ::overlapscope::formats;  // the record layouts the tests encode
namespace {

constexpr uint64_t kStatic = uint64_t{1} << 24;

// {uint64 comm, size_t bytes} then optional int32 fields at 16 and 20, padded to `size`.
std::string Payload(uint64_t comm, uint64_t bytes, size_t size, int32_t at16 = 0, int32_t at20 = 0) {
  std::string s(size, '\0');
  std::memcpy(s.data(), &comm, 8);
  std::memcpy(s.data() + 8, &bytes, 8);
  if (size >= 20) std::memcpy(s.data() + 16, &at16, 4);
  if (size >= 24) std::memcpy(s.data() + 20, &at20, 4);
  return s;
}

TEST(NcclNvtxPayload, DecodesNcclLayouts) {
  auto ag = DecodeNcclNvtxPayload(kStatic + 4, Payload(0xabc, 4096, 16));
  ASSERT_TRUE(ag.has_value());
  EXPECT_EQ(ag->func, "AllGather");
  EXPECT_EQ(ag->comm, 0xabcu);
  EXPECT_EQ(ag->message_bytes, 4096);
  EXPECT_EQ(ag->root_or_peer, -1);
  EXPECT_EQ(ag->redop, -1);
  // AllReduce: op at 16 (ncclMax = 2).
  auto ar = DecodeNcclNvtxPayload(kStatic + 5, Payload(7, 100, 24, 2));
  ASSERT_TRUE(ar.has_value());
  EXPECT_EQ(ar->redop, 2);
  EXPECT_EQ(NcclRedOpName(ar->redop), "max");
  // Reduce: root at 16, op at 20 (ncclAvg = 4).
  auto rd = DecodeNcclNvtxPayload(kStatic + 8, Payload(7, 100, 24, 3, 4));
  ASSERT_TRUE(rd.has_value());
  EXPECT_EQ(rd->root_or_peer, 3);
  EXPECT_EQ(NcclRedOpName(rd->redop), "avg");
  // Send: peer at 16.
  auto sd = DecodeNcclNvtxPayload(kStatic + 9, Payload(7, 64, 24, 1));
  ASSERT_TRUE(sd.has_value());
  EXPECT_EQ(sd->func, "Send");
  EXPECT_EQ(sd->root_or_peer, 1);
  // Not NCCL's layout: wrong size, a communicator-init schema, a dynamic schema id.
  EXPECT_FALSE(DecodeNcclNvtxPayload(kStatic + 4, Payload(1, 2, 24)).has_value());
  EXPECT_FALSE(DecodeNcclNvtxPayload(kStatic + 0, Payload(1, 2, 24)).has_value());
  EXPECT_FALSE(DecodeNcclNvtxPayload(4, Payload(1, 2, 16)).has_value());
  EXPECT_EQ(NcclRedOpName(9), "");
}

// One rank (1 of 2) with a copy-engine all-gather: NCCL range "ncclAllGather" [1000, 2000) on
// thread 100 (marker 2), cudaMemcpyBatchAsync (corr 30) inside it, two 4096-byte copies
// (device-to-device and peer). The range's payload says communicator 0xabcdef and a message of
// 3000 bytes per rank, so bytes = 3000 x 2 ranks = 6000 (the copies would say 8192).
std::string CeSpill(const std::string& payload) {
  std::string b;
  SpillEncoder::AppendFileHeader(&b);
  SpillEncoder::AppendString(&b, 1, "host-a");
  SpillEncoder::AppendString(&b, 2, "w");
  SpillEncoder::AppendString(&b, 3, "NCCL");
  SpillEncoder::AppendString(&b, 4, "ncclAllGather");
  SpillEncoder::AppendString(&b, 5, "cudaMemcpyBatchAsync");
  SpillEncoder::Append(&b, SpillType::kProcess, SpillProcess{4242, 1, 2, 0, 1, 2, 0});
  SpillEncoder::Append(&b, SpillType::kDevice, SpillDevice{0, 0, 0, 0});
  SpillEncoder::Append(&b, SpillType::kContext, SpillContext{1, 0, 7, 0});
  SpillEncoder::Append(&b, SpillType::kMarker, SpillMarker{1000, 2, 2, 2, 4242, 100, 4, 3});
  SpillEncoder::Append(&b, SpillType::kMarker, SpillMarker{2000, 4, 2, 2, 4242, 100, 0, 0});
  SpillNvtxPayload h{2, 1, kStatic + 4, static_cast<uint32_t>(payload.size()), 0};
  SpillEncoder::AppendRaw(&b, SpillType::kNvtxPayload, &h, sizeof(h), payload.data(), payload.size());
  SpillEncoder::Append(&b, SpillType::kApi, SpillApi{1100, 1200, 4242, 100, 30, 0, 0, 5, 0, {}});
  SpillEncoder::Append(&b, SpillType::kMemcpy,
                       SpillMemcpy{2500, 2600, 4096, 1, 0, 1, 20, 30, kNoId, kNoId, 8, 3, 3, 1, 0, {}});
  SpillEncoder::Append(&b, SpillType::kMemcpy,
                       SpillMemcpy{2600, 2700, 4096, 1, 0, 1, 20, 30, 0, 1, 10, 3, 3, 1, 1, {}});
  SpillEncoder::Append(&b, SpillType::kEnd, SpillEnd{3000, 0, 0});
  return SpillEncoder::Frame(b);
}

TEST(NcclNvtxPayload, CopyEngineCollectiveGetsCommunicatorAndSize) {
  model::TraceBuilder b;
  ASSERT_TRUE(ReadSpillBytes(CeSpill(Payload(0xabcdef, 3000, 16)), "ce.ovspill", b).ok());
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->collectives().size(), 1u);
  const model::Collective& c = t->collectives()[0];
  EXPECT_EQ(t->str(c.op), "AllGather");
  EXPECT_EQ(t->str(c.communicator), "nccl:0000000000abcdef");
  EXPECT_EQ(c.bytes, 6000);
  EXPECT_EQ(c.root_or_peer, model::kNone);
  EXPECT_EQ(t->sources()[0].Count(model::Stat::kNcclNvtxPayloads), 1);
  EXPECT_EQ(t->sources()[0].kept_by_category.at("nvtx extended payload (decoded for NCCL ranges)"), 1);
}

TEST(NcclNvtxPayload, PayloadInAnotherLayoutIsCountedNotGuessed) {
  model::TraceBuilder b;
  // 12 bytes: not AllGather's 16. The collective keeps what the copies say: 2 x 4096 bytes.
  ASSERT_TRUE(ReadSpillBytes(CeSpill(std::string(12, '\x01')), "ce.ovspill", b).ok());
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->collectives().size(), 1u);
  EXPECT_EQ(t->str(t->collectives()[0].communicator), "");
  EXPECT_EQ(t->collectives()[0].bytes, 8192);
  EXPECT_EQ(t->sources()[0].Count(model::Stat::kNcclNvtxUnknownLayout), 1);
}

}  // namespace
}  // namespace overlapscope::import
