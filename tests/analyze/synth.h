// Synthetic traces for the analysis tests: one process, one host thread, one device with
// streams created on demand; every GPU op can get a launch call linked by correlation id.
#pragma once

#include <string>

#include "gtest/gtest.h"
#include "model/trace.h"
#include "model/trace_builder.h"

namespace overlapscope::analyze::testing {

class Synth {
 public:
  explicit Synth(int rank = 0) {
    model::Process p;
    p.pid = 100 + rank;
    p.rank = rank;
    proc_ = b_.AddProcess(p);
    thread_ = b_.GetOrAddThread(proc_, 1);
    dev_ = b_.GetOrAddDevice(proc_, 0);
  }
  model::TraceBuilder& builder() { return b_; }
  model::ProcessId proc() const { return proc_; }
  model::ThreadId thread() const { return thread_; }
  model::ThreadId Thread(int64_t tid) { return b_.GetOrAddThread(proc_, tid); }
  model::DeviceId dev() const { return dev_; }
  model::StreamId Stream(int64_t native) { return b_.GetOrAddStream(dev_, native); }

  // A runtime call on `thread` (default: the main thread); returns its correlation id.
  int64_t Api(const std::string& name, int64_t s, int64_t e, model::ThreadId th = model::kNone) {
    model::ApiCall a;
    a.start_ns = s;
    a.end_ns = e;
    a.thread = th == model::kNone ? thread_ : th;
    a.correlation_id = next_corr_++;
    a.name = b_.Intern(name);
    b_.data().api_calls.push_back(a);
    return a.correlation_id;
  }
  // A kernel on stream `native`; with launch_s >= 0 a cudaLaunchKernel [launch_s, launch_s+10)
  // enqueues it, otherwise it has no launch call in the trace.
  void Kernel(const std::string& name, int64_t native, int64_t s, int64_t e, int64_t launch_s = -1,
              model::CollectiveId coll = model::kNone, int64_t launch_e = -1) {
    model::Kernel k;
    k.start_ns = s;
    k.end_ns = e;
    k.device = dev_;
    k.stream = Stream(native);
    k.name = b_.Intern(name);
    k.collective = coll;
    if (launch_s >= 0) k.correlation_id = Api("cudaLaunchKernel", launch_s, launch_e >= 0 ? launch_e : launch_s + 10);
    b_.data().kernels.push_back(k);
  }
  // A memcpy enqueued by `call` [call_s, call_e).
  void Memcpy(const std::string& call, int64_t call_s, int64_t call_e, int64_t native, int64_t s, int64_t e,
              model::MemcpyKind kind, model::MemoryKind src, model::MemoryKind dst, int64_t bytes = 4,
              model::ThreadId th = model::kNone) {
    model::Memcpy m;
    m.start_ns = s;
    m.end_ns = e;
    m.device = dev_;
    m.stream = Stream(native);
    m.kind = kind;
    m.src_kind = src;
    m.dst_kind = dst;
    m.bytes = bytes;
    m.name = b_.Intern(std::string("Memcpy ") + std::string(model::ToString(kind)));
    m.is_async = call.find("Async") != std::string::npos ? 1 : 0;
    m.correlation_id = Api(call, call_s, call_e, th);
    b_.data().memcpys.push_back(m);
  }
  void Range(const std::string& name, int64_t s, int64_t e, model::RangeKind kind = model::RangeKind::kUserAnnotation) {
    model::Range r;
    r.start_ns = s;
    r.end_ns = e;
    r.kind = kind;
    r.thread = thread_;
    r.name = b_.Intern(name);
    b_.data().ranges.push_back(r);
  }
  // A Kineto-style cuda_sync record linked to the call with correlation `corr`.
  void SyncRecord(model::SyncKind kind, int64_t s, int64_t e, int64_t corr, int64_t stream_native = -1,
                  model::ThreadId th = model::kNone) {
    model::Sync y;
    y.start_ns = s;
    y.end_ns = e;
    y.kind = kind;
    y.device = dev_;
    y.stream = stream_native >= 0 ? Stream(stream_native) : model::kNone;
    y.correlation_id = corr;
    y.thread = th;
    y.name = b_.Intern(std::string(model::ToString(kind)));
    b_.data().syncs.push_back(y);
  }
  model::CollectiveId Collective(const std::string& op) {
    model::Collective c;
    c.op = b_.Intern(op);
    b_.data().collectives.push_back(c);
    return static_cast<model::CollectiveId>(b_.data().collectives.size() - 1);
  }
  model::Trace Finish() {
    auto t = std::move(b_).Finalize();
    EXPECT_TRUE(t.ok()) << t.status();
    return std::move(t).value();
  }

 private:
  model::TraceBuilder b_;
  model::ProcessId proc_;
  model::ThreadId thread_;
  model::DeviceId dev_;
  int64_t next_corr_ = 1;
};

}  // namespace overlapscope::analyze::testing
