#include "model/trace_builder.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace overlapscope::model {
namespace {

// Two ranks, each with one GPU and two streams; rank 1 reuses rank 0's correlation ids, as
// real multi-process traces do.
struct Fixture {
  TraceBuilder b;
  ProcessId p0, p1;
  ThreadId t0, t1;
  DeviceId d0, d1;
  StreamId s0a, s0b, s1a;
  Fixture() {
    p0 = b.AddProcess(Process{100, 0, 2});
    p1 = b.AddProcess(Process{200, 1, 2});
    t0 = b.GetOrAddThread(p0, 7);
    t1 = b.GetOrAddThread(p1, 7);
    d0 = b.GetOrAddDevice(p0, 0);
    d1 = b.GetOrAddDevice(p1, 0);
    s0a = b.GetOrAddStream(d0, 7);
    s0b = b.GetOrAddStream(d0, 17);
    s1a = b.GetOrAddStream(d1, 7);
  }
  void Kernel(int64_t s, int64_t e, DeviceId d, StreamId st, int64_t corr, CollectiveId c = kNone) {
    model::Kernel k;
    k.start_ns = s;
    k.end_ns = e;
    k.device = d;
    k.stream = st;
    k.correlation_id = corr;
    k.collective = c;
    b.data().kernels.push_back(k);
  }
  void Api(int64_t s, int64_t e, ThreadId t, int64_t corr) {
    ApiCall a;
    a.start_ns = s;
    a.end_ns = e;
    a.thread = t;
    a.correlation_id = corr;
    a.name = b.Intern("cudaLaunchKernel");
    b.data().api_calls.push_back(a);
  }
};

TEST(TraceBuilder, DenseIdsAreReusedPerKey) {
  Fixture f;
  EXPECT_EQ(f.b.GetOrAddThread(f.p0, 7), f.t0);
  EXPECT_NE(f.t0, f.t1);  // same OS tid in another process is another thread
  EXPECT_EQ(f.b.GetOrAddDevice(f.p1, 0), f.d1);
  EXPECT_EQ(f.b.GetOrAddStream(f.d0, 17), f.s0b);
  EXPECT_NE(f.s0a, f.s1a);
}

TEST(TraceBuilder, SortsAndIndexesByStreamDeviceAndCorrelation) {
  Fixture f;
  // Inserted out of order on purpose.
  f.Kernel(300, 400, f.d0, f.s0a, 3);
  f.Kernel(100, 250, f.d0, f.s0b, 1);
  f.Kernel(100, 200, f.d0, f.s0a, 2);
  f.Kernel(50, 60, f.d1, f.s1a, 1);  // rank 1, correlation 1 again
  f.Api(10, 20, f.t0, 1);
  f.Api(30, 40, f.t0, 2);
  f.Api(5, 9, f.t1, 1);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  // Sorted by (start, end): (50,60) (100,200) (100,250) (300,400).
  ASSERT_EQ(t->kernels().size(), 4u);
  EXPECT_EQ(t->kernels()[0].start_ns, 50);
  EXPECT_EQ(t->kernels()[1].end_ns, 200);
  EXPECT_EQ(t->kernels()[2].end_ns, 250);
  EXPECT_EQ(t->kernels()[3].start_ns, 300);
  // Stream s0a holds (100,200) and (300,400) in order.
  auto sa = t->StreamActivities(f.s0a);
  ASSERT_EQ(sa.size(), 2u);
  EXPECT_EQ(t->StartNs(sa[0]), 100);
  EXPECT_EQ(t->StartNs(sa[1]), 300);
  EXPECT_EQ(t->DeviceActivities(f.d0).size(), 3u);
  EXPECT_EQ(t->DeviceActivities(f.d1).size(), 1u);
  // Correlation lookups are per process.
  const ApiCall* a0 = t->ApiCallByCorrelation(f.p0, 1);
  const ApiCall* a1 = t->ApiCallByCorrelation(f.p1, 1);
  ASSERT_NE(a0, nullptr);
  ASSERT_NE(a1, nullptr);
  EXPECT_EQ(a0->start_ns, 10);
  EXPECT_EQ(a1->start_ns, 5);
  EXPECT_EQ(t->ApiCallByCorrelation(f.p1, 2), nullptr);
  auto g = t->GpuByCorrelation(f.p0, 1);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(t->StartNs(g[0]), 100);
  EXPECT_EQ(t->EndNs(g[0]), 250);
  EXPECT_EQ(t->GpuByCorrelation(f.p1, 1).size(), 1u);
  EXPECT_EQ(t->start_ns(), 5);
  EXPECT_EQ(t->end_ns(), 400);
  EXPECT_EQ(t->duplicate_api_correlations(), 0);
}

TEST(TraceBuilder, CollectiveSpansComeFromCarriersAndIdsFollowTheSort) {
  Fixture f;
  // Collective A (inserted first) runs later than collective B.
  f.b.data().collectives.push_back(Collective{});  // id 0 = A
  f.b.data().collectives.push_back(Collective{});  // id 1 = B
  f.b.data().collectives[0].op = f.b.Intern("allgather");
  f.b.data().collectives[1].op = f.b.Intern("all_to_all");
  f.Kernel(500, 700, f.d0, f.s0b, 9, 0);
  f.Kernel(100, 150, f.d0, f.s0b, 8, 1);
  Memcpy m;
  m.start_ns = 140;
  m.end_ns = 180;
  m.device = f.d0;
  m.stream = f.s0b;
  m.collective = 1;
  f.b.data().memcpys.push_back(m);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->collectives().size(), 2u);
  // B spans 100..180 (kernel 100-150, copy 140-180) and now sorts first.
  EXPECT_EQ(t->str(t->collectives()[0].op), "all_to_all");
  EXPECT_EQ(t->collectives()[0].start_ns, 100);
  EXPECT_EQ(t->collectives()[0].end_ns, 180);
  EXPECT_EQ(t->collectives()[0].device, f.d0);
  EXPECT_EQ(t->collectives()[0].process, f.p0);
  EXPECT_EQ(t->collectives()[1].start_ns, 500);
  EXPECT_EQ(t->kernels()[0].collective, 0);  // the kernel at 100 carries B, now id 0
  EXPECT_EQ(t->kernels()[1].collective, 1);
  EXPECT_EQ(t->memcpys()[0].collective, 0);
  ASSERT_EQ(t->CollectiveActivities(0).size(), 2u);
  // Kernels and copies are merged in time order: kernel at 100, copy at 140.
  EXPECT_EQ(t->CollectiveActivities(0)[0].kind, GpuKind::kKernel);
  EXPECT_EQ(t->CollectiveActivities(0)[1].kind, GpuKind::kMemcpy);
  auto stream = t->StreamActivities(f.s0b);
  ASSERT_EQ(stream.size(), 3u);
  EXPECT_EQ(t->StartNs(stream[0]), 100);
  EXPECT_EQ(t->StartNs(stream[1]), 140);
  EXPECT_EQ(t->StartNs(stream[2]), 500);
  EXPECT_EQ(t->CollectiveActivities(1).size(), 1u);
}

