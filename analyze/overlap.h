// Communication/computation overlap (METRICS.md §2), per device and per window: whole trace,
// each iteration (activities assigned by launch call), each collective instance. Also the
// overlap cost (contention) and HTA's number for comparison.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyze/interval_set.h"
#include "model/trace.h"

namespace overlapscope::analyze {

// One window's figures. Ratios are absent (nullopt), never NaN, when their denominator is 0:
// overlap_ratio without communication, compute_share_overlapped without compute.
struct OverlapStats {
  int64_t comm_ns = 0;                             // |M|
  int64_t hidden_comm_ns = 0;                      // |C ∩ M|
  int64_t exposed_comm_ns = 0;                     // |M \ C|
  int64_t compute_ns = 0;                          // |C|
  std::optional<double> overlap_ratio;             // hidden / comm
  std::optional<double> compute_share_overlapped;  // hidden / compute
  // Contention: Σ over overlapped compute instances (duration − median alone duration of its name).
  int64_t contention_ns = 0;
  int64_t net_overlap_gain_ns = 0;  // hidden_comm_ns − contention_ns
  int64_t overlapped_compute_instances = 0;
  int64_t contention_unknown_instances = 0;  // overlapped, but the name never ran alone
  int64_t activities = 0;                    // GPU activities in the window
};

struct IterationOverlap {
  int32_t iteration = -1;  // index into AnalysisResult::iterations
  int64_t number = -1;     // ProfilerStep number
  // Span of the GPU activities assigned to the iteration (may extend past its CPU range).
  int64_t gpu_start_ns = 0, gpu_end_ns = 0;
  OverlapStats stats;
};

// One collective instance: a Trace collective, or (when the importer gave none) one comm-class
// activity. Its own time is the union of its carrying activities.
struct CollectiveOverlap {
  model::CollectiveId collective = model::kNone;  // kNone: a comm activity with no collective record
  model::GpuRef first_activity;                   // the first activity that carries it
  model::StringId name = 0;                       // collective op, else the kernel/memcpy name
  model::StreamId stream = model::kNone;
  int64_t start_ns = 0, end_ns = 0;
  int64_t own_ns = 0;                   // union of its activities
  int64_t hidden_ns = 0;                // covered by compute (any stream of the device)
  std::optional<double> overlap_ratio;  // hidden / own; absent for a zero-length instance
  // The exposed part of its time before the last participant arrived (§2 transfer and waiting:
  // the kernel spins for a late peer), and that participant's rank (kNone where participants are
  // told apart by GPU only); 0 and kNone until ComputeCommWait, or where the instance was not
  // matched across ranks or nobody waited.
  int64_t exposed_wait_ns = 0;
  int32_t waited_for_rank = model::kNone;
};

// Per compute-kernel name seen both overlapped and alone.
struct KernelSlowdown {
  model::StringId name = 0;
  int64_t overlapped_count = 0, alone_count = 0;
  int64_t median_overlapped_ns = 0, median_alone_ns = 0;
  double slowdown = 0;  // median overlapped / median alone (alone median > 0 guaranteed)
};

// Transfer and waiting (METRICS §2; analyze/comm_wait.h computes it after the cross-rank matching).
struct WaitedFor {
  int32_t participant = model::kNone;  // index into CrossRankResult::participants
  int64_t wait_ns = 0;                 // this device's collective time before that participant arrived
};
struct CommWait {
  bool known = false;  // at least one collective of the device was matched across ranks
  int64_t comm_wait_ns = 0, hidden_wait_ns = 0, exposed_wait_ns = 0;  // the wait part of comm/hidden/exposed
  std::vector<WaitedFor> waited_for;  // the last arrivals waited for, by wait_ns descending
};

struct DeviceOverlap {
  model::DeviceId device = model::kNone;
  model::ProcessId process = model::kNone;
  OverlapStats whole;                        // the whole trace
  std::vector<IterationOverlap> iterations;  // in iteration order; only iterations with activity here
  std::vector<CollectiveOverlap> collectives;
  std::vector<KernelSlowdown> slowdowns;  // sorted by overlapped count, descending
  std::vector<Interval> exposed_comm;     // M \ C: slices where communication is exposed
  std::vector<Interval> hidden_comm;      // C ∩ M
  CommWait wait;                          // whole trace; `known` false until ComputeCommWait
};

// HTA-compatible overlap for one rank (process): HTA's name rules, µs rounding (start rounded
// up, end down), all devices of the rank together, whole trace. Absent without comm kernels.
// Holistic Trace Analysis' comp_comm_overlap_pctg for one rank (hta_compat.cc), as
// TraceAnalysis(trace_dir).get_comm_comp_overlap() prints it: HTA's kernel-name rules, times
// rounded to whole µs (start up, end down), all GPUs of the rank together, and — HTA's default —
// when the trace names >= 2 distinct ProfilerStep#N, only GPU work whose launch call started
// before the rank's last ProfilerStep (HTA's _filter_irrelevant_gpu_kernels). The whole-trace
// figures apply the same rules without that filter.
struct HtaCompat {
  model::ProcessId process = model::kNone;
  std::optional<double> overlap_pct;  // HTA's default; rounded to 2 decimals, as HTA prints it
  int64_t comm_us = 0, overlap_us = 0;
  std::optional<double> wholetrace_overlap_pct;  // the whole trace, no step filter
  int64_t wholetrace_comm_us = 0, wholetrace_overlap_us = 0;
  bool step_filter = false;        // the default filter applied (>= 2 ProfilerStep names in the trace)
  int64_t last_step_start_us = 0;  // its bound: launch calls starting (µs, rounded up) before it are kept
  int64_t filtered_out = 0;        // GPU activities the filter left out
  int64_t dropped_sub_us = 0;      // activities that vanish under µs rounding (HTA gives them length <= 0)
};

}  // namespace overlapscope::analyze
