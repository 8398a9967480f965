// libnccl-profiler-overlapscope.so: NCCL's profiler plugin (API v5, NCCL 2.28), which records
// per process what NCCL knows and CUPTI does not: communicator id/rank, sequence number,
// algorithm, protocol, channel count and per-channel GPU times of every collective, into
// $OVERLAPSCOPE_NCCL_DIR/nccl.<pid>.ovnccl (format: ovnccl_format.h).
//
// Loaded by NCCL from NCCL_PROFILER_PLUGIN (an absolute path) at the first communicator init.
// Without OVERLAPSCOPE_NCCL_DIR it records nothing (activation mask 0). It never fails NCCL:
// every entry point returns success; on an internal error it stops recording and counts it.
//
// Cost per event: no lock. Each thread appends fixed-size records to its own ring (one
// producer); whoever flushes (the owner when its ring is full, finalize, exit,
// ovscope_nccl_plugin_flush) drains all rings under one mutex into one buffered write().
// Memory is bounded: kMaxRings rings of kSlots records; a thread that finds no free ring has
// its records counted as dropped. Event handles are not pointers but ids (id << 8 | kind), so
// no per-event state is allocated and a parent handle stays meaningful after its event ended.
//
// Dependencies: libc only (libstdc++/libgcc linked in statically, no CUDA, no NCCL, no Abseil).
// -z nodelete keeps the library mapped after NCCL dlclose()s it, so the flush function stays
// callable by the in-process capture.
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "capture/nccl_plugin/nccl_profiler_abi.h"
#include "formats/block_framing.h"
#include "formats/ovnccl_format.h"

