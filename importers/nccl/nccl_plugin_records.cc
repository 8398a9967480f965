// Parsing the NCCL profiler plugin's .ovnccl file (see nccl_plugin_records.h).
#include "importers/nccl/nccl_plugin_records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "formats/block_framing.h"
#include "formats/ovnccl_format.h"
#include "importers/open_file.h"
#include "model/bounds.h"

namespace overlapscope::import {
namespace {

using namespace formats;  // the format's structs and constants

template <typename T>
T Decode(const char* p, uint32_t n) {
  T t;
  std::memset(&t, 0, sizeof(T));
  std::memcpy(&t, p, std::min<size_t>(n, sizeof(T)));
  return t;
}

// NUL-padded fixed field -> string.
template <size_t N>
std::string Field(const char (&f)[N]) {
  return std::string(f, strnlen(f, N));
}

struct Channel {
  uint64_t parent = 0;
  int64_t start = -1, stop = -1;
};

// What a kept record became. The parser counts by id (an array) and names the counts once, in
// Finish, as SourceStats::kept_by_category: `overlapscope info` prints these names.
enum class Kept : uint8_t { kMetadata, kCommunicator, kApiStart, kCollStart, kStop, kChannelRecord, kCount };
constexpr std::string_view kKeptNames[] = {"metadata records", "communicator", "api start",
                                           "collective start", "stop",         "kernel channel records"};
static_assert(std::size(kKeptNames) == static_cast<size_t>(Kept::kCount));

// Decodes the records of one plugin file into an NcclPluginFile, then pairs stops with starts.
class PluginParser {
 public:
  PluginParser(NcclPluginFile& f, const std::string& path) : f_(f), st_(f.stats), path_(path) {}

  // Records of bytes[from, to): `framed` (version 2) means one verified block, where a record
  // crossing the end is damage (an error); unframed (version 1) it is the cut end of the file.
  absl::Status Records(std::string_view bytes, size_t from, size_t to, bool framed) {
    size_t off = from;
    while (off < to) {
      OvncclRecordHeader h{};
      const size_t left = to - off;
      if (left >= kOvncclRecordHeaderBytes) std::memcpy(&h, bytes.data() + off, sizeof(h));
      if (left < kOvncclRecordHeaderBytes || left - kOvncclRecordHeaderBytes < h.payload_bytes) {
        if (framed)
          return absl::InvalidArgumentError(
              absl::StrCat(path_, ": offset ", off, ": record crosses the end of its block (corrupt file)"));
        st_.Skip(model::Stat::kOvncclTruncatedTail, {},
                 absl::StrCat("offset ", off, ": record cut off by end of file"));
        return absl::OkStatus();
      }
      ++st_.events_read;
      Record(h.kind, bytes.data() + off + kOvncclRecordHeaderBytes, h.payload_bytes, off);
      off += kOvncclRecordHeaderBytes + h.payload_bytes;
    }
    return absl::OkStatus();
  }

  // Version 2 body: checksummed blocks (formats/block_framing.h).
  absl::Status Blocks(std::string_view bytes) {
    size_t off = kOvncclFileHeaderBytes;
    while (off < bytes.size()) {
      uint32_t n = 0;
      const char* reason = nullptr;
      switch (CheckBlock(bytes.data() + off, bytes.size() - off, &n, &reason)) {
        case BlockCheck::kCorrupt:
          return absl::InvalidArgumentError(absl::StrCat(path_, ": offset ", off, ": ", reason));
        case BlockCheck::kTruncated:
          st_.Skip(model::Stat::kOvncclTruncatedTail, {},
                   absl::StrCat("offset ", off, ": block cut off by end of file"));
          return absl::OkStatus();
        case BlockCheck::kOk: break;
      }
      const size_t body = off + kBlockHeaderBytes;
      if (absl::Status s = Records(bytes, body, body + n, /*framed=*/true); !s.ok()) return s;
      off = body + n;
    }
    return absl::OkStatus();
  }

  void Finish();

