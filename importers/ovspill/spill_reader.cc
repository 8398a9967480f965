// Spill file reader: decodes the records of one process (spill_format.h), then joins them
// (context -> device, correlation -> API call / external id, event sync id -> recording
// stream, NVTX start/end pairs) into model events.
#include "importers/ovspill/spill_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "formats/block_framing.h"
#include "importers/nccl/nccl_attribution.h"
#include "importers/nccl/nccl_nvtx_payload.h"
#include "importers/open_file.h"
#include "importers/ovspill/spill_to_model.h"

namespace overlapscope::import {
namespace {

// Copies a payload into T: shorter payloads (older writers) leave the tail zeroed; longer ones
// (newer writers) are cut to what we know.
template <typename T>
T Decode(const char* p, uint32_t n) {
  T t;
  std::memset(&t, 0, sizeof(T));
  std::memcpy(&t, p, n < sizeof(T) ? n : sizeof(T));
  return t;
}

template <typename T>
void Push(std::vector<T>& v, const char* p, uint32_t n, model::SourceStats& stats, const char* what, size_t offset) {
  if (n < sizeof(T)) {
    stats.Skip(model::Stat::kSpillShortRecord, what,
               absl::StrCat("offset ", offset, ": ", what, " payload ", n, " < ", sizeof(T), " bytes"));
    return;
  }
  v.push_back(Decode<T>(p, n));
}

bool IsMetadata(formats::SpillType type) {
  switch (type) {
    case formats::SpillType::kProcess:
    case formats::SpillType::kString:
    case formats::SpillType::kDevice:
    case formats::SpillType::kContext:
    case formats::SpillType::kStream:
    case formats::SpillType::kName:
    case formats::SpillType::kStats:
    case formats::SpillType::kEnd: return true;
    default: return false;
  }
}

// One record's payload p[0, n) at file offset `off` into r.
void DecodeRecord(formats::SpillType type, const char* p, uint32_t n, size_t off, SpillRecords& r,
                  model::TraceBuilder& builder) {
  ++r.stats.events_read;
  if (IsMetadata(type)) ++r.metadata_records;
  switch (type) {
    case formats::SpillType::kProcess:
      if (n >= sizeof(formats::SpillProcess)) r.process = Decode<formats::SpillProcess>(p, n), r.have_process = true;
      break;
    case formats::SpillType::kString:
      if (n < 4) {
        r.stats.Skip(model::Stat::kSpillShortRecord, "string", absl::StrCat("offset ", off, ": short string record"));
      } else {
        uint32_t id;
        std::memcpy(&id, p, 4);
        r.strings[id] = builder.Intern(std::string_view(p + 4, n - 4));
      }
      break;
    case formats::SpillType::kKernel: Push(r.kernels, p, n, r.stats, "kernel", off); break;
    case formats::SpillType::kMemcpy: Push(r.memcpys, p, n, r.stats, "memcpy", off); break;
    case formats::SpillType::kMemset: Push(r.memsets, p, n, r.stats, "memset", off); break;
    case formats::SpillType::kApi: Push(r.apis, p, n, r.stats, "api", off); break;
    case formats::SpillType::kSync: Push(r.syncs, p, n, r.stats, "sync", off); break;
    case formats::SpillType::kCudaEvent: Push(r.events, p, n, r.stats, "cuda event", off); break;
    case formats::SpillType::kExternalCorrelation: Push(r.externals, p, n, r.stats, "external correlation", off); break;
    case formats::SpillType::kMarker: Push(r.markers, p, n, r.stats, "marker", off); break;
    case formats::SpillType::kMarkerData: Push(r.marker_data, p, n, r.stats, "marker data", off); break;
    case formats::SpillType::kWindow:  // metadata: what was recorded when
      if (n >= sizeof(formats::SpillWindow)) ++r.metadata_records;
      Push(r.windows, p, n, r.stats, "capture window", off);
      break;
    case formats::SpillType::kNvtxPayload:
      if (n < sizeof(formats::SpillNvtxPayload)) {
        r.stats.Skip(model::Stat::kSpillShortRecord, "nvtx payload", absl::StrCat("offset ", off, ": ", n, " bytes"));
      } else {
        NvtxPayloadRecord pr{Decode<formats::SpillNvtxPayload>(p, n), {}};
        const size_t have = n - sizeof(formats::SpillNvtxPayload);
        pr.bytes.assign(p + sizeof(formats::SpillNvtxPayload), pr.h.bytes < have ? pr.h.bytes : have);
        r.nvtx_payloads.push_back(std::move(pr));
      }
      break;
    case formats::SpillType::kOverhead: Push(r.overheads, p, n, r.stats, "overhead", off); break;
    case formats::SpillType::kDevice: Push(r.devices, p, n, r.stats, "device", off); break;
    case formats::SpillType::kContext: Push(r.contexts, p, n, r.stats, "context", off); break;
    case formats::SpillType::kStream: Push(r.streams, p, n, r.stats, "stream", off); break;
    case formats::SpillType::kName: Push(r.names, p, n, r.stats, "name", off); break;
    case formats::SpillType::kStats:
      if (n >= sizeof(formats::SpillStats)) r.capture_stats = Decode<formats::SpillStats>(p, n), r.have_stats = true;
      break;
    case formats::SpillType::kEnd:
      if (n >= sizeof(formats::SpillEnd)) r.end = Decode<formats::SpillEnd>(p, n), r.have_end = true;
      break;
    default:
      r.stats.Skip(model::Stat::kSpillUnknownRecord, absl::StrCat("type ", static_cast<int>(type)),
                   absl::StrCat("offset ", off, ": record type ", static_cast<int>(type)));
      break;
  }
}

// Version 1 has no checksums, so a record running past the end is either the cut end of a file
// (a crash) or a damaged length in the middle. A cut leaves the start of one record, whose
// payload holds no record headers; damage leaves the file's other records behind it. Returns the
// first offset after `off` from which kChain records with known types and bounded lengths follow
// each other inside the file, or 0 when there is none (then it is a cut). The scan runs once, where
// reading stops, and costs at most kChain steps per byte left.
size_t ValidRecordsFollow(std::string_view bytes, size_t off, size_t to) {
  constexpr int kChain = 16;
  auto header_ok = [&](size_t q, uint32_t* n) {
    if (to - q < formats::kSpillRecordHeaderBytes) return false;
    const uint8_t type = static_cast<uint8_t>(bytes[q]);
    std::memcpy(n, bytes.data() + q + 4, sizeof(*n));
    return type >= static_cast<uint8_t>(formats::SpillType::kProcess) &&
           type <= static_cast<uint8_t>(formats::SpillType::kWindow) && *n <= formats::kSpillMaxPayload &&
           to - q - formats::kSpillRecordHeaderBytes >= *n;
  };
  for (size_t start = off + 1; start + formats::kSpillRecordHeaderBytes <= to; ++start) {
    size_t q = start;
    int chained = 0;
    uint32_t n = 0;
    while (chained < kChain && q < to && header_ok(q, &n)) {
      ++chained;
      q += formats::kSpillRecordHeaderBytes + n;
    }
    if (chained >= kChain) return start;
  }
  return 0;
}

// Decodes the records of bytes[from, to). `framed` (version 2): the span is one verified block,
// so a record crossing its end is damage (an error); unframed (version 1): it is the cut end of
// the file (counted, reading stops).
absl::Status DecodeRecords(std::string_view bytes, size_t from, size_t to, bool framed, const std::string& path,
                           SpillRecords& r, model::TraceBuilder& builder) {
  size_t off = from;
  while (off < to) {
    const size_t left = to - off;
    uint32_t n = 0;
    if (left >= formats::kSpillRecordHeaderBytes) std::memcpy(&n, bytes.data() + off + 4, sizeof(n));
    if (left >= formats::kSpillRecordHeaderBytes && n > formats::kSpillMaxPayload)
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": offset ", off, ": record payload of ", n, " bytes (corrupt file)"));
    if (left < formats::kSpillRecordHeaderBytes || left - formats::kSpillRecordHeaderBytes < n) {
      if (framed)
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": offset ", off, ": record crosses the end of its block (corrupt file)"));
      if (const size_t next = ValidRecordsFollow(bytes, off, to); next != 0)
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": offset ", off,
                         ": record length runs past the end of the file, but valid records follow at offset ", next,
                         " (a version-1 capture damaged in the middle: corrupt file)"));
      r.stats.Skip(model::Stat::kSpillTruncatedTail, {},
                   absl::StrCat("offset ", off, ": record cut off by end of file"));
      return absl::OkStatus();
    }
    const auto type = static_cast<formats::SpillType>(static_cast<uint8_t>(bytes[off]));
    DecodeRecord(type, bytes.data() + off + formats::kSpillRecordHeaderBytes, n, off, r, builder);
    off += formats::kSpillRecordHeaderBytes + n;
  }
  return absl::OkStatus();
}