namespace overlapscope::nccl_plugin {
namespace {

constexpr int kMaxRings = 256;
constexpr int kSlots = 1024;       // records per thread ring (160 KiB)
constexpr int kSlotPayload = 156;  // largest payload we emit through rings
constexpr size_t kStagingBytes = 1 << 16;

struct Slot {
  uint16_t kind, bytes;
  unsigned char payload[kSlotPayload];
};
static_assert(sizeof(formats::OvncclCollStart) <= kSlotPayload && sizeof(formats::OvncclApiStart) <= kSlotPayload,
              "slot size");

struct Ring {
  std::atomic<uint64_t> head{0};  // written by the owner thread only
  std::atomic<uint64_t> tail{0};  // written by the drainer (under g_mutex) only
  std::atomic<int> in_use{0};
  Slot slots[kSlots];
};

// Handle kinds (low byte of a handle).
enum HandleKind : uintptr_t { kHGroupApi = 1, kHCollApi, kHP2pApi, kHColl, kHP2p, kHKernelCh, kHLast = kHKernelCh };

constexpr int kFuncSlots = 16;
struct Context {
  uint64_t id = 0;
  int rank = -1;
  std::atomic<int64_t> ordinal[kFuncSlots];
  std::atomic<int64_t> groups{0};  // GroupApi events of this communicator: one per outermost group
};

enum State : int { kUninit = 0, kRecording = 1, kOff = 2 };
std::atomic<int> g_state{kUninit};
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;  // file, staging, ring registry, draining
int g_fd = -1;
unsigned char g_staging[kStagingBytes];
size_t g_staged = 0;
Ring* g_rings[kMaxRings];
std::atomic<int> g_nrings{0};
pthread_key_t g_ring_key;
std::atomic<uint64_t> g_next_id{1};
std::atomic<uint64_t> g_next_context{1};
std::atomic<uint64_t> g_events{0}, g_written{0}, g_dropped{0}, g_internal{0}, g_ignored{0}, g_write_errors{0};
int g_mask = 0;
thread_local Ring* t_ring = nullptr;
thread_local int64_t t_tid = 0;

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t Tid() {
  if (t_tid == 0) t_tid = static_cast<int64_t>(syscall(SYS_gettid));
  return t_tid;
}

void Fail() {
  g_internal.fetch_add(1, std::memory_order_relaxed);
  g_state.store(kOff, std::memory_order_relaxed);
}

// --- file output (all under g_mutex) ---

void WriteAll(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  size_t off = 0;
  while (off < bytes && g_fd >= 0) {
    const ssize_t n = ::write(g_fd, p + off, bytes - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      g_write_errors.fetch_add(1, std::memory_order_relaxed);
      g_state.store(kOff, std::memory_order_relaxed);
      ::close(g_fd);
      g_fd = -1;
      break;
    }
    off += static_cast<size_t>(n);
  }
}

// Writes the staged records as one checksummed block (formats/block_framing.h); the file header
// goes first, unframed, on the first write.
void WriteStaged() {
  char block[formats::kBlockHeaderBytes];
  const char* staged = reinterpret_cast<const char*>(g_staging);
  const size_t at =
      formats::SealPending(staged, g_staged, formats::kOvncclMagic, formats::kOvncclFileHeaderBytes, block);
  WriteAll(staged, at);
  if (at < g_staged) {
    WriteAll(block, sizeof(block));
    WriteAll(staged + at, g_staged - at);
  }
  g_staged = 0;
}

void Stage(uint16_t kind, const void* payload, uint32_t bytes, const void* tail = nullptr, uint32_t tail_bytes = 0) {
  if (g_fd < 0) return;
  const uint32_t total = bytes + tail_bytes;
  if (total > 0xffff) return Fail();
  if (g_staged + formats::kOvncclRecordHeaderBytes + total > kStagingBytes) WriteStaged();
  formats::OvncclRecordHeader h{kind, static_cast<uint16_t>(total), 0};
  std::memcpy(g_staging + g_staged, &h, sizeof(h));
  std::memcpy(g_staging + g_staged + sizeof(h), payload, bytes);
  if (tail_bytes) std::memcpy(g_staging + g_staged + sizeof(h) + bytes, tail, tail_bytes);
  g_staged += sizeof(h) + total;
  g_written.fetch_add(1, std::memory_order_relaxed);
}

void Drain(Ring* r) {
  const uint64_t head = r->head.load(std::memory_order_acquire);
  uint64_t tail = r->tail.load(std::memory_order_relaxed);
  for (; tail < head; ++tail) {
    const Slot& s = r->slots[tail % kSlots];
    Stage(s.kind, s.payload, s.bytes);
  }
  r->tail.store(tail, std::memory_order_release);
}

void FlushLocked() {
  if (g_fd < 0) return;
  const int n = g_nrings.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) Drain(g_rings[i]);
  formats::OvncclStats st{g_events.load(),   g_written.load(), g_dropped.load(),
                          g_internal.load(), g_ignored.load(), g_write_errors.load()};
  Stage(static_cast<uint16_t>(formats::OvncclKind::kStats), &st, sizeof(st));
  WriteStaged();
}

// --- per-thread rings ---

void ReleaseRing(void* p) {
  Ring* r = static_cast<Ring*>(p);
  t_ring = nullptr;  // runs on the exiting thread: a late record acquires a ring afresh
  pthread_mutex_lock(&g_mutex);
  Drain(r);
  r->in_use.store(0, std::memory_order_release);
  pthread_mutex_unlock(&g_mutex);
}

Ring* AcquireRing() {
  Ring* found = nullptr;
  pthread_mutex_lock(&g_mutex);
  const int n = g_nrings.load(std::memory_order_relaxed);
  for (int i = 0; i < n && !found; ++i) {
    int expected = 0;
    // A released ring was fully drained when released; reuse continues at its head.
    if (g_rings[i]->in_use.compare_exchange_strong(expected, 1)) found = g_rings[i];
  }
  if (!found && n < kMaxRings) {
    found = new (std::nothrow) Ring();
    if (found) {
      found->in_use.store(1);
      g_rings[n] = found;
      g_nrings.store(n + 1, std::memory_order_release);
    }
  }
  pthread_mutex_unlock(&g_mutex);
  if (found) pthread_setspecific(g_ring_key, found);  // drained and released at thread exit
  return found;
}

void Emit(formats::OvncclKind kind, const void* payload, uint16_t bytes) {
  Ring* r = t_ring;
  if (!r) r = t_ring = AcquireRing();
  if (!r) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint64_t head = r->head.load(std::memory_order_relaxed);
  if (head - r->tail.load(std::memory_order_acquire) >= kSlots) {
    pthread_mutex_lock(&g_mutex);
    Drain(r);
    WriteStaged();
    pthread_mutex_unlock(&g_mutex);
  }
  Slot& s = r->slots[head % kSlots];
  s.kind = static_cast<uint16_t>(kind);
  s.bytes = bytes;
  std::memcpy(s.payload, payload, bytes);
  r->head.store(head + 1, std::memory_order_release);
}

// --- helpers ---

void CopyName(char (&dst)[16], const char* src) {
  std::memset(dst, 0, sizeof(dst));
  if (src) std::strncpy(dst, src, sizeof(dst) - 1);
}

int FuncSlot(const char* f) {
  static const char* const kFuncs[] = {"AllGather", "AllReduce",     "AlltoAll", "Broadcast", "Gather", "Recv",
                                       "Reduce",    "ReduceScatter", "Scatter",  "SendRecv",  "Send"};
  if (f)
    for (int i = 0; i < static_cast<int>(sizeof(kFuncs) / sizeof(kFuncs[0])); ++i)
      if (std::strcmp(f, kFuncs[i]) == 0) return i;
  return kFuncSlots - 1;
}

void* MakeHandle(uint64_t id, HandleKind k) { return reinterpret_cast<void*>((static_cast<uintptr_t>(id) << 8) | k); }

uint64_t HandleId(const void* h) {
  const auto v = reinterpret_cast<uintptr_t>(h);
  const uintptr_t k = v & 0xff;
  const uint64_t id = static_cast<uint64_t>(v >> 8);
  if (k == 0 || k > kHLast || id == 0 || id >= g_next_id.load(std::memory_order_relaxed)) return 0;
  return id;
}

// --- setup ---

// fork(): g_mutex is held across it, so the child never inherits it locked mid-flush; the
// child records nothing and must not write the parent's buffered records into the parent's file.
void ForkPrepare() { pthread_mutex_lock(&g_mutex); }
void ForkParent() { pthread_mutex_unlock(&g_mutex); }
void ForkChild() {
  g_state.store(kOff);
  if (g_fd >= 0) ::close(g_fd);
  g_fd = -1;
  pthread_mutex_unlock(&g_mutex);
}

void FlushAtExit() {
  pthread_mutex_lock(&g_mutex);
  FlushLocked();
  pthread_mutex_unlock(&g_mutex);
}

void SetUpOnce() {
  const char* dir = std::getenv("OVERLAPSCOPE_NCCL_DIR");
  if (!dir || !*dir) {
    g_state.store(kOff);
    return;
  }
  g_mask = static_cast<int>(abi::kGroupApi | abi::kCollApi | abi::kP2pApi | abi::kColl | abi::kP2p | abi::kKernelCh);
  if (const char* kc = std::getenv("OVERLAPSCOPE_NCCL_KERNEL_CH"); kc && std::strcmp(kc, "0") == 0)
    g_mask &= ~static_cast<int>(abi::kKernelCh);
  char path[4096];
  const int n = std::snprintf(path, sizeof(path), "%s/nccl.%d.ovnccl", dir, static_cast<int>(::getpid()));
  if (n <= 0 || n >= static_cast<int>(sizeof(path)) || pthread_key_create(&g_ring_key, ReleaseRing) != 0) {
    Fail();
    return;
  }
  g_fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_fd < 0) {
    std::fprintf(stderr, "overlapscope nccl plugin: cannot write %s: %s (NCCL details not recorded)\n", path,
                 std::strerror(errno));
    g_write_errors.fetch_add(1);
    g_state.store(kOff);
    return;
  }
  unsigned char header[formats::kOvncclFileHeaderBytes] = {};
  std::memcpy(header, formats::kOvncclMagic, sizeof(formats::kOvncclMagic));
  const uint32_t version = formats::kOvncclVersion;
  std::memcpy(header + 8, &version, sizeof(version));
  std::memcpy(g_staging, header, sizeof(header));
  g_staged = sizeof(header);
  formats::OvncclProcess p{static_cast<int64_t>(::getpid()), NowNs(), 0, 5};
  Stage(static_cast<uint16_t>(formats::OvncclKind::kProcess), &p, sizeof(p));
  WriteStaged();
  pthread_atfork(ForkPrepare, ForkParent, ForkChild);
  if (const char* v = std::getenv("OVERLAPSCOPE_VERBOSE"); v && *v == '1')
    std::fprintf(stderr, "overlapscope nccl plugin: writing %s\n", path);
  g_state.store(kRecording);
}

