// Synthetic multi-rank traces for the critical-path, straggler and concurrency tests: N processes
// (rank r = process r), one host thread and one GPU each, streams on demand. Correlation ids count
// up from 1 per rank in the order calls are added (as CUPTI's do per process). Times in ns.
#pragma once

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace overlapscope::analyze::testing {

class MultiSynth {
 public:
  explicit MultiSynth(int ranks) : next_corr_(ranks, 1) {
    for (int r = 0; r < ranks; ++r) {
      proc_.push_back(b_.AddProcess(model::Process{1000 + r, r, ranks}));
      thread_.push_back(b_.GetOrAddThread(proc_[r], 1));
      dev_.push_back(b_.GetOrAddDevice(proc_[r], 0));
    }
  }
  model::TraceBuilder& builder() { return b_; }
  model::ThreadId thread(int r) const { return thread_[r]; }
  model::StreamId Stream(int r, int64_t native) { return b_.GetOrAddStream(dev_[r], native); }

  // A host API call [s, e) on rank r's thread; returns its correlation id.
  int64_t Api(int r, const std::string& name, int64_t s, int64_t e) {
    model::ApiCall a;
    a.start_ns = s, a.end_ns = e, a.thread = thread_[r], a.correlation_id = next_corr_[r]++;
    a.name = b_.Intern(name);
    b_.data().api_calls.push_back(a);
    return a.correlation_id;
  }
  // A GPU kernel with correlation `corr` (kNoCorrelation: no launch call).
  void Kernel(int r, const std::string& name, int64_t native, int64_t s, int64_t e, int64_t corr,
              model::CollectiveId coll = model::kNone) {
    model::Kernel k;
    k.start_ns = s, k.end_ns = e, k.device = dev_[r], k.stream = Stream(r, native);
    k.correlation_id = corr, k.collective = coll, k.name = b_.Intern(name);
    b_.data().kernels.push_back(k);
  }
  // cudaLaunchKernel [ls, ls+10) and its kernel [s, e) on stream `native`.
  void Launch(int r, const std::string& name, int64_t native, int64_t ls, int64_t s, int64_t e,
              model::CollectiveId coll = model::kNone) {
    Kernel(r, name, native, s, e, Api(r, "cudaLaunchKernel", ls, ls + 10), coll);
  }
  void Range(int r, const std::string& name, int64_t s, int64_t e,
             model::RangeKind kind = model::RangeKind::kUserAnnotation) {
    model::Range x;
    x.start_ns = s, x.end_ns = e, x.kind = kind, x.thread = thread_[r], x.name = b_.Intern(name);
    b_.data().ranges.push_back(x);
  }
  model::CollectiveId Collective(const std::string& op, int64_t seq, int nranks) {
    model::Collective c;
    c.op = b_.Intern(op);
    c.communicator = b_.Intern("pg0");
    c.sequence = seq;
    c.nranks = nranks;
    b_.data().collectives.push_back(c);
    return static_cast<model::CollectiveId>(b_.data().collectives.size() - 1);
  }
  // A stream-wait-event record: `waiting` stream waits for the event recorded (by the call with
  // correlation `record_corr`) on `recording`; `corr` is the cudaStreamWaitEvent's.
  void StreamWait(int r, int64_t waiting, int64_t recording, int64_t record_corr, int64_t corr, int64_t s) {
    model::Sync y;
    y.start_ns = s, y.end_ns = s, y.kind = model::SyncKind::kStreamWaitEvent, y.device = dev_[r];
    y.stream = Stream(r, waiting), y.wait_on_stream = Stream(r, recording);
    y.event_record_correlation_id = record_corr, y.correlation_id = corr;
    y.name = b_.Intern("Stream Wait Event");
    b_.data().syncs.push_back(y);
  }
  model::Trace Finish() {
    auto t = std::move(b_).Finalize();
    EXPECT_TRUE(t.ok()) << t.status();
    return std::move(t).value();
  }

 private:
  model::TraceBuilder b_;
  std::vector<model::ProcessId> proc_;
  std::vector<model::ThreadId> thread_;
  std::vector<model::DeviceId> dev_;
  std::vector<int64_t> next_corr_;
};

// One step of `ranks` ranks starting at `t0`, the way `overlapscope run ... --delay-rank R
// --delay-us US` injects a straggler: an all-reduce A [t0+100, t0+200) on stream 7, a gemm
// [t0+205, t0+505) (rank `late`: `slow_gemm` longer), then (rank `late` only) `SpinKernelImpl`
// for `spin` ns, then all-reduce B ending at t0+1500 on every rank. All launches are enqueued
// early (t0+50..t0+80), so B arrives when the work before it on the stream ends: t0+505 on
// time, later on the late rank. ProfilerStep#`step` covers [t0, t0+1600).
inline void DelayedStep(MultiSynth& s, int ranks, int64_t t0, int step, int late, int64_t spin, int64_t slow_gemm = 0) {
  for (int r = 0; r < ranks; ++r) {
    s.Range(r, "ProfilerStep#" + std::to_string(step), t0, t0 + 1600);
    const model::CollectiveId a = s.Collective("allreduce", 2 * step, ranks);
    s.Launch(r, "ncclDevKernel_AllReduce_Sum_f32", 7, t0 + 50, t0 + 100, t0 + 200, a);
    const int64_t gemm_end = t0 + 505 + (r == late ? slow_gemm : 0);
    s.Launch(r, "gemm", 7, t0 + 55, t0 + 205, gemm_end);
    int64_t ready = gemm_end;
    if (r == late && spin > 0) {
      s.Launch(r, "SpinKernelImpl", 7, t0 + 60, gemm_end, gemm_end + spin);
      ready = gemm_end + spin;
    }
    const model::CollectiveId b = s.Collective("allreduce", 2 * step + 1, ranks);
    s.Launch(r, "ncclDevKernel_AllReduce_Sum_f32", 7, t0 + 70, ready + 5, t0 + 1500, b);
  }
}

}  // namespace overlapscope::analyze::testing
