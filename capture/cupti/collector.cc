// The process-wide CUPTI collector (collector.h): registration, buffer pool, spill writing,
// flush points (cudaDeviceReset, context teardown, atexit, fatal signals) and fork safety.
#include "capture/cupti/collector.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "capture/cupti/collector_state.h"
#include "formats/block_framing.h"

namespace overlapscope::cupti::internal {

Globals& G() {
  static Globals* g = new Globals;
  return *g;
}

namespace {

thread_local bool t_in_writer = false;  // this thread holds G().mu (signal handler must not wait)

uint64_t CUPTIAPI TimestampCallback() { return static_cast<uint64_t>(RealtimeNs()); }

std::string ReadSmallFile(const std::string& path) {
  char buf[256];
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return "";
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

// Writes pending bytes as one checksummed block (formats/block_framing.h; the file header goes
// first, unframed, on the first write); drops them when this process does not own the file
// (forked child).
void WriteOut(WriterState& w) {
  if (w.fd < 0 || w.owner != ::getpid()) {
    w.out.clear();
    return;
  }
  char block[formats::kBlockHeaderBytes];
  const size_t at =
      formats::SealPending(w.out.data(), w.out.size(), formats::kSpillMagic, formats::kSpillFileHeaderBytes, block);
  auto write_all = [&w](const char* p, size_t left) {
    while (left > 0) {
      ssize_t n = ::write(w.fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;  // disk full / closed: the reader sees a truncated tail, counted there
      p += n, left -= static_cast<size_t>(n);
    }
    return true;
  };
  if (write_all(w.out.data(), at) && at < w.out.size() && write_all(block, sizeof(block)))
    write_all(w.out.data() + at, w.out.size() - at);
  w.out.clear();
}

namespace {

void AppendStats(WriterState& w) {
  w.stats.failed_buffer_requests = G().failed_buffer_requests.load();
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kStats, w.stats);
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  Globals& g = G();
  *max_records = 0;
  std::lock_guard<std::mutex> lock(g.pool_mu);
  if (!g.free_buffers.empty()) {
    *buffer = g.free_buffers.back();
    g.free_buffers.pop_back();
  } else if (g.allocated < g.pool_max) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, g.pool_buffer_bytes));
    if (*buffer) ++g.allocated;
  } else {
    *buffer = nullptr;
  }
  if (*buffer == nullptr) {
    // CUPTI drops records while it has no buffer and counts them (dropped_records).
    g.failed_buffer_requests.fetch_add(1);
    *size = 0;
    return;
  }
  *size = g.pool_buffer_bytes;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t size, size_t valid) {
  if (buffer == nullptr) return;  // never touch a NULL buffer (a Kineto failure mode)
  Globals& g = G();
  {
    std::lock_guard<std::mutex> lock(g.mu);
    t_in_writer = true;
    WriterState& w = g.w;
    ++w.stats.buffers;
    w.stats.activity_bytes += valid;
    CUpti_Activity* rec = nullptr;
    if (valid > 0 && g.api.dedupe_twins) {
      // Per-callback-id API activity: a driver call inside a recorded runtime call carries the
      // runtime call's correlation id (and lands in the same buffer): keep the runtime record.
      std::unordered_set<uint32_t> runtime;
      CollectRuntimeCorrelations(buffer, valid, &runtime);
      while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_DRIVER &&
            runtime.count(reinterpret_cast<const CUpti_ActivityAPI*>(rec)->correlationId)) {
          ++w.stats.records;
          continue;
        }
        w.Encode(rec);
      }
    } else if (valid > 0) {
      while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) w.Encode(rec);
    }
    DrainApiRings(g);  // callback mode: API records of every thread, at CUPTI's flush pace
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) w.stats.dropped_records += dropped;
    AppendStats(w);  // after every buffer, so a crash keeps the drop count
    WriteOut(w);
    t_in_writer = false;
  }
  std::lock_guard<std::mutex> lock(g.pool_mu);
  if (size == g.pool_buffer_bytes && static_cast<int32_t>(g.free_buffers.size()) < g.pool_max) {
    g.free_buffers.push_back(buffer);
  } else {
    std::free(buffer);
    --g.allocated;
  }
}

