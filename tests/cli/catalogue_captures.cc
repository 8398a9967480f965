// Bad-input catalogue: corrupted `.ovspill` captures and `.ovnccl` plugin files (catalogue.h).
// The captures start from tests/data/capture/known_work_normal.ovspill (a real capture).
#include <cstring>
#include <string>
#include <vector>

#include "catalogue.h"
#include "formats/ovnccl_format.h"
#include "formats/spill_records.h"
#include "ovnccl_writer.h"

namespace overlapscope::testing {
namespace {

std::string Spill() { return ReadFile(DataDir() + "/capture/known_work_normal.ovspill"); }

// Byte offsets of the records of a spill file.
std::vector<size_t> RecordOffsets(const std::string& s) {
  std::vector<size_t> v;
  for (size_t off = formats::kSpillFileHeaderBytes; off + formats::kSpillRecordHeaderBytes <= s.size();) {
    uint32_t n;
    std::memcpy(&n, s.data() + off + 4, 4);
    v.push_back(off);
    off += formats::kSpillRecordHeaderBytes + n;
  }
  return v;
}

void SetLength(std::string& s, size_t record_offset, uint32_t n) { std::memcpy(&s[record_offset + 4], &n, 4); }

int64_t PidOf(const std::string& s) {
  for (size_t off : RecordOffsets(s))
    if (static_cast<uint8_t>(s[off]) == static_cast<uint8_t>(formats::SpillType::kProcess)) {
      formats::SpillProcess p;
      std::memcpy(&p, s.data() + off + formats::kSpillRecordHeaderBytes, sizeof p);
      return p.pid;
    }
  return -1;
}

CatalogueCase SpillCase(std::string id, std::string bytes, int code, std::string msg, std::string pending = "") {
  CatalogueCase c;
  c.name = std::move(id);
  c.setup = [bytes](const std::string& dir) {
    WriteFile(dir + "/rank0.ovspill", bytes);
    return std::vector<std::string>{"info", dir + "/rank0.ovspill"};
  };
  c.exit_code = code;
  c.message = std::move(msg);
  c.in_stdout = code == 0;
  c.pending = std::move(pending);
  return c;
}

// The capture with a plugin file `nccl` next to it (as `overlapscope profile` leaves it).
CatalogueCase PluginCase(std::string id, std::string nccl, int code, std::string msg, std::string pending = "") {
  CatalogueCase c;
  c.name = std::move(id);
  c.setup = [nccl](const std::string& dir) {
    const std::string s = Spill();
    WriteFile(dir + "/rank0.ovspill", s);
    WriteFile(dir + "/nccl." + std::to_string(PidOf(s)) + ".ovnccl", nccl);
    return std::vector<std::string>{"info", dir};
  };
  c.exit_code = code;
  c.message = std::move(msg);
  c.in_stdout = code == 0;
  c.pending = std::move(pending);
  return c;
}

}  // namespace

std::vector<CatalogueCase> CaptureCases() {
  const std::string s = Spill();
  const std::vector<size_t> rec = RecordOffsets(s);
  std::vector<CatalogueCase> v = {
      SpillCase("SpillEmpty", "", 2, "$DIR/rank0.ovspill: offset 0: not an overlapscope spill file"),
      SpillCase("SpillBadMagic", "OVSPILL9" + s.substr(8), 2, "$DIR/rank0.ovspill: offset 0: not an overlapscope"),
      SpillCase("SpillHeaderCut", s.substr(0, 10), 2, "$DIR/rank0.ovspill: offset 0: not an overlapscope"),
      SpillCase("SpillJsonNamedOvspill", KinetoDoc(KernelEvent("\"k\"")), 2, "$DIR/rank0.ovspill: offset 0: "),
  };
  std::string version = s;
  version[8] = 7;
  v.push_back(SpillCase("SpillUnknownVersion", version, 2, "$DIR/rank0.ovspill: offset 8: spill format version 7"));
  // Cut inside the last record: what a killed process leaves; kept, counted.
  v.push_back(SpillCase("SpillTruncatedTail", s.substr(0, s.size() - 3), 0, "spill_truncated_tail"));
  // A length far past the end in the middle of the file is corruption, not a cut-off tail.
  std::string huge = s;
  SetLength(huge, rec[rec.size() / 2], 0xfffffff0u);
  v.push_back(SpillCase("SpillHugeLengthMidFile", huge, 2, "$DIR/rank0.ovspill: offset "));
  // A length that reaches just past the end, in the middle of the file: read as a cut-off tail
  // today, dropping every later record; it is corruption and must say so.
  std::string shifted = s;
  const size_t mid = rec[rec.size() / 3];
  SetLength(shifted, mid, static_cast<uint32_t>(s.size() - mid));
  v.push_back(SpillCase("SpillLengthPastEndMidFile", shifted, 2, "but valid records follow at offset"));
  std::string zero = s;
  SetLength(zero, rec[rec.size() / 2], 0);  // the framing goes off the rails at the next record
  v.push_back(SpillCase("SpillZeroLengthMidFile", zero, 2, "(corrupt file)"));
  std::string flipped = s;
  flipped[rec[rec.size() / 2] + formats::kSpillRecordHeaderBytes + 3] ^= 0x40;  // a payload byte
  // Version 1 has no checksums: a changed payload byte is found only where it breaks a record's
  // meaning (here an API call's times are reversed: warned, counted). Undetectable in general by
  // construction; version 2 (every capture this build writes) makes it an error (next case).
  v.push_back(SpillCase("SpillFlippedPayloadByte", flipped, 0, "rank0.ovspill: 1 x spill_bad_timestamps"));
  // The same capture as a version-2 writer frames it (checksummed blocks, one per record): any
  // damaged byte in the middle is an error with its offset; a cut is a counted truncated tail.
  const std::string v2 = formats::SpillEncoder::Frame(s);
  std::string v2flip = v2;
  v2flip[v2.size() / 2] ^= 0x40;
  v.push_back(SpillCase("SpillV2FlippedByteMidFile", v2flip, 2, "$DIR/rank0.ovspill: offset "));
  v.push_back(SpillCase("SpillV2TruncatedTail", v2.substr(0, v2.size() - 3), 0, "spill_truncated_tail"));
  std::string type = s;
  type[rec[rec.size() / 2]] = static_cast<char>(200);  // an unknown record type: counted, skipped
  v.push_back(SpillCase("SpillUnknownRecordType", type, 0, "spill_unknown_record"));
  {
    CatalogueCase c;
    c.name = "SpillSameRankTwice";
    c.setup = [s](const std::string& dir) {
      WriteFile(dir + "/rank0.ovspill", s);
      WriteFile(dir + "/rank1.ovspill", s);
      return std::vector<std::string>{"info", dir};
    };
    c.exit_code = 2;
    c.message = "already comes from";
    v.push_back(c);
  }
  // Plugin files: an unreadable one does not fail the capture, it is reported.
  testing::OvncclWriter w;
  w.Process(PidOf(s)).Comm(1, 0xabc, 2, 1);
  w.Api(1, 0, 1, formats::kTypeCollApi, 1000, 11, "AllGather", 8, "ncclFloat32", 0).Stop(1, 2000);
  const std::string good = w.bytes();
  v.push_back(PluginCase("PluginBadMagic", "OVNCCL99" + good.substr(8), 0, "nccl_plugin_unreadable"));
  v.push_back(PluginCase("PluginEmpty", "", 0, "nccl_plugin_unreadable"));
  v.push_back(PluginCase("PluginTruncatedTail", good.substr(0, good.size() - 5), 0, "ovnccl_truncated_tail"));
  std::string plen = good;
  // Damage in the first block's header (the writer frames version 2): corruption, reported with
  // its offset; the capture itself still reads (exit 0, its NCCL details missing).
  plen[16 + 2] = static_cast<char>(0xff), plen[16 + 3] = static_cast<char>(0xff);
  v.push_back(PluginCase("PluginCorruptLength", plen, 0,
                         "nccl.560.ovnccl: offset 16: no block header where one must start (corrupt file)"));
  return v;
}

}  // namespace overlapscope::testing
