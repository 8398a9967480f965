// Host blocking and the idle gaps are the same at any thread count (ComputeBlocking: the calls,
// the intervals' notes and the threads' spans in ranges at once; ComputeIdle: ranges of devices
// at once). Real multi-rank traces, ranges of 1 so that they split.
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/context.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze {
namespace {

struct Computed {
  BlockingResult blocking;
  std::vector<DeviceIdle> idle;
  std::vector<IdleGap> gaps;
  std::vector<WindowFigures> windows;
};

// The context, blocking and idle gaps as AnalyzeAll computes them, on `threads` threads.
Computed Compute(const model::Trace& t, int threads, size_t min_chunk) {
  AnalyzeOptions opt;
  opt.threads = threads;
  Context ctx(t, opt);
  ClassificationSummary summary;
  EXPECT_TRUE(PrepareContext(ctx, &summary).ok());
  Computed c;
  ComputeBlocking(ctx, &c.blocking, min_chunk);
  ComputeIdle(ctx, c.blocking, &c.idle, &c.gaps, &c.windows, min_chunk);
  return c;
}

// Every member the reports read, one line per element.
std::string Text(const Computed& c) {
  std::ostringstream o;
  const BlockingResult& b = c.blocking;
  o << "records " << b.sync_records_without_call << " " << b.nonblocking_sync_records << "\n";
  for (const BlockedInterval& x : b.intervals) {
    o << "iv " << x.start_ns << " " << x.end_ns << " " << x.process << " " << x.thread << " " << x.api_call << " "
      << x.sync << " " << x.call << " " << static_cast<int>(x.reason) << " " << x.device << " " << x.stream << " "
      << x.released_by.has_value();
    if (x.released_by) o << " " << static_cast<int>(x.released_by->kind) << ":" << x.released_by->index;
    o << " " << x.device_busy_ns << " " << x.device_idle_ns << " " << x.iteration << " " << x.final_sync << "\n";
  }
  for (const ThreadBlocking& th : b.threads) {
    o << "th " << th.thread << " " << th.process << " " << th.blocked_ns << " " << th.final_sync_ns << " "
      << th.active_span_ns << " " << th.blocked_share.value_or(-1.0);
    for (const CallSite& s : th.top_calls) o << " " << s.call << "/" << s.count << "/" << s.total_ns << "/" << s.max_ns;
    o << "\n";
  }
  for (const DeviceIdle& d : c.idle) {
    o << "dev " << d.device << " " << d.process << " " << d.span_ns << " " << d.busy_ns << " " << d.idle_ns << " "
      << d.gap_ns << " " << d.gaps;
    for (int k = 0; k < kGapCauses; ++k) o << " " << d.cause_ns[k] << "/" << d.cause_count[k];
    const HostSplit& h = d.host_blocked_split;
    o << " " << h.blocked_ns << " " << h.launch_ns << " " << h.other_calls_ns << " " << h.outside_ns << "\n";
  }
  for (const IdleGap& g : c.gaps)
    o << "gap " << g.device << " " << g.start_ns << " " << g.end_ns << " " << static_cast<int>(g.cause) << " "
      << static_cast<int>(g.ended_by.kind) << ":" << g.ended_by.index << " " << g.launch_call << " " << g.thread << " "
      << g.blocked_interval << " " << g.iteration << " " << g.host.blocked_ns << " " << g.host.launch_ns << " "
      << g.host.other_calls_ns << " " << g.host.outside_ns << "\n";
  for (const WindowFigures& w : c.windows)
    o << "win " << w.process << " " << w.gpu_span_ns << " " << w.gpu_busy_ns << " " << w.gpu_idle_ns << " "
      << w.gpu_gap_ns << " " << w.gaps << "\n";
  return o.str();
}

TEST(BlockingIdleThreads, SameResultAtEveryThreadCount) {
  const char* dirs[] = {"torch_diag/w4_sync/fsdp2", "torch_diag/w2_sync/mm_ag_sequential",
                        "torch_diag/w2_default/mm_ag_overlap", "kineto/a2a_async"};
  size_t intervals = 0, gaps = 0, devices = 0;
  for (const char* dir : dirs) {
    const std::string path = std::string(OVERLAPSCOPE_TEST_DATA) + "/" + dir;
    auto t = import::ImportTraces({path + "/rank0.json.gz", path + "/rank1.json.gz"});
    ASSERT_TRUE(t.ok()) << dir << ": " << t.status();
    const Computed one = Compute(*t, 1, size_t{1} << 14);
    intervals += one.blocking.intervals.size(), gaps += one.gaps.size(), devices += one.idle.size();
    const std::string want = Text(one);
    for (int threads : {1, 2, 3, 16}) EXPECT_EQ(want, Text(Compute(*t, threads, 1))) << dir << " threads " << threads;
  }
  // The traces block the host (8 intervals in all), and their devices have idle gaps (79).
  EXPECT_GT(intervals, 4u);
  EXPECT_GT(gaps, 50u);
  EXPECT_GE(devices, 8u);
}

}  // namespace
}  // namespace overlapscope::analyze
