// Helpers of the workload GPU tests: skip reasons and a capture collector that keeps the
// trace and the analysis of every captured mode.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "analyze/analysis.h"
#include "capture/cupti/capture_session.h"
#include "engine/capture.h"
#include "gtest/gtest.h"
#include "workloads/workload.h"

namespace overlapscope::workloads_test {

inline int GpuCount() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

#define WORKLOAD_REQUIRE_GPUS(n)                                                                         \
  do {                                                                                                   \
    if (::overlapscope::workloads_test::GpuCount() < (n))                                                \
      GTEST_SKIP() << "needs " << (n) << " GPU(s), found " << ::overlapscope::workloads_test::GpuCount() \
                   << ": workload test skipped";                                                         \
  } while (0)

struct ModeCapture {
  model::Trace trace;
  analyze::AnalysisResult analysis;
};

// Captures each mode into `modes` (the analysis with default options).
class Collector {
 public:
  Collector() {
    // NCCL's NVTX ranges must reach CUPTI: set the injection before the workload calls NCCL.
    std::string lib = cupti::CuptiLibraryPath();
    if (!lib.empty()) setenv("NVTX_INJECTION64_PATH", lib.c_str(), 0);
  }
  workloads::CaptureHooks Hooks(int iters) {
    workloads::CaptureHooks h;
    h.iters = iters;
    h.begin = [this](const std::string&) -> absl::Status {
      auto s = cupti::CaptureSession::Start();
      if (!s.ok()) return s.status();
      session_ = std::move(s).value();
      return absl::OkStatus();
    };
    h.end = [this](const std::string& mode) -> absl::Status {
      auto t = engine::StopCapture(*session_);
      session_.reset();
      if (!t.ok()) return t.status();
      auto a = analyze::AnalyzeAll(*t, analyze::AnalyzeOptions{});
      if (!a.ok()) return a.status();
      modes[mode] = ModeCapture{std::move(t).value(), std::move(a).value()};
      return absl::OkStatus();
    };
    return h;
  }
  std::map<std::string, ModeCapture> modes;

 private:
  std::unique_ptr<cupti::CaptureSession> session_;
};

inline int64_t HiddenCommNs(const analyze::AnalysisResult& r) {
  int64_t s = 0;
  for (const auto& o : r.overlap) s += o.whole.hidden_comm_ns;
  return s;
}
inline int64_t CommNs(const analyze::AnalysisResult& r) {
  int64_t s = 0;
  for (const auto& o : r.overlap) s += o.whole.comm_ns;
  return s;
}
inline int64_t Findings(const analyze::AnalysisResult& r, std::string_view kind) { return r.sync.Count(kind); }

}  // namespace overlapscope::workloads_test
