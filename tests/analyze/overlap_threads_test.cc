// The overlap is the same at any thread count (ComputeOverlap: each device's activities in
// ranges at once, merged in range order). Real multi-rank traces, min_chunk 1 so that each
// device is cut into `threads` ranges and iterations, kernel names and collectives span them.
#include <sstream>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/context.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze {
namespace {

// The overlap as AnalyzeAll computes it (before the wait split), on `threads` threads.
std::vector<DeviceOverlap> Compute(const model::Trace& t, int threads, size_t min_chunk) {
  AnalyzeOptions opt;
  opt.threads = threads;
  Context ctx(t, opt);
  ClassificationSummary summary;
  EXPECT_TRUE(PrepareContext(ctx, &summary).ok());
  std::vector<DeviceOverlap> out;
  ComputeOverlap(ctx, &out, min_chunk);
  return out;
}

void Stats(std::ostringstream& o, const OverlapStats& s) {
  o << s.comm_ns << " " << s.hidden_comm_ns << " " << s.exposed_comm_ns << " " << s.compute_ns << " "
    << s.overlap_ratio.value_or(-1) << " " << s.compute_share_overlapped.value_or(-1) << " " << s.contention_ns << " "
    << s.net_overlap_gain_ns << " " << s.overlapped_compute_instances << " " << s.contention_unknown_instances << " "
    << s.activities << "\n";
}

// Every member, one line per element.
std::string Text(const std::vector<DeviceOverlap>& v) {
  std::ostringstream o;
  for (const DeviceOverlap& d : v) {
    o << "dev " << d.device << " " << d.process << " ";
    Stats(o, d.whole);
    for (const IterationOverlap& i : d.iterations) {
      o << "it " << i.iteration << " " << i.number << " " << i.gpu_start_ns << " " << i.gpu_end_ns << " ";
      Stats(o, i.stats);
    }
    for (const CollectiveOverlap& c : d.collectives)
      o << "co " << c.collective << " " << static_cast<int>(c.first_activity.kind) << ":" << c.first_activity.index
        << " " << c.name << " " << c.stream << " " << c.start_ns << " " << c.end_ns << " " << c.own_ns << " "
        << c.hidden_ns << " " << c.overlap_ratio.value_or(-1) << "\n";
    for (const KernelSlowdown& k : d.slowdowns)
      o << "sl " << k.name << " " << k.overlapped_count << " " << k.alone_count << " " << k.median_overlapped_ns << " "
        << k.median_alone_ns << " " << k.slowdown << "\n";
    for (const Interval& i : d.exposed_comm) o << "ex " << i.start_ns << " " << i.end_ns << "\n";
    for (const Interval& i : d.hidden_comm) o << "hi " << i.start_ns << " " << i.end_ns << "\n";
  }
  return o.str();
}

TEST(OverlapThreads, SameOverlapAtEveryThreadCount) {
  const char* dirs[] = {"torch_diag/w4_sync/fsdp2", "torch_diag/w4_default/dtensor_a2a_compiled",
                        "torch_diag/w2_default/mm_ag_overlap", "kineto/a2a_async"};
  size_t iterations = 0, collectives = 0, slowdowns = 0;
  for (const char* dir : dirs) {
    const std::string path = std::string(OVERLAPSCOPE_TEST_DATA) + "/" + dir;
    auto t = import::ImportTraces({path + "/rank0.json.gz", path + "/rank1.json.gz"});
    ASSERT_TRUE(t.ok()) << dir << ": " << t.status();
    const std::vector<DeviceOverlap> one = Compute(*t, 1, size_t{1} << 14);
    for (const DeviceOverlap& d : one)
      iterations += d.iterations.size(), collectives += d.collectives.size(), slowdowns += d.slowdowns.size();
    const std::string want = Text(one);
    for (int threads : {1, 2, 3, 16}) EXPECT_EQ(want, Text(Compute(*t, threads, 1))) << dir << " threads " << threads;
  }
  // The traces have iterations, collectives and kernels slowed by overlap to merge across ranges.
  EXPECT_GT(iterations, 8u);
  EXPECT_GT(collectives, 20u);
  EXPECT_GT(slowdowns, 2u);
}

}  // namespace
}  // namespace overlapscope::analyze
