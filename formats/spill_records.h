// The capture spill format: a compact binary stream of CUPTI activity records, written by the
// capture while it runs (so RAM use stays bounded) and read back into a model::Trace.
//
// This header depends on nothing but the C++ library, so the injection library (which must
// not drag Abseil or the model into a profiled process) can write the format; the reader is in
// spill_format.h.
//
// Layout (little-endian, as x86_64 and aarch64 store it):
//   file   := "OVSPILL1" u32 version u32 reserved  body
//   body   := block*  (version 2: checksummed blocks of whole records, block_framing.h)
//           | record* (version 1, still read: no checksums)
//   record := u8 type  u8 pad[3]  u32 payload_bytes  payload
// Payloads are the packed structs below. A reader accepts payloads longer than it knows (newer
// writers append fields) and skips unknown types (counted). A file cut short is what a killed
// process leaves: it is counted (spill_truncated_tail) and reading stops there, everything
// before it is kept. In version 2 a damaged block (checksum mismatch) or a record crossing its
// block's end is an error naming the offset; version 1 cannot tell damage from a cut. A file
// without a kEnd record was not closed cleanly (crash, SIGKILL); the reader counts it.
//
// Enum-like fields hold the numeric values CUPTI defines (CUPTI API 130001): memcpy kind
// (1 HtoD, 2 DtoH, 8 DtoD, 9 HtoH, 10 PtoP, 3..7 array copies), memory kind (1 pageable,
// 2 pinned, 3 device, 4 array, 5 managed, 6 device static, 7 managed static), synchronization
// type (1 event sync, 2 stream wait event, 3 stream sync, 4 context sync), object kind
// (2 thread, 3 device, 4 context, 5 stream), marker flags (1 instantaneous, 2 start, 4 end).
// Times are ns on the clock named by SpillProcess::clock (0 = CLOCK_REALTIME).
// Strings are interned: a kString record defines id -> bytes before any record uses the id;
// id 0 is "".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace overlapscope::formats {

inline constexpr char kSpillMagic[8] = {'O', 'V', 'S', 'P', 'I', 'L', 'L', '1'};
inline constexpr uint32_t kSpillVersion = 2;  // written; versions 1 and 2 are read
inline constexpr uint32_t kSpillFileHeaderBytes = 16;
inline constexpr uint32_t kSpillRecordHeaderBytes = 8;
// Larger payloads are treated as corruption (ours are < 64 KiB plus string lengths).
inline constexpr uint32_t kSpillMaxPayload = 1u << 24;
inline constexpr uint32_t kNoId = 0xffffffffu;

enum class SpillType : uint8_t {
  kProcess = 1,
  kString = 2,  // payload: u32 id, then the bytes
  kKernel = 3,
  kMemcpy = 4,  // also peer copies (MEMCPY2): is_peer = 1
  kMemset = 5,
  kApi = 6,
  kSync = 7,
  kCudaEvent = 8,
  kExternalCorrelation = 9,
  kMarker = 10,
  kMarkerData = 11,
  kOverhead = 12,
  kDevice = 13,
  kContext = 14,
  kStream = 15,
  kName = 16,
  kStats = 17,  // cumulative counters; the last one in the file wins
  kEnd = 18,
  kNvtxPayload = 19,  // SpillNvtxPayload, then `bytes` bytes of the NVTX extended payload
  kWindow = 20,       // SpillWindow: written when a capture window opens (end 0) and when it closes
};

// What opened a capture window (SpillWindow::trigger).
enum SpillWindowTrigger : uint32_t {
  kWindowProcess = 0,          // no capture range: the whole process from CUDA's initialization
  kWindowSession = 1,          // an in-process CaptureSession, Start() to Stop()
  kWindowCudaProfilerApi = 2,  // cudaProfilerStart .. cudaProfilerStop
  kWindowNvtx = 3,             // the NVTX range named by --nvtx-capture
  kWindowDelay = 4,            // --delay / --duration without a capture range
};
// Why it closed (SpillWindow::end_reason).
enum SpillWindowEnd : uint32_t {
  kWindowEndRange = 0,     // the range ended (cudaProfilerStop, NVTX pop/end)
  kWindowEndDuration = 1,  // --duration elapsed
  kWindowEndStop = 2,      // capture stopped: program exit, Stop(), cudaDeviceReset teardown
  kWindowEndSignal = 3,    // flushed from a fatal signal handler
};