// Version 2 body: checksummed blocks (formats/block_framing.h).
absl::Status DecodeBlocks(std::string_view bytes, const std::string& path, SpillRecords& r,
                          model::TraceBuilder& builder) {
  size_t off = formats::kSpillFileHeaderBytes;
  while (off < bytes.size()) {
    uint32_t n = 0;
    const char* reason = nullptr;
    switch (formats::CheckBlock(bytes.data() + off, bytes.size() - off, &n, &reason)) {
      case formats::BlockCheck::kCorrupt:
        return absl::InvalidArgumentError(absl::StrCat(path, ": offset ", off, ": ", reason));
      case formats::BlockCheck::kTruncated:
        r.stats.Skip(model::Stat::kSpillTruncatedTail, {},
                     absl::StrCat("offset ", off, ": block cut off by end of file (", bytes.size() - off, " bytes)"));
        return absl::OkStatus();
      case formats::BlockCheck::kOk: break;
    }
    const size_t body = off + formats::kBlockHeaderBytes;
    RETURN_IF_ERROR(DecodeRecords(bytes, body, body + n, /*framed=*/true, path, r, builder));
    off = body + n;
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// Merges the NCCL plugin file `nccl_path` into the process just read; an unreadable file is
// recorded as a source with the reason, not an error (see spill_format.h).
void MergePluginFile(const std::string& nccl_path, const NcclAttribution& a, const NcclMergeOptions& o,
                     model::TraceBuilder& builder) {
  auto& d = builder.data();
  const auto process = static_cast<model::ProcessId>(d.processes.size() - 1);
  auto f = ReadNcclPluginFile(nccl_path);
  if (!f.ok()) {
    model::SourceStats st;
    st.path = nccl_path;
    st.format = "nccl-plugin";
    st.Add(model::Stat::kNcclPluginUnreadable, 1, std::string(f.status().message()));
    d.sources.push_back(std::move(st));
    return;
  }
  MergeNcclPlugin(std::move(f).value(), a, builder, process, o);
}

// The plugin file next to an in-process session's spill (`overlapscope run -o`) covers the whole
// process, every mode of the run: only the collectives of this session's windows belong to it.
// A capture of the whole process (`profile`) or a window the caller gave keeps `given`.
NcclMergeOptions SessionWindowOf(const model::TraceData& d, model::ProcessId p, NcclMergeOptions given) {
  const NcclMergeOptions unbounded;
  if (given.window_start_ns != unbounded.window_start_ns || given.window_end_ns != unbounded.window_end_ns)
    return given;
  bool any = false;
  int64_t lo = unbounded.window_end_ns, hi = unbounded.window_start_ns;
  for (const model::CaptureWindow& w : d.windows) {
    if (w.process != p) continue;
    if (w.trigger != model::WindowTrigger::kSession) return given;
    any = true;
    lo = std::min(lo, w.start_ns);
    hi = std::max(hi, w.end_ns);
  }
  if (!any) return given;
  given.window_start_ns = lo;
  given.window_end_ns = hi;
  return given;
}

// NCCL attribution of the process just read (GPU work inside NCCL's ranges, NVTX payloads),
// then the plugin file of the same process when there is one.
void AttributeNccl(const std::string& path, const SpillReadOptions& options, bool next_to, SpillNvtxSide& nvtx,
                   model::TraceBuilder& builder) {
  auto& d = builder.data();
  NcclAttribution a = AttributeNcclRanges(builder, static_cast<model::ProcessId>(d.processes.size() - 1));
  const NcclNvtxMerge nm = ApplyNcclNvtxPayloads(builder, a, nvtx);
  if ((a.collectives > 0 || a.own_malformed > 0) && !d.sources.empty()) {
    model::SourceStats& st = d.sources.back();
    if (a.collectives > a.own_collectives)
      st.Add(model::Stat::kNcclRangeCollectives, a.collectives - a.own_collectives);
    // Collectives named by "overlapscope.collective" NVTX ranges (importers/nccl/collective_range.h).
    if (a.own_collectives) st.Add(model::Stat::kOwnRangeCollectives, a.own_collectives);
    if (a.own_malformed) st.Add(model::Stat::kOwnRangeMalformed, a.own_malformed);
    st.Add(model::Stat::kNcclRangeKernels, a.kernels);
    st.Add(model::Stat::kNcclRangeMemcpys, a.memcpys);
    if (nm.decoded) st.Add(model::Stat::kNcclNvtxPayloads, nm.decoded);
    if (nm.not_nccl_layout) st.Add(model::Stat::kNcclNvtxUnknownLayout, nm.not_nccl_layout);
  }
  std::string nccl = options.nccl_plugin_file;
  NcclMergeOptions window = options.nccl;
  if (nccl.empty() && next_to && options.nccl_next_to_spill && d.processes.back().pid >= 0) {
    nccl = NcclPluginFileNextTo(path, d.processes.back().pid);
    if (::access(nccl.c_str(), R_OK) != 0) nccl.clear();
    window = SessionWindowOf(d, static_cast<model::ProcessId>(d.processes.size() - 1), window);
  }
  if (!nccl.empty()) MergePluginFile(nccl, a, window, builder);
}

}  // namespace

// `next_to`: look for the plugin file next to `path` (a real file) when none is named.
static absl::Status ReadSpillImpl(std::string_view bytes, const std::string& path, model::TraceBuilder& builder,
                                  const SpillReadOptions& options, bool next_to) {
  if (bytes.size() < formats::kSpillFileHeaderBytes ||
      std::memcmp(bytes.data(), formats::kSpillMagic, sizeof(formats::kSpillMagic)) != 0)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": offset 0: not an overlapscope spill file (magic OVSPILL1 missing)"));
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, sizeof(version));
  if (version != 1 && version != 2)
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": offset 8: spill format version ", version, ", this build reads versions 1 and 2"));
  SpillRecords r;
  r.stats.path = path;
  r.stats.format = "cupti-spill";
  r.stats.bytes = static_cast<int64_t>(bytes.size());
  if (version == 1) {
    RETURN_IF_ERROR(
        DecodeRecords(bytes, formats::kSpillFileHeaderBytes, bytes.size(), /*framed=*/false, path, r, builder));
  } else {
    RETURN_IF_ERROR(DecodeBlocks(bytes, path, r, builder));
  }
  SpillNvtxSide nvtx;
  RETURN_IF_ERROR(SpillRecordsToModel(std::move(r), builder, &nvtx));
  // Name every piece of communication: GPU work enqueued inside NCCL's API ranges belongs to
  // that collective (copy-engine collectives have no NCCL kernel to recognize by name), with
  // what NCCL's NVTX payloads and its profiler plugin say of it.
  AttributeNccl(path, options, next_to, nvtx, builder);
  return absl::OkStatus();
}

