// libovscope_inject.so: CUDA loads it into any program through CUDA_INJECTION64_PATH and calls
// InitializeInjection() from cuInit. It starts the process-wide collector with crash handlers
// (atexit, fatal signals, cudaDeviceReset/context teardown flushes) and writes one spill file:
//   $OVERLAPSCOPE_SPILL_DIR/rank<R>.ovspill   (R from RANK / OMPI_COMM_WORLD_RANK / ... )
//   $OVERLAPSCOPE_SPILL_DIR/pid<P>.ovspill    (no rank in the environment)
// A name that exists already (a child that inherited RANK) gets ".pid<P>" appended.
// What it records: OVERLAPSCOPE_API=all (every API call; default: the table of api_table.h),
// OVERLAPSCOPE_API_MECHANISM=callback|activity (how the default selection is recorded),
// OVERLAPSCOPE_SYNC_RECORDS=callbacks (default here)|cupti, OVERLAPSCOPE_KINDS=min|lean|full,
// OVERLAPSCOPE_NO_API=1, OVERLAPSCOPE_RESET_HOOK=0 (the benchmark's
// breakdown of what each part costs),
// OVERLAPSCOPE_DRIVER_API=0, and the capture range variables of capture_range.h.
// Errors go to stderr prefixed "overlapscope-inject:"; the program then runs uncaptured.
// Only InitializeInjection is exported (version script); nothing else can clash with the host.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "capture/cupti/collector.h"

namespace {

std::string SpillPath(int32_t rank, bool with_pid) {
  const char* dir = std::getenv("OVERLAPSCOPE_SPILL_DIR");
  std::string p = (dir && *dir) ? dir : ".";
  p += rank >= 0 ? "/rank" + std::to_string(rank) : "/pid" + std::to_string(::getpid());
  if (with_pid && rank >= 0) p += ".pid" + std::to_string(::getpid());
  return p + ".ovspill";
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace overlapscope::cupti::internal;
  static bool done = false;  // CUDA calls it once per process; be safe anyway
  if (done) return 1;
  done = true;
  CollectorConfig c;
  c.rank = RankFromEnv();
  c.world_size = WorldSizeFromEnv();
  c.crash_handlers = true;
  if (const char* v = std::getenv("OVERLAPSCOPE_DRIVER_API")) c.driver_api = std::string(v) != "0";
  if (const char* v = std::getenv("OVERLAPSCOPE_API"); v && std::string(v) == "all") c.api = ApiRecording::kAll;
  if (const char* v = std::getenv("OVERLAPSCOPE_NO_API"); v && std::string(v) == "1") c.api = ApiRecording::kNone;
  if (const char* v = std::getenv("OVERLAPSCOPE_KINDS")) {
    if (std::string(v) == "min") c.kinds = KindSet::kMinimal;
    if (std::string(v) == "full") c.kinds = KindSet::kFull;
  }
  // `profile` makes sync and event records from the API callbacks (measured cheaper, tests green
  // both ways on the H100 machine: docs/PERFORMANCE.md); OVERLAPSCOPE_SYNC_RECORDS=cupti turns
  // CUPTI's SYNCHRONIZATION and CUDA_EVENT kinds back on.
  c.sync_from_callbacks = true;
  if (const char* v = std::getenv("OVERLAPSCOPE_SYNC_RECORDS")) c.sync_from_callbacks = std::string(v) != "cupti";
  if (const char* v = std::getenv("OVERLAPSCOPE_RESET_HOOK")) c.reset_hook = std::string(v) != "0";
  if (const char* v = std::getenv("OVERLAPSCOPE_API_MECHANISM"))
    c.api_mechanism = std::string(v) == "activity" ? ApiMechanism::kActivity : ApiMechanism::kCallback;
  if (std::string err = overlapscope::cupti::RangeConfigFromEnv(&c.range); !err.empty()) {
    std::fprintf(stderr, "overlapscope-inject: capture not started: %s\n", err.c_str());
    return 1;
  }
  if (const char* v = std::getenv("OVERLAPSCOPE_BUFFER_MB")) c.buffer_bytes = std::atoll(v) << 20;
  if (const char* v = std::getenv("OVERLAPSCOPE_MAX_BUFFERS")) c.max_buffers = std::atoi(v);
  c.spill_path = SpillPath(c.rank, false);
  if (::access(c.spill_path.c_str(), F_OK) == 0) c.spill_path = SpillPath(c.rank, true);
  std::string err = StartCollector(c);
  if (!err.empty()) {
    std::fprintf(stderr, "overlapscope-inject: capture not started: %s\n", err.c_str());
    return 1;  // CUDA goes on without us
  }
  ::setenv("OVERLAPSCOPE_INJECTED", "1", 1);
  // NVTX must reach the libcupti instance this process actually loaded: a program can bring its
  // own copy (PyTorch wheels ship one), and a second copy loaded from another path through
  // NVTX_INJECTION64_PATH would take the ranges and drop them. `overlapscope profile` marks its
  // own default with OVERLAPSCOPE_NVTX_DEFAULT=1; a path the user set is left alone. This works
  // when the first NVTX call comes after CUDA's initialization (NVTX reads the variable then).
  const char* nvtx = std::getenv("NVTX_INJECTION64_PATH");
  const char* ours = std::getenv("OVERLAPSCOPE_NVTX_DEFAULT");
  if (!nvtx || (ours && *ours == '1')) {
    const std::string cupti = CuptiLibraryPath();
    if (!cupti.empty()) ::setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 1);
  }
  if (std::getenv("OVERLAPSCOPE_VERBOSE"))
    std::fprintf(stderr, "overlapscope-inject: pid %d writes %s (CUPTI %s)%s%s\n", ::getpid(), c.spill_path.c_str(),
                 CuptiLibraryPath().c_str(),
                 CollectorWarnings().empty() ? "" : " warnings: ", CollectorWarnings().c_str());
  return 1;
}
