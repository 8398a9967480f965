// Our own declaration of NCCL's profiler plugin interface, version 5 (NCCL 2.28), written from
// the ABI facts of NCCL's src/include/plugin/nccl_profiler.h and
// src/include/plugin/profiler/profiler_v5.h (tag v2.28.3-1). The system nccl.h does not declare
// it. Only the layout and the exported symbol name (kSymbol) are fixed by NCCL; names here are
// ours. The static_asserts pin the x86_64/aarch64 (LP64) offsets the plugin relies on.
#pragma once

#include <cstddef>
#include <cstdint>

namespace overlapscope::nccl_plugin::abi {

// NCCL dlsym()s this object name in the library named by NCCL_PROFILER_PLUGIN.
#define OVSCOPE_NCCL_PROFILER_SYMBOL ncclProfiler_v5

using Result = int;  // ncclResult_t; 0 = ncclSuccess
inline constexpr Result kSuccess = 0;
inline constexpr Result kInternalError = 3;

// Event type bits (descriptor `type`, activation mask).
enum : uint64_t {
  kGroup = 1u << 0,
  kColl = 1u << 1,
  kP2p = 1u << 2,
  kProxyOp = 1u << 3,
  kProxyStep = 1u << 4,
  kProxyCtrl = 1u << 5,
  kKernelCh = 1u << 6,
  kNetPlugin = 1u << 7,
  kGroupApi = 1u << 8,
  kCollApi = 1u << 9,
  kP2pApi = 1u << 10,
  kKernelLaunch = 1u << 11,
};

// recordEventState states the plugin cares about (values of ncclProfilerEventState_t).
enum StateValue : int { kKernelChStopState = 22, kGroupStartApiStop = 23, kGroupEndApiStart = 24 };

// void logger(level, subsystem flags, file, line, printf format, ...)
using Logger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);

struct GroupApiArgs {
  bool graph_captured;
  int group_depth;
};
struct CollApiArgs {
  const char* func;
  size_t count;
  const char* dtype;
  int root;
  void* stream;
  bool graph_captured;
};
struct P2pApiArgs {
  const char* func;
  size_t count;
  const char* dtype;
  void* stream;
  bool graph_captured;
};
struct KernelLaunchArgs {
  void* stream;
};
struct CollArgs {
  uint64_t seq;
  const char* func;
  const void* send_buf;
  void* recv_buf;
  size_t count;
  int root;
  const char* dtype;
  uint8_t nchannels;
  uint8_t nwarps;
  const char* algo;
  const char* proto;
  void* group_v4;
};
struct P2pArgs {
  const char* func;
  void* buf;
  const char* dtype;
  size_t count;
  int peer;
  uint8_t nchannels;
  void* group_v4;
};
struct ProxyOpArgs {
  int pid;
  uint8_t channel;
  int peer;
  int nsteps;
  int chunk_size;
  int is_send;
};
struct ProxyStepArgs {
  int step;
};
struct KernelChArgs {
  uint8_t channel;
  uint64_t ptimer;
};
struct NetPluginArgs {
  int64_t id;
  void* data;
};

struct EventDescr {
  uint64_t type;
  void* parent;  // the parent event's handle as this plugin returned it (or null)
  int rank;
  union {
    GroupApiArgs group_api;
    CollApiArgs coll_api;
    P2pApiArgs p2p_api;
    KernelLaunchArgs kernel_launch;
    CollArgs coll;
    P2pArgs p2p;
    ProxyOpArgs proxy_op;
    ProxyStepArgs proxy_step;
    KernelChArgs kernel_ch;
    NetPluginArgs net_plugin;
  };
};

union StateArgs {
  struct {
    size_t bytes;
  } proxy_step;
  struct {
    int appended;
  } proxy_ctrl;
  struct {
    void* data;
  } net_plugin;
  struct {
    uint64_t ptimer;
  } kernel_ch;
};

struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name, int nnodes, int nranks,
                 int rank, Logger log);
  Result (*start_event)(void* context, void** handle, EventDescr* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, int state, StateArgs* args);
  Result (*finalize)(void* context);
};

static_assert(sizeof(void*) == 8, "LP64 only");
static_assert(offsetof(EventDescr, rank) == 16 && offsetof(EventDescr, coll) == 24, "descriptor head");
static_assert(offsetof(CollApiArgs, root) == 24 && offsetof(CollApiArgs, stream) == 32 &&
                  offsetof(CollApiArgs, graph_captured) == 40,
              "collApi");
static_assert(offsetof(P2pApiArgs, stream) == 24 && offsetof(P2pApiArgs, graph_captured) == 32, "p2pApi");
static_assert(offsetof(CollArgs, count) == 32 && offsetof(CollArgs, root) == 40 && offsetof(CollArgs, dtype) == 48 &&
                  offsetof(CollArgs, nchannels) == 56 && offsetof(CollArgs, nwarps) == 57 &&
                  offsetof(CollArgs, algo) == 64 && offsetof(CollArgs, proto) == 72,
              "coll");
static_assert(offsetof(P2pArgs, count) == 24 && offsetof(P2pArgs, peer) == 32 && offsetof(P2pArgs, nchannels) == 36,
              "p2p");
static_assert(offsetof(KernelChArgs, ptimer) == 8, "kernelCh");
static_assert(sizeof(StateArgs) == 8, "state args");
static_assert(sizeof(ProfilerV5) == 48, "plugin table");

}  // namespace overlapscope::nccl_plugin::abi
