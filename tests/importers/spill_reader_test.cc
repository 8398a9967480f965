// Spill reader on synthetic spill files (no GPU needed): joins, names, truncation, corruption.
#include "importers/ovspill/spill_reader.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "formats/block_framing.h"
#include "gtest/gtest.h"

namespace overlapscope::import {
using namespace ::overlapscope::formats;  // the record layouts the tests encode
namespace {

using model::MemcpyKind;
using model::MemoryKind;
using model::SyncKind;

// One small process: every expected number below follows from the records written here.
// `bytes` is the version 2 file (one block per record), `v1` the same records as version 1.
struct Fixture {
  std::string bytes, v1;
  void S(uint32_t id, const char* s) { SpillEncoder::AppendString(&bytes, id, s); }
  template <typename T>
  void R(SpillType t, const T& v) {
    SpillEncoder::Append(&bytes, t, v);
  }

  Fixture() {
    Records();
    v1 = SpillEncoder::Frame(bytes, 1);
    bytes = SpillEncoder::Frame(bytes);
  }
  void Records() {
    SpillEncoder::AppendFileHeader(&bytes);
    S(1, "host-a");
    S(2, "known_work");
    S(3, "_Z6kern_aPfi"); /* mangled, as CUPTI reports it */
    S(4, "cudaMemcpyAsync");
    S(5, "cudaMemcpy");
    S(8, "NCCL");
    S(9, "step");
    S(10, "ncclAllReduce");
    S(11, "NVIDIA H200");
    S(12, "cudaLaunchKernel");
    S(13, "cudaStreamWaitEvent");
    S(14, "cudaEventSynchronize");
    S(15, "main thread");
    R(SpillType::kProcess, SpillProcess{4242, 1, 2, 0, 1, 2, 0});
    R(SpillType::kDevice, SpillDevice{0, 11, 9, 0});
    R(SpillType::kContext, SpillContext{1, 0, 7, 0});
    // corr 10: launch on stream 13, kernel [2000,3000), external id 555.
    R(SpillType::kApi, SpillApi{1000, 1100, 4242, 100, 10, 211, 0, 12, 0, {}});
    SpillKernel k{};
    k.start = 2000, k.end = 3000, k.device = 0, k.context = 1, k.stream = 13, k.correlation = 10, k.name_sid = 3;
    k.grid[0] = 4, k.grid[1] = k.grid[2] = 1, k.block[0] = 128, k.block[1] = k.block[2] = 1;
    k.static_smem = 16, k.dynamic_smem = 48, k.registers = 32;
    R(SpillType::kKernel, k);
    R(SpillType::kExternalCorrelation, SpillExternalCorrelation{555, 10, 1});
    // A kernel CUPTI could not time (start 0): skipped and counted.
    SpillKernel bad = k;
    bad.start = 0, bad.correlation = 99;
    R(SpillType::kKernel, bad);
    // corr 11: cudaMemcpyAsync from pageable memory; CUPTI flags it async, the name says so too.
    R(SpillType::kApi, SpillApi{1200, 1300, 4242, 100, 11, 41, 0, 4, 0, {}});
    R(SpillType::kMemcpy, SpillMemcpy{3000, 3500, 4096, 1, 0, 1, 14, 11, kNoId, kNoId, 1, 1, 3, 1, 0, {}});
    // corr 12: synchronous cudaMemcpy DtoH into pinned memory.
    R(SpillType::kApi, SpillApi{1400, 5000, 4242, 100, 12, 31, 0, 5, 0, {}});
    R(SpillType::kMemcpy, SpillMemcpy{4000, 4800, 1 << 20, 1, 0, 1, 7, 12, kNoId, kNoId, 2, 3, 2, 0, 0, {}});
    // corr 13: one record for a cudaMemcpyBatchAsync batch of 3 copies (no API record: flag decides).
    R(SpillType::kMemcpy, SpillMemcpy{5000, 5600, 3 << 20, 3, 0, 1, 14, 13, kNoId, kNoId, 8, 3, 3, 1, 0, {}});
    // corr 14: peer copy GPU 0 -> GPU 1.
    R(SpillType::kMemcpy, SpillMemcpy{6000, 6400, 8192, 1, 0, 1, 14, 14, 0, 1, 10, 3, 3, 1, 1, {}});
    // Event 5 recorded on stream 13 (corr 20); stream 14 waits on it (corr 21); thread 101
    // waits for it on the host (corr 22); then a device-wide sync (corr 23, no API record).
    R(SpillType::kCudaEvent, SpillCudaEvent{20, 1, 13, 5, 0, 0, 77});
    R(SpillType::kApi, SpillApi{1500, 1510, 4242, 100, 21, 147, 0, 13, 0, {}});
    R(SpillType::kSync, SpillSync{1500, 1510, 2, 21, 1, 14, 5, 0, 77});
    R(SpillType::kApi, SpillApi{3100, 3600, 4242, 101, 22, 133, 0, 14, 0, {}});
    R(SpillType::kSync, SpillSync{3100, 3600, 1, 22, 1, kNoId, 5, 0, 77});
    R(SpillType::kSync, SpillSync{5000, 5900, 4, 23, 1, kNoId, kNoId, 0, ~uint64_t{0}});
    // NVTX: "step" [900,5100) on thread 100 encloses NCCL's "ncclAllReduce" [950,960); a third
    // range is still open when the file ends.
    R(SpillType::kMarker, SpillMarker{900, 2, 1, 2, 4242, 100, 9, 0});
    R(SpillType::kMarker, SpillMarker{950, 2, 2, 2, 4242, 100, 10, 8});
    R(SpillType::kMarker, SpillMarker{960, 4, 2, 2, 4242, 100, 0, 0});
    R(SpillType::kMarker, SpillMarker{5100, 4, 1, 2, 4242, 100, 0, 0});
    R(SpillType::kMarker, SpillMarker{5200, 2, 3, 2, 4242, 100, 9, 0});
    R(SpillType::kName, SpillName{2, 4242, 100, 15});
    R(SpillType::kStats, SpillStats{7, 3, 1000, 40, 2, 0});
    R(SpillType::kEnd, SpillEnd{7000, 0, 0});
  }
};

absl::StatusOr<model::Trace> Read(std::string_view bytes) {
  model::TraceBuilder b;
  absl::Status s = ReadSpillBytes(bytes, "mem.ovspill", b);
  if (!s.ok()) return s;
  return std::move(b).Finalize();
}

TEST(SpillReader, JoinsRecordsIntoModel) {
  Fixture f;
  auto t = Read(f.bytes);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->processes().size(), 1u);
  EXPECT_EQ(t->processes()[0].pid, 4242);
  EXPECT_EQ(t->processes()[0].rank, 1);
  EXPECT_EQ(t->processes()[0].world_size, 2);
  EXPECT_EQ(t->str(t->processes()[0].host), "host-a");
  EXPECT_EQ(t->str(t->processes()[0].name), "known_work");
  // Device 0 (named) and device 1 (peer destination only).
  ASSERT_EQ(t->devices().size(), 2u);
  EXPECT_EQ(t->str(t->devices()[0].name), "NVIDIA H200");

