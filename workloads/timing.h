// Iteration timing with CUDA events (METRICS.md §7): every iteration is bracketed by events on
// the rank's main stream, extra named intervals (e.g. "gemm" inside an overlapped step) by event
// pairs on whichever stream runs them; results are medians over the timed iterations.
//
// Protocol per iteration: all ranks meet at a barrier, the iteration is enqueued, and the host
// waits for the end event; so iterations never overlap and collectives start together on all
// ranks. The enqueue function must join every stream it used back into the main stream.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/rank_group.h"
#include "workloads/workload.h"

namespace overlapscope::workloads {

// Named CUDA event pairs, created on first use and reused every iteration.
class IterEvents {
 public:
  IterEvents() = default;
  IterEvents(const IterEvents&) = delete;
  IterEvents& operator=(const IterEvents&) = delete;
  ~IterEvents();
  absl::Status Begin(const std::string& name, cudaStream_t s);
  absl::Status End(const std::string& name, cudaStream_t s);
  // Milliseconds of every pair recorded since the last Clear() (call after the end event completed).
  absl::StatusOr<std::map<std::string, double>> Elapsed() const;
  void Clear();

 private:
  struct Pair {
    cudaEvent_t begin = nullptr, end = nullptr;
    bool begun = false, ended = false;
  };
  absl::StatusOr<Pair*> Get(const std::string& name);
  std::map<std::string, Pair> pairs_;
};

// Per-name samples in ms. "total" is the whole iteration.
struct Samples {
  std::map<std::string, std::vector<double>> ms;
  double Median(const std::string& name) const;  // 0 when absent
};

double Median(std::vector<double> v);

// Runs `warmup` + `iters` iterations (see the header comment); samples only the last `iters`.
// With NVTX on (RankGroup::set_nvtx), each timed iteration is an NVTX range "ProfilerStep#<i>".
absl::StatusOr<Samples> TimeIterations(RankContext& ctx, cudaStream_t main, int warmup, int iters,
                                       const std::function<absl::Status(int iter, IterEvents& ev)>& enqueue);

// Interleaved timing: `kinds` are run round-robin, iteration i running kind i % K, for
// `warmup` + `iters` rounds; so every kind sees the same clocks and temperatures (a GPU under
// sustained GEMM load clocks lower than one that just ran a lighter phase, which would bias
// phases measured one after another). Samples are named "<kind>_ms" (whole iteration) and
// "<kind>_<pair>_ms" for the named event pairs the enqueue records.
absl::StatusOr<Samples> TimeInterleaved(RankContext& ctx, cudaStream_t main, int warmup, int iters,
                                        const std::vector<std::string>& kinds,
                                        const std::function<absl::Status(int kind, IterEvents& ev)>& enqueue);

// One collective as the skew figures need it (skew.h): when ctx.rank is p.delay_rank, first a
// one-block spin kernel of p.delay_us µs on `s` (the straggler), then the event pair `pair`
// around `issue()` (which enqueues the collective on `s`). The begin event follows the spin, so
// each rank's pair measures the collective only: its own arrival until everyone has left.
absl::Status TimedCollective(RankContext& ctx, const RunParams& p, IterEvents& ev, const std::string& pair,
                             cudaStream_t s, const std::function<absl::Status()>& issue);

// Appends the samples of the collective pairs to ctx.coll_ms[series]: the samples named
// `sample_prefix + pair` for every pair of `pairs` (TimeIterations: prefix ""; TimeInterleaved:
// "<kind>_" and a "_ms" suffix, which is matched too), pair by pair in the given order, each in
// iteration order; the same order on every rank.
void KeepCollectiveTimes(RankContext& ctx, const Samples& smp, const std::string& sample_prefix,
                         const std::vector<std::string>& pairs, const std::string& series);

// Host monotonic clock in ns (for host-side blocking figures).
int64_t HostNowNs();

}  // namespace overlapscope::workloads