// Driver entry points looked up at run time: linking libcuda would stop the overlapscope binary
// from starting on machines without a GPU driver. A process that uses CUDA has it loaded.
struct DriverApi {
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
};
const DriverApi* Driver() {
  // Retried until found: the first call may come before the process loaded libcuda.
  static std::mutex mu;
  static DriverApi api;
  std::lock_guard<std::mutex> lock(mu);
  if (!api.device_get_count) {
    void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return nullptr;
    DriverApi a;
    a.device_get = reinterpret_cast<decltype(a.device_get)>(::dlsym(h, "cuDeviceGet"));
    a.device_get_name = reinterpret_cast<decltype(a.device_get_name)>(::dlsym(h, "cuDeviceGetName"));
    a.device_get_attribute = reinterpret_cast<decltype(a.device_get_attribute)>(::dlsym(h, "cuDeviceGetAttribute"));
    a.device_get_count = reinterpret_cast<decltype(a.device_get_count)>(::dlsym(h, "cuDeviceGetCount"));
    if (!a.device_get || !a.device_get_name || !a.device_get_attribute || !a.device_get_count) return nullptr;
    api = a;
  }
  return &api;
}

void WriteDeviceName(uint32_t device) {
  const DriverApi* drv = Driver();
  if (!drv) return;
  CUdevice dev;
  char name[256] = {0};
  int major = 0, minor = 0;
  if (drv->device_get(&dev, static_cast<int>(device)) != CUDA_SUCCESS) return;
  if (drv->device_get_name(name, sizeof(name) - 1, dev) != CUDA_SUCCESS) return;
  drv->device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  drv->device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  Globals& g = G();
  std::lock_guard<std::mutex> lock(g.mu);
  formats::SpillDevice s{device, g.w.Intern(name), static_cast<uint32_t>(major), static_cast<uint32_t>(minor)};
  formats::SpillEncoder::Append(&g.w.out, formats::SpillType::kDevice, s);
}

void FlushNow() {
  if (!G().active.load()) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Globals& g = G();
  if (!g.active.load(std::memory_order_relaxed)) return;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* d = static_cast<const CUpti_CallbackData*>(data);
    if (IsTriggerCallback(domain, cbid)) return OnTriggerCallback(domain, cbid, data);
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
        d->callbackSite == CUPTI_API_ENTER)
      FlushNow();  // the context's records must leave before the reset destroys it
    if (g.api.recording.load(std::memory_order_relaxed)) OnApiCallback(domain, cbid, d);
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_NVTX) return OnTriggerCallback(domain, cbid, data);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto* rd = static_cast<const CUpti_ResourceData*>(data);
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      uint32_t device = 0;
      if (cuptiGetDeviceId(rd->context, &device) == CUPTI_SUCCESS) WriteDeviceName(device);
    } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      FlushNow();  // cudaDeviceReset / teardown: the context's records must leave first
    }
  }
}

void AtExit() {
  if (G().active.load() && G().w.owner == ::getpid()) StopCollector(EndReason::kAtExit);
}

void OnFatalSignal(int sig, siginfo_t*, void*) {
  static std::atomic<int> entered{0};
  Globals& g = G();
  if (entered.exchange(1) == 0 && !t_in_writer && g.active.load() && g.w.owner == ::getpid()) {
    // Not async-signal-safe in general; an alarm ends the process if the flush hangs.
    ::signal(SIGALRM, SIG_DFL);
    ::alarm(5);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (g.mu.try_lock()) {
      formats::SpillEnd end{RealtimeNs(), static_cast<uint32_t>(EndReason::kSignal), static_cast<uint32_t>(sig)};
      DrainApiRings(g);
      if (g.win.open) {  // racy read: the process is dying, the window state no longer moves
        formats::SpillWindow win{g.win.start_ns, end.time,       g.win.opened,
                                 g.win.trigger,  g.win.name_sid, formats::kWindowEndSignal};
        formats::SpillEncoder::Append(&g.w.out, formats::SpillType::kWindow, win);
      }
      AppendStats(g.w);
      formats::SpillEncoder::Append(&g.w.out, formats::SpillType::kEnd, end);
      WriteOut(g.w);
      ::fsync(g.w.fd);
      g.mu.unlock();
    }
    ::alarm(0);
  }
  // Hand the signal to whoever had it before (default: terminate / core dump).
  sigaction(sig, &g.old_actions[sig], nullptr);
  ::raise(sig);
}

