// One vocabulary for host API calls of every GPU runtime the importers read: the CUDA runtime
// (cuda*), the CUDA driver (cu*) and the HIP runtime (hip*, as roctracer and rocprofiler name
// calls in Kineto traces). Each call name maps to what the call does for the device (its
// semantic kind); analyses read the kind and never match call names themselves.
//
// TraceBuilder::Finalize() sets ApiCall::semantic for every call from its name, so every
// importer (Kineto JSON, our captures) gets the same answer. Names are compared after dropping
// the per-thread-stream and version suffixes "_ptsz", "_ptds", "_spt", "_v2", "_v3" (and their
// combinations), e.g. cuMemcpyDtoHAsync_v2, hipMemcpyAsync_spt, cudaStreamSynchronize_ptsz.
#pragma once

#include <cstdint>
#include <string_view>

namespace overlapscope::model {

enum class ApiSemantic : uint8_t {
  kOther,        // anything else (attribute queries, stream creation, ...)
  kLaunch,       // enqueues a kernel or a graph: cudaLaunchKernel, cuLaunchKernel, hipLaunchKernel,
                 // hipExtLaunchKernel, hipModuleLaunchKernel, cudaGraphLaunch, hipGraphLaunch, ...
  kCopy,         // synchronous copy: cudaMemcpy*, cuMemcpy*, hipMemcpy* without "Async"
                 // (hipMemcpyWithStream, hipMemcpyDtoH, cudaMemcpyToSymbol, ...)
  kCopyAsync,    // cudaMemcpyAsync, cuMemcpyHtoDAsync_v2, hipMemcpyAsync, cudaMemcpyBatchAsync, ...
  kMemset,       // synchronous memset: cudaMemset, cuMemsetD8_v2, hipMemset, hipMemsetD32, ...
  kMemsetAsync,  // cudaMemsetAsync, cuMemsetD32Async, hipMemsetAsync, ...
  kStreamSync,   // cudaStreamSynchronize, cuStreamSynchronize, hipStreamSynchronize
  kEventSync,    // cudaEventSynchronize, cuEventSynchronize, hipEventSynchronize
  kDeviceSync,   // cudaDeviceSynchronize, cudaThreadSynchronize, cuCtxSynchronize, hipDeviceSynchronize,
                 // hipCtxSynchronize
  kEventRecord,  // cudaEventRecord(WithFlags), cuEventRecord(WithFlags), hipEventRecord(WithFlags)
  kQuery,        // non-blocking completion polls: cudaEventQuery, cudaStreamQuery, hip*, cu*
  kStreamWait,   // a stream waits for an event: cudaStreamWaitEvent, cuStreamWaitEvent, hipStreamWaitEvent
  kAlloc,        // device/host allocation that may synchronize: cudaMalloc*, cuMemAlloc*, hipMalloc*,
                 // hipHostMalloc, hipExtMallocWithFlags
  kFree,         // cudaFree*, cuMemFree*, hipFree*, hipHostFree
  kAllocAsync,   // stream-ordered allocation (no synchronization): cudaMallocAsync, hipMallocAsync, ...
  kFreeAsync,    // cudaFreeAsync, cuMemFreeAsync, hipFreeAsync
};

// The runtime a call belongs to, from its prefix.
enum class ApiVendor : uint8_t { kUnknown, kCudaRuntime, kCudaDriver, kHip };

// Kind of a call by name; kOther for names of no runtime above.
ApiSemantic ClassifyApiCall(std::string_view name);
ApiVendor ApiVendorOf(std::string_view name);
std::string_view ToString(ApiSemantic s);

// Host-blocking kinds: the call itself waits for the device (METRICS.md section 3).
inline bool IsHostSync(ApiSemantic s) {
  return s == ApiSemantic::kStreamSync || s == ApiSemantic::kEventSync || s == ApiSemantic::kDeviceSync;
}
// Calls that enqueue a copy or memset (synchronous or not).
inline bool IsCopyOrMemset(ApiSemantic s) {
  return s == ApiSemantic::kCopy || s == ApiSemantic::kCopyAsync || s == ApiSemantic::kMemset ||
         s == ApiSemantic::kMemsetAsync;
}
// 1 for async copy/memset calls, 0 for synchronous ones, -1 for any other call.
inline int8_t CopyIsAsync(ApiSemantic s) {
  if (s == ApiSemantic::kCopyAsync || s == ApiSemantic::kMemsetAsync) return 1;
  if (s == ApiSemantic::kCopy || s == ApiSemantic::kMemset) return 0;
  return -1;
}

}  // namespace overlapscope::model
