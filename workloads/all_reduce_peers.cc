#include "workloads/all_reduce_peers.h"

#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "workloads/all_reduce_push.h"
#include "workloads/gemm.h"
#include "workloads/mpi_world.h"

namespace overlapscope::workloads {
namespace {

// The NVTX domain importers/nccl/collective_range.h recognizes (kCollectiveRangeDomain; a test
// checks that the two agree).
constexpr char kRangeDomain[] = "overlapscope.collective";

// What each rank tells the others at set-up (sent as raw bytes: the same binary on every rank).
struct Identity {
  char host[64];
  int32_t pid;
  int32_t device;
  uint64_t comm;              // rank 0's collective id
  void* ptr[4];               // in, out, flags, push receive buffer (or null): threads of one process
  cudaIpcMemHandle_t ipc[4];  // the same as IPC handles: MPI processes
};

uint64_t RandomId() {
  std::random_device rd;
  uint64_t v = 0;
  while (v == 0) v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return v;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> PeerExchange::AllGather(RankContext& ctx, const std::string& mine) {
  if (ctx.group->mpi()) return mpi::AllGather(mine);
  slots_[ctx.rank] = mine;
  if (!ctx.group->Barrier()) return absl::AbortedError("another rank failed");
  std::vector<std::string> all = slots_;
  // Nobody writes the slots again before every rank has copied them.
  if (!ctx.group->Barrier()) return absl::AbortedError("another rank failed");
  return all;
}

const char* AllReduceAlgoName(AllReduceAlgo algo) {
  switch (algo) {
    case AllReduceAlgo::kOneShot: return "one-shot";
    case AllReduceAlgo::kTwoShot: return "two-shot";
    case AllReduceAlgo::kOneShotPush: return "one-shot-push";
  }
  return "?";
}

std::string AllReduceRangeName(uint64_t comm, int64_t seq, int64_t bytes, int rank, int nranks, DType t,
                               AllReduceAlgo algo) {
  return absl::StrFormat("AllReduce comm=%016x seq=%d bytes=%d rank=%d nranks=%d dtype=%s redop=sum impl=%s", comm, seq,
                         bytes, rank, nranks, DTypeName(t), AllReduceAlgoName(algo));
}

absl::StatusOr<AllReducePeers::Setup> AllReducePeers::Create(RankContext& ctx, size_t bytes, PeerExchange& ex,
                                                             std::optional<DType> push) {
  if (ctx.nranks > kAllReduceMaxRanks)  // the same on every rank: no need to agree
    return Setup{nullptr,
                 absl::StrCat("the custom kernels take at most ", kAllReduceMaxRanks, " ranks, not ", ctx.nranks)};
  std::unique_ptr<AllReducePeers> p(new AllReducePeers());
  p->device_ = ctx.device;
  p->rank_ = ctx.rank;
  p->nranks_ = ctx.nranks;
  p->ipc_ = ctx.group->mpi();
  bytes = (bytes + 15) / 16 * 16;
  ASSIGN_OR_RETURN(p->in_, DeviceBuffer::Create(bytes, ctx.device));
  ASSIGN_OR_RETURN(p->out_, DeviceBuffer::Create(bytes, ctx.device));
  ASSIGN_OR_RETURN(p->flags_, DeviceBuffer::Create(AllReduceFlagBytes(), ctx.device));
  ASSIGN_OR_RETURN(p->timeouts_, DeviceBuffer::Create(16, ctx.device));
  OS_CUDA(cudaMemset(p->flags_.get(), 0, p->flags_.bytes()));
  OS_CUDA(cudaMemset(p->timeouts_.get(), 0, p->timeouts_.bytes()));
  if (push) {
    ASSIGN_OR_RETURN(p->recv_, DeviceBuffer::Create(AllReducePushBytes(ctx.nranks, bytes), ctx.device));
    OS_CUDA(FillAllReducePushSentinel(*push, p->recv_.get(), p->recv_.bytes(), nullptr));
    p->push_elem_bytes_ = DTypeBytes(*push);
  }
  // Zeroed (and the receive buffer filled) before any peer can learn their addresses.
  OS_CUDA(cudaDeviceSynchronize());

  Identity id;
  std::memset(&id, 0, sizeof(id));
  if (p->ipc_) std::snprintf(id.host, sizeof(id.host), "%s", mpi::Hostname().c_str());
  id.pid = static_cast<int32_t>(getpid());
  id.device = ctx.device;
  id.comm = ctx.rank == 0 ? RandomId() : 0;
  void* mine[4] = {p->in_.get(), p->out_.get(), p->flags_.get(), p->recv_.get()};
  for (int k = 0; k < 4; ++k) {
    id.ptr[k] = mine[k];
    if (p->ipc_ && mine[k]) OS_CUDA(cudaIpcGetMemHandle(&id.ipc[k], mine[k]));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> ids,
                   ex.AllGather(ctx, std::string(reinterpret_cast<char*>(&id), sizeof(id))));
  for (size_t q = 0; q < ids.size(); ++q)
    if (ids[q].size() != sizeof(Identity))
      return absl::InternalError(absl::StrCat("all-reduce peer set-up: rank ", q, " sent ", ids[q].size(),
                                              " bytes, expected ", sizeof(Identity), " (different binaries?)"));
  std::memcpy(&p->comm_, ids[0].data() + offsetof(Identity, comm), sizeof(uint64_t));
  // Every rank says whether it could map every peer; all go on only if all could.
  const std::string why = p->MapPeers(ids);
  ASSIGN_OR_RETURN(std::vector<std::string> verdicts, ex.AllGather(ctx, why));
  std::vector<std::string> bad;
  for (size_t q = 0; q < verdicts.size(); ++q)
    if (!verdicts[q].empty()) bad.push_back(absl::StrCat("rank ", q, ": ", verdicts[q]));
  if (!bad.empty()) return Setup{nullptr, absl::StrJoin(bad, "; ")};  // the destructor unmaps
  return Setup{std::move(p), ""};
}

std::string AllReducePeers::MapPeers(const std::vector<std::string>& ids) {
  args_.nranks = nranks_;
  args_.rank = rank_;
  args_.timeouts = timeouts_.as<unsigned int>();
  args_.in[rank_] = in_.get();
  args_.out[rank_] = out_.get();
  args_.flags[rank_] = flags_.as<uint32_t>();
  args_.recv[rank_] = recv_.get();
  args_.recv_slot_bytes = static_cast<int64_t>(in_.bytes());
  Identity me;
  std::memcpy(&me, ids[rank_].data(), sizeof(me));
  for (int q = 0; q < nranks_; ++q) {
    if (q == rank_) continue;
    Identity peer;
    std::memcpy(&peer, ids[q].data(), sizeof(peer));
    void* mapped[4] = {};
    const int kinds = recv_.get() ? 4 : 3;  // every rank allocated the same buffers
    if (!ipc_) {
      int can = 0;
      cudaError_t e = cudaDeviceCanAccessPeer(&can, device_, peer.device);
      if (e != cudaSuccess || !can)
        return absl::StrCat("GPU ", device_, " cannot access GPU ", peer.device, " (no peer access)");
      e = cudaDeviceEnablePeerAccess(peer.device, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();  // not an error here; clear it
      } else if (e != cudaSuccess) {
        cudaGetLastError();
        return absl::StrCat("cudaDeviceEnablePeerAccess(", peer.device, ") failed: ", cudaGetErrorString(e));
      }
      for (int k = 0; k < kinds; ++k) mapped[k] = peer.ptr[k];
    } else {
      if (std::strncmp(peer.host, me.host, sizeof(me.host)) != 0)
        return absl::StrCat("rank ", q, " runs on host ", peer.host, ", this rank on ", me.host,
                            ": CUDA IPC needs every rank on one host");
      for (int k = 0; k < kinds; ++k) {
        cudaError_t e = cudaIpcOpenMemHandle(&mapped[k], peer.ipc[k], cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess) {
          cudaGetLastError();
          return absl::StrCat("cudaIpcOpenMemHandle of rank ", q, "'s buffer failed: ", cudaGetErrorString(e));
        }
        opened_.push_back(mapped[k]);
      }
    }
    args_.in[q] = mapped[0];
    args_.out[q] = mapped[1];
    args_.flags[q] = static_cast<uint32_t*>(mapped[2]);
    args_.recv[q] = mapped[3];
  }
  return "";
}

absl::Status AllReducePeers::Launch(AllReduceAlgo algo, DType t, int64_t count, int max_blocks, cudaStream_t s,
                                    bool nvtx) {
  const int64_t bytes = count * DTypeBytes(t);
  if (count < 0 || static_cast<size_t>(bytes) > in_.bytes())
    return absl::InvalidArgumentError(absl::StrCat("all-reduce of ", bytes, " bytes in buffers of ", in_.bytes()));
  if (algo == AllReduceAlgo::kOneShotPush && push_elem_bytes_ != DTypeBytes(t))
    return absl::FailedPreconditionError(
        push_elem_bytes_ == 0 ? std::string("one-shot-push: the peers were set up without its receive buffer")
                              : absl::StrCat("one-shot-push: receive buffer set up for ", push_elem_bytes_,
                                             "-byte elements, not ", DTypeBytes(t)));
  AllReduceArgs a = args_;
  a.count = count;
  if (algo == AllReduceAlgo::kOneShotPush) a.recv_half = static_cast<uint32_t>(push_launches_++ % 2);
  const int64_t seq = launches_++;
  a.epoch = static_cast<uint32_t>(seq + 1);  // flags start at 0
  static const nvtxDomainHandle_t domain = nvtxDomainCreateA(kRangeDomain);
  if (nvtx) {
    const std::string name = AllReduceRangeName(comm_, seq, bytes, rank_, nranks_, t, algo);
    nvtxEventAttributes_t attr{};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name.c_str();
    nvtxDomainRangePushEx(domain, &attr);
  }
  const cudaError_t e = LaunchAllReduce(algo, t, a, AllReduceBlocks(t, count, max_blocks), 1, s);
  if (nvtx) nvtxDomainRangePop(domain);
  OS_CUDA(e);
  return absl::OkStatus();
}

absl::StatusOr<unsigned int> AllReducePeers::Timeouts() const {
  unsigned int n = 0;
  OS_CUDA(cudaMemcpy(&n, timeouts_.get(), sizeof(n), cudaMemcpyDeviceToHost));
  return n;
}

absl::Status AllReducePeers::Release(RankContext& ctx, PeerExchange& ex) {
  for (void* p : opened_) OS_CUDA(cudaIpcCloseMemHandle(p));
  opened_.clear();
  // No rank frees its buffers (destructor) before every peer has unmapped them.
  return ex.AllGather(ctx, "").status();
}

AllReducePeers::~AllReducePeers() {
  if (opened_.empty()) return;
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(device_);
  for (void* p : opened_) cudaIpcCloseMemHandle(p);
  cudaSetDevice(prev);
}

}  // namespace overlapscope::workloads