constexpr int kFatalSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGTERM};

void InstallSignalHandlers() {
  Globals& g = G();
  struct sigaction sa {};
  sa.sa_sigaction = OnFatalSignal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : kFatalSignals) sigaction(sig, &sa, &g.old_actions[sig]);
  g.handlers_installed = true;
}

void RestoreSignalHandlers() {
  Globals& g = G();
  if (!g.handlers_installed) return;
  for (int sig : kFatalSignals) sigaction(sig, &g.old_actions[sig], nullptr);
  g.handlers_installed = false;
}

// A fork()ed child shares the parent's file offset but not its CUPTI: it must never write.
void AtForkChild() {
  Globals& g = G();
  g.active.store(false);
  g.w.fd = -1;  // the descriptor stays open in the child; close-on-exec drops it at exec
  g.handlers_installed = false;
}

// CUPTI has one callback subscriber per process. Another CUPTI client may hold it (torch.profiler's
// Kineto keeps its subscriber after its session unless TEARDOWN_CUPTI=1; Nsight tools): then
// g.subscriber stays null and the capture records API calls through activity records instead
// (StartCollector). Called at every start, since the other client may have let go meanwhile.
void TrySubscribe(Globals& g) {
  if (g.subscriber) return;
  if (cuptiSubscribe(&g.subscriber, OnCallback, nullptr) != CUPTI_SUCCESS) {
    g.subscriber = nullptr;
    return;
  }
  cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
}

std::string RegisterOnce() {
  Globals& g = G();
  if (g.registered) return "";
  // The clock must be registered before any kind is enabled, and only once (re-registering
  // mid-process mixes clocks: a Kineto failure mode).
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (cuptiActivityRegisterTimestampCallback(TimestampCallback) != CUPTI_SUCCESS)
    return "cuptiActivityRegisterTimestampCallback failed";
  if (CUptiResult r = cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted); r != CUPTI_SUCCESS) {
    const char* msg = nullptr;
    cuptiGetResultString(r, &msg);
    return std::string("cuptiActivityRegisterCallbacks: ") + (msg ? msg : "error");
  }
  TrySubscribe(g);
  pthread_atfork(nullptr, nullptr, AtForkChild);
  ResolveApiCbids(g);
  g.registered = true;
  return "";
}

}  // namespace

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

bool CollectorActive() { return G().active.load(); }

std::string CuptiLibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) && info.dli_fname) return info.dli_fname;
  return "";
}

