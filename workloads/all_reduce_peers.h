// One rank's side of overlapscope's own all-reduce kernels (all_reduce_kernels.h): its input,
// output and barrier flags, the addresses of every peer's, and the launch of one all-reduce
// wrapped in the NVTX range that makes it a collective in captures.
//
// Peers: the ranks of a RankGroup. Threads of one process map their peers' buffers with
// cudaDeviceEnablePeerAccess; MPI processes export theirs with cudaIpcGetMemHandle, exchange the
// handles with MPI_Allgather and open them with cudaIpcOpenMemHandle (all ranks on one host).
//
// NVTX: with `nvtx` set, Launch() wraps the kernel launch in a range of the domain
// "overlapscope.collective" whose message is
//   "AllReduce comm=<16 hex> seq=<n> bytes=<count x type size> rank=<r> nranks=<n> dtype=<t>
//    redop=sum impl=one-shot|two-shot|one-shot-push"
// (the format importers/nccl/collective_range.h parses). comm is rank 0's random 64-bit id, the
// same on every rank; seq counts this rank's launches from 0, the same sequence on every rank
// because every rank launches the same all-reduces in the same order.
//
// Failure modes: CUDA errors come back as Status (fatal for the group). Peers that cannot be
// mapped (GPUs without peer access, ranks on several hosts, an IPC handle that does not open)
// are not an error: Create() then returns no peers and the reason, the same on every rank, so the
// NCCL implementations can still run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "workloads/all_reduce_kernels.h"
#include "workloads/device_memory.h"
#include "workloads/rank_group.h"

namespace overlapscope::workloads {

// One string from every rank to every rank of a group: shared slots and the group's barrier for
// the threads of one process, MPI_Allgather under MPI. Every rank must call it at the same time.
class PeerExchange {
 public:
  explicit PeerExchange(int nranks) : slots_(nranks) {}
  absl::StatusOr<std::vector<std::string>> AllGather(RankContext& ctx, const std::string& mine);

 private:
  std::vector<std::string> slots_;
};

// The message of the NVTX range of one collective (the format of the header comment).
std::string AllReduceRangeName(uint64_t comm, int64_t seq, int64_t bytes, int rank, int nranks, DType t,
                               AllReduceAlgo algo);

// "one-shot" / "two-shot" / "one-shot-push".
const char* AllReduceAlgoName(AllReduceAlgo algo);

class AllReducePeers {
 public:
  struct Setup {
    std::unique_ptr<AllReducePeers> peers;  // null when the peers could not be mapped
    std::string unusable;                   // why (every rank's reason), when peers is null
  };
  // Collective: every rank of the group at the same time (inside RankGroup::RunOnAll).
  // `bytes`: size of the input and of the output buffer. `push`: also the receive buffer of
  // one-shot-push (all_reduce_push.h: 2 x nranks x bytes), holding the sentinel of that dtype
  // (push launches must use a type of the same size).
  static absl::StatusOr<Setup> Create(RankContext& ctx, size_t bytes, PeerExchange& ex,
                                      std::optional<DType> push = std::nullopt);
  ~AllReducePeers();
  AllReducePeers(const AllReducePeers&) = delete;
  AllReducePeers& operator=(const AllReducePeers&) = delete;

  void* in() const { return in_.get(); }
  void* out() const { return out_.get(); }
  uint64_t comm_id() const { return comm_; }

  // Enqueues one all-reduce (sum) of `count` elements of `t` from in() into out() on `s`,
  // with AllReduceBlocks(t, count, max_blocks) blocks; `nvtx`: inside its collective range.
  // one-shot-push without a receive buffer, or of another element size than it was set up
  // for: FailedPrecondition.
  absl::Status Launch(AllReduceAlgo algo, DType t, int64_t count, int max_blocks, cudaStream_t s, bool nvtx);
  // Barriers that timed out so far (synchronizes the device).
  absl::StatusOr<unsigned int> Timeouts() const;
  // Closes the mappings of the peers' buffers; collective (every rank, before any frees).
  absl::Status Release(RankContext& ctx, PeerExchange& ex);

 private:
  AllReducePeers() = default;
  // Maps every peer's buffers into args_ from the exchanged identities; "" or the reason why not.
  std::string MapPeers(const std::vector<std::string>& ids);

  int device_ = 0, rank_ = 0, nranks_ = 0;
  bool ipc_ = false;
  uint64_t comm_ = 0;
  int64_t launches_ = 0;
  int64_t push_launches_ = 0;  // picks the receive buffer's half (all_reduce_push.h)
  int push_elem_bytes_ = 0;    // 0: no receive buffer
  DeviceBuffer in_, out_, flags_, timeouts_, recv_;
  AllReduceArgs args_;
  std::vector<void*> opened_;  // IPC mappings to close
};

}  // namespace overlapscope::workloads