TEST(TraceBuilder, CountsDuplicateCorrelationIds) {
  Fixture f;
  f.Api(10, 20, f.t0, 5);
  f.Api(30, 40, f.t0, 5);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->duplicate_api_correlations(), 1);
  EXPECT_EQ(t->ApiCallByCorrelation(f.p0, 5)->start_ns, 10);  // the first one wins
}

TEST(TraceBuilder, RejectsProducerErrors) {
  {
    Fixture f;
    f.Kernel(200, 100, f.d0, f.s0a, 1);  // end before start
    auto t = std::move(f.b).Finalize();
    EXPECT_FALSE(t.ok());
    EXPECT_NE(t.status().message().find("end_ns < start_ns"), std::string::npos);
  }
  {
    Fixture f;
    f.Kernel(100, 200, f.d0, f.s1a, 1);  // stream of another device
    EXPECT_FALSE(std::move(f.b).Finalize().ok());
  }
  {
    Fixture f;
    f.Api(1, 2, 99, 1);  // thread id out of range
    EXPECT_FALSE(std::move(f.b).Finalize().ok());
  }
}

// Three sorted runs (as three files give) and one run of 70 descents (stable_sort path): the
// result is sorted by (start, end), ties in insertion order; correlation ids mark the events.
TEST(TraceBuilder, SortsRunsStablyWhateverTheirNumber) {
  for (int runs : {3, 70}) {
    Fixture f;
    std::vector<std::pair<int64_t, int64_t>> want;  // (start, corr) in the expected order
    int64_t corr = 0;
    for (int r = 0; r < runs; ++r)
      for (int k = 0; k < 3; ++k) {  // run r: starts 10k + (r % 2), all ending 1000
        const int64_t start = 10 * k + (r % 2);
        f.Kernel(start, 1000, f.d0, f.s0a, ++corr);
        want.push_back({start, corr});
      }
    std::stable_sort(want.begin(), want.end(), [](auto a, auto b) { return a.first < b.first; });
    auto t = std::move(f.b).Finalize();
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_EQ(t->kernels().size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(t->kernels()[i].start_ns, want[i].first) << runs << " runs, #" << i;
      EXPECT_EQ(t->kernels()[i].correlation_id, want[i].second) << runs << " runs, #" << i;
    }
  }
}

