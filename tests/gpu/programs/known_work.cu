// known_work (see known_work.h): kernels on several streams, pageable and pinned copies,
// memsets, event and stream syncs, NVTX ranges in two domains.
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "known_work.h"

namespace overlapscope::testing {

__global__ void kernel_a(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 2.0f + 1.0f;
}
__global__ void kernel_b(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 3.0f;
}
__global__ void kernel_c(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] -= 1.0f;
}
__global__ void small_kernel(float* x) { x[threadIdx.x] += 1.0f; }
__global__ void spin_kernel(float* x, long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  x[threadIdx.x] += 1.0f;
}

#define KW_CHECK(call)                                                                    \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "known_work: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

namespace {

int Normal() {
  const int n = static_cast<int>(kCopyBytes / sizeof(float));
  const dim3 block(256), grid((n + 255) / 256);
  KW_CHECK(cudaSetDevice(0));
  nvtxRangePushA(kOuterRange);
  nvtxDomainHandle_t domain = nvtxDomainCreateA(kDomain);
  cudaStream_t s1, s2;
  cudaEvent_t ev;
  KW_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  KW_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  KW_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  float *d1, *d2, *pinned;
  float* pageable = static_cast<float*>(std::calloc(n, sizeof(float)));
  KW_CHECK(cudaMalloc(&d1, kCopyBytes));
  KW_CHECK(cudaMalloc(&d2, kCopyBytes));
  KW_CHECK(cudaMallocHost(&pinned, kCopyBytes));
  for (int i = 0; i < kPageableH2D; ++i) KW_CHECK(cudaMemcpy(d1, pageable, kCopyBytes, cudaMemcpyHostToDevice));
  for (int i = 0; i < kMemsets; ++i) KW_CHECK(cudaMemsetAsync(d2, 0, kCopyBytes, s1));
  for (int i = 0; i < kKernelA; ++i) kernel_a<<<grid, block, 0, s1>>>(d1, n);
  KW_CHECK(cudaGetLastError());
  for (int i = 0; i < kPinnedH2D; ++i) KW_CHECK(cudaMemcpyAsync(d2, pinned, kCopyBytes, cudaMemcpyHostToDevice, s1));
  KW_CHECK(cudaEventRecord(ev, s1));
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = kInnerRange;
  nvtxDomainRangePushEx(domain, &attr);
  KW_CHECK(cudaStreamWaitEvent(s2, ev, 0));
  for (int i = 0; i < kKernelB; ++i) kernel_b<<<grid, block, 0, s2>>>(d2, n);
  KW_CHECK(cudaGetLastError());
  nvtxDomainRangePop(domain);
  for (int i = 0; i < kPinnedD2H; ++i) KW_CHECK(cudaMemcpyAsync(pinned, d2, kCopyBytes, cudaMemcpyDeviceToHost, s2));
  KW_CHECK(cudaEventSynchronize(ev));
  KW_CHECK(cudaStreamSynchronize(s2));
  for (int i = 0; i < kKernelC; ++i) kernel_c<<<grid, block>>>(d1, n);
  KW_CHECK(cudaGetLastError());
  for (int i = 0; i < kPageableD2H; ++i) KW_CHECK(cudaMemcpy(pageable, d1, kCopyBytes, cudaMemcpyDeviceToHost));
  KW_CHECK(cudaDeviceSynchronize());
  nvtxRangePop();
  KW_CHECK(cudaFreeHost(pinned));
  KW_CHECK(cudaFree(d1));
  KW_CHECK(cudaFree(d2));
  KW_CHECK(cudaEventDestroy(ev));
  KW_CHECK(cudaStreamDestroy(s1));
  KW_CHECK(cudaStreamDestroy(s2));
  std::free(pageable);
  return 0;
}

// Overhead loop: `iterations` x 20 kernels on one stream, timed with CUDA events (GPU time) and
// the host clock (wall time). spin_cycles 0: tiny kernels (launch-bound); else each kernel spins
// that many SM cycles (GPU-bound). Prints one LOOP line.
int Loop(int iterations, long long spin_cycles) {
  constexpr int kPerIter = 20;
  float* d;
  cudaStream_t s;
  cudaEvent_t e0, e1;
  KW_CHECK(cudaSetDevice(0));
  KW_CHECK(cudaMalloc(&d, 1024 * sizeof(float)));
  KW_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  KW_CHECK(cudaEventCreate(&e0));
  KW_CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < 50 * kPerIter; ++i) small_kernel<<<1, 256, 0, s>>>(d);  // warm-up
  KW_CHECK(cudaStreamSynchronize(s));
  const auto t0 = std::chrono::steady_clock::now();
  KW_CHECK(cudaEventRecord(e0, s));
  for (int it = 0; it < iterations; ++it)
    for (int k = 0; k < kPerIter; ++k) {
      if (spin_cycles > 0)
        spin_kernel<<<1, 256, 0, s>>>(d, spin_cycles);
      else
        small_kernel<<<1, 256, 0, s>>>(d);
    }
  KW_CHECK(cudaEventRecord(e1, s));
  KW_CHECK(cudaEventSynchronize(e1));
  const auto t1 = std::chrono::steady_clock::now();
  float ms = 0;
  KW_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  const double wall_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  std::printf("LOOP%s iterations=%d kernels_per_iter=%d gpu_us_per_iter=%.3f wall_us_per_iter=%.3f\n",
              spin_cycles > 0 ? "_SPIN" : "", iterations, kPerIter, ms * 1000.0 / iterations, wall_us / iterations);
  KW_CHECK(cudaFree(d));
  return 0;
}

