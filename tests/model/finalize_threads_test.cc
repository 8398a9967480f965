// TraceBuilder::Finalize sorts and indexes as a graph of tasks (base::RunTaskGraph: the API
// calls' correlation index beside the kernels' sort, the activity lists beside the
// collectives' sort): the same trace, indexes and joins at 1, 2, 3 and 16 threads. The trace is
// built unsorted on purpose (several out-of-order runs per kind, collectives out of start
// order), large enough that the ranged joins cut it into several ranges.
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "model/trace_builder.h"

namespace overlapscope::model {
namespace {

// A small deterministic generator (the same trace every call).
struct Lcg {
  uint64_t x = 12345;
  int64_t Next(int64_t mod) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(mod));
  }
};

std::string FinalizedText(int threads) {
  TraceBuilder b;
  Lcg r;
  const ProcessId p[2] = {b.AddProcess(Process{100, 0, 2}), b.AddProcess(Process{200, 1, 2})};
  ThreadId th[2];
  DeviceId dev[2];
  StreamId st[2][3];
  for (int k = 0; k < 2; ++k) {
    th[k] = b.GetOrAddThread(p[k], 7);
    dev[k] = b.GetOrAddDevice(p[k], 0);
    for (int s = 0; s < 3; ++s) st[k][s] = b.GetOrAddStream(dev[k], 7 + s);
  }
  const StringId names[3] = {b.Intern("cudaLaunchKernel"), b.Intern("cudaMemcpyAsync"), b.Intern("cudaMalloc")};
  constexpr int kCollectives = 300;
  for (int c = 0; c < kCollectives; ++c) {
    Collective col;
    col.process = p[c % 2];
    col.device = dev[c % 2];
    b.data().collectives.push_back(col);
  }
  TraceData& d = b.data();
  // Four runs per kind, each in time order, the runs out of order; correlation ids shared by
  // the two ranks (as real multi-process traces do), some activities without a call.
  for (int run = 0; run < 4; ++run) {
    const int64_t base = (3 - run) * 10'000'000 + r.Next(1000);
    for (int i = 0; i < 12000; ++i) {
      const int k = r.Next(2), s = r.Next(3);
      const int64_t t0 = base + i * 700 + r.Next(300), corr = run * 100000 + i;
      ApiCall a;
      a.start_ns = t0 - 50 - r.Next(40), a.end_ns = t0 - 10, a.thread = th[k], a.correlation_id = corr;
      a.name = names[r.Next(3)];
      d.api_calls.push_back(a);
      const int kind = r.Next(10);
      if (kind < 7) {
        Kernel x;
        x.start_ns = t0, x.end_ns = t0 + 100 + r.Next(500), x.device = dev[k], x.stream = st[k][s];
        x.correlation_id = r.Next(20) == 0 ? kNoCorrelation : corr;
        if (r.Next(8) == 0) x.collective = static_cast<CollectiveId>(r.Next(kCollectives / 2) * 2 + k);
        d.kernels.push_back(x);
      } else if (kind < 9) {
        Memcpy x;
        x.start_ns = t0, x.end_ns = t0 + 50 + r.Next(200), x.device = dev[k], x.stream = st[k][s];
        x.correlation_id = corr;
        if (r.Next(10) == 0) x.collective = static_cast<CollectiveId>(r.Next(kCollectives / 2) * 2 + k);
        d.memcpys.push_back(x);
      } else {
        Memset x;
        x.start_ns = t0, x.end_ns = t0 + 20, x.device = dev[k], x.stream = st[k][s], x.correlation_id = corr;
        d.memsets.push_back(x);
      }
    }
  }
  FinalizeOptions o;
  o.threads = threads;
  auto t = std::move(b).Finalize(o);
  if (!t.ok()) return t.status().ToString();
  std::ostringstream out;
  out << t->start_ns() << " " << t->end_ns() << "\n";
  auto refs = [&](const char* what, size_t i, absl::Span<const GpuRef> v) {
    out << what << i << ":";
    for (GpuRef x : v) out << " " << static_cast<int>(x.kind) << "/" << x.index;
    out << "\n";
  };
  for (size_t s = 0; s < t->streams().size(); ++s) refs("s", s, t->StreamActivities(static_cast<StreamId>(s)));
  for (size_t v = 0; v < t->devices().size(); ++v) refs("d", v, t->DeviceActivities(static_cast<DeviceId>(v)));
  for (size_t c = 0; c < t->collectives().size(); ++c) {
    out << t->collectives()[c].start_ns << " " << t->collectives()[c].end_ns << " ";
    refs("c", c, t->CollectiveActivities(static_cast<CollectiveId>(c)));
  }
  for (size_t i = 0; i < t->kernels().size(); ++i)
    out << t->kernels()[i].start_ns << "," << t->kernels()[i].collective << ","
        << t->LaunchOf({GpuKind::kKernel, static_cast<int32_t>(i)}) << " ";
  for (size_t i = 0; i < t->memcpys().size(); ++i)
    out << t->memcpys()[i].collective << "," << t->LaunchOf({GpuKind::kMemcpy, static_cast<int32_t>(i)}) << " ";
  for (size_t i = 0; i < t->memsets().size(); ++i)
    out << t->LaunchOf({GpuKind::kMemset, static_cast<int32_t>(i)}) << " ";
  for (size_t i = 0; i < t->api_calls().size(); ++i) {
    const ApiCall& a = t->api_calls()[i];
    const ProcessId pr = t->threads()[a.thread].process;
    out << a.start_ns << "," << static_cast<int>(a.semantic) << ","
        << t->ApiCallIndexByCorrelation(pr, a.correlation_id) << ",";
    refs("g", i, t->GpuByCorrelation(pr, a.correlation_id));
  }
  return out.str();
}

TEST(FinalizeThreads, SameTraceAtEveryThreadCount) {
  const std::string one = FinalizedText(1);
  ASSERT_GT(one.size(), 100000u) << one.substr(0, 200);
  EXPECT_NE(one.find("c0: "), std::string::npos);  // the collectives have carriers
  for (int threads : {2, 3, 16}) EXPECT_EQ(FinalizedText(threads), one) << "threads " << threads;
}

}  // namespace
}  // namespace overlapscope::model
