// known_work: a CUDA program whose GPU work is known exactly, for the capture tests.
// The constants below are what RunKnownWork("normal") issues; the tests compare a capture
// against them.
#pragma once

#include <cstdint>

namespace overlapscope::testing {

inline constexpr int kKernelA = 10;     // kernel_a on stream s1
inline constexpr int kKernelB = 5;      // kernel_b on stream s2, after s2 waits for event ev (recorded on s1)
inline constexpr int kKernelC = 3;      // kernel_c on the legacy default stream
inline constexpr int kPageableH2D = 2;  // cudaMemcpy from malloc()ed memory (synchronous)
inline constexpr int kPinnedH2D = 3;    // cudaMemcpyAsync on s1 from cudaMallocHost memory
inline constexpr int kPinnedD2H = 2;    // cudaMemcpyAsync on s2 into pinned memory
inline constexpr int kPageableD2H = 1;  // cudaMemcpy into malloc()ed memory (synchronous)
inline constexpr int kMemsets = 2;      // cudaMemsetAsync on s1
inline constexpr int64_t kCopyBytes = 1 << 20;
inline constexpr int kBatchCopies = 3;  // "copies" mode: one cudaMemcpyBatchAsync of 3 DtoD copies
// One of each: cudaStreamWaitEvent(s2, ev), cudaEventSynchronize(ev),
// cudaStreamSynchronize(s2), cudaDeviceSynchronize().
inline constexpr char kOuterRange[] = "known_work";  // nvtxRangePushA, default domain
inline constexpr char kInnerRange[] = "wait_and_b";  // pushed in domain kDomain
inline constexpr char kDomain[] = "KnownDomain";

// Capture-range modes: kRangeIters iterations of kRangeKernels small kernels each, synchronized
// after every iteration. "profiler_ranges": cudaProfilerStart before iteration 40 and 70,
// cudaProfilerStop after iteration 49 and 79 (two ranges of kRangeSteps iterations).
// "nvtx_ranges": the same iterations inside NVTX ranges kRangeName (default domain; each holds a
// nested range "inner" and is preceded by a range "other"), plus iterations 90..94 inside range
// kDomainRangeName of domain kDomain.
inline constexpr int kRangeIters = 100;
inline constexpr int kRangeKernels = 4;
inline constexpr int kRangeSteps = 10;           // iterations per range
inline constexpr int kRangeFirst[2] = {40, 70};  // first iteration of each range
inline constexpr int kDomainRangeSteps = 5;
inline constexpr char kRangeName[] = "capture";
inline constexpr char kDomainRangeName[] = "dcapture";
// "driver_launch": kDriverLaunches kernels through cuLaunchKernel (driver API only, as Triton
// launches) and kDriverLaunches through cudaLaunchKernel, on one stream.
inline constexpr int kDriverLaunches = 5;

// Modes: "normal" (the work above, then return), "abort" / "segv" (the work, then crash),
// "copies" (cudaMemcpyBatchAsync on one GPU; with two GPUs also peer copies and a batch across
// them), "reset_exit" (the work, cudaDeviceReset(), then _exit(0): no atexit handler runs),
// "thread_exit" (the work, then exit(0) from a second thread), "fork" (the work, then a fork()ed
// child that calls exit(0) while the parent waits), "loop N" / "loop_spin N" (overhead loops of
// tiny / ~20 us kernels, print figures).
// Returns 0 on success; prints the failing CUDA call and returns 1 otherwise.
int RunKnownWork(const char* mode, int iterations = 0);

}  // namespace overlapscope::testing