pthread_once_t g_once = PTHREAD_ONCE_INIT;

bool Recording() { return g_state.load(std::memory_order_relaxed) == kRecording; }

// --- the v5 entry points ---

abi::Result Init(void** context, uint64_t comm_id, int* mask, const char* comm_name, int nnodes, int nranks, int rank,
                 abi::Logger) {
  if (context) *context = nullptr;
  if (mask) *mask = 0;
  pthread_once(&g_once, SetUpOnce);
  if (!Recording() || !context || !mask) return abi::kSuccess;
  Context* c = new (std::nothrow) Context();
  if (!c) {
    Fail();
    return abi::kSuccess;
  }
  // Contexts are never freed: kernel-channel events of the proxy thread may name a context
  // after finalize, and a communicator costs ~200 bytes.
  c->id = g_next_context.fetch_add(1);
  c->rank = rank;
  for (auto& o : c->ordinal) o.store(0, std::memory_order_relaxed);
  const uint32_t name_bytes = comm_name ? static_cast<uint32_t>(strnlen(comm_name, 1024)) : 0;
  formats::OvncclComm rec{c->id, comm_id, NowNs(), nnodes, nranks, rank, name_bytes};
  pthread_mutex_lock(&g_mutex);
  Stage(static_cast<uint16_t>(formats::OvncclKind::kComm), &rec, sizeof(rec), comm_name, name_bytes);
  WriteStaged();
  pthread_mutex_unlock(&g_mutex);
  *context = c;
  *mask = g_mask;
  return abi::kSuccess;
}