// Copy-engine work as NCCL's zero-CTA collectives issue it: one cudaMemcpyBatchAsync of
// kBatchCopies DtoD copies on GPU 0; with a second GPU also a cudaMemcpyPeerAsync GPU 0 -> 1 and
// a cudaMemcpyBatchAsync of 2 copies GPU 0 -> GPU 1. Every copy is kCopyBytes.
int Copies() {
  int devices = 0;
  KW_CHECK(cudaGetDeviceCount(&devices));
  KW_CHECK(cudaSetDevice(0));
  cudaStream_t s;
  KW_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *src[kBatchCopies], *dst[kBatchCopies];
  size_t sizes[kBatchCopies];
  for (int i = 0; i < kBatchCopies; ++i) {
    KW_CHECK(cudaMalloc(&src[i], kCopyBytes));
    KW_CHECK(cudaMalloc(&dst[i], kCopyBytes));
    sizes[i] = kCopyBytes;
  }
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t attr_idx = 0;
  KW_CHECK(cudaMemcpyBatchAsync(dst, src, sizes, kBatchCopies, &attr, &attr_idx, 1, s));
  if (devices >= 2) {
    void* peer[2];
    KW_CHECK(cudaSetDevice(1));
    for (auto& p : peer) KW_CHECK(cudaMalloc(&p, kCopyBytes));
    KW_CHECK(cudaSetDevice(0));
    KW_CHECK(cudaMemcpyPeerAsync(peer[0], 1, src[0], 0, kCopyBytes, s));
    KW_CHECK(cudaMemcpyBatchAsync(peer, src, sizes, 2, &attr, &attr_idx, 1, s));
  }
  KW_CHECK(cudaStreamSynchronize(s));
  std::printf("known_work copies: %d GPU(s)\n", devices);
  return 0;
}

// Capture ranges (known_work.h): every iteration launches kRangeKernels small kernels and
// synchronizes, so each range holds exactly its iterations' kernels.
int Ranges(bool nvtx) {
  float* d;
  cudaStream_t s;
  KW_CHECK(cudaSetDevice(0));
  KW_CHECK(cudaMalloc(&d, 1024 * sizeof(float)));
  KW_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  nvtxDomainHandle_t domain = nvtxDomainCreateA(kDomain);
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = kDomainRangeName;
  for (int it = 0; it < kRangeIters; ++it) {
    const bool first = it == kRangeFirst[0] || it == kRangeFirst[1];
    const bool last = it == kRangeFirst[0] + kRangeSteps - 1 || it == kRangeFirst[1] + kRangeSteps - 1;
    if (first && nvtx) {
      nvtxRangePushA("other");  // a range of another name opens nothing
      nvtxRangePop();
      nvtxRangePushA(kRangeName);
    } else if (first) {
      KW_CHECK(cudaProfilerStart());
    }
    if (nvtx && it == 90) nvtxDomainRangePushEx(domain, &attr);
    if (nvtx && first) nvtxRangePushA("inner");  // nested: its pop must not close the window
    for (int k = 0; k < kRangeKernels; ++k) small_kernel<<<1, 256, 0, s>>>(d);
    KW_CHECK(cudaGetLastError());
    if (nvtx && first) nvtxRangePop();
    KW_CHECK(cudaStreamSynchronize(s));
    if (nvtx && it == 90 + kDomainRangeSteps - 1) nvtxDomainRangePop(domain);
    if (last && nvtx) nvtxRangePop();
    if (last && !nvtx) KW_CHECK(cudaProfilerStop());
  }
  KW_CHECK(cudaFree(d));
  std::printf("known_work ranges: %d iterations of %d kernels\n", kRangeIters, kRangeKernels);
  return 0;
}

