// Capture windows as the analyses see them (METRICS.md §3, §4 over recorded time only).
//
// A trace from our own capture carries its capture windows (model::CaptureWindow): outside them
// nothing was recorded, so no figure may count that time. Per process with windows:
// - GPU idle (span, idle, gaps) is computed inside each window and summed; a gap never spans two
//   windows or the unrecorded time between them.
// - Host blocking keeps the blocked intervals that touch a window; a thread's active span is the
//   sum of its spans inside each window.
// - Without a capture range (one window of trigger kProcess, from CUDA's initialization to exit)
//   the window starts at the process's first kernel (at its launch call, if earlier; at the first
//   GPU activity when there is no kernel): the start-up before it (CUDA and library
//   initialization, weight uploads, module loading) is excluded, and reported as
//   startup_excluded_ns. So start-up is never called idle, and no gap of it is host-blocked.
// A window's figures end at the later of its capture end and the end of the last GPU activity
// that started before the capture end (work launched inside it that ran past it).
// Processes without windows (imported traces) are analyzed over the whole trace, as before.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace overlapscope::analyze {

struct WindowFigures {
  model::ProcessId process = model::kNone;
  int32_t index = 0;  // model::CaptureWindow::index
  model::WindowTrigger trigger = model::WindowTrigger::kProcess;
  model::StringId name = 0;
  int64_t capture_start_ns = 0, capture_end_ns = 0;  // as recorded
  int64_t start_ns = 0, end_ns = 0;                  // what the figures below cover
  int64_t startup_excluded_ns = 0;                   // kProcess: capture start to start_ns
  int64_t kernels = 0, memcpys = 0, memsets = 0;     // GPU activities starting inside [start, end)
  // Summed over the process's devices, inside [start, end) (gpu_idle.cc).
  int64_t gpu_span_ns = 0, gpu_busy_ns = 0, gpu_idle_ns = 0, gpu_gap_ns = 0, gaps = 0;
};

}  // namespace overlapscope::analyze
