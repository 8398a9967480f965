// CUDA API recording of the collector (collector_state.h): the default selection of
// api_table.h, recorded either through callbacks into per-thread rings (default) or through
// per-callback-id API activity records; `--api=all` enables the RUNTIME/DRIVER activity kinds
// instead (collector.cc, EnableKinds).
//
// Callback mode: at entry the callback pushes (correlation, cbid, start) on a small per-thread
// stack; at exit it pops it and appends one record to the thread's ring — a single-producer ring
// that only its thread writes and that writers drain under Globals::mu (after every CUPTI buffer,
// at window close, at Stop, and by the thread itself when the ring is full). A driver call entered
// while a recorded runtime call is open on the same thread is its twin (same correlation id) and
// is skipped.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "capture/cupti/api_table.h"
#include "capture/cupti/collector_state.h"

namespace overlapscope::cupti::internal {

struct ApiEvent {
  int64_t start, end;
  uint32_t correlation, cbid, return_value, tid;
  uint8_t driver;
  uint8_t role;  // SyncRole when the call also makes a sync or event record, else kNone
  uint32_t context, stream, device;
  uint64_t event_seq;  // event record number (0: none)
};

inline constexpr uint64_t kRingEvents = 4096;  // 160 KiB per recording thread

struct ApiRing {
  std::atomic<uint64_t> head{0};  // written by the owning thread only
  std::atomic<uint64_t> tail{0};  // written by drainers (under Globals::mu)
  ApiEvent ev[kRingEvents];
};

namespace {

// Per-thread state. Trivially constructible so that a thread pays no initialization guard;
// the destructor (registered at the first recorded call) hands the ring back.
struct ThreadApi {
  struct Open {
    int64_t start;
    uint32_t correlation, cbid;
    bool driver, skip;
  };
  ApiRing* ring = nullptr;
  uint32_t tid = 0;
  uint32_t generation = 0;  // ApiState::generation this state belongs to
  int depth = 0;
  int runtime_open = 0;  // recorded runtime calls open on this thread
  Open stack[16];
  ~ThreadApi();
};
thread_local ThreadApi t_api;

uint32_t Tid() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

// The SYNCHRONIZATION / CUDA_EVENT record CUPTI would have written for this call (same fields,
// spill_records.h): sync type 1 event sync, 2 stream wait event, 3 stream sync, 4 context sync.
void AppendSyncRecord(WriterState& w, const ApiEvent& e) {
  const uint64_t seq = e.event_seq ? e.event_seq : ~uint64_t{0};
  const uint32_t event_id = e.event_seq ? static_cast<uint32_t>(e.event_seq) : formats::kNoId;
  switch (static_cast<SyncRole>(e.role)) {
    case SyncRole::kEventRecord: {
      formats::SpillCudaEvent c{e.correlation, e.context, e.stream, event_id, e.device, 0, seq};
      formats::SpillEncoder::Append(&w.out, formats::SpillType::kCudaEvent, c);
      return;
    }
    case SyncRole::kStreamWait:
    case SyncRole::kEventSync:
    case SyncRole::kStreamSync:
    case SyncRole::kContextSync: {
      static const uint32_t kType[] = {0, 0, 2, 1, 3, 4};
      formats::SpillSync y{e.start,        e.end, kType[e.role], e.correlation, e.context, e.stream, event_id,
                           e.return_value, seq};
      formats::SpillEncoder::Append(&w.out, formats::SpillType::kSync, y);
      return;
    }
    case SyncRole::kNone: return;
  }
}

// Fills the sync/event fields of a call with a SyncRole from its parameters (first pointers:
// api_table.h) and the context current at its exit.
void FillSyncFields(Globals& g, uint8_t role_bits, const CUpti_CallbackData* d, ApiEvent& e) {
  const auto role = static_cast<SyncRole>(role_bits & 0x7f);
  const uint8_t per_thread = (role_bits & 0x80) ? 1 : 0;
  e.role = static_cast<uint8_t>(role);
  e.context = e.stream = e.device = formats::kNoId;
  if (d->context) {
    uint32_t id = 0;
    if (cuptiGetContextId(d->context, &id) == CUPTI_SUCCESS) e.context = id;
    if (cuptiGetDeviceId(d->context, &id) == CUPTI_SUCCESS) e.device = id;
  }
  const void* const* p = static_cast<const void* const*>(d->functionParams);
  if (!p) return;
  const void* stream = nullptr;
  const void* event = nullptr;
  bool has_stream = true;
  switch (role) {
    case SyncRole::kEventRecord: event = p[0], stream = p[1]; break;
    case SyncRole::kStreamWait: stream = p[0], event = p[1]; break;
    case SyncRole::kEventSync: event = p[0], has_stream = false; break;
    case SyncRole::kStreamSync: stream = p[0]; break;
    default: has_stream = false; break;
  }
  if (has_stream && d->context) {
    uint32_t sid = 0;
    if (cuptiGetStreamIdEx(d->context, static_cast<CUstream>(const_cast<void*>(stream)), per_thread, &sid) ==
        CUPTI_SUCCESS)
      e.stream = sid;
  }
  if (!event) return;
  std::lock_guard<std::mutex> lock(g.api.event_mu);
  if (role == SyncRole::kEventRecord) {
    e.event_seq = ++g.api.next_event_seq;
    g.api.event_seq[event] = e.event_seq;
  } else {
    auto it = g.api.event_seq.find(event);
    e.event_seq = it == g.api.event_seq.end() ? 0 : it->second;
  }
}

// Encodes [tail, head) of one ring; caller holds g.mu.
void DrainRing(Globals& g, ApiRing* r) {
  WriterState& w = g.w;
  const uint64_t head = r->head.load(std::memory_order_acquire);
  uint64_t tail = r->tail.load(std::memory_order_relaxed);
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  for (; tail < head; ++tail) {
    const ApiEvent& e = r->ev[tail % kRingEvents];
    formats::SpillApi s{};
    s.start = e.start, s.end = e.end, s.pid = pid, s.tid = e.tid, s.correlation = e.correlation, s.cbid = e.cbid;
    s.return_value = e.return_value, s.driver = e.driver;
    s.name_sid = w.ApiName(e.driver != 0, e.cbid);
    w.tids.insert(e.tid);
    ++w.stats.records;
    formats::SpillEncoder::Append(&w.out, formats::SpillType::kApi, s);
    if (e.role != static_cast<uint8_t>(SyncRole::kNone)) AppendSyncRecord(w, e);
  }
  r->tail.store(head, std::memory_order_release);
}

ThreadApi::~ThreadApi() {
  if (!ring) return;
  Globals& g = G();
  if (g.w.owner != ::getpid()) return;  // a fork()ed child: the parent's lock state is unknown
  std::lock_guard<std::mutex> lock(g.mu);
  DrainRing(g, ring);
  WriteOut(g.w);
  auto& rings = g.api.rings;
  for (size_t i = 0; i < rings.size(); ++i)
    if (rings[i] == ring) {
      rings[i] = rings.back();
      rings.pop_back();
      break;
    }
  delete ring;
  ring = nullptr;
}

ApiRing* ThreadRing(ThreadApi& t) {
  if (t.ring) return t.ring;
  Globals& g = G();
  auto* r = new ApiRing;
  std::lock_guard<std::mutex> lock(g.mu);
  g.api.rings.push_back(r);
  t.ring = r;
  return r;
}

void Push(ThreadApi& t, const ApiEvent& e) {
  ApiRing* r = ThreadRing(t);
  const uint64_t head = r->head.load(std::memory_order_relaxed);
  if (head - r->tail.load(std::memory_order_acquire) >= kRingEvents) {
    Globals& g = G();
    std::lock_guard<std::mutex> lock(g.mu);
    ++g.api.ring_overflow_drains;
    DrainRing(g, r);
    WriteOut(g.w);
  }
  r->ev[head % kRingEvents] = e;
  r->head.store(head + 1, std::memory_order_release);
}

template <typename F>
void ForEachCbid(CUpti_CallbackDomain domain, uint32_t size, F f) {
  for (uint32_t cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) continue;
    f(cbid, StripApiVersion(name));
  }
}

}  // namespace