abi::Result StartEvent(void* context, void** handle, abi::EventDescr* d) {
  if (handle) *handle = nullptr;
  if (!Recording() || !handle || !d || !context) return abi::kSuccess;
  Context* c = static_cast<Context*>(context);
  const uint64_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = NowNs();
  switch (d->type) {
    case abi::kGroupApi:
    case abi::kCollApi:
    case abi::kP2pApi: {
      formats::OvncclApiStart r{};
      r.id = id, r.parent = HandleId(d->parent), r.context = c->id, r.host_ns = now, r.tid = Tid();
      r.type = static_cast<uint32_t>(d->type), r.root = -1, r.ordinal = -1;
      HandleKind k = kHGroupApi;
      if (d->type == abi::kGroupApi) {
        r.group_depth = d->group_api.group_depth, r.graph_captured = d->group_api.graph_captured;
        r.ordinal = c->groups.fetch_add(1, std::memory_order_relaxed);
      } else if (d->type == abi::kCollApi) {
        k = kHCollApi;
        r.root = d->coll_api.root, r.count = d->coll_api.count, r.graph_captured = d->coll_api.graph_captured;
        r.stream = reinterpret_cast<uintptr_t>(d->coll_api.stream);
        CopyName(r.func, d->coll_api.func), CopyName(r.dtype, d->coll_api.dtype);
        r.ordinal = c->ordinal[FuncSlot(d->coll_api.func)].fetch_add(1, std::memory_order_relaxed);
      } else {
        k = kHP2pApi;
        r.count = d->p2p_api.count, r.graph_captured = d->p2p_api.graph_captured;
        r.stream = reinterpret_cast<uintptr_t>(d->p2p_api.stream);
        CopyName(r.func, d->p2p_api.func), CopyName(r.dtype, d->p2p_api.dtype);
        r.ordinal = c->ordinal[FuncSlot(d->p2p_api.func)].fetch_add(1, std::memory_order_relaxed);
      }
      Emit(formats::OvncclKind::kApiStart, &r, sizeof(r));
      *handle = MakeHandle(id, k);
      break;
    }
    case abi::kColl:
    case abi::kP2p: {
      formats::OvncclCollStart r{};
      r.id = id, r.parent = HandleId(d->parent), r.context = c->id, r.host_ns = now, r.tid = Tid();
      r.type = static_cast<uint32_t>(d->type), r.rank = d->rank;
      if (d->type == abi::kColl) {
        r.seq = static_cast<int64_t>(d->coll.seq), r.count = d->coll.count, r.root_or_peer = d->coll.root;
        r.nchannels = d->coll.nchannels, r.nwarps = d->coll.nwarps;
        CopyName(r.func, d->coll.func), CopyName(r.dtype, d->coll.dtype);
        CopyName(r.algo, d->coll.algo), CopyName(r.proto, d->coll.proto);
      } else {
        r.seq = -1, r.count = d->p2p.count, r.root_or_peer = d->p2p.peer, r.nchannels = d->p2p.nchannels;
        CopyName(r.func, d->p2p.func), CopyName(r.dtype, d->p2p.dtype);
      }
      Emit(formats::OvncclKind::kCollStart, &r, sizeof(r));
      *handle = MakeHandle(id, d->type == abi::kColl ? kHColl : kHP2p);
      break;
    }
    case abi::kKernelCh: {
      formats::OvncclKernelChStart r{};
      r.id = id, r.parent = HandleId(d->parent), r.context = c->id, r.host_ns = now;
      r.ptimer_ns = d->kernel_ch.ptimer, r.channel = d->kernel_ch.channel;
      Emit(formats::OvncclKind::kKernelChStart, &r, sizeof(r));
      *handle = MakeHandle(id, kHKernelCh);
      break;
    }
    default: g_ignored.fetch_add(1, std::memory_order_relaxed); return abi::kSuccess;
  }
  g_events.fetch_add(1, std::memory_order_relaxed);
  return abi::kSuccess;
}