  ASSERT_EQ(t->kernels().size(), 1u);  // the untimed one is skipped
  const auto& k = t->kernels()[0];
  EXPECT_EQ(k.start_ns, 2000);
  EXPECT_EQ(k.end_ns, 3000);
  EXPECT_EQ(t->str(k.name), "kern_a(float*, int)");  // demangled
  EXPECT_EQ(k.external_id, 555);
  EXPECT_EQ(k.grid.x, 4);
  EXPECT_EQ(k.block.x, 128);
  EXPECT_EQ(k.shared_memory_bytes, 64);  // 16 static + 48 dynamic
  EXPECT_EQ(t->streams()[k.stream].native_id, 13);

  ASSERT_EQ(t->memcpys().size(), 4u);  // sorted by start: 3000, 4000, 5000, 6000
  const auto& h2d = t->memcpys()[0];
  EXPECT_EQ(h2d.kind, MemcpyKind::kHtoD);
  EXPECT_EQ(h2d.src_kind, MemoryKind::kPageable);
  EXPECT_EQ(h2d.dst_kind, MemoryKind::kDevice);
  EXPECT_EQ(h2d.is_async, 1);
  EXPECT_EQ(t->str(h2d.name), "Memcpy HtoD (Pageable -> Device)");
  const auto& d2h = t->memcpys()[1];
  EXPECT_EQ(d2h.kind, MemcpyKind::kDtoH);
  EXPECT_EQ(d2h.dst_kind, MemoryKind::kPinned);
  EXPECT_EQ(d2h.is_async, 0);
  EXPECT_EQ(d2h.bytes, 1 << 20);
  const auto& batch = t->memcpys()[2];
  EXPECT_EQ(t->str(batch.name), "Memcpy DtoD (Device -> Device) batch of 3");
  EXPECT_EQ(batch.is_async, 1);
  const auto& peer = t->memcpys()[3];
  EXPECT_EQ(peer.kind, MemcpyKind::kPtoP);
  ASSERT_NE(peer.dst_device, model::kNone);
  EXPECT_EQ(t->devices()[peer.dst_device].ordinal, 1);

