// Owning handles for the memory the workloads use: device buffers (cudaMalloc or ncclMemAlloc),
// pinned host buffers, and DeviceChecker, the on-device validation counters.
//
// All are move-only and free on the device they were allocated on. Allocation failures come
// back as Status (the CUDA/NCCL error text); frees in destructors ignore errors (the process may
// be failing already).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "workloads/cuda_status.h"
#include "workloads/kernels.h"

namespace overlapscope::workloads {

class DeviceBuffer {
 public:
  enum class Allocator { kCuda, kNccl };
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Create(size_t bytes, int device, Allocator a = Allocator::kCuda);
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void Free();
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  int device_ = 0;
  Allocator alloc_ = Allocator::kCuda;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  static absl::StatusOr<PinnedBuffer> Create(size_t bytes);
  PinnedBuffer(PinnedBuffer&& o) noexcept { *this = std::move(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  ~PinnedBuffer();
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

// Counts wrong elements found by the validation kernels of kernels.h.
class DeviceChecker {
 public:
  static absl::StatusOr<DeviceChecker> Create(int device);
  DeviceCheck check() const {
    return {buf_.as<unsigned long long>(), reinterpret_cast<long long*>(buf_.as<char>() + 8)};
  }
  // Zeroes the counters (asynchronously on `s`).
  absl::Status Reset(cudaStream_t s);
  struct Counts {
    uint64_t bad = 0;
    int64_t first_bad = -1;  // -1: none
  };
  // Synchronizes `s` and reads the counters.
  absl::StatusOr<Counts> Read(cudaStream_t s);

 private:
  DeviceBuffer buf_;
  PinnedBuffer host_;
};

// Turns validation counts into a Status: OK when none were wrong, else DataLoss
// "VALIDATION FAILED on rank R: WHAT: N of TOTAL elements wrong (first at element I)".
absl::Status CheckCounts(const DeviceChecker::Counts& c, int rank, const std::string& what, uint64_t total);

}  // namespace overlapscope::workloads