 private:
  bool Short(const char* what, uint32_t n, size_t need, size_t off) {
    if (n >= need) return false;
    st_.Skip(model::Stat::kOvncclShortRecord, what,
             absl::StrCat("offset ", off, ": ", what, " payload ", n, " < ", need));
    return true;
  }
  void Keep(Kept k) { ++kept_[static_cast<size_t>(k)]; }
  void Bad(const char* reason, std::string example) {
    st_.Skip(model::Stat::kOvncclBadRecord, reason, std::move(example));
  }
  void Record(uint16_t kind, const char* p, uint32_t n, size_t off);
  void Comm(const char* p, uint32_t n, size_t off);
  void ApiStart(const char* p, uint32_t n, size_t off);
  void CollStart(const char* p, uint32_t n, size_t off);

  NcclPluginFile& f_;
  model::SourceStats& st_;
  const std::string& path_;
  absl::flat_hash_map<uint64_t, size_t> api_of_, coll_of_;  // event id -> index
  absl::flat_hash_map<uint64_t, Channel> channels_;
  std::vector<std::pair<OvncclStop, size_t>> stops_;  // with their offsets
  std::vector<std::pair<OvncclKernelChStop, size_t>> ch_stops_;
  std::array<int64_t, static_cast<size_t>(Kept::kCount)> kept_{};
};

void PluginParser::Record(uint16_t kind, const char* p, uint32_t n, size_t off) {
  switch (static_cast<OvncclKind>(kind)) {
    case OvncclKind::kProcess:
      if (Short("process", n, sizeof(OvncclProcess), off)) break;
      f_.pid = Decode<OvncclProcess>(p, n).pid;
      Keep(Kept::kMetadata);
      break;
    case OvncclKind::kComm: Comm(p, n, off); break;
    case OvncclKind::kCommEnd:
    case OvncclKind::kStats:
      if (static_cast<OvncclKind>(kind) == OvncclKind::kStats && n >= sizeof(OvncclStats)) {
        const auto s = Decode<OvncclStats>(p, n);
        // Unsigned counters of the file: above INT64_MAX only in a damaged one; clamp, never wrap.
        auto count = [](uint64_t v) { return static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX)); };
        f_.plugin_dropped = count(s.records_dropped);
        f_.plugin_internal_errors = count(s.internal_errors);
        f_.plugin_write_errors = count(s.write_errors);
      }
      Keep(Kept::kMetadata);
      break;
    case OvncclKind::kApiStart: ApiStart(p, n, off); break;
    case OvncclKind::kCollStart: CollStart(p, n, off); break;
    case OvncclKind::kKernelChStart: {
      if (Short("kernel channel start", n, sizeof(OvncclKernelChStart), off)) break;
      const auto r = Decode<OvncclKernelChStart>(p, n);
      Channel& ch = channels_[r.id];
      ch.parent = r.parent, ch.start = static_cast<int64_t>(r.ptimer_ns);
      break;
    }
    case OvncclKind::kKernelChStop:
      if (Short("kernel channel stop", n, sizeof(OvncclKernelChStop), off)) break;
      ch_stops_.emplace_back(Decode<OvncclKernelChStop>(p, n), off);
      break;
    case OvncclKind::kStop:
      if (Short("stop", n, sizeof(OvncclStop), off)) break;
      stops_.emplace_back(Decode<OvncclStop>(p, n), off);
      break;
    default:
      st_.Skip(model::Stat::kOvncclUnknownRecord, absl::StrCat("kind ", kind),
               absl::StrCat("offset ", off, ": record kind ", kind));
      break;
  }
}

void PluginParser::Comm(const char* p, uint32_t n, size_t off) {
  if (Short("communicator", n, sizeof(OvncclComm), off)) return;
  const auto c = Decode<OvncclComm>(p, n);
  if (c.name_bytes > n - sizeof(OvncclComm))
    return Bad("communicator name longer than its record", absl::StrCat("offset ", off));
  f_.comms.push_back(
      {c.context, c.comm_id, c.nnodes, c.nranks, c.rank, std::string(p + sizeof(OvncclComm), c.name_bytes), c.host_ns});
  Keep(Kept::kCommunicator);
}