  ASSERT_EQ(t->syncs().size(), 3u);  // by start: 1500 wait-event, 3100 event sync, 5000 ctx sync
  const auto& wait = t->syncs()[0];
  EXPECT_EQ(wait.kind, SyncKind::kStreamWaitEvent);
  EXPECT_EQ(t->streams()[wait.stream].native_id, 14);
  ASSERT_NE(wait.wait_on_stream, model::kNone);
  EXPECT_EQ(t->streams()[wait.wait_on_stream].native_id, 13);
  EXPECT_EQ(wait.event_id, 5);
  EXPECT_EQ(wait.event_record_correlation_id, 20);
  EXPECT_EQ(t->threads()[wait.thread].tid, 100);
  const auto& ev = t->syncs()[1];
  EXPECT_EQ(ev.kind, SyncKind::kEventSync);
  EXPECT_EQ(t->threads()[ev.thread].tid, 101);
  EXPECT_EQ(t->streams()[ev.stream].native_id, 13);  // the stream that recorded the event
  const auto& ctx = t->syncs()[2];
  EXPECT_EQ(ctx.kind, SyncKind::kContextSync);
  EXPECT_EQ(ctx.stream, model::kNone);
  EXPECT_EQ(ctx.thread, model::kNone);  // no API record for corr 23
  EXPECT_EQ(t->devices()[ctx.device].ordinal, 0);

  ASSERT_EQ(t->ranges().size(), 2u);
  EXPECT_EQ(t->str(t->ranges()[0].name), "step");
  EXPECT_EQ(t->ranges()[0].start_ns, 900);
  EXPECT_EQ(t->ranges()[0].end_ns, 5100);
  EXPECT_EQ(t->str(t->ranges()[1].name), "ncclAllReduce");
  EXPECT_EQ(t->str(t->ranges()[1].domain), "NCCL");
  EXPECT_EQ(t->ranges()[1].kind, model::RangeKind::kNvtx);

