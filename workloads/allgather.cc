#include "workloads/allgather.h"

#include <algorithm>

namespace overlapscope::workloads {
namespace {
constexpr uint32_t kSalt = 0xA11;
}

absl::StatusOr<AllGatherBuffers> AllGatherBuffers::Create(RankContext& ctx, ncclComm_t comm, double mib,
                                                          bool symmetric) {
  AllGatherBuffers b;
  b.count_ = std::max<int64_t>(1024, static_cast<int64_t>(mib * 1024 * 1024 / 4) / 1024 * 1024);
  b.nranks_ = ctx.nranks;
  b.comm_ = comm;
  const auto alloc = symmetric ? DeviceBuffer::Allocator::kNccl : DeviceBuffer::Allocator::kCuda;
  ASSIGN_OR_RETURN(b.send_, DeviceBuffer::Create(b.count_ * 4, ctx.device, alloc));
  ASSIGN_OR_RETURN(b.recv_, DeviceBuffer::Create(b.count_ * 4 * ctx.nranks, ctx.device, alloc));
  if (symmetric) {
    OS_NCCL(ncclCommWindowRegister(comm, b.send_.get(), b.send_.bytes(), &b.send_win_, NCCL_WIN_COLL_SYMMETRIC));
    OS_NCCL(ncclCommWindowRegister(comm, b.recv_.get(), b.recv_.bytes(), &b.recv_win_, NCCL_WIN_COLL_SYMMETRIC));
  }
  OS_CUDA(FillPattern32(b.send_.as<uint32_t>(), b.count_, ctx.rank, kSalt, ctx.compute));
  OS_CUDA(cudaStreamSynchronize(ctx.compute));
  return b;
}

absl::Status AllGatherBuffers::Enqueue(cudaStream_t s) const {
  OS_NCCL(ncclAllGather(send_.get(), recv_.get(), static_cast<size_t>(count_), ncclUint32, comm_, s));
  return absl::OkStatus();
}

absl::Status AllGatherBuffers::Reset(cudaStream_t s) const {
  OS_CUDA(cudaMemsetAsync(recv_.get(), 0, recv_.bytes(), s));
  return absl::OkStatus();
}

absl::Status AllGatherBuffers::Validate(RankContext& ctx, DeviceChecker& check, cudaStream_t s,
                                        const std::string& what) const {
  RETURN_IF_ERROR(check.Reset(s));
  OS_CUDA(ValidateAllGather(recv_.as<uint32_t>(), count_, nranks_, kSalt, check.check(), s));
  ASSIGN_OR_RETURN(auto counts, check.Read(s));
  if (counts.bad == 0) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("VALIDATION FAILED on rank ", ctx.rank, ": ", what, ": ", counts.bad, " of ",
                                          count_ * nranks_, " gathered words wrong (first at word ", counts.first_bad,
                                          ", from rank ", counts.first_bad / count_, ")"));
}

absl::Status AllGatherBuffers::Release() {
  if (send_win_) OS_NCCL(ncclCommWindowDeregister(comm_, send_win_));
  if (recv_win_) OS_NCCL(ncclCommWindowDeregister(comm_, recv_win_));
  send_win_ = recv_win_ = nullptr;
  return absl::OkStatus();
}

double AlgBwGBps(int64_t gathered_bytes, double ms) { return ms > 0 ? gathered_bytes / (ms * 1e-3) / 1e9 : 0; }
double BusBwGBps(int64_t gathered_bytes, double ms, int nranks) {
  return AlgBwGBps(gathered_bytes, ms) * (nranks - 1) / nranks;
}

}  // namespace overlapscope::workloads
