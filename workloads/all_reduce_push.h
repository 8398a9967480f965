// one-shot-push: overlapscope's push all-reduce (sum), the third algorithm of
// all_reduce_kernels.h (AllReduceAlgo::kOneShotPush; launched by LaunchAllReduce). Every rank
// stores its input into a slot of every peer's receive buffer over NVLink (posted writes, no
// round trip), then waits in its own memory until the peers' slots hold data and reduces them
// locally in rank order 0..n-1 (FP32, rounded once: bit-identical on every rank, as one-shot).
// No flags and no barrier: arrival is detected per element (Lamport-style sentinel values).
//
// Receive buffer of rank q (AllReducePushBytes(n, slot_bytes) bytes, 16-byte aligned): two
// halves, each n slots of `slot_bytes` (a multiple of 16, >= count x element size rounded up to
// 16); slot p of a half holds rank p's input (the slot of q itself stays unused). The sentinel
// is negative zero of the dtype in every element (0x8000 for fp16/bf16, 0x80000000 for fp32):
// FillAllReducePushSentinel writes it, and a buffer serves one element size for its whole life.
// Senders store -0.0 as +0.0 (the same value in a sum), so a slot element is data iff it is not
// the sentinel; the partial last vector is padded with +0.0.
//
// Safety rule (why the scheme is correct; `recv_half` = launch index mod 2, the same sequence on
// every rank, counted over this buffer's one-shot-push launches only):
//  1. Arrival. Rank r polls element e of slot p in half h with ld.relaxed.sys until it is not
//     the sentinel; p wrote it with one st.relaxed.sys of a 16-byte vector. Each 2- or 4-byte
//     element is written once per launch, so the value read is p's (never torn within an
//     element); a vector is used only when none of its elements is the sentinel (so a vector
//     whose store became visible piecewise is simply polled again).
//  2. Clearing. After reading element e of slot p in half h, the reader itself writes the
//     sentinel back (its own memory). Launch k uses half k mod 2, so the next writer of that
//     element is p's launch k+2. p can start launch k+2 only after finishing k+1, which needs
//     r's data of launch k+1, which r stores only after its launch k ended (stream order), i.e.
//     after the clearing. Chain: r clears -> kernel boundary (orders all of r's launch-k memory
//     operations before its launch k+1) -> r's push of k+1 -> p reads it -> kernel boundary ->
//     p's store of k+2. So the clear precedes the next data in coherence order, and a reader never
//     sees data of launch k-2 as launch k's. Two halves suffice; a third is not needed because the
//     reader clears what it read within the same launch.
//  3. Inputs and outputs. A rank reads only its own input (before pushing) and writes only its
//     own output, both within its launch: when its kernel ends it no longer touches them, and no
//     peer ever reads them. So unlike one-shot, the caller may rewrite the input right after the
//     kernel (stream order), with no rule about the next launch.
//  4. Progress. Blocks of one rank never wait for each other, only for the same block of the
//     peers (which runs on another GPU), so partial residency cannot deadlock across GPUs; one
//     launch playing several ranks on one device (tests) still needs every block resident
//     (LaunchAllReduce checks it). A wait longer than timeout_ns gives up (adds one to *timeouts
//     per thread that gave up), leaving the result wrong and the buffer possibly dirty: the
//     caller reports the run as failed and must not reuse the buffers.
//
// Kernel name "ovs_allreduce_one_shot_push" (the default classification makes it
// communication). Plain C++ interface (no Abseil).
#pragma once

#include <cstddef>
#include <cstdint>

#include "workloads/all_reduce_kernels.h"

namespace overlapscope::workloads {

// Bytes of one rank's receive buffer: 2 halves x nranks slots x slot_bytes.
size_t AllReducePushBytes(int nranks, int64_t slot_bytes);

// Writes the sentinel of `t` (negative zero) into every element of `recv` (`bytes`, a multiple of
// 16, 16-byte aligned). Every rank's buffer must hold it before any peer's first launch.
cudaError_t FillAllReducePushSentinel(DType t, void* recv, size_t bytes, cudaStream_t s);

using AllReduceKernelFn = void (*)(AllReduceArgs);
// The push kernel for `t` and `nranks` (specialised for 2, 4 and 8 ranks, generic otherwise).
AllReduceKernelFn OneShotPushKernel(DType t, int nranks);

}  // namespace overlapscope::workloads
