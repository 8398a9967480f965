// The .ovnccl file: what libnccl-profiler-overlapscope.so (NCCL's profiler plugin, plugin.cc)
// records in one process, read back by importers/nccl/nccl_plugin_records.h.
//
// This header depends on nothing but the C++ library: the plugin (loaded into any NCCL
// program) writes it, the reader (model side, no CUDA) reads it.
//
// File: $OVERLAPSCOPE_NCCL_DIR/nccl.<pid>.ovnccl, one per process, appended while it runs.
// Layout (little-endian, x86_64/aarch64):
//   file   := "OVNCCL01" u32 version u32 reserved(=0)  body
//   body   := block*  (version 2: checksummed blocks of whole records, block_framing.h)
//           | record* (version 1, still read: no checksums)
//   record := u16 kind  u16 payload_bytes  u32 reserved(=0)  payload
// Payloads are the packed structs below. A reader accepts payloads longer than it knows (newer
// writers append fields) and counts and skips unknown kinds. A file cut short (the process was
// killed mid-write) is counted as a truncated tail; everything before it is kept. In version 2
// a damaged block or a record crossing its block's end is an error naming the offset.
//
// Event model: NCCL's profiler API calls startEvent / recordEventState / stopEvent; the plugin
// writes a start record at start, a kStop record at stop, and (kernel channels) a
// kKernelChStop record when NCCL reports the channel's GPU end time. Events are named by a
// per-process id (1, 2, ...); `parent` names the parent event (a Coll's CollApi, a CollApi's
// GroupApi, a kernel channel's Coll) or 0. Start and stop of one event may come from
// different threads (kernel channels: NCCL's proxy thread) and records of different threads
// interleave in the file in no particular order: the reader pairs them by id.
//
// Times: host_ns is CLOCK_REALTIME in ns (the clock of the CUPTI capture, capture_session.h);
// ptimer_ns is the GPU's %globaltimer in ns as NCCL reports it (its own time base: compare
// only with other ptimer values). tid is the OS thread id (gettid), as CUPTI records it.
// Strings (func, dtype, algo, proto) are NUL-padded, cut to the field size; NCCL's spelling
// ("AllGather", "ncclFloat16", "RING", "SIMPLE").
#pragma once

#include <cstdint>