#pragma pack(push, 1)
struct SpillProcess {
  int64_t pid;
  int32_t rank, world_size;  // -1 unknown
  uint32_t clock;            // 0 CLOCK_REALTIME, 1 CLOCK_MONOTONIC
  uint32_t host_sid, name_sid;
  uint32_t pad;
};
struct SpillKernel {
  int64_t start, end;
  uint32_t device, context, stream, correlation;
  uint32_t name_sid;
  int32_t grid[3], block[3];
  int32_t static_smem, dynamic_smem;
  uint16_t registers;
  uint8_t launch_type, pad;
  uint32_t graph_id;
};
struct SpillMemcpy {
  int64_t start, end;
  uint64_t bytes, copy_count;  // copy_count > 1: one record for a cudaMemcpyBatchAsync batch
  uint32_t device, context, stream, correlation;
  uint32_t src_device, dst_device;               // peer copies; kNoId otherwise
  uint8_t copy_kind, src_kind, dst_kind, flags;  // flags bit 0: async (CUPTI's flag)
  uint8_t is_peer, pad[3];
};
struct SpillMemset {
  int64_t start, end;
  uint64_t bytes;
  uint32_t device, context, stream, correlation;
  uint32_t value;
  uint16_t flags, memory_kind;  // flags bit 0: async
};
struct SpillApi {
  int64_t start, end;
  uint32_t pid, tid;  // system thread id
  uint32_t correlation, cbid, return_value, name_sid;
  uint8_t driver, pad[3];  // 0 runtime API, 1 driver API
};
struct SpillSync {
  int64_t start, end;
  uint32_t type, correlation, context, stream, event_id, return_value;
  uint64_t event_sync_id;
};
struct SpillCudaEvent {  // a cudaEventRecord: which stream recorded event `event_id`
  uint32_t correlation, context, stream, event_id, device, pad;
  uint64_t event_sync_id;
};
struct SpillExternalCorrelation {
  uint64_t external_id;
  uint32_t correlation, kind;
};
struct SpillMarker {
  int64_t timestamp;
  uint32_t flags, id, object_kind, pid, tid;  // pid/tid when object_kind is thread (2)
  uint32_t name_sid, domain_sid;
};
struct SpillMarkerData {
  uint64_t payload;
  uint32_t flags, id, payload_kind, color, category, domain_id;
};
// The binary payload of an NVTX extended-payload event (nvtxPayloadData_t: schema id and bytes),
// as CUPTI hands it over in the MARKER_DATA record of marker `marker_id`. At most
// kSpillMaxNvtxPayload bytes are kept (`truncated` = 1 when there were more).
struct SpillNvtxPayload {
  uint32_t marker_id, domain_id;
  uint64_t schema_id;
  uint32_t bytes, truncated;
};
inline constexpr uint32_t kSpillMaxNvtxPayload = 256;
struct SpillOverhead {
  int64_t start, end;
  uint32_t overhead_kind, object_kind, pid, tid;
};
struct SpillDevice {
  uint32_t device, name_sid, cc_major, cc_minor;
};
struct SpillContext {
  uint32_t context, device, null_stream, pad;
};
struct SpillStream {
  uint32_t context, stream, priority, flag, correlation, pad;
};
struct SpillName {                       // a user/library name (nvtxNameOsThread, nvtxNameCudaStream, ...)
  uint32_t object_kind, a, b, name_sid;  // thread: a=pid b=tid; stream: a=context b=stream
};
struct SpillStats {
  uint64_t dropped_records;         // cuptiActivityGetNumDroppedRecords, summed
  uint64_t buffers;                 // completed CUPTI buffers
  uint64_t activity_bytes;          // valid bytes in those buffers
  uint64_t records;                 // CUPTI records seen
  uint64_t unknown_records;         // records of kinds we do not encode
  uint64_t failed_buffer_requests;  // pool exhausted: CUPTI got no buffer (its records drop)
};
// A capture window: the collector recorded between start and end and nothing outside (except
// GPU work launched inside a window that finished after it, and metadata). Windows of one
// process do not overlap; index counts from 1. Each window is written twice: when it opens
// (end = 0: a process that dies inside it leaves this one) and when it closes.
struct SpillWindow {
  int64_t start, end;
  uint32_t index, trigger, name_sid, end_reason;  // SpillWindowTrigger, -, SpillWindowEnd
};
struct SpillEnd {
  int64_t time;
  uint32_t reason;  // 0 Stop(), 1 atexit, 2 signal (signal_number), 3 injection teardown
  uint32_t signal_number;
};
#pragma pack(pop)

// Appends encoded records to a byte string. Not thread-safe; the capture serialises calls.
class SpillEncoder {
 public:
  static void AppendFileHeader(std::string* out);
  template <typename T>
  static void Append(std::string* out, SpillType type, const T& payload) {
    AppendRaw(out, type, &payload, sizeof(T), nullptr, 0);
  }
  static void AppendString(std::string* out, uint32_t id, std::string_view s);
  static void AppendRaw(std::string* out, SpillType type, const void* a, size_t na, const void* b, size_t nb);
  // A file header followed by bare records (what AppendFileHeader and Append build) as the
  // file a writer makes: version 2 with the records framed into checksummed blocks, one block
  // per record when `block_per_record` (the finest cut a killed writer can leave), else one
  // block; or version 1 (bare records) when `version` is 1. For tools and tests.
  static std::string Frame(std::string_view header_and_records, uint32_t version = kSpillVersion,
                           bool block_per_record = true);
};

}  // namespace overlapscope::formats
