// Collectives that are not NCCL's (our own all-reduce kernels, or any program's) made visible to
// the capture: the host wraps the launch of the kernel(s) that carry one collective instance in
// an NVTX range of the domain "overlapscope.collective" whose message names the collective:
//
//   <Op> comm=<hex id> seq=<n> bytes=<n> rank=<r> nranks=<n> [dtype=<t>] [redop=<op>] [impl=<name>]
//
// e.g. "AllReduce comm=9f3a0c1d22e4b7a1 seq=12 bytes=2097152 rank=0 nranks=2 dtype=bf16
// redop=sum impl=one-shot". <Op> is one of NCCL's collective names without "nccl" (AllReduce,
// AllGather, ReduceScatter, Broadcast, Reduce, AlltoAll, ...); comm is up to 16 hex digits, the
// same on every rank of the group; seq counts the group's collectives from 0 in the order every
// rank issues them; bytes is the size as nccl-tests counts it (all-reduce: one rank's buffer).
// Tokens are separated by single spaces; the order of the key=value tokens is free; unknown keys
// are ignored (later versions may add some). The GPU work launched inside such a range on the same
// thread becomes one model::Collective (nccl_attribution.h) with communicator "ovs:<hex id>",
// sequence, bytes, rank and nranks from the message, so the cross-rank analysis matches it.
//
// Model-only, no CUDA: unit-tested with hand-written names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace overlapscope::import {

inline constexpr std::string_view kCollectiveRangeDomain = "overlapscope.collective";

struct CollectiveRangeFields {
  std::string_view op;  // "AllReduce", ... (points into the parsed name)
  uint64_t comm = 0;
  int64_t sequence = -1;
  int64_t bytes = -1;
  int32_t rank = -1, nranks = -1;
  std::string_view dtype, redop, impl;  // empty when absent
};

// The fields of a range message in the format above; nullopt when the op is not a collective
// name, a required key (comm, seq, bytes, rank, nranks) is missing or malformed, or
// rank >= nranks.
std::optional<CollectiveRangeFields> ParseCollectiveRange(std::string_view message);

// "ovs:<16 hex digits>", the communicator name such collectives get (NCCL's are "nccl:<16 hex>").
std::string CollectiveRangeCommName(uint64_t comm);

}  // namespace overlapscope::import