  EXPECT_EQ(t->api_calls().size(), 5u);
  EXPECT_EQ(t->str(t->threads()[t->api_calls()[0].thread].name), "main thread");
  ASSERT_EQ(t->sources().size(), 1u);
  const auto& st = t->sources()[0];
  EXPECT_EQ(st.Count(model::Stat::kCuptiDroppedRecords), 7);
  // Every record is accounted for: kept or skipped.
  EXPECT_EQ(st.events_read, st.events_kept + st.skipped());
  EXPECT_EQ(st.Count(model::Stat::kSpillBadTimestamps), 1);
  EXPECT_EQ(st.details.at({model::Stat::kSpillBadTimestamps, "kernel"}), 1);
  EXPECT_EQ(st.Count(model::Stat::kSpillNvtxOpen), 1);
  EXPECT_EQ(st.Count(model::Stat::kCuptiUnknownKinds), 2);
  EXPECT_EQ(st.Count(model::Stat::kCaptureNoEndRecord), 0);  // clean end
  // The version 1 file of the same records reads the same.
  auto t1 = Read(f.v1);
  ASSERT_TRUE(t1.ok()) << t1.status();
  EXPECT_EQ(t1->kernels().size(), t->kernels().size());
  EXPECT_EQ(t1->sources()[0].events_read, st.events_read);
}

TEST(SpillReader, EveryTruncationReadsOrFailsCleanly) {
  Fixture f;
  for (const std::string* file : {&f.bytes, &f.v1}) {
    int ok = 0;
    for (size_t n = 0; n < file->size(); ++n) {
      auto t = Read(std::string_view(*file).substr(0, n));
      if (n < kSpillFileHeaderBytes) {
        EXPECT_FALSE(t.ok()) << n;
        continue;
      }
      ASSERT_TRUE(t.ok()) << "prefix " << n << ": " << t.status();
      ++ok;
      ASSERT_EQ(t->sources().size(), 1u);
      EXPECT_EQ(t->sources()[0].Count(model::Stat::kCaptureNoEndRecord), 1) << n;  // always reported
    }
    EXPECT_EQ(ok, static_cast<int>(file->size() - kSpillFileHeaderBytes));
    // Cut one byte short: the end record is the truncated tail, everything else is kept.
    auto t = Read(std::string_view(*file).substr(0, file->size() - 1));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->kernels().size(), 1u);
    EXPECT_EQ(t->memcpys().size(), 4u);
    EXPECT_EQ(t->sources()[0].Count(model::Stat::kSpillTruncatedTail), 1);
    EXPECT_FALSE(model::ImportWarnings(t->sources()).empty());
  }
}

// Version 2: a corrupt length or payload in the middle of the file is an error naming the
// offset, never a "truncated tail" that drops the rest with exit 0 (what version 1 must do).
TEST(SpillReader, CorruptionInTheMiddleIsAnErrorInVersion2) {
  Fixture f;
  // The fourth block (a string record) starts after the header and three framed records.
  size_t block = kSpillFileHeaderBytes;
  for (int i = 0; i < 3; ++i) {
    uint32_t n;
    std::memcpy(&n, f.bytes.data() + block + 4, 4);
    block += kBlockHeaderBytes + n;
  }
  const std::string prefix = "mem.ovspill: offset " + std::to_string(block) + ": ";
  std::string bad = f.bytes;
  bad[block + 4] ^= 0x10;  // the block's length
  auto t = Read(bad);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(std::string(t.status().message()), prefix + "block header checksum mismatch (corrupt file)");
  bad = f.bytes;
  bad[block + kBlockHeaderBytes + 4] ^= 0x10;  // the record's own length, inside the payload
  t = Read(bad);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(std::string(t.status().message()), prefix + "block payload checksum mismatch (corrupt file)");
  // The same damage to a version-1 file (no checksums): a length running past the end with the
  // file's other records behind it is damage in the middle, not a cut: an error naming both.
  size_t rec = kSpillFileHeaderBytes;
  for (int i = 0; i < 3; ++i) {
    uint32_t n;
    std::memcpy(&n, f.v1.data() + rec + 4, 4);
    rec += kSpillRecordHeaderBytes + n;
  }
  std::string v1 = f.v1;
  v1[rec + 6] = '\x10';  // length 1 MiB + something: runs past the end
  t = Read(v1);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.status().message())
                .find("mem.ovspill: offset " + std::to_string(rec) +
                      ": record length runs past the end of the file, but valid records follow at offset "),
            std::string::npos)
      << t.status();
  // A real cut of the same file (fewer than a record's bytes left) stays a counted truncated tail.
  t = Read(f.v1.substr(0, rec + kSpillRecordHeaderBytes + 2));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->sources()[0].Count(model::Stat::kSpillTruncatedTail), 1);
}