abi::Result StopEvent(void* handle) {
  if (!Recording() || !handle) return abi::kSuccess;
  const uint64_t id = HandleId(handle);
  // Kernel channels end with their kKernelChStop record (recordEventState).
  if (id == 0 || (reinterpret_cast<uintptr_t>(handle) & 0xff) == kHKernelCh) return abi::kSuccess;
  formats::OvncclStop r{id, NowNs(), Tid()};
  Emit(formats::OvncclKind::kStop, &r, sizeof(r));
  return abi::kSuccess;
}

abi::Result RecordEventState(void* handle, int state, abi::StateArgs* args) {
  if (!Recording() || !handle || !args || state != abi::kKernelChStopState) return abi::kSuccess;
  if ((reinterpret_cast<uintptr_t>(handle) & 0xff) != kHKernelCh) return abi::kSuccess;
  formats::OvncclKernelChStop r{HandleId(handle), NowNs(), args->kernel_ch.ptimer};
  if (r.id) Emit(formats::OvncclKind::kKernelChStop, &r, sizeof(r));
  return abi::kSuccess;
}

abi::Result Finalize(void* context) {
  if (!context) return abi::kSuccess;
  formats::OvncclCommEnd r{static_cast<Context*>(context)->id, NowNs()};
  pthread_mutex_lock(&g_mutex);
  Stage(static_cast<uint16_t>(formats::OvncclKind::kCommEnd), &r, sizeof(r));
  FlushLocked();
  pthread_mutex_unlock(&g_mutex);
  return abi::kSuccess;
}

__attribute__((destructor)) void AtUnloadOrExit() { FlushAtExit(); }

}  // namespace
}  // namespace overlapscope::nccl_plugin

extern "C" {

// The symbol NCCL looks up (profiler API v5).
__attribute__((visibility("default"))) overlapscope::nccl_plugin::abi::ProfilerV5 OVSCOPE_NCCL_PROFILER_SYMBOL = {
    "overlapscope",
    overlapscope::nccl_plugin::Init,
    overlapscope::nccl_plugin::StartEvent,
    overlapscope::nccl_plugin::StopEvent,
    overlapscope::nccl_plugin::RecordEventState,
    overlapscope::nccl_plugin::Finalize,
};

// Writes everything recorded so far to the file (the in-process capture calls it, through
// dlsym, before reading the file). Returns 0 when the file is up to date, 1 when the plugin
// records nothing (OVERLAPSCOPE_NCCL_DIR unset, not initialized yet, or stopped after an error).
__attribute__((visibility("default"))) int ovscope_nccl_plugin_flush(void) {
  using namespace overlapscope::nccl_plugin;
  pthread_mutex_lock(&g_mutex);
  const bool open = g_fd >= 0;
  if (open) FlushLocked();
  pthread_mutex_unlock(&g_mutex);
  return open && Recording() ? 0 : 1;
}

}  // extern "C"