absl::Status ReadSpillBytes(std::string_view bytes, const std::string& path, model::TraceBuilder& builder,
                            const SpillReadOptions& options) {
  return ReadSpillImpl(bytes, path, builder, options, /*next_to=*/false);
}

absl::Status ReadSpillFile(const std::string& path, model::TraceBuilder& builder, const SpillReadOptions& options) {
  ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));  // a FIFO would block: an error instead
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return absl::InternalError(absl::StrCat(path, ": cannot stat: ", std::strerror(errno)));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return ReadSpillImpl(std::string_view(), path, builder, options, true);
  }
  // mmap: a spill file of a long run can be GBs; the kernel pages it in as we go.
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return absl::InternalError(absl::StrCat(path, ": cannot map: ", std::strerror(errno)));
  absl::Status s = ReadSpillImpl(std::string_view(static_cast<const char*>(m), size), path, builder, options, true);
  ::munmap(m, size);
  return s;
}

absl::StatusOr<model::Trace> ReadSpillFiles(const std::vector<std::string>& paths, const SpillReadOptions& options) {
  model::TraceBuilder builder;
  for (const auto& p : paths) RETURN_IF_ERROR(ReadSpillFile(p, builder, options));
  builder.data().clock_note = kSpillClockNote;
  return std::move(builder).Finalize();
}

}  // namespace overlapscope::import
