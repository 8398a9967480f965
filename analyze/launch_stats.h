// Launch statistics as Holistic Trace Analysis shows them: launch delay (GPU start − end of its
// launch call, clipped at 0) per stream with percentiles, runtime-call outliers (launch call
// longer than runtime_cutoff), launch-delay outliers, and short kernels (launch call <= cutoff
// and the kernel shorter than its launch call).
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace overlapscope::analyze {

struct Percentiles {
  int64_t count = 0;
  int64_t min_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0;
  double mean_ns = 0;
};

struct StreamLaunchStats {
  model::StreamId stream = model::kNone;
  model::DeviceId device = model::kNone;
  Percentiles launch_delay;           // activities with a launch call in the trace
  int64_t launch_delay_outliers = 0;  // delay > launch_delay_cutoff_ns
  int64_t without_launch_call = 0;
};

struct RuntimeCallStats {
  model::StringId call = 0;  // e.g. cudaLaunchKernel
  model::ProcessId process = model::kNone;
  Percentiles duration;
  int64_t outliers = 0;  // duration > runtime_cutoff_ns
};

struct ShortKernelStats {
  model::StringId name = 0;
  model::DeviceId device = model::kNone;
  int64_t count = 0;
  int64_t gpu_total_ns = 0, cpu_total_ns = 0;  // kernel time vs its launch calls' time
};

struct LaunchStats {
  int64_t runtime_cutoff_ns = 0, launch_delay_cutoff_ns = 0;
  std::vector<StreamLaunchStats> streams;
  std::vector<RuntimeCallStats> calls;          // launch-type calls, by total duration
  std::vector<ShortKernelStats> short_kernels;  // by count, descending
  int64_t short_kernel_count = 0;
};

}  // namespace overlapscope::analyze
