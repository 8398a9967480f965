// Internal state of the process-wide collector (collector.cc, collector_encode.cc).
// Everything here is guarded by Globals::mu unless noted.
#pragma once

#include <cupti.h>
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "capture/cupti/collector.h"
#include "formats/spill_records.h"

namespace overlapscope::cupti::internal {

// The spill writer: encoded bytes wait in `out` until WriteOut() (after every CUPTI buffer).
struct WriterState {
  int fd = -1;
  pid_t owner = 0;  // only this pid writes (a fork()ed child must not)
  std::string out;
  std::unordered_map<std::string, uint32_t> strings;
  std::unordered_map<uint64_t, uint32_t> api_names;  // (domain << 32 | cbid) -> string id
  std::unordered_set<uint32_t> tids;                 // threads seen, named at Stop
  formats::SpillStats stats{};

  uint32_t Intern(std::string_view s);
  void Encode(const CUpti_Activity* rec);
  uint32_t ApiName(bool driver, uint32_t cbid);  // interned call name without version suffix
};

struct ApiRing;  // a thread's API records in callback mode (collector_api.cc)

// API recording (collector_api.cc). The selected callback ids are resolved once per process.
struct ApiState {
  bool resolved = false;
  std::vector<uint32_t> runtime_cbids, driver_cbids;  // the default selection (api_table.h)
  // Per cbid: SyncRole (api_table.h), | 0x80 for per-thread-stream variants.
  std::vector<uint8_t> runtime_role, driver_role;
  // Callback-made event records: the latest record number of each event handle.
  std::mutex event_mu;
  std::unordered_map<const void*, uint64_t> event_seq;
  uint64_t next_event_seq = 0;
  // Callback mode: set while a window is open; the callbacks check it (a call that began
  // before the window opened is not recorded).
  std::atomic<bool> recording{false};
  std::atomic<uint32_t> generation{0};  // bumped at every window open: stale per-thread state
  bool callbacks_on = false;            // cbids enabled on the subscriber
  bool activity_on = false;             // per-cbid API activity enabled
  bool dedupe_twins = false;            // activity mode: drop driver records of runtime calls
  std::vector<ApiRing*> rings;          // guarded by Globals::mu
  uint64_t ring_overflow_drains = 0;    // a ring filled up and its thread wrote it out itself
};

// Capture windows (collector_window.cc). Guarded by `mu` unless noted.
struct WindowState {
  std::mutex mu;
  std::atomic<bool> open{false};
  int64_t start_ns = 0;
  uint32_t trigger = 0;  // formats::SpillWindowTrigger
  uint32_t name_sid = 0;
  uint32_t opened = 0, closed = 0;
  bool finished = false;                    // --capture-range-end reached: no more windows
  int64_t nvtx_owner_tid = -1;              // thread whose NVTX range opened the window
  int32_t nvtx_depth = 0;                   // its depth in the target domain right after that push
  uint64_t nvtx_range_id = 0;               // nvtxRangeStart id that opened the window (0: a push)
  std::atomic<void*> nvtx_domain{nullptr};  // handle of the target domain (named domains)
  std::atomic<bool> nvtx_domain_known{false};
  std::mutex domains_mu;  // registered NVTX strings (handle -> text)
  std::unordered_map<const void*, std::string> registered_strings;
  // Timer thread for --delay / --duration.
  std::thread timer;
  std::mutex timer_mu;
  std::condition_variable timer_cv;
  bool timer_stop = false;
  bool delay_done = false;
};

struct Globals {
  std::mutex control;  // Start/Stop
  std::mutex mu;       // the writer
  WriterState w;
  CollectorConfig config;
  std::atomic<bool> active{false};  // collector started (a window may or may not be open)
  std::atomic<uint64_t> failed_buffer_requests{0};
  // Buffer pool (own lock: CUPTI asks for buffers from its own threads).
  std::mutex pool_mu;
  std::vector<uint8_t*> free_buffers;
  int32_t allocated = 0;
  size_t pool_buffer_bytes = 0;
  int32_t pool_max = 0;
  // Once per process.
  bool registered = false;
  bool atexit_registered = false;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::vector<CUpti_ActivityKind> enabled;
  std::string warnings;
  ApiState api;
  WindowState win;
  bool handlers_installed = false;
  struct sigaction old_actions[65];
};

// Leaked on purpose: no destructor may run while CUPTI threads still call back at exit.
Globals& G();

// collector.cc
void WriteOut(WriterState& w);
std::string EnableKinds(Globals& g);  // "" or the first required kind that failed
void DisableKinds(Globals& g);
// collector_api.cc
void ResolveApiCbids(Globals& g);
// True when this capture makes sync and event records from API callbacks (collector.h).
bool SyncFromCallbacks(const Globals& g);
void StartApiRecording(Globals& g);  // at window open
void StopApiRecording(Globals& g);   // at window close
void DrainApiRings(Globals& g);      // with g.mu held: every thread's ring into the spill
void OnApiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* d);
// Activity mode: the runtime API correlation ids of one buffer (their driver twins are dropped).
void CollectRuntimeCorrelations(uint8_t* buffer, size_t valid, std::unordered_set<uint32_t>* out);
// collector_window.cc
// Opens a window (trigger: formats::SpillWindowTrigger, name: the NVTX range or nullptr). False when one
// is open already, the last allowed one has closed, or enabling failed (*err says why).
bool OpenWindow(uint32_t trigger, const char* name, std::string* err = nullptr);
void CloseWindow(uint32_t end_reason);
void ArmTriggers(Globals& g);     // trigger callbacks and timer, at StartCollector
void DisarmTriggers(Globals& g);  // at StopCollector
void OnTriggerCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
bool IsTriggerCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

}  // namespace overlapscope::cupti::internal