// The launch call of each activity is joined once: per process, by correlation id, also when the
// ids are too sparse for a direct table (1, 10^12).
TEST(TraceBuilder, LaunchOfJoinsByProcessAndCorrelation) {
  Fixture f;
  f.Api(10, 20, f.t0, 1);
  f.Api(30, 40, f.t0, 1000000000000);
  f.Api(5, 9, f.t1, 1);
  f.Kernel(100, 200, f.d0, f.s0a, 1000000000000);
  f.Kernel(300, 400, f.d0, f.s0a, 1);
  f.Kernel(50, 60, f.d1, f.s1a, 1);
  f.Kernel(70, 80, f.d1, f.s1a, 2);  // no such call in rank 1
  f.Kernel(90, 95, f.d1, f.s1a, kNoCorrelation);
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  auto launch = [&](int i) {
    int32_t a = t->LaunchOf({GpuKind::kKernel, i});
    return a == kNone ? int64_t{-1} : t->api_calls()[a].start_ns;
  };
  // Kernels sorted: (50,60) r1 c1, (70,80) r1 c2, (90,95) r1 none, (100,200) r0 c1e12, (300,400) r0 c1.
  EXPECT_EQ(launch(0), 5);
  EXPECT_EQ(launch(1), -1);
  EXPECT_EQ(launch(2), -1);
  EXPECT_EQ(launch(3), 30);
  EXPECT_EQ(launch(4), 10);
  EXPECT_EQ(t->ApiCallIndexByCorrelation(f.p0, 2), kNone);
  EXPECT_EQ(t->ApiCallIndexByCorrelation(f.p0, kNoCorrelation), kNone);
}

