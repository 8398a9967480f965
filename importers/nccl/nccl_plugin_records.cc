// Parsing the NCCL profiler plugin's .ovnccl file (see nccl_plugin_records.h).
#include "importers/nccl/nccl_plugin_records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "formats/ovnccl_format.h"

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

}  // namespace

std::string NcclPluginFileNextTo(const std::string& spill_path, int64_t pid) {
  const size_t slash = spill_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : spill_path.substr(0, slash);
  return absl::StrCat(dir, "/nccl.", pid, ".ovnccl");
}

absl::StatusOr<NcclPluginFile> ParseNcclPluginBytes(std::string_view bytes, const std::string& path) {
  if (bytes.size() < formats::kOvncclFileHeaderBytes ||
      std::memcmp(bytes.data(), formats::kOvncclMagic, sizeof(formats::kOvncclMagic)) != 0)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": offset 0: not an overlapscope NCCL plugin file (magic OVNCCL01 missing)"));
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, sizeof(version));
  if (version != formats::kOvncclVersion)
    return absl::InvalidArgumentError(absl::StrCat(path, ": offset 8: NCCL plugin file version ", version,
                                                   ", this build reads ", formats::kOvncclVersion));
  NcclPluginFile f;
  f.path = path;
  model::SourceStats& st = f.stats;
  st.path = path;
  st.format = "nccl-plugin";
  st.bytes = static_cast<int64_t>(bytes.size());

  absl::flat_hash_map<uint64_t, size_t> api_of, coll_of;  // event id -> index
  absl::flat_hash_map<uint64_t, Channel> channels;
  std::vector<std::pair<formats::OvncclStop, size_t>> stops;  // with their offsets
  std::vector<std::pair<formats::OvncclKernelChStop, size_t>> ch_stops;
  size_t off = formats::kOvncclFileHeaderBytes;
  auto short_record = [&](const char* what, uint32_t n, size_t need) {
    if (n >= need) return false;
    st.Skip(absl::StrCat("short ", what, " record"),
            absl::StrCat("offset ", off, ": ", what, " payload ", n, " < ", need));
    return true;
  };
  while (off < bytes.size()) {
    if (bytes.size() - off < formats::kOvncclRecordHeaderBytes) {
      st.Skip("truncated tail", absl::StrCat("offset ", off, ": record header cut off by end of file"));
      break;
    }
    formats::OvncclRecordHeader h;
    std::memcpy(&h, bytes.data() + off, sizeof(h));
    if (bytes.size() - off - formats::kOvncclRecordHeaderBytes < h.payload_bytes) {
      st.Skip("truncated tail",
              absl::StrCat("offset ", off, ": record of ", h.payload_bytes, " bytes cut off by end of file"));
      break;
    }
    const char* p = bytes.data() + off + formats::kOvncclRecordHeaderBytes;
    const uint32_t n = h.payload_bytes;
    ++st.events_read;
    switch (static_cast<formats::OvncclKind>(h.kind)) {
      case formats::OvncclKind::kProcess:
        if (short_record("process", n, sizeof(formats::OvncclProcess))) break;
        f.pid = Decode<formats::OvncclProcess>(p, n).pid;
        ++st.kept_by_category["metadata records"];
        break;
      case formats::OvncclKind::kComm: {
        if (short_record("communicator", n, sizeof(formats::OvncclComm))) break;
        const auto c = Decode<formats::OvncclComm>(p, n);
        if (c.name_bytes > n - sizeof(formats::OvncclComm)) {
          st.Skip("communicator name longer than its record", absl::StrCat("offset ", off));
          break;
        }
        f.comms.push_back({c.context, c.comm_id, c.nnodes, c.nranks, c.rank,
                           std::string(p + sizeof(formats::OvncclComm), c.name_bytes), c.host_ns});
        ++st.kept_by_category["communicator"];
        break;
      }
      case formats::OvncclKind::kCommEnd:
      case formats::OvncclKind::kStats:
        if (static_cast<formats::OvncclKind>(h.kind) == formats::OvncclKind::kStats &&
            n >= sizeof(formats::OvncclStats)) {
          const auto s = Decode<formats::OvncclStats>(p, n);
          f.plugin_dropped = static_cast<int64_t>(s.records_dropped);
          f.plugin_internal_errors = static_cast<int64_t>(s.internal_errors);
          f.plugin_write_errors = static_cast<int64_t>(s.write_errors);
        }
        ++st.kept_by_category["metadata records"];
        break;
      case formats::OvncclKind::kApiStart: {
        if (short_record("api start", n, sizeof(formats::OvncclApiStart))) break;
        const auto r = Decode<formats::OvncclApiStart>(p, n);
        NcclPluginApi a;
        a.id = r.id, a.parent = r.parent, a.context = r.context, a.type = r.type, a.start_ns = r.host_ns;
        a.tid = r.tid, a.root = r.root, a.count = r.count, a.stream = r.stream, a.ordinal = r.ordinal;
        a.graph_captured = r.graph_captured != 0, a.func = Field(r.func), a.dtype = Field(r.dtype);
        if (!api_of.try_emplace(r.id, f.apis.size()).second) {
          st.Skip("duplicate event id", absl::StrCat("offset ", off, ": event ", r.id));
          break;
        }
        f.apis.push_back(std::move(a));
        ++st.kept_by_category["api start"];
        break;
      }
      case formats::OvncclKind::kCollStart: {
        if (short_record("collective start", n, sizeof(formats::OvncclCollStart))) break;
        const auto r = Decode<formats::OvncclCollStart>(p, n);
        NcclPluginColl c;
        c.id = r.id, c.parent = r.parent, c.context = r.context, c.type = r.type, c.start_ns = r.host_ns;
        c.tid = r.tid, c.rank = r.rank, c.root_or_peer = r.root_or_peer, c.seq = r.seq, c.count = r.count;
        c.nchannels = r.nchannels, c.nwarps = r.nwarps, c.func = Field(r.func), c.dtype = Field(r.dtype);
        c.algo = Field(r.algo), c.proto = Field(r.proto);
        if (!coll_of.try_emplace(r.id, f.colls.size()).second) {
          st.Skip("duplicate event id", absl::StrCat("offset ", off, ": event ", r.id));
          break;
        }
        f.colls.push_back(std::move(c));
        ++st.kept_by_category["collective start"];
        break;
      }
      case formats::OvncclKind::kKernelChStart: {
        if (short_record("kernel channel start", n, sizeof(formats::OvncclKernelChStart))) break;
        const auto r = Decode<formats::OvncclKernelChStart>(p, n);
        Channel& ch = channels[r.id];
        ch.parent = r.parent, ch.start = static_cast<int64_t>(r.ptimer_ns);
        break;
      }
      case formats::OvncclKind::kKernelChStop:
        if (short_record("kernel channel stop", n, sizeof(formats::OvncclKernelChStop))) break;
        ch_stops.emplace_back(Decode<formats::OvncclKernelChStop>(p, n), off);
        break;
      case formats::OvncclKind::kStop:
        if (short_record("stop", n, sizeof(formats::OvncclStop))) break;
        stops.emplace_back(Decode<formats::OvncclStop>(p, n), off);
        break;
      default: ++st.unknown_categories[absl::StrCat("nccl plugin record kind ", h.kind)]; break;
    }
    off += formats::kOvncclRecordHeaderBytes + n;
  }

  // Pair stops with starts by id (threads' records interleave in any order).
  for (const auto& [s, at] : stops) {
    if (auto it = api_of.find(s.id); it != api_of.end()) {
      f.apis[it->second].end_ns = s.host_ns;
      ++st.kept_by_category["stop"];
    } else if (auto jt = coll_of.find(s.id); jt != coll_of.end()) {
      f.colls[jt->second].end_ns = s.host_ns;
      ++st.kept_by_category["stop"];
    } else {
      st.Skip("stop without start", absl::StrCat("offset ", at, ": event ", s.id));
    }
  }
  for (const auto& [s, at] : ch_stops) {
    auto it = channels.find(s.id);
    if (it == channels.end() || !coll_of.contains(it->second.parent)) {
      st.Skip("kernel channel stop without start", absl::StrCat("offset ", at, ": event ", s.id));
      continue;
    }
    it->second.stop = static_cast<int64_t>(s.ptimer_ns);
  }
  for (const auto& [id, ch] : channels) {
    auto it = coll_of.find(ch.parent);
    if (it == coll_of.end()) {
      st.Skip("kernel channel of an unknown collective", absl::StrCat("event ", id, " parent ", ch.parent));
      continue;
    }
    NcclPluginColl& c = f.colls[it->second];
    ++c.channels_started;
    if (c.channel_first_start < 0 || ch.start < c.channel_first_start) c.channel_first_start = ch.start;
    st.kept_by_category["kernel channel records"] += 1;
    if (ch.stop >= 0) {
      ++c.channels_stopped;
      c.channel_last_stop = std::max(c.channel_last_stop, ch.stop);
      st.kept_by_category["kernel channel records"] += 1;
    } else {
      ++st.notes["kernel channel without GPU end time"];
    }
  }
  // Still used (their start says what and when); the process ended before NCCL stopped them.
  for (const auto& a : f.apis)
    if (a.end_ns < 0) ++st.notes["api event without stop record"];
  for (const auto& c : f.colls)
    if (c.end_ns < 0) ++st.notes["collective event without stop record"];
  if (f.plugin_dropped) st.dropped_records = f.plugin_dropped;
  if (f.plugin_internal_errors)
    st.skipped_by_reason["plugin internal errors (recording stopped)"] += f.plugin_internal_errors;
  if (f.plugin_write_errors) st.skipped_by_reason["plugin write errors (recording stopped)"] += f.plugin_write_errors;
  int64_t kept = 0;
  for (const auto& [k, v] : st.kept_by_category) kept += v;
  st.events_kept = kept;
  return f;
}

absl::StatusOr<NcclPluginFile> ReadNcclPluginFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
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
  const int64_t all = nranks > 0 ? count * nranks : -1;
  in = out = -1;
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