// kDriverLaunches kernels through the driver's cuLaunchKernel alone (looked up through the
// runtime, so that known_work needs no libcuda link) and as many through cudaLaunchKernel.
int DriverLaunch() {
  float* d;
  cudaStream_t s;
  KW_CHECK(cudaSetDevice(0));
  KW_CHECK(cudaMalloc(&d, 1024 * sizeof(float)));
  KW_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void**, void**);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  KW_CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn, 12000, cudaEnableDefault, &q));
  if (!fn || q != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "known_work: cuLaunchKernel entry point not found\n");
    return 1;
  }
  cudaFunction_t func;
  KW_CHECK(cudaGetFuncBySymbol(&func, reinterpret_cast<const void*>(small_kernel)));
  void* args[] = {&d};
  for (int i = 0; i < kDriverLaunches; ++i) {
    const CUresult r = reinterpret_cast<LaunchFn>(fn)(reinterpret_cast<CUfunction>(func), 1, 1, 1, 256, 1, 1, 0,
                                                      reinterpret_cast<CUstream>(s), args, nullptr);
    if (r != CUDA_SUCCESS) {
      std::fprintf(stderr, "known_work: cuLaunchKernel failed: %d\n", static_cast<int>(r));
      return 1;
    }
  }
  for (int i = 0; i < kDriverLaunches; ++i) small_kernel<<<1, 256, 0, s>>>(d);
  KW_CHECK(cudaGetLastError());
  KW_CHECK(cudaStreamSynchronize(s));
  KW_CHECK(cudaFree(d));
  std::printf("known_work driver_launch: %d driver + %d runtime launches\n", kDriverLaunches, kDriverLaunches);
  return 0;
}

}  // namespace

int RunKnownWork(const char* mode, int iterations) {
  if (!std::strcmp(mode, "copies")) return Copies();
  if (!std::strcmp(mode, "profiler_ranges")) return Ranges(false);
  if (!std::strcmp(mode, "nvtx_ranges")) return Ranges(true);
  if (!std::strcmp(mode, "driver_launch")) return DriverLaunch();
  if (!std::strcmp(mode, "loop")) return Loop(iterations > 0 ? iterations : 1000, 0);
  // ~20 us per kernel at H100/H200 clocks (about 1.98 GHz).
  if (!std::strcmp(mode, "loop_spin")) return Loop(iterations > 0 ? iterations : 200, 40000);
  if (int rc = Normal(); rc != 0) return rc;
  std::fflush(stdout);
  if (!std::strcmp(mode, "abort")) std::abort();
  if (!std::strcmp(mode, "segv")) ::raise(SIGSEGV);
  if (!std::strcmp(mode, "reset_exit")) {
    KW_CHECK(cudaDeviceReset());  // the capture flushes here...
    ::_exit(0);                   // ...because no atexit handler runs after this
  }
  if (!std::strcmp(mode, "thread_exit")) {
    std::thread t([] { std::exit(0); });
    t.join();  // never returns: exit() ends the process from the other thread
  }
  if (!std::strcmp(mode, "fork")) {
    const pid_t child = ::fork();
    if (child == 0) {
      ::alarm(20);   // CUDA teardown in a forked child is unsupported; never hang the test
      std::exit(0);  // runs atexit handlers in the child: the capture must not write there
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    std::printf("known_work: forked child %d ended with status %d\n", child, status);
  }
  return 0;
}

}  // namespace overlapscope::testing