// Sparse ids (too spread for a direct table) in clusters far apart, negative ones, the int64
// extremes and duplicates: every id finds the first call by start that has it, and ids between
// them, in empty buckets and beyond the range find none (checked against a plain map).
TEST(TraceBuilder, SparseCorrelationIdsFoundInTheirBuckets) {
  Fixture f;
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 1000; ++i) ids.push_back(i * 7);
  for (int64_t i = 0; i < 500; ++i) ids.push_back(1000000000000 + i * 13);
  for (int64_t i = 0; i < 300; ++i) ids.push_back(-4000000000000000000 + i);
  ids.push_back(INT64_MAX);
  ids.push_back(INT64_MIN);
  for (int64_t i = 0; i < 50; ++i) ids.push_back(i * 7 * 3);  // duplicates of earlier ids
  std::map<int64_t, int64_t> first_start;                     // id -> start of its first call
  for (size_t i = 0; i < ids.size(); ++i) {
    // Starts interleave the clusters, so the calls' id order is not their start order.
    const int64_t start = static_cast<int64_t>((i * 7919) % ids.size()) * 10 + static_cast<int64_t>(i % 3);
    f.Api(start, start + 1, f.t0, ids[i]);
    auto [it, added] = first_start.emplace(ids[i], start);
    if (!added) it->second = std::min(it->second, start);
  }
  auto t = std::move(f.b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->duplicate_api_correlations(), 50);
  for (const auto& [id, start] : first_start) {
    const int32_t a = t->ApiCallIndexByCorrelation(f.p0, id);
    ASSERT_NE(a, kNone) << id;
    EXPECT_EQ(t->api_calls()[static_cast<size_t>(a)].start_ns, start) << id;
  }
  for (int64_t absent :
       {int64_t{1}, int64_t{6995}, int64_t{7001}, int64_t{500000000000}, int64_t{1000000000001}, int64_t{1000000006500},
        int64_t{-4000000000000000001}, int64_t{-3999999999999999700}, INT64_MAX - 1, INT64_MIN + 1})
    EXPECT_EQ(t->ApiCallIndexByCorrelation(f.p0, absent), kNone) << absent;
  EXPECT_EQ(t->ApiCallIndexByCorrelation(f.p1, 0), kNone);  // no calls in rank 1
}

// A clock shift moves every event of the processes it names before the sort; collective spans
// follow their carriers; the view the callback sees has the collectives but no events.
TEST(TraceBuilder, ClockShiftMovesEveryEventOfAProcessOnce) {
  Fixture f;
  f.b.data().collectives.push_back(Collective{});
  f.Kernel(1000, 1100, f.d1, f.s1a, 1, 0);  // rank 1, its clock 900 ns ahead
  f.Api(950, 960, f.t1, 1);
  f.Kernel(150, 250, f.d0, f.s0a, 1);
  f.Api(100, 110, f.t0, 1);
  size_t seen_collectives = 99, seen_kernels = 99;
  FinalizeOptions o;
  o.clock_shift = [&](const Trace& view) -> absl::StatusOr<ClockShift> {
    seen_collectives = view.collectives().size();
    seen_kernels = view.kernels().size();
    EXPECT_EQ(view.collectives()[0].start_ns, 1000);  // span derived before the callback
    EXPECT_EQ(view.collectives()[0].process, f.p1);
    return ClockShift{{0, -900}, "rank 1 shifted"};
  };
  f.b.data().clock_note = "test clock";
  auto t = std::move(f.b).Finalize(o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(seen_collectives, 1u);
  EXPECT_EQ(seen_kernels, 0u);
  // Sorted on the shifted times: rank 1's kernel (100, 200) now comes first.
  EXPECT_EQ(t->kernels()[0].start_ns, 100);
  EXPECT_EQ(t->kernels()[0].device, f.d1);
  EXPECT_EQ(t->api_calls()[0].start_ns, 50);
  EXPECT_EQ(t->collectives()[0].start_ns, 100);
  EXPECT_EQ(t->collectives()[0].end_ns, 200);
  EXPECT_EQ(t->clock_note(), "test clock; rank 1 shifted");
  EXPECT_EQ(t->start_ns(), 50);
  // The joins are built after the shift.
  EXPECT_EQ(t->LaunchOf({GpuKind::kKernel, 0}), 0);
  // A callback error fails Finalize; a shift for the wrong number of processes too.
  Fixture g;
  FinalizeOptions bad;
  bad.clock_shift = [](const Trace&) -> absl::StatusOr<ClockShift> { return ClockShift{{1, 2, 3}, ""}; };
  EXPECT_FALSE(std::move(g.b).Finalize(bad).ok());
}

TEST(TraceBuilder, EmptyTraceHasZeroSpan) {
  TraceBuilder b;
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->start_ns(), 0);
  EXPECT_EQ(t->end_ns(), 0);
  EXPECT_TRUE(t->StreamActivities(0).empty());
}

}  // namespace
}  // namespace overlapscope::model
