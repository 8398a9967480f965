#include "workloads/device_memory.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace overlapscope::workloads {

absl::StatusOr<DeviceBuffer> DeviceBuffer::Create(size_t bytes, int device, Allocator a) {
  DeviceBuffer b;
  OS_CUDA(cudaSetDevice(device));
  if (a == Allocator::kNccl) {
    OS_NCCL(ncclMemAlloc(&b.ptr_, bytes));
  } else {
    OS_CUDA(cudaMalloc(&b.ptr_, bytes));
  }
  b.bytes_ = bytes;
  b.device_ = device;
  b.alloc_ = a;
  return b;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    Free();
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    device_ = o.device_;
    alloc_ = o.alloc_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::Free() {
  if (!ptr_) return;
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(device_);
  if (alloc_ == Allocator::kNccl)
    ncclMemFree(ptr_);
  else
    cudaFree(ptr_);
  cudaSetDevice(prev);
  ptr_ = nullptr;
}

DeviceBuffer::~DeviceBuffer() { Free(); }

absl::StatusOr<PinnedBuffer> PinnedBuffer::Create(size_t bytes) {
  PinnedBuffer b;
  OS_CUDA(cudaMallocHost(&b.ptr_, bytes));
  std::memset(b.ptr_, 0, bytes);
  return b;
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = o.ptr_;
    o.ptr_ = nullptr;
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_) cudaFreeHost(ptr_);
}

absl::StatusOr<DeviceChecker> DeviceChecker::Create(int device) {
  DeviceChecker c;
  auto buf = DeviceBuffer::Create(16, device);
  if (!buf.ok()) return buf.status();
  c.buf_ = std::move(buf).value();
  auto host = PinnedBuffer::Create(16);
  if (!host.ok()) return host.status();
  c.host_ = std::move(host).value();
  return c;
}

absl::Status DeviceChecker::Reset(cudaStream_t s) {
  // bad = 0; first_bad = 0x7F7F...7F, a large positive value that atomicMin replaces with the
  // smallest wrong index. Memsets, not pageable copies, so captured traces stay clean.
  OS_CUDA(cudaMemsetAsync(buf_.get(), 0, 8, s));
  OS_CUDA(cudaMemsetAsync(buf_.as<char>() + 8, 0x7F, 8, s));
  return absl::OkStatus();
}

absl::StatusOr<DeviceChecker::Counts> DeviceChecker::Read(cudaStream_t s) {
  OS_CUDA(cudaMemcpyAsync(host_.as<void>(), buf_.get(), 16, cudaMemcpyDeviceToHost, s));
  OS_CUDA(cudaStreamSynchronize(s));
  const long long* host = host_.as<long long>();
  Counts c;
  c.bad = static_cast<uint64_t>(host[0]);
  c.first_bad = host[1] == 0x7F7F7F7F7F7F7F7Fll ? -1 : host[1];
  return c;
}

absl::Status CheckCounts(const DeviceChecker::Counts& c, int rank, const std::string& what, uint64_t total) {
  if (c.bad == 0) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("VALIDATION FAILED on rank ", rank, ": ", what, ": ", c.bad, " of ", total,
                                          " elements wrong (first at element ", c.first_bad, ")"));
}

}  // namespace overlapscope::workloads
