// Internal state of the process-wide collector (collector.cc, collector_encode.cc).
// Everything here is guarded by Globals::mu unless noted.
#pragma once

#include <cupti.h>
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
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
};

struct Globals {
  std::mutex control;  // Start/Stop
  std::mutex mu;       // the writer
  WriterState w;
  CollectorConfig config;
  std::atomic<bool> active{false};
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
  bool handlers_installed = false;
  struct sigaction old_actions[65];
};

// Leaked on purpose: no destructor may run while CUPTI threads still call back at exit.
Globals& G();

}  // namespace overlapscope::cupti::internal
