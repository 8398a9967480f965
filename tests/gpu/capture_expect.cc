// Checks of known_work captures (capture_expect.h).
#include "capture_expect.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "known_work.h"

namespace overlapscope::testing {

namespace {

bool Has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace

std::string Describe(const model::Trace& t) {
  std::ostringstream o;
  std::map<std::string, int> kernels, copies, syncs, ranges, apis;
  for (const auto& k : t.kernels())
    ++kernels[std::string(t.str(k.name)) + " @stream " + std::to_string(t.streams()[k.stream].native_id)];
  for (const auto& m : t.memcpys())
    ++copies[std::string(t.str(m.name)) +
             (m.is_async == 1   ? " async"
              : m.is_async == 0 ? " sync"
                                : " ?") +
             " @stream " + std::to_string(t.streams()[m.stream].native_id)];
  for (const auto& s : t.syncs())
    ++syncs[std::string(model::ToString(s.kind)) + " stream " +
            (s.stream >= 0 ? std::to_string(t.streams()[s.stream].native_id) : "-") + " waits-on " +
            (s.wait_on_stream >= 0 ? std::to_string(t.streams()[s.wait_on_stream].native_id) : "-")];
  for (const auto& r : t.ranges())
    ++ranges[std::string(model::ToString(r.kind)) + " [" + std::string(t.str(r.domain)) + "] " +
             std::string(t.str(r.name))];
  for (const auto& a : t.api_calls()) ++apis[std::string(t.str(a.name))];
  o << "processes " << t.processes().size() << " devices " << t.devices().size() << " streams " << t.streams().size()
    << " threads " << t.threads().size() << "\n";
  for (const auto& d : t.devices()) o << "  device " << d.ordinal << " name '" << t.str(d.name) << "'\n";
  for (auto* m : {&kernels, &copies, &syncs, &ranges})
    for (const auto& [k, v] : *m) o << "  " << v << " x " << k << "\n";
  for (const char* name : {"cudaLaunchKernel", "cudaMemcpy", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaEventRecord",
                           "cudaStreamWaitEvent", "cuLaunchKernel"})
    o << "  api " << name << ": " << apis[name] << "\n";
  o << "  api calls total " << t.api_calls().size() << "\n";
  for (const auto& s : t.sources()) {
    o << "  source " << s.path << " read " << s.events_read << " kept " << s.events_kept << " skipped " << s.skipped()
      << " dropped " << s.Count(model::Stat::kCuptiDroppedRecords) << "\n";
    for (const auto& [k, v] : s.details)
      o << "    " << model::Describe(k.first).name << " " << k.second << ": " << v << "\n";
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
    if (m.kind == model::MemcpyKind::kHtoD && m.src_kind == model::MemoryKind::kPageable && m.is_async == 0)
      ++pageable_h2d;
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
    if (m.kind == model::MemcpyKind::kDtoH && m.dst_kind == model::MemoryKind::kPageable && m.is_async == 0)
      ++pageable_d2h;
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
      case model::SyncKind::kContextSync: EXPECT_GE(s.end_ns + kSlackNs, c.back()->end_ns); break;
      default: ADD_FAILURE() << "unexpected sync kind";
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
  for (const auto& s : t.sources()) EXPECT_EQ(s.Count(model::Stat::kCuptiDroppedRecords), 0);
}

void ExpectCopies(const model::Trace& t, int devices) {
  const std::string desc = Describe(t);
  std::printf("%s", desc.c_str());
  SCOPED_TRACE(desc);
  auto ordinal = [&](model::DeviceId d) { return d >= 0 ? t.devices()[d].ordinal : -1; };
  // Per issuing call: bytes that left GPU 0 and bytes that arrived on GPU 1. A peer copy is
  // either one PtoP record (both) or, staged through the host when peer access is off (what
  // H200s showed), a DtoH leg on GPU 0 plus an HtoD leg on GPU 1 under the same correlation.
  struct Call {
    std::string name;
    int64_t out0 = 0, in1 = 0, same_gpu = 0;
  };
  std::vector<Call> calls;
  for (const auto& a : t.api_calls()) {
    const std::string name(t.str(a.name));
    if (name != "cudaMemcpyBatchAsync" && name != "cudaMemcpyPeerAsync") continue;
    Call c{name};
    for (const auto& ref : t.GpuByCorrelation(t.ProcessOfThread(a.thread), a.correlation_id)) {
      if (ref.kind != model::GpuKind::kMemcpy) continue;
      const model::Memcpy& m = t.memcpys()[ref.index];
      EXPECT_EQ(m.is_async, 1);
      if (m.kind == model::MemcpyKind::kPtoP) {
        if (ordinal(m.device) == 0 || ordinal(m.dst_device) == 1) c.out0 += m.bytes, c.in1 += m.bytes;
      } else if (m.kind == model::MemcpyKind::kDtoD) {
        c.same_gpu += m.bytes;
      } else if (ordinal(m.device) == 0) {
        c.out0 += m.bytes;
      } else if (ordinal(m.device) == 1) {
        c.in1 += m.bytes;
      }
    }
    calls.push_back(c);
  }
  ASSERT_EQ(calls.size(), devices >= 2 ? 3u : 1u);
  EXPECT_EQ(calls[0].name, "cudaMemcpyBatchAsync");
  EXPECT_EQ(calls[0].same_gpu, kBatchCopies * kCopyBytes);  // no copy of the batch is lost
  if (devices < 2) return;
  EXPECT_EQ(calls[1].name, "cudaMemcpyPeerAsync");
  EXPECT_EQ(calls[1].out0, kCopyBytes);
  EXPECT_EQ(calls[1].in1, kCopyBytes);
  EXPECT_EQ(calls[2].name, "cudaMemcpyBatchAsync");
  EXPECT_EQ(calls[2].out0, 2 * kCopyBytes);
  EXPECT_EQ(calls[2].in1, 2 * kCopyBytes);
}

}  // namespace overlapscope::testing