uint32_t WriterState::ApiName(bool driver, uint32_t cbid) {
  const uint64_t key = (uint64_t{driver ? 1u : 0u} << 32) | cbid;
  auto it = api_names.find(key);
  if (it != api_names.end()) return it->second;
  const char* name = nullptr;
  uint32_t sid = 0;
  if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) ==
          CUPTI_SUCCESS &&
      name)
    sid = Intern(StripApiVersion(name));
  api_names.emplace(key, sid);
  return sid;
}

void ResolveApiCbids(Globals& g) {
  if (g.api.resolved) return;
  g.api.runtime_role.assign(CUPTI_RUNTIME_TRACE_CBID_SIZE, 0);
  g.api.driver_role.assign(CUPTI_DRIVER_TRACE_CBID_SIZE, 0);
  auto role = [](bool driver, std::string_view n) {
    bool per_thread = false;
    const SyncRole r = SyncRoleOf(driver, n, &per_thread);
    return static_cast<uint8_t>(static_cast<uint8_t>(r) | (per_thread && r != SyncRole::kNone ? 0x80 : 0));
  };
  ForEachCbid(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, [&](uint32_t cbid, std::string_view n) {
    if (!MatchApi(false, n)) return;
    g.api.runtime_cbids.push_back(cbid);
    g.api.runtime_role[cbid] = role(false, n);
  });
  ForEachCbid(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, [&](uint32_t cbid, std::string_view n) {
    if (!MatchApi(true, n)) return;
    g.api.driver_cbids.push_back(cbid);
    g.api.driver_role[cbid] = role(true, n);
  });
  g.api.resolved = true;
}