void PluginParser::ApiStart(const char* p, uint32_t n, size_t off) {
  if (Short("api start", n, sizeof(OvncclApiStart), off)) return;
  const auto r = Decode<OvncclApiStart>(p, n);
  NcclPluginApi a;
  a.id = r.id, a.parent = r.parent, a.context = r.context, a.type = r.type, a.start_ns = r.host_ns;
  a.tid = r.tid, a.root = r.root, a.count = r.count, a.stream = r.stream, a.ordinal = r.ordinal;
  a.graph_captured = r.graph_captured != 0, a.func = Field(r.func), a.dtype = Field(r.dtype);
  if (!api_of_.try_emplace(r.id, f_.apis.size()).second)
    return Bad("duplicate event id", absl::StrCat("offset ", off, ": event ", r.id));
  f_.apis.push_back(std::move(a));
  Keep(Kept::kApiStart);
}

void PluginParser::CollStart(const char* p, uint32_t n, size_t off) {
  if (Short("collective start", n, sizeof(OvncclCollStart), off)) return;
  const auto r = Decode<OvncclCollStart>(p, n);
  NcclPluginColl c;
  c.id = r.id, c.parent = r.parent, c.context = r.context, c.type = r.type, c.start_ns = r.host_ns;
  c.tid = r.tid, c.rank = r.rank, c.root_or_peer = r.root_or_peer, c.seq = r.seq, c.count = r.count;
  c.nchannels = r.nchannels, c.nwarps = r.nwarps, c.func = Field(r.func), c.dtype = Field(r.dtype);
  c.algo = Field(r.algo), c.proto = Field(r.proto);
  if (!coll_of_.try_emplace(r.id, f_.colls.size()).second)
    return Bad("duplicate event id", absl::StrCat("offset ", off, ": event ", r.id));
  f_.colls.push_back(std::move(c));
  Keep(Kept::kCollStart);
}

void PluginParser::Finish() {
  // Pair stops with starts by id (threads' records interleave in any order).
  for (const auto& [s, at] : stops_) {
    if (auto it = api_of_.find(s.id); it != api_of_.end()) {
      f_.apis[it->second].end_ns = s.host_ns;
      Keep(Kept::kStop);
    } else if (auto jt = coll_of_.find(s.id); jt != coll_of_.end()) {
      f_.colls[jt->second].end_ns = s.host_ns;
      Keep(Kept::kStop);
    } else {
      Bad("stop without start", absl::StrCat("offset ", at, ": event ", s.id));
    }
  }
  for (const auto& [s, at] : ch_stops_) {
    auto it = channels_.find(s.id);
    if (it == channels_.end() || !coll_of_.contains(it->second.parent)) {
      Bad("kernel channel stop without start", absl::StrCat("offset ", at, ": event ", s.id));
      continue;
    }
    it->second.stop = static_cast<int64_t>(s.ptimer_ns);
  }
  for (const auto& [id, ch] : channels_) {
    auto it = coll_of_.find(ch.parent);
    if (it == coll_of_.end()) {
      Bad("kernel channel of an unknown collective", absl::StrCat("event ", id, " parent ", ch.parent));
      continue;
    }
    NcclPluginColl& c = f_.colls[it->second];
    ++c.channels_started;
    if (c.channel_first_start < 0 || ch.start < c.channel_first_start) c.channel_first_start = ch.start;
    Keep(Kept::kChannelRecord);
    if (ch.stop >= 0) {
      ++c.channels_stopped;
      c.channel_last_stop = std::max(c.channel_last_stop, ch.stop);
      Keep(Kept::kChannelRecord);
    } else {
      st_.Add(model::Stat::kOvncclOpenEvent, 1, "kernel channel without GPU end time");
    }
  }
  // Still used (their start says what and when); the process ended before NCCL stopped them.
  for (const auto& a : f_.apis)
    if (a.end_ns < 0) st_.Add(model::Stat::kOvncclOpenEvent, 1, "api event without stop record");
  for (const auto& c : f_.colls)
    if (c.end_ns < 0) st_.Add(model::Stat::kOvncclOpenEvent, 1, "collective event without stop record");
  if (f_.plugin_dropped) st_.Add(model::Stat::kOvncclPluginErrors, f_.plugin_dropped, "records dropped (rings full)");
  if (f_.plugin_internal_errors)
    st_.Add(model::Stat::kOvncclPluginErrors, f_.plugin_internal_errors, "internal errors (recording stopped)");
  if (f_.plugin_write_errors)
    st_.Add(model::Stat::kOvncclPluginErrors, f_.plugin_write_errors, "write errors (recording stopped)");
  for (size_t k = 0; k < kept_.size(); ++k) {
    if (kept_[k] == 0) continue;  // only kinds that occurred are listed
    st_.kept_by_category[std::string(kKeptNames[k])] += kept_[k];
    st_.events_kept += kept_[k];
  }
}

}  // namespace

