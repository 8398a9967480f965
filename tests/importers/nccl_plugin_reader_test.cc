// The .ovnccl reader on hand-written files: a valid file, every truncation, bad magic/version,
// unknown record kinds, stops without starts.
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "gtest/gtest.h"
#include "importers/nccl/nccl_plugin_records.h"
#include "ovnccl_writer.h"
#include "test_util.h"

namespace overlapscope::import {
using namespace ::overlapscope::formats;  // the record layouts the tests encode
namespace {

using formats::kTypeCollApi;
using formats::kTypeGroupApi;
using ::overlapscope::testing::OvncclWriter;

// One all-gather of 1024 fp16 elements per rank on a 2-rank communicator, with two kernel
// channels: 12 records. Records end at these byte offsets (header 16, record header 8):
// process 8+24, comm 8+40+4 ("tp:0"), api 8+112 (x2), coll 8+136, 2x (chstart 8+48,
// chstop 8+24), 3x stop 8+24.
// Version 2 (the default) puts process and communicator in a first block, the rest in a second.
OvncclWriter ValidFile(uint32_t version = formats::kOvncclVersion) {
  OvncclWriter w(version);
  w.Process(4242).Comm(1, 0xabc, 2, 1, "tp:0").Flush();
  w.Api(1, 0, 1, kTypeGroupApi, 1050, 11).Api(2, 1, 1, kTypeCollApi, 1100, 11, "AllGather", 1024, "ncclFloat16", 0);
  w.Coll(3, 2, 1, 1400, 11, "AllGather", 1024, "ncclFloat16", 7, 2, "RING", "SIMPLE", 1);
  w.ChStart(4, 3, 900000, 0).ChStop(4, 905000).ChStart(5, 3, 900300, 1).ChStop(5, 905400);
  w.Stop(3, 1500, 11).Stop(2, 1800, 11).Stop(1, 1900, 11);
  return w;
}

TEST(NcclPluginReader, ValidFile) {
  OvncclWriter w = ValidFile();
  ASSERT_EQ(w.records(), 12);
  auto f = ParseNcclPluginBytes(w.bytes(), "nccl.4242.ovnccl");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->pid, 4242);
  ASSERT_EQ(f->comms.size(), 1u);
  EXPECT_EQ(f->comms[0].comm_id, 0xabcu);
  EXPECT_EQ(f->comms[0].name, "tp:0");
  EXPECT_EQ(f->comms[0].nranks, 2);
  EXPECT_EQ(f->comms[0].rank, 1);
  ASSERT_EQ(f->apis.size(), 2u);
  EXPECT_EQ(f->apis[1].func, "AllGather");
  EXPECT_EQ(f->apis[1].start_ns, 1100);
  EXPECT_EQ(f->apis[1].end_ns, 1800);
  EXPECT_EQ(f->apis[1].parent, 1u);
  ASSERT_EQ(f->colls.size(), 1u);
  const NcclPluginColl& c = f->colls[0];
  EXPECT_EQ(c.seq, 7);
  EXPECT_EQ(c.algo, "RING");
  EXPECT_EQ(c.proto, "SIMPLE");
  EXPECT_EQ(c.end_ns, 1500);
  EXPECT_EQ(c.channels_started, 2);
  EXPECT_EQ(c.channels_stopped, 2);
  EXPECT_EQ(c.channel_first_start, 900000);  // min(900000, 900300)
  EXPECT_EQ(c.channel_last_stop, 905400);    // max(905000, 905400)
  EXPECT_EQ(f->stats.events_read, 12);
  EXPECT_EQ(f->stats.events_kept, 12);
  EXPECT_EQ(f->stats.skipped(), 0);
  // What `overlapscope info` lists per kind: the process record, the communicator, two API
  // starts, one collective start, three stops, two channels of a start and a stop each.
  const absl::btree_map<std::string, int64_t> kept = {
      {"api start", 2}, {"collective start", 1},       {"communicator", 1},
      {"stop", 3},      {"kernel channel records", 4}, {"metadata records", 1}};
  EXPECT_EQ(f->stats.kept_by_category, kept);
}

TEST(NcclPluginReader, Version1TruncatedAtEveryByte) {
  const std::string full = ValidFile(1).bytes();
  // Record end offsets, from the sizes listed at ValidFile().
  std::vector<size_t> ends;
  size_t off = 16;
  for (size_t n : {24, 44, 112, 112, 136, 48, 24, 48, 24, 24, 24, 24}) ends.push_back(off += 8 + n);
  ASSERT_EQ(ends.back(), full.size());  // 16 + 12 * 8 + 644 = 756
  for (size_t cut = 0; cut < full.size(); ++cut) {
    auto f = ParseNcclPluginBytes(full.substr(0, cut), "cut");
    if (cut < 16) {
      ASSERT_FALSE(f.ok()) << cut;
      EXPECT_NE(std::string(f.status().message()).find("cut: offset 0"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(f.ok()) << "cut at " << cut << ": " << f.status();
    int64_t complete = 0;
    for (size_t e : ends) complete += e <= cut;
    const bool on_boundary = cut == 16 || std::find(ends.begin(), ends.end(), cut) != ends.end();
    EXPECT_EQ(f->stats.events_read, complete) << cut;
    EXPECT_EQ(f->stats.Count(model::Stat::kOvncclTruncatedTail), on_boundary ? 0 : 1) << cut;
  }
}

// Version 2: blocks of 16 + 84 bytes (process, communicator) and 16 + 656 bytes (the rest). A
// cut anywhere is a counted truncated tail that keeps the complete blocks; never an error.
TEST(NcclPluginReader, Version2TruncatedAtEveryByte) {
  const std::string full = ValidFile().bytes();
  ASSERT_EQ(full.size(), 16u + 16 + 84 + 16 + 656);
  for (size_t cut = 16; cut < full.size(); ++cut) {
    auto f = ParseNcclPluginBytes(full.substr(0, cut), "cut");
    ASSERT_TRUE(f.ok()) << "cut at " << cut << ": " << f.status();
    const int64_t complete = cut >= 116 ? 2 : 0;
    EXPECT_EQ(f->stats.events_read, complete) << cut;
    EXPECT_EQ(f->stats.Count(model::Stat::kOvncclTruncatedTail), cut == 16 || cut == 116 ? 0 : 1) << cut;
  }
}

// Version 2: a damaged length or payload in the middle of the file is an error naming the
// block's offset, not a "truncated tail" that silently drops the rest.
TEST(NcclPluginReader, Version2CorruptionIsAnError) {
  const std::string full = ValidFile().bytes();
  struct Case {
    size_t at;
    const char* message;
  };
  for (const Case& c : {Case{16 + 4, "x: offset 16: block header checksum mismatch (corrupt file)"},
                        Case{16 + 16 + 40, "x: offset 16: block payload checksum mismatch (corrupt file)"},
                        Case{116 + 5, "x: offset 116: block header checksum mismatch (corrupt file)"},
                        Case{116, "x: offset 116: no block header where one must start (corrupt file)"}}) {
    std::string bad = full;
    bad[c.at] = static_cast<char>(bad[c.at] ^ 0x40);
    auto f = ParseNcclPluginBytes(bad, "x");
    ASSERT_FALSE(f.ok()) << c.at;
    EXPECT_EQ(std::string(f.status().message()), c.message);
  }
  // Version 1 files cannot tell: the same damage to a record length reads as a cut tail.
  std::string v1 = ValidFile(1).bytes();
  v1[16 + 32 + 2] = '\x7f';  // the communicator record's payload_bytes
  auto f = ParseNcclPluginBytes(v1, "v1");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->stats.Count(model::Stat::kOvncclTruncatedTail), 1);
}

TEST(NcclPluginReader, WrongMagicAndVersion) {
  std::string bad = ValidFile().bytes();
  bad[0] = 'X';
  auto f = ParseNcclPluginBytes(bad, "a.ovnccl");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(f.status().message()).find("a.ovnccl: offset 0: not an overlapscope NCCL plugin file"),
            std::string::npos);
  OvncclWriter v3(3);
  v3.Process(1);
  f = ParseNcclPluginBytes(v3.bytes(), "b.ovnccl");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(std::string(f.status().message()).find("b.ovnccl: offset 8: NCCL plugin file version 3"),
            std::string::npos);
}

TEST(NcclPluginReader, UnknownKindsAndOrphansAreCounted) {
  OvncclWriter w;
  w.Process(7);
  w.Rec(static_cast<OvncclWriter::K>(99), formats::OvncclStop{1, 2, 3});  // a kind from the future
  w.Stop(55, 100);                                                        // stop of an event never started
  w.ChStop(66, 5);                                                        // channel stop without start
  w.ChStart(67, 1234, 10, 0);                                             // channel of an unknown collective
  auto f = ParseNcclPluginBytes(w.bytes(), "x");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->stats.events_read, 5);
  EXPECT_EQ(import::testing::DetailOf(f->stats, model::Stat::kOvncclUnknownRecord, "kind 99"), 1);
  EXPECT_EQ(import::testing::DetailOf(f->stats, model::Stat::kOvncclBadRecord, "stop without start"), 1);
  EXPECT_EQ(import::testing::DetailOf(f->stats, model::Stat::kOvncclBadRecord, "kernel channel stop without start"), 1);
  EXPECT_EQ(
      import::testing::DetailOf(f->stats, model::Stat::kOvncclBadRecord, "kernel channel of an unknown collective"), 1);
  EXPECT_EQ(f->stats.events_kept, 1);  // the process record
}

TEST(NcclPluginReader, SizesAsNcclTestsCountThem) {
  int64_t in = 0, out = 0;
  NcclElements("AllGather", 1024, 4, in, out);
  EXPECT_EQ(in, 1024);
  EXPECT_EQ(out, 4096);
  NcclElements("ReduceScatter", 1024, 4, in, out);
  EXPECT_EQ(in, 4096);
  EXPECT_EQ(out, 1024);
  NcclElements("AlltoAll", 100, 2, in, out);
  EXPECT_EQ(in, 200);
  EXPECT_EQ(out, 200);
  NcclElements("AllReduce", 10, 8, in, out);
  EXPECT_EQ(in, 10);
  EXPECT_EQ(out, 10);
  NcclElements("Bogus", 10, 8, in, out);
  EXPECT_EQ(in, -1);
  EXPECT_EQ(NcclDtypeName("ncclBfloat16"), "bfloat16");
  EXPECT_EQ(NcclDtypeBytes("ncclFloat16"), 2);
  EXPECT_EQ(NcclDtypeBytes("Unknown"), 0);
}

}  // namespace
}  // namespace overlapscope::import
