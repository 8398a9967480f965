// model::BuildGpuByCorrelationIndex (Finalize's last step) in ranges on several threads: the
// same keys and activities as one thread, and as a stable sort by (process, correlation id) of
// the activities that have one, for activities whose ids run out of order across two processes
// (the sort's path) and for ids already in order (the path that skips the sort).
#include "model/gpu_by_corr.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "model/trace_builder.h"

namespace overlapscope::model {
namespace {

// Two processes with a device and two streams each; kernel i on process i % 2 with correlation
// id corr(i) (kNoCorrelation for every 13th).
template <typename Corr>
Trace TwoRanks(int n, Corr corr) {
  TraceBuilder b;
  const ProcessId p[2] = {b.AddProcess(Process{100, 0, 2}), b.AddProcess(Process{200, 1, 2})};
  StreamId st[2][2];
  DeviceId dev[2];
  for (int k = 0; k < 2; ++k) {
    dev[k] = b.GetOrAddDevice(p[k], 0);
    for (int s = 0; s < 2; ++s) st[k][s] = b.GetOrAddStream(dev[k], 7 + s);
  }
  for (int i = 0; i < n; ++i) {
    Kernel x;
    x.start_ns = 1000 + 10 * int64_t{i}, x.end_ns = x.start_ns + 5;
    x.device = dev[i % 2], x.stream = st[i % 2][(i / 2) % 2];
    x.correlation_id = i % 13 == 4 ? kNoCorrelation : corr(i);
    b.data().kernels.push_back(x);
  }
  auto t = std::move(b).Finalize();
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

// `all`: the kernels in time order, or with by_process the first process's before the second's.
void ExpectSameAtEveryCount(const Trace& t, bool by_process) {
  std::vector<GpuRef> all;
  for (size_t i = 0; i < t.kernels().size(); ++i) all.push_back({GpuKind::kKernel, static_cast<int32_t>(i)});
  if (by_process)
    std::stable_sort(all.begin(), all.end(), [&](GpuRef a, GpuRef b) {
      return t.devices()[t.streams()[t.StreamOf(a)].device].process <
             t.devices()[t.streams()[t.StreamOf(b)].device].process;
    });
  // The reference: a stable sort of the activities with an id by (process, id).
  std::vector<std::tuple<int32_t, int64_t, GpuRef>> want;
  for (GpuRef r : all)
    if (t.CorrelationOf(r) != kNoCorrelation)
      want.emplace_back(t.devices()[t.streams()[t.StreamOf(r)].device].process, t.CorrelationOf(r), r);
  std::stable_sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
    return std::make_pair(std::get<0>(a), std::get<1>(a)) < std::make_pair(std::get<0>(b), std::get<1>(b));
  });
  for (int threads : {1, 2, 3, 16}) {
    std::vector<std::pair<int32_t, int64_t>> keys = {{9, 9}};  // cleared first
    std::vector<GpuRef> refs;
    BuildGpuByCorrelationIndex(t, all, threads, &keys, &refs, 64);
    ASSERT_EQ(keys.size(), want.size()) << threads;
    ASSERT_EQ(refs.size(), want.size()) << threads;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(keys[i], std::make_pair(std::get<0>(want[i]), std::get<1>(want[i]))) << threads << " at " << i;
      ASSERT_EQ(refs[i].index, std::get<2>(want[i]).index) << threads << " at " << i;
    }
  }
}

TEST(GpuByCorrelationThreads, IdsOutOfOrderSameAtEveryCount) {
  // Ids shuffled, every 5th shared by two activities (a launch that ran several kernels).
  const Trace t = TwoRanks(5000, [](int i) { return int64_t{(i * 7919) % 5000} / 5 * 5; });
  ExpectSameAtEveryCount(t, false);
  ExpectSameAtEveryCount(t, true);
}

TEST(GpuByCorrelationThreads, IdsInOrderSameAtEveryCount) {
  // Ids growing with time in each process: in the index's order with the processes one after the
  // other (the sort skipped), out of it with them interleaved in time.
  const Trace t = TwoRanks(5000, [](int i) { return int64_t{i / 2}; });
  ExpectSameAtEveryCount(t, true);
  ExpectSameAtEveryCount(t, false);
}

}  // namespace
}  // namespace overlapscope::model
