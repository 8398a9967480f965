// Helpers of the capture GPU tests (capture_util.h).
#include "capture_util.h"

#include <cuda_runtime.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

#include "gtest/gtest.h"
#include "known_work.h"

namespace overlapscope::testing {

std::string NoGpuReason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e);
  if (n == 0) return "no CUDA device";
  return "";
}

std::string BinaryPath(const std::string& name) {
  if (const char* dir = std::getenv("OVERLAPSCOPE_BIN_DIR"); dir && *dir) {
    std::string p = std::string(dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
#ifdef OVERLAPSCOPE_BINARY_DIR
  for (const std::string& sub : {"/cli/", "/tests/gpu/programs/"}) {
    std::string p = std::string(OVERLAPSCOPE_BINARY_DIR) + sub + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
#endif
  return name;
}

std::string FreshDir(const std::string& tag) {
  const char* base = std::getenv("OVERLAPSCOPE_TEST_OUT");
  if (!base || !*base) base = std::getenv("TMPDIR");
  std::string root = (base && *base) ? base : "/tmp";
  ::mkdir(root.c_str(), 0755);
  std::string dir = root + "/" + tag + "." + std::to_string(::getpid());
  RunCommand("rm -rf '" + dir + "'");
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

std::vector<std::string> SpillFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 8 && n.substr(n.size() - 8) == ".ovspill") out.push_back(dir + "/" + n);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int RunCommand(const std::string& cmd) {
  std::printf("$ %s\n", cmd.c_str());
  std::fflush(stdout);
  int status = std::system(cmd.c_str());
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::printf("-> exit %d\n", rc);
  return rc;
}

namespace {

bool Has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

std::string Describe(const model::Trace& t) {
  std::ostringstream o;
  std::map<std::string, int> kernels, copies, syncs, ranges, apis;
  for (const auto& k : t.kernels())
    ++kernels[std::string(t.str(k.name)) + " @stream " + std::to_string(t.streams()[k.stream].native_id)];
  for (const auto& m : t.memcpys())
    ++copies[std::string(t.str(m.name)) + (m.is_async == 1 ? " async" : m.is_async == 0 ? " sync" : " ?") +
             " @stream " + std::to_string(t.streams()[m.stream].native_id)];
  for (const auto& s : t.syncs())
    ++syncs[std::string(model::ToString(s.kind)) + " stream " +
            (s.stream >= 0 ? std::to_string(t.streams()[s.stream].native_id) : "-") + " waits-on " +
            (s.wait_on_stream >= 0 ? std::to_string(t.streams()[s.wait_on_stream].native_id) : "-")];
  for (const auto& r : t.ranges())
    ++ranges[std::string(model::ToString(r.kind)) + " [" + std::string(t.str(r.domain)) + "] " + std::string(t.str(r.name))];
  for (const auto& a : t.api_calls()) ++apis[std::string(t.str(a.name))];
  o << "processes " << t.processes().size() << " devices " << t.devices().size() << " streams " << t.streams().size()
    << " threads " << t.threads().size() << "\n";
  for (const auto& d : t.devices()) o << "  device " << d.ordinal << " name '" << t.str(d.name) << "'\n";
  for (auto* m : {&kernels, &copies, &syncs, &ranges})
    for (const auto& [k, v] : *m) o << "  " << v << " x " << k << "\n";
  for (const char* name : {"cudaLaunchKernel", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemsetAsync",
                           "cudaEventRecord", "cudaStreamWaitEvent", "cuLaunchKernel"})
    o << "  api " << name << ": " << apis[name] << "\n";
  o << "  api calls total " << t.api_calls().size() << "\n";
  for (const auto& s : t.sources()) {
    o << "  source " << s.path << " read " << s.events_read << " kept " << s.events_kept << " skipped "
      << s.skipped() << " dropped " << s.dropped_records << "\n";
    for (const auto& [k, v] : s.skipped_by_reason) o << "    skipped " << k << ": " << v << "\n";
    for (const auto& e : s.examples) o << "    note " << e << "\n";
  }
  return o.str();
}

void ExpectKnownWork(const model::Trace& t) {
  const std::string desc = Describe(t);
  std::printf("%s", desc.c_str());
  SCOPED_TRACE(desc);
  // Streams of each kernel family; each family on exactly one stream, three distinct streams.
  auto family = [&](const char* name) {
    std::vector<const model::Kernel*> v;
    for (const auto& k : t.kernels())
      if (Has(t.str(k.name), name)) v.push_back(&k);
    return v;
  };
  const auto a = family("kernel_a("), b = family("kernel_b("), c = family("kernel_c(");
  ASSERT_EQ(static_cast<int>(a.size()), kKernelA);
  ASSERT_EQ(static_cast<int>(b.size()), kKernelB);
  ASSERT_EQ(static_cast<int>(c.size()), kKernelC);
  EXPECT_EQ(t.kernels().size(), static_cast<size_t>(kKernelA + kKernelB + kKernelC));
  const model::StreamId s1 = a[0]->stream, s2 = b[0]->stream, s0 = c[0]->stream;
  EXPECT_NE(s1, s2);
  EXPECT_NE(s1, s0);
  EXPECT_NE(s2, s0);
  for (auto* k : a) EXPECT_EQ(k->stream, s1);
  for (auto* k : b) EXPECT_EQ(k->stream, s2);
  for (auto* k : c) EXPECT_EQ(k->stream, s0);
  // One stream runs its kernels in issue order without overlap.
  for (size_t i = 1; i < a.size(); ++i) {
    EXPECT_LE(a[i - 1]->end_ns, a[i]->start_ns);
    EXPECT_LT(a[i - 1]->correlation_id, a[i]->correlation_id);
  }
  EXPECT_FALSE(t.str(t.devices()[a[0]->device].name).empty());

  // Copies by (kind, src, dst, async).
  int pageable_h2d = 0, pinned_h2d = 0, pinned_d2h = 0, pageable_d2h = 0;
  int64_t s1_copies_end = 0, s2_copies_end = 0, s1_copies_first_start = INT64_MAX;
  for (const auto& m : t.memcpys()) {
    EXPECT_EQ(m.bytes, kCopyBytes);
    if (m.kind == model::MemcpyKind::kHtoD && m.src_kind == model::MemoryKind::kPageable && m.is_async == 0) ++pageable_h2d;
    if (m.kind == model::MemcpyKind::kHtoD && m.src_kind == model::MemoryKind::kPinned && m.is_async == 1) {
      ++pinned_h2d;
      EXPECT_EQ(m.stream, s1);
      s1_copies_end = std::max(s1_copies_end, m.end_ns);
      s1_copies_first_start = std::min(s1_copies_first_start, m.start_ns);
    }
    if (m.kind == model::MemcpyKind::kDtoH && m.dst_kind == model::MemoryKind::kPinned && m.is_async == 1) {
      ++pinned_d2h;
      EXPECT_EQ(m.stream, s2);
      s2_copies_end = std::max(s2_copies_end, m.end_ns);
    }
    if (m.kind == model::MemcpyKind::kDtoH && m.dst_kind == model::MemoryKind::kPageable && m.is_async == 0) ++pageable_d2h;
  }
  EXPECT_EQ(pageable_h2d, kPageableH2D);
  EXPECT_EQ(pinned_h2d, kPinnedH2D);
  EXPECT_EQ(pinned_d2h, kPinnedD2H);
  EXPECT_EQ(pageable_d2h, kPageableD2H);
  EXPECT_EQ(t.memcpys().size(), static_cast<size_t>(kPageableH2D + kPinnedH2D + kPinnedD2H + kPageableD2H));
  ASSERT_EQ(t.memsets().size(), static_cast<size_t>(kMemsets));
  for (const auto& m : t.memsets()) {
    EXPECT_EQ(m.stream, s1);
    EXPECT_LE(m.end_ns, a[0]->start_ns);  // issued before kernel_a on the same stream
  }
  // GPU-side order across streams: kernel_b waited for the event recorded after the pinned
  // copies on s1.
  for (auto* k : b) EXPECT_GE(k->start_ns, s1_copies_end);
  EXPECT_GE(s1_copies_first_start, a.back()->end_ns);

  // Syncs: one of each kind with the right streams; host waits end after the GPU work they
  // wait for (host and GPU on one clock). 2 µs slack covers CUPTI's GPU->CPU time conversion.
  constexpr int64_t kSlackNs = 2000;
  std::map<model::SyncKind, int> kinds;
  for (const auto& s : t.syncs()) {
    ++kinds[s.kind];
    switch (s.kind) {
      case model::SyncKind::kStreamWaitEvent:
        EXPECT_EQ(s.stream, s2);
        EXPECT_EQ(s.wait_on_stream, s1);
        EXPECT_NE(s.event_record_correlation_id, model::kNoCorrelation);
        break;
      case model::SyncKind::kEventSync:
        EXPECT_EQ(s.stream, s1);
        EXPECT_GE(s.end_ns + kSlackNs, s1_copies_end);
        break;
      case model::SyncKind::kStreamSync:
        EXPECT_EQ(s.stream, s2);
        EXPECT_GE(s.end_ns + kSlackNs, s2_copies_end);
        EXPECT_GE(s.end_ns + kSlackNs, b.back()->end_ns);
        break;
      case model::SyncKind::kContextSync:
        EXPECT_GE(s.end_ns + kSlackNs, c.back()->end_ns);
        break;
      default:
        ADD_FAILURE() << "unexpected sync kind";
    }
    EXPECT_NE(s.thread, model::kNone);
  }
  EXPECT_EQ(kinds[model::SyncKind::kStreamWaitEvent], 1);
  EXPECT_EQ(kinds[model::SyncKind::kEventSync], 1);
  EXPECT_EQ(kinds[model::SyncKind::kStreamSync], 1);
  EXPECT_EQ(kinds[model::SyncKind::kContextSync], 1);

  // API calls: one cudaLaunchKernel per kernel, each before its kernel starts.
  int launches = 0;
  for (const auto& api : t.api_calls()) {
    if (t.str(api.name) != "cudaLaunchKernel") continue;
    ++launches;
    auto gpu = t.GpuByCorrelation(t.ProcessOfThread(api.thread), api.correlation_id);
    ASSERT_EQ(gpu.size(), 1u);
    EXPECT_LE(api.start_ns, t.StartNs(gpu[0]));
  }
  EXPECT_EQ(launches, kKernelA + kKernelB + kKernelC);

  // NVTX: the outer range (default domain) holds every kernel launch; the inner one is in its
  // own domain.
  int outer = 0, inner = 0;
  for (const auto& r : t.ranges()) {
    if (r.kind != model::RangeKind::kNvtx) continue;
    if (t.str(r.name) == kOuterRange && t.str(r.domain).empty()) {
      ++outer;
      for (const auto& api : t.api_calls())
        if (t.str(api.name) == "cudaLaunchKernel") {
          EXPECT_GE(api.start_ns, r.start_ns);
          EXPECT_LE(api.end_ns, r.end_ns);
        }
    }
    if (t.str(r.name) == kInnerRange && t.str(r.domain) == kDomain) ++inner;
  }
  EXPECT_EQ(outer, 1);
  EXPECT_EQ(inner, 1);
  ASSERT_FALSE(t.sources().empty());
  for (const auto& s : t.sources()) EXPECT_EQ(s.dropped_records, 0);
}

}  // namespace overlapscope::testing