namespace overlapscope::formats {

inline constexpr char kOvncclMagic[8] = {'O', 'V', 'N', 'C', 'C', 'L', '0', '1'};
inline constexpr uint32_t kOvncclVersion = 2;  // written; versions 1 and 2 are read
inline constexpr uint32_t kOvncclFileHeaderBytes = 16;
inline constexpr uint32_t kOvncclRecordHeaderBytes = 8;

enum class OvncclKind : uint16_t {
  kProcess = 1,        // OvncclProcess: first record of the file
  kComm = 2,           // OvncclComm (+ communicator name bytes after the struct)
  kCommEnd = 3,        // OvncclCommEnd: NCCL finalized the communicator's profiler context
  kApiStart = 4,       // OvncclApiStart: GroupApi / CollApi / P2pApi event started
  kCollStart = 5,      // OvncclCollStart: Coll or P2p event (one task of a launched plan)
  kKernelChStart = 6,  // OvncclKernelChStart: one channel (CTA) of an NCCL kernel started
  kKernelChStop = 7,   // OvncclKernelChStop: that channel's GPU end time
  kStop = 8,           // OvncclStop: any event stopped
  kStats = 9,          // OvncclStats: plugin counters at the time of a flush
};

// NCCL's event type bits (profiler API v5), stored in `type` fields.
enum OvncclEventType : uint32_t {
  kTypeGroup = 1u << 0,
  kTypeColl = 1u << 1,
  kTypeP2p = 1u << 2,
  kTypeKernelCh = 1u << 6,
  kTypeGroupApi = 1u << 8,
  kTypeCollApi = 1u << 9,
  kTypeP2pApi = 1u << 10,
};

#pragma pack(push, 1)
struct OvncclRecordHeader {
  uint16_t kind;
  uint16_t payload_bytes;
  uint32_t reserved;
};

struct OvncclProcess {
  int64_t pid;
  int64_t host_ns;      // when the file was opened
  uint32_t clock;       // 0 = CLOCK_REALTIME
  uint32_t plugin_abi;  // NCCL profiler API version the plugin speaks (5)
};

struct OvncclComm {
  uint64_t context;  // the plugin's id of this communicator's profiler context (1, 2, ...)
  uint64_t comm_id;  // NCCL's communicator hash: equal on every rank of the communicator
  int64_t host_ns;   // init time
  int32_t nnodes, nranks, rank;
  uint32_t name_bytes;  // communicator name bytes following this struct (may be 0)
};

struct OvncclCommEnd {
  uint64_t context;
  int64_t host_ns;
};

struct OvncclApiStart {
  uint64_t id, parent, context;
  int64_t host_ns;
  int64_t tid;
  uint32_t type;           // kTypeGroupApi / kTypeCollApi / kTypeP2pApi
  int32_t root;            // CollApi root (-1 when not given)
  uint64_t count;          // elements as passed to the API call (CollApi / P2pApi)
  uint64_t stream;         // cudaStream_t value of the call
  int64_t ordinal;         // CollApi/P2pApi: 0, 1, ... per (communicator, func) since init;
                           // GroupApi: 0, 1, ... per communicator (of the group's first call)
  int32_t group_depth;     // GroupApi: NCCL's group depth at start
  uint8_t graph_captured;  // 1 when the call was captured into a CUDA graph
  uint8_t pad[3];
  char func[16];
  char dtype[16];
};

struct OvncclCollStart {
  uint64_t id, parent, context;  // parent: the CollApi / P2pApi event, 0 when unknown
  int64_t host_ns;
  int64_t tid;
  uint32_t type;  // kTypeColl / kTypeP2p
  int32_t rank;   // rank in the communicator
  int64_t seq;    // Coll: NCCL's sequence number per (communicator, func); P2p: -1
  uint64_t count;
  int32_t root_or_peer;  // Coll: root; P2p: peer
  uint8_t nchannels, nwarps, pad[2];
  char func[16];
  char dtype[16];
  char algo[16];
  char proto[16];
};

struct OvncclKernelChStart {
  uint64_t id, parent, context;  // parent: the Coll / P2p event
  int64_t host_ns;
  uint64_t ptimer_ns;  // GPU globaltimer when the channel started
  uint32_t channel;
  uint32_t pad;
};

struct OvncclKernelChStop {
  uint64_t id;
  int64_t host_ns;
  uint64_t ptimer_ns;  // GPU globaltimer when the channel ended
};

struct OvncclStop {
  uint64_t id;
  int64_t host_ns;
  int64_t tid;
};

// Cumulative counters (the last kStats record of a file holds the totals).
struct OvncclStats {
  uint64_t events_started;   // events the plugin recorded
  uint64_t records_written;  // records written to the file before this one
  uint64_t records_dropped;  // lost: no thread buffer left (more threads than buffers)
  uint64_t internal_errors;  // plugin failures; recording stops at the first one
  uint64_t ignored_events;   // event types the plugin does not record (Group, ProxyOp, ...)
  uint64_t write_errors;     // failed writes to the file (recording stops)
};
#pragma pack(pop)

static_assert(sizeof(OvncclRecordHeader) == 8 && sizeof(OvncclProcess) == 24 && sizeof(OvncclComm) == 40 &&
                  sizeof(OvncclApiStart) == 112 && sizeof(OvncclCollStart) == 136 &&
                  sizeof(OvncclKernelChStart) == 48 && sizeof(OvncclKernelChStop) == 24 && sizeof(OvncclStop) == 24 &&
                  sizeof(OvncclStats) == 48,
              "record sizes are part of the file format");

}  // namespace overlapscope::formats