bool SyncFromCallbacks(const Globals& g) {
  return g.config.sync_from_callbacks && g.config.api == ApiRecording::kSelected &&
         g.config.api_mechanism == ApiMechanism::kCallback && g.subscriber != nullptr;
}

void StartApiRecording(Globals& g) {
  if (g.config.api != ApiRecording::kSelected) return;  // kAll: the RUNTIME/DRIVER kinds (EnableKinds); kNone
  const bool driver = g.config.driver_api;
  if (g.config.api_mechanism == ApiMechanism::kActivity) {
    for (uint32_t cbid : g.api.runtime_cbids) cuptiActivityEnableRuntimeApi(cbid, 1);
    if (driver)
      for (uint32_t cbid : g.api.driver_cbids) cuptiActivityEnableDriverApi(cbid, 1);
    g.api.activity_on = true;
    g.api.dedupe_twins = driver;
    return;
  }
  if (!g.subscriber) {
    g.warnings += "no CUPTI subscriber: API calls are not recorded; ";
    return;
  }
  g.api.generation.fetch_add(1);
  g.api.recording.store(true);
  for (uint32_t cbid : g.api.runtime_cbids) cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  if (driver)
    for (uint32_t cbid : g.api.driver_cbids) cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  g.api.callbacks_on = true;
}

void StopApiRecording(Globals& g) {
  if (g.api.activity_on) {
    for (uint32_t cbid : g.api.runtime_cbids) cuptiActivityEnableRuntimeApi(cbid, 0);
    for (uint32_t cbid : g.api.driver_cbids) cuptiActivityEnableDriverApi(cbid, 0);
    g.api.activity_on = false;  // dedupe_twins stays on: the records still in CUPTI's buffers
  }
  if (g.api.callbacks_on) {
    g.api.recording.store(false);
    for (uint32_t cbid : g.api.runtime_cbids) {
      // cudaDeviceReset keeps its flush callback (StartCollector).
      if (cbid != CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 || !g.config.reset_hook)
        cuptiEnableCallback(0, g.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
    }
    for (uint32_t cbid : g.api.driver_cbids) cuptiEnableCallback(0, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    g.api.callbacks_on = false;
  }
}

void DrainApiRings(Globals& g) {
  for (ApiRing* r : g.api.rings) DrainRing(g, r);
}

void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* d) {
  ThreadApi& t = t_api;
  const bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  const uint32_t gen = G().api.generation.load(std::memory_order_relaxed);
  if (t.generation != gen) {  // a new window: calls left open by the last one never exit here
    t.generation = gen;
    t.depth = t.runtime_open = 0;
  }
  if (d->callbackSite == CUPTI_API_ENTER) {
    if (t.depth >= 16) return;  // deeper nesting is not recorded (the exit finds no match)
    ThreadApi::Open& o = t.stack[t.depth++];
    o.correlation = d->correlationId, o.cbid = cbid, o.driver = driver;
    o.skip = driver && t.runtime_open > 0;  // the driver twin of a recorded runtime call
    if (!driver) ++t.runtime_open;
    o.start = o.skip ? 0 : RealtimeNs();
    return;
  }
  if (t.depth == 0) return;  // entered before the window opened
  const ThreadApi::Open& o = t.stack[t.depth - 1];
  if (o.correlation != d->correlationId || o.cbid != cbid || o.driver != driver) return;
  --t.depth;
  if (!driver) --t.runtime_open;
  if (o.skip) return;
  if (t.tid == 0) t.tid = Tid();
  ApiEvent e{};
  e.start = o.start, e.end = RealtimeNs(), e.correlation = o.correlation, e.cbid = cbid, e.tid = t.tid;
  e.driver = driver ? 1 : 0;
  if (d->functionReturnValue) std::memcpy(&e.return_value, d->functionReturnValue, sizeof(e.return_value));
  Globals& g = G();
  if (g.config.sync_from_callbacks) {
    const std::vector<uint8_t>& roles = driver ? g.api.driver_role : g.api.runtime_role;
    if (cbid < roles.size() && roles[cbid] != 0) FillSyncFields(g, roles[cbid], d, e);
  }
  Push(t, e);
}

void CollectRuntimeCorrelations(uint8_t* buffer, size_t valid, std::unordered_set<uint32_t>* out) {
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
    if (rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME)
      out->insert(reinterpret_cast<const CUpti_ActivityAPI*>(rec)->correlationId);
}

}  // namespace overlapscope::cupti::internal