std::string NcclPluginFileNextTo(const std::string& spill_path, int64_t pid) {
  const size_t slash = spill_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : spill_path.substr(0, slash);
  return absl::StrCat(dir, "/nccl.", pid, ".ovnccl");
}

absl::StatusOr<NcclPluginFile> ParseNcclPluginBytes(std::string_view bytes, const std::string& path) {
  if (bytes.size() < kOvncclFileHeaderBytes || std::memcmp(bytes.data(), kOvncclMagic, sizeof(kOvncclMagic)) != 0)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": offset 0: not an overlapscope NCCL plugin file (magic OVNCCL01 missing)"));
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, sizeof(version));
  if (version != 1 && version != 2)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": offset 8: NCCL plugin file version ", version, ", this build reads versions 1 and 2"));
  NcclPluginFile f;
  f.path = path;
  f.stats.path = path;
  f.stats.format = "nccl-plugin";
  f.stats.bytes = static_cast<int64_t>(bytes.size());
  PluginParser parser(f, path);
  absl::Status s = version == 1 ? parser.Records(bytes, kOvncclFileHeaderBytes, bytes.size(), /*framed=*/false)
                                : parser.Blocks(bytes);
  if (!s.ok()) return s;
  parser.Finish();
  return f;
}

absl::StatusOr<NcclPluginFile> ReadNcclPluginFile(const std::string& path) {
  auto opened = OpenRegularFile(path);  // a FIFO would block: an error instead
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
  std::string buf;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return absl::InternalError(absl::StrCat(path, ": offset ", buf.size(), ": read failed: ", std::strerror(e)));
    }
    if (n == 0) break;
    buf.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return ParseNcclPluginBytes(buf, path);
}

std::string NcclDtypeName(std::string_view d) {
  static const std::pair<const char*, const char*> kNames[] = {{"ncclInt8", "int8"},
                                                               {"ncclUint8", "uint8"},
                                                               {"ncclInt32", "int32"},
                                                               {"ncclUint32", "uint32"},
                                                               {"ncclInt64", "int64"},
                                                               {"ncclUint64", "uint64"},
                                                               {"ncclFloat16", "float16"},
                                                               {"ncclFloat32", "float32"},
                                                               {"ncclFloat64", "float64"},
                                                               {"ncclBfloat16", "bfloat16"},
                                                               {"ncclFloat8e4m3", "float8_e4m3fn"},
                                                               {"ncclFloat8e5m2", "float8_e5m2"}};
  for (const auto& [nccl, ours] : kNames)
    if (d == nccl) return ours;
  return absl::AsciiStrToLower(std::string(d));
}

int64_t NcclDtypeBytes(std::string_view d) {
  static const std::pair<const char*, int64_t> kSizes[] = {
      {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclInt32", 4},      {"ncclUint32", 4},
      {"ncclInt64", 8},   {"ncclUint64", 8},   {"ncclFloat16", 2},    {"ncclFloat32", 4},
      {"ncclFloat64", 8}, {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1}};
  for (const auto& [name, bytes] : kSizes)
    if (d == name) return bytes;
  return 0;
}

void NcclElements(std::string_view func, int64_t count, int32_t nranks, int64_t& in, int64_t& out) {
  in = out = -1;
  if (!model::SizeInBounds(count)) return;  // beyond 2^50 elements: not a real message
  int64_t all = -1;
  if (nranks > 0 && (__builtin_mul_overflow(count, int64_t{nranks}, &all) || !model::SizeInBounds(all))) all = -1;
  if (func == "AllReduce" || func == "Broadcast" || func == "Reduce") {
    in = out = count;
  } else if (func == "AllGather" || func == "Gather") {
    in = count, out = all;
  } else if (func == "ReduceScatter" || func == "Scatter") {
    in = all, out = count;
  } else if (func == "AlltoAll") {
    in = out = all;
  } else if (func == "Send") {
    in = count, out = 0;
  } else if (func == "Recv") {
    in = 0, out = count;
  }
}

}  // namespace overlapscope::import