static int32_t IntFromEnv(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const char* v = std::getenv(n);
    if (v && *v) {
      char* end = nullptr;
      long x = std::strtol(v, &end, 10);
      if (end && *end == '\0' && x >= 0) return static_cast<int32_t>(x);
    }
  }
  return -1;
}
int32_t RankFromEnv() { return IntFromEnv({"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "LOCAL_RANK"}); }
int32_t WorldSizeFromEnv() {
  return IntFromEnv({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "LOCAL_WORLD_SIZE"});
}

std::string StartCollector(const CollectorConfig& config) {
  Globals& g = G();
  std::lock_guard<std::mutex> control(g.control);
  if (g.active.load()) return "a capture is already active in this process";
  const int fd = ::open(config.spill_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return config.spill_path + ": cannot create spill file: " + std::strerror(errno);
  {
    std::lock_guard<std::mutex> pool(g.pool_mu);
    for (uint8_t* b : g.free_buffers) std::free(b), --g.allocated;
    g.free_buffers.clear();
    g.pool_buffer_bytes = static_cast<size_t>(config.buffer_bytes < (64 << 10) ? (64 << 10) : config.buffer_bytes);
    g.pool_max = config.max_buffers < 2 ? 2 : config.max_buffers;
  }
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.config = config;
    g.w = WriterState{};
    g.w.fd = fd;
    g.w.owner = ::getpid();
    g.failed_buffer_requests.store(0);
    formats::SpillEncoder::AppendFileHeader(&g.w.out);
    char host[256] = {0};
    ::gethostname(host, sizeof(host) - 1);
    formats::SpillProcess p{::getpid(), config.rank,      config.world_size,
                            0,          g.w.Intern(host), g.w.Intern(ReadSmallFile("/proc/self/comm")),
                            0};
    formats::SpillEncoder::Append(&g.w.out, formats::SpillType::kProcess, p);
    WriteOut(g.w);
  }
  if (std::string err = RegisterOnce(); !err.empty()) {
    ::close(fd);
    ::unlink(config.spill_path.c_str());
    g.w.fd = -1;
    return err;
  }
  TrySubscribe(g);
  if (!g.subscriber && g.config.api == ApiRecording::kSelected) {
    // Without the callback API, the API calls come from CUPTI's activity records of the whole
    // RUNTIME/DRIVER kinds (as --api all). Per-call activity enables are not enough: after
    // torch.profiler's session (Kineto keeps CUPTI, disabling those kinds), they deliver nothing,
    // while whole kinds do (measured on the GPU machine). Without this the capture had GPU work
    // but no host calls.
    g.config.api = ApiRecording::kAll;
    const char* line =
        "another CUPTI client holds the callback API (torch.profiler keeps it unless TEARDOWN_CUPTI=1; Nsight "
        "tools): every API call recorded from activity records (as --api all), no flush at cudaDeviceReset; ";
    if (g.warnings.find(line) == std::string::npos) g.warnings += line;
  }
  if (config.flush_period_ms > 0) cuptiActivityFlushPeriod(static_cast<uint32_t>(config.flush_period_ms));
  g.win.opened = g.win.closed = 0;
  g.win.finished = false;
  g.active.store(true);
  if (config.reset_hook && g.subscriber)
    cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
  ArmTriggers(g);  // capture-range callbacks, the --delay/--duration timer
  if (config.range.trigger == RangeTrigger::kNone && config.range.delay_ns <= 0) {
    // No range: one window from now on. A required kind that cannot be enabled fails the start.
    std::string err;
    if (!OpenWindow(config.whole_trigger, nullptr, &err)) {
      DisarmTriggers(g);
      g.active.store(false);
      std::lock_guard<std::mutex> lock(g.mu);
      ::close(fd);
      ::unlink(config.spill_path.c_str());
      g.w.fd = -1;
      return err;
    }
  }
  if (config.crash_handlers) {
    if (!g.atexit_registered) g.atexit_registered = std::atexit(AtExit) == 0;
    InstallSignalHandlers();
  }
  return "";
}

// Enables the activity kinds of a window (g.enabled lists what is on). Returns "" or the first
// required kind that failed (the others are disabled again then); optional failures go to
// g.warnings.
std::string EnableKinds(Globals& g) {
  struct Kind {
    CUpti_ActivityKind kind;
    bool required;
    const char* name;
  };
  const Kind required[] = {
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, true, "CONCURRENT_KERNEL"},
      {CUPTI_ACTIVITY_KIND_MEMCPY, true, "MEMCPY"},
      {CUPTI_ACTIVITY_KIND_MEMSET, true, "MEMSET"},
  };
  // What the analyses and the reader use besides (device names, null streams, stream and thread
  // names, peer copies).
  const Kind lean[] = {
      {CUPTI_ACTIVITY_KIND_DEVICE, false, "DEVICE"},   {CUPTI_ACTIVITY_KIND_CONTEXT, false, "CONTEXT"},
      {CUPTI_ACTIVITY_KIND_STREAM, false, "STREAM"},   {CUPTI_ACTIVITY_KIND_NAME, false, "NAME"},
      {CUPTI_ACTIVITY_KIND_MEMCPY2, false, "MEMCPY2"},
  };
  // Host syncs, stream waits and event records: unless the API callbacks make them.
  const Kind sync[] = {
      {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, false, "SYNCHRONIZATION"},
      {CUPTI_ACTIVITY_KIND_CUDA_EVENT, false, "CUDA_EVENT"},
  };
  // Read by no analysis: external correlation ids (only a client that pushes them has any) and
  // CUPTI's own overhead ranges.
  const Kind full[] = {
      {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, false, "EXTERNAL_CORRELATION"},
      {CUPTI_ACTIVITY_KIND_OVERHEAD, false, "OVERHEAD"},
  };
  g.enabled.clear();
  std::string err;
  auto enable = [&](CUpti_ActivityKind kind, bool required, const char* name) {
    CUptiResult r = cuptiActivityEnable(kind);
    if (r == CUPTI_SUCCESS) {
      g.enabled.push_back(kind);
      return;
    }
    const char* msg = nullptr;
    cuptiGetResultString(r, &msg);
    std::string line = std::string("cuptiActivityEnable(") + name + "): " + (msg ? msg : "error");
    if (required && err.empty())
      err = line;
    else if (g.warnings.find(line) == std::string::npos)
      g.warnings += line + "; ";
  };
  const bool all = g.config.api == ApiRecording::kAll;
  const KindSet set = all ? KindSet::kFull : g.config.kinds;
  const bool sync_kinds = all || !SyncFromCallbacks(g);
  for (const Kind& k : required) enable(k.kind, k.required, k.name);
  if (set != KindSet::kMinimal) {
    for (const Kind& k : lean) enable(k.kind, k.required, k.name);
    if (sync_kinds)
      for (const Kind& k : sync) enable(k.kind, k.required, k.name);
    if (g.config.nvtx) {
      enable(CUPTI_ACTIVITY_KIND_MARKER, false, "MARKER");
      enable(CUPTI_ACTIVITY_KIND_MARKER_DATA, false, "MARKER_DATA");
    }
  }
  if (set == KindSet::kFull)
    for (const Kind& k : full) enable(k.kind, k.required, k.name);
  if (all) {
    enable(CUPTI_ACTIVITY_KIND_RUNTIME, true, "RUNTIME");
    if (g.config.driver_api) enable(CUPTI_ACTIVITY_KIND_DRIVER, false, "DRIVER");
  }
  if (!err.empty()) DisableKinds(g);
  return err;
}

void DisableKinds(Globals& g) {
  for (auto it = g.enabled.rbegin(); it != g.enabled.rend(); ++it) cuptiActivityDisable(*it);
  g.enabled.clear();
}

std::string StopCollector(EndReason reason) {
  Globals& g = G();
  std::lock_guard<std::mutex> control(g.control);
  if (!g.active.load()) return "no capture is active";
  DisarmTriggers(g);  // no window opens from here on
  if (g.subscriber)
    cuptiEnableCallback(0, g.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
  // Close the window (stops producing), then flush what was produced; CUPTI calls
  // BufferCompleted synchronously for every buffer before FlushAll returns.
  CloseWindow(formats::kWindowEndStop);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g.active.store(false);
  RestoreSignalHandlers();
  std::lock_guard<std::mutex> lock(g.mu);
  WriterState& w = g.w;
  DrainApiRings(g);
  const pid_t pid = ::getpid();
  for (uint32_t tid : w.tids) {
    const std::string name = ReadSmallFile("/proc/self/task/" + std::to_string(tid) + "/comm");
    if (name.empty()) continue;
    formats::SpillName n{CUPTI_ACTIVITY_OBJECT_THREAD, static_cast<uint32_t>(pid), tid, w.Intern(name)};
    formats::SpillEncoder::Append(&w.out, formats::SpillType::kName, n);
  }
  AppendStats(w);
  formats::SpillEnd end{RealtimeNs(), static_cast<uint32_t>(reason), 0};
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kEnd, end);
  WriteOut(w);
  if (w.fd >= 0 && w.owner == pid) ::close(w.fd);
  w.fd = -1;
  return "";
}

std::string CollectorWarnings() { return G().warnings; }

void RecordDeviceNames() {
  int n = 0;
  const DriverApi* drv = Driver();
  if (!G().active.load() || !drv || drv->device_get_count(&n) != CUDA_SUCCESS) return;
  for (int i = 0; i < n; ++i) WriteDeviceName(static_cast<uint32_t>(i));
}

}  // namespace overlapscope::cupti::internal