TEST(SpillReader, RejectsForeignAndCorruptFiles) {
  auto t = Read("{\"traceEvents\": []}");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.status().message()).find("offset 0"), std::string::npos) << t.status();

  std::string bytes;
  SpillEncoder::AppendFileHeader(&bytes);
  bytes += std::string("\x03\0\0\0\xff\xff\xff\x7f", 8);  // kernel record claiming 2 GiB
  t = Read(SpillEncoder::Frame(bytes, 1));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.status().message()).find("offset 16"), std::string::npos) << t.status();
}

TEST(SpillReader, SkipsUnknownRecordTypesAndCountsThem) {
  std::string bytes;
  SpillEncoder::AppendFileHeader(&bytes);
  SpillEncoder::Append(&bytes, SpillType::kProcess, SpillProcess{7, -1, -1, 0, 0, 0, 0});
  const uint32_t payload = 0;
  SpillEncoder::AppendRaw(&bytes, static_cast<SpillType>(200), &payload, 4, nullptr, 0);
  SpillEncoder::Append(&bytes, SpillType::kApi, SpillApi{10, 20, 7, 7, 1, 1, 0, 0, 1, {}});
  SpillEncoder::Append(&bytes, SpillType::kEnd, SpillEnd{30, 0, 0});
  auto t = Read(SpillEncoder::Frame(bytes));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->sources()[0].details.at({model::Stat::kSpillUnknownRecord, "type 200"}), 1);
  ASSERT_EQ(t->api_calls().size(), 1u);
  EXPECT_EQ(t->api_calls()[0].kind, model::ApiKind::kDriver);
  EXPECT_EQ(t->str(t->api_calls()[0].name), "driver cbid 1");  // no name string: cbid shown
}

}  // namespace
}  // namespace overlapscope::import

namespace overlapscope::import {
using namespace ::overlapscope::formats;  // the record layouts the tests encode
namespace {

// Two ranks' files become two processes of one trace; devices and streams stay per process.
TEST(SpillReader, SeveralFilesAreSeveralProcesses) {
  const std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  std::vector<std::string> paths;
  for (int rank = 0; rank < 2; ++rank) {
    std::string bytes;
    SpillEncoder::AppendFileHeader(&bytes);
    SpillEncoder::Append(&bytes, SpillType::kProcess, SpillProcess{100 + rank, rank, 2, 0, 0, 0, 0});
    SpillEncoder::Append(&bytes, SpillType::kApi, SpillApi{10, 20, 0, 7, 1, 211, 0, 0, 0, {}});
    SpillKernel k{};
    k.start = 30 + rank, k.end = 40 + rank, k.stream = 7, k.correlation = 1;
    SpillEncoder::Append(&bytes, SpillType::kKernel, k);
    SpillEncoder::Append(&bytes, SpillType::kEnd, SpillEnd{50, 0, 0});
    paths.push_back(dir + "/spill_reader_test." + std::to_string(::getpid()) + ".rank" + std::to_string(rank) +
                    ".ovspill");
    bytes = SpillEncoder::Frame(bytes);
    FILE* f = std::fopen(paths.back().c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  auto t = ReadSpillFiles(paths);
  for (const auto& p : paths) std::remove(p.c_str());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->processes().size(), 2u);
  EXPECT_EQ(t->processes()[1].rank, 1);
  ASSERT_EQ(t->kernels().size(), 2u);
  EXPECT_NE(t->kernels()[0].device, t->kernels()[1].device);  // GPU 0 of each rank
  EXPECT_NE(t->kernels()[0].stream, t->kernels()[1].stream);
  // Each kernel finds its own rank's launch (correlation ids are per process).
  for (const auto& k : t->kernels()) {
    const auto* api = t->ApiCallByCorrelation(t->ProcessOfDevice(k.device), k.correlation_id);
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(t->ProcessOfThread(api->thread), t->ProcessOfDevice(k.device));
  }
  EXPECT_EQ(t->clock_note(), kSpillClockNote);
  EXPECT_EQ(t->sources().size(), 2u);

  auto missing = ReadSpillFiles({dir + "/does-not-exist.ovspill"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("does-not-exist.ovspill"), std::string::npos);
}

}  // namespace
}  // namespace overlapscope::import
