// libnccl-profiler-overlapscope.so driven through its v5 table the way NCCL calls it (no NCCL,
// no GPU): each case runs in a forked child (the plugin sets itself up once per process), the
// parent reads what the child's plugin wrote.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "capture/nccl_plugin/nccl_profiler_abi.h"
#include "formats/ovnccl_format.h"
#include "gtest/gtest.h"
#include "importers/nccl/nccl_plugin_records.h"

namespace overlapscope::import {
using namespace ::overlapscope::formats;  // the record layouts the tests encode
namespace {

namespace abi = ::overlapscope::nccl_plugin::abi;

std::string PluginPath() {
  return std::string(OVERLAPSCOPE_BINARY_DIR) + "/capture/cupti/libnccl-profiler-overlapscope.so";
}

// Runs `body` in a child process; returns its exit code (0 = all its checks passed).
template <typename F>
int InChild(F body, pid_t* child_pid = nullptr) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (child_pid) *child_pid = pid;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

std::string FreshDir(const char* tag) {
  const char* tmp = std::getenv("TMPDIR");
  std::string t = std::string(tmp && *tmp ? tmp : "/tmp") + "/overlapscope-" + tag + "-XXXXXX";
  return ::mkdtemp(t.data()) ? t : "";
}

const abi::ProfilerV5* Load() {
  void* h = ::dlopen(PluginPath().c_str(), RTLD_NOW | RTLD_LOCAL);
  return h ? static_cast<const abi::ProfilerV5*>(::dlsym(h, "ncclProfiler_v5")) : nullptr;
}

int Flush() {
  void* h = ::dlopen(PluginPath().c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto f = h ? reinterpret_cast<int (*)()>(::dlsym(h, "ovscope_nccl_plugin_flush")) : nullptr;
  return f ? f() : 99;
}

TEST(NcclPluginSo, RecordsWhatNcclReports) {
  const std::string dir = FreshDir("nccl_plugin_so");
  constexpr int kThreads = 4, kCalls = 600;  // 2 records per call: 1200 per thread > one ring (1024)
  pid_t child = 0;
  const int rc = InChild(
      [&] {
        ::setenv("OVERLAPSCOPE_NCCL_DIR", dir.c_str(), 1);
        const abi::ProfilerV5* p = Load();
        if (!p) return 1;
        void* ctx = nullptr;
        int mask = 0;
        if (p->init(&ctx, 0x1234, &mask, "tp", 1, 2, 1, nullptr) != abi::kSuccess || !ctx) return 2;
        if (!(mask & abi::kColl) || !(mask & abi::kKernelCh) || !(mask & abi::kCollApi)) return 3;
        abi::EventDescr g{}, a{}, c{}, k{};
        g.type = abi::kGroupApi;
        void *gh = nullptr, *ah = nullptr, *ch = nullptr, *kh = nullptr, *ignored = reinterpret_cast<void*>(1);
        p->start_event(ctx, &gh, &g);
        a.type = abi::kCollApi, a.parent = gh;
        a.coll_api = {"AllGather", 1024, "ncclFloat16", -1, reinterpret_cast<void*>(0x77), false};
        p->start_event(ctx, &ah, &a);
        c.type = abi::kColl, c.parent = ah, c.rank = 1;
        c.coll.seq = 5, c.coll.func = "AllGather", c.coll.count = 1024, c.coll.dtype = "ncclFloat16";
        c.coll.nchannels = 2, c.coll.nwarps = 16, c.coll.algo = "RING", c.coll.proto = "SIMPLE";
        p->start_event(ctx, &ch, &c);
        abi::EventDescr proxy{};
        proxy.type = abi::kProxyOp;  // not asked for: no handle
        p->start_event(ctx, &ignored, &proxy);
        if (!gh || !ah || !ch || ignored) return 4;
        std::thread proxy_thread([&] {  // NCCL reports kernel channels from its proxy thread
          k.type = abi::kKernelCh, k.parent = ch, k.kernel_ch = {3, 1000};
          p->start_event(ctx, &kh, &k);
          abi::StateArgs s{};
          s.kernel_ch.ptimer = 4500;
          p->record_event_state(kh, abi::kKernelChStopState, &s);
          p->stop_event(kh);
        });
        proxy_thread.join();
        p->stop_event(ch), p->stop_event(ah), p->stop_event(gh);
        std::vector<std::thread> ts;
        for (int i = 0; i < kThreads; ++i)
          ts.emplace_back([&] {
            for (int j = 0; j < kCalls; ++j) {
              abi::EventDescr e{};
              e.type = abi::kP2pApi;
              e.p2p_api = {"Send", 8, "ncclInt8", nullptr, false};
              void* h = nullptr;
              p->start_event(ctx, &h, &e);
              p->stop_event(h);
            }
          });
        for (auto& t : ts) t.join();
        if (Flush() != 0) return 5;
        p->finalize(ctx);
        return 0;
      },
      &child);
  ASSERT_EQ(rc, 0);
  auto f = ReadNcclPluginFile(dir + "/nccl." + std::to_string(child) + ".ovnccl");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->pid, child);
  ASSERT_EQ(f->comms.size(), 1u);
  EXPECT_EQ(f->comms[0].comm_id, 0x1234u);
  EXPECT_EQ(f->comms[0].name, "tp");
  ASSERT_EQ(f->colls.size(), 1u);
  const NcclPluginColl& c = f->colls[0];
  EXPECT_EQ(c.seq, 5);
  EXPECT_EQ(c.func, "AllGather");
  EXPECT_EQ(c.algo, "RING");
  EXPECT_EQ(c.nchannels, 2);
  EXPECT_EQ(c.channels_stopped, 1);
  EXPECT_EQ(c.channel_last_stop - c.channel_first_start, 3500);  // 4500 - 1000
  EXPECT_GE(c.end_ns, c.start_ns);
  ASSERT_EQ(f->apis.size(), 2u + kThreads * kCalls);
  int64_t sends = 0, stopped = 0, ordinal_sum = 0;
  for (const auto& a : f->apis) {
    sends += a.func == "Send";
    stopped += a.end_ns >= a.start_ns;
    if (a.func == "Send") ordinal_sum += a.ordinal;
  }
  EXPECT_EQ(sends, kThreads * kCalls);
  EXPECT_EQ(stopped, 2 + kThreads * kCalls);
  // Ordinals of the 2400 sends are 0..2399 in some order: sum = 2399 * 2400 / 2.
  EXPECT_EQ(ordinal_sum, int64_t{2399} * 2400 / 2);
  // Threads' records interleave in the file: find the all-gather call and its group by kind.
  const NcclPluginApi *group = nullptr, *call = nullptr;
  for (const auto& a : f->apis) {
    if (a.type == formats::kTypeGroupApi) group = &a;
    if (a.func == "AllGather") call = &a;
  }
  ASSERT_TRUE(group && call);
  EXPECT_EQ(f->colls[0].parent, call->id);
  EXPECT_EQ(call->parent, group->id);
  EXPECT_EQ(call->stream, 0x77u);
  EXPECT_EQ(call->count, 1024u);
  EXPECT_EQ(group->ordinal, 0);  // the communicator's first group
  EXPECT_EQ(call->ordinal, 0);   // its first all-gather call
  EXPECT_EQ(f->stats.skipped(), 0);
  EXPECT_EQ(f->plugin_dropped, 0);
}

TEST(NcclPluginSo, WithoutDirectoryItRecordsNothing) {
  const std::string dir = FreshDir("nccl_plugin_off");
  const int rc = InChild([&] {
    ::unsetenv("OVERLAPSCOPE_NCCL_DIR");
    const abi::ProfilerV5* p = Load();
    if (!p) return 1;
    void* ctx = reinterpret_cast<void*>(1);
    int mask = -1;
    if (p->init(&ctx, 1, &mask, "", 1, 1, 0, nullptr) != abi::kSuccess) return 2;
    if (mask != 0 || ctx != nullptr) return 3;
    return Flush() == 1 ? 0 : 4;
  });
  EXPECT_EQ(rc, 0);
}

}  // namespace
}  // namespace overlapscope::import
