// Collectives across ranks (METRICS.md §6): each collective instance matched across the ranks
// of a multi-rank trace, with skew, per-rank wait and nccl-tests bandwidth, and a straggler
// summary (which rank arrives last how often, and how long the others wait for it).
//
// "Arrives" means the collective became runnable on the participant's stream, estimated from
// the trace (analyze/collective_arrival.h), not the start of its first GPU activity: skew, wait,
// the last rank and the bus time are measured from arrivals. Where the estimate is not possible
// the arrival is the start (counted in CrossRankResult::arrival_fallbacks).
//
// Matching, decided per (communicator, op): by (communicator, op, sequence number) when every
// collective of that pair has a sequence number (NCCL numbers each function separately, so the
// op is part of the key), else by (communicator, op, order of occurrence on each participant) —
// e.g. copy-engine collectives, for which NCCL's profiler plugin gets no sequence number, next to
// kernel collectives that have one. A participant is one GPU
// of one process (see RankSource for how it is labelled), so one process driving several GPUs
// (the built-in workloads) has one participant per GPU. An instance counts as matched
// when at least two ranks have it; instances seen by one rank only are counted as unmatched
// (a rank whose profile window started or ended earlier), never paired by guess.
//
// Units: *_ns int64 nanoseconds on the trace clock (ranks of one host share it); bandwidths in
// GB/s (1e9 bytes/s) as nccl-tests prints them. Bandwidth is absent when the message size or
// dtype is unknown, or when the bus time is not positive.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/collective_arrival.h"
#include "model/trace.h"

namespace overlapscope::analyze {

// Bytes of one element of a dtype as Kineto/PyTorch names it ("Half", "Float", "BFloat16",
// "c10::Half", "float16", ...); 0 when unknown.
int64_t DtypeBytes(std::string_view dtype);

// nccl-tests' bus-bandwidth factor for an op name (Kineto "Collective name" or NCCL function
// name, case-insensitive): (n-1)/n for all-gather, reduce-scatter and all-to-all, 2(n-1)/n for
// all-reduce, 1 for broadcast/reduce/send/recv; nullopt for ops it does not know.
std::optional<double> BusBandwidthFactor(std::string_view op, int32_t nranks);

// How the participants of a collective were told apart (one method for the whole trace, the
// first that gives every participant a distinct identity):
//  kCollectiveRank — Collective::rank, the rank in the collective's communicator (NCCL profiler
//                    plugin, Kineto importer); of a GPU in several communicators, its rank in
//                    the largest one;
//  kProcessRank    — the process's distributed rank (one GPU per process);
//  kDevice         — (process, GPU): single-process multi-GPU runs; no rank number is invented,
//                    the participant is labelled "GPU n" ("pid P GPU n" when ordinals repeat).
enum class RankSource { kNone, kCollectiveRank, kProcessRank, kDevice };
std::string_view ToString(RankSource s);  // "communicator-rank", "process-rank", "gpu", "none"

// One GPU of one process that took part in collectives.
struct Participant {
  model::ProcessId process = model::kNone;
  model::DeviceId device = model::kNone;  // kNone for collectives without GPU activity
  int32_t gpu = model::kNone;             // CUDA ordinal of `device`
  int32_t rank = model::kNone;            // per CrossRankResult::identified_by; kNone for kDevice
  std::string label;                      // "rank 3", "GPU 1", "pid 42 GPU 1"
};

struct CollectiveParticipant {
  model::CollectiveId collective = model::kNone;  // index into Trace::collectives()
  int32_t rank = model::kNone;                    // participants[participant].rank
  int64_t start_ns = 0, end_ns = 0;               // span of the carrying activities
  int64_t wait_ns = 0;                            // max(arrival) - own arrival
  int32_t participant = model::kNone;             // index into CrossRankResult::participants
  int64_t arrival_ns = 0;                         // when the collective became runnable on its stream; <= start_ns
  ArrivalSource arrival_source = ArrivalSource::kFallbackNoCall;
};

struct CollectiveInstance {
  model::StringId communicator = 0;
  model::StringId op = 0;
  int64_t sequence = -1;                     // from the trace when known
  int64_t ordinal = 0;                       // k-th instance of (communicator, op) on each participant (order matching)
  bool by_sequence = false;                  // matched by sequence number (else by ordinal)
  std::vector<CollectiveParticipant> ranks;  // sorted by participant (rank, then process, GPU)
  int64_t first_start_ns = 0;                // min(start) over ranks
  int64_t skew_ns = 0;                       // max(arrival) - min(arrival)
  int32_t last = model::kNone;       // participant that arrived last (max arrival; first on ties); kNone when skew 0
  int32_t last_rank = model::kNone;  // its rank (kNone when skew 0 or identified by GPU)
  // min over ranks of (end - max(arrival)); METRICS §6 "time". From the last arrival, as
  // nccl-tests times a collective that every rank has reached: it includes what the collective
  // itself still waits for once all are there (a copy-engine barrier, SMs held by a GEMM).
  int64_t bus_time_ns = 0;
  // nccl-tests "size": max(in, out elements) x dtype bytes; else Collective::bytes; -1 unknown.
  int64_t size_bytes = -1;
  std::optional<double> algbw_gbps, busbw_gbps;
};

struct RankStraggling {
  int32_t participant = model::kNone;  // index into CrossRankResult::participants
  int32_t rank = model::kNone;
  int64_t times_last = 0;      // instances where this rank arrived last (skew > 0)
  int64_t others_wait_ns = 0;  // Σ wait of the other ranks in those instances
  int64_t own_wait_ns = 0;     // Σ this rank's wait over all matched instances
};

struct CrossRankResult {
  std::vector<Participant> participants;  // sorted by (rank, process, GPU)
  RankSource identified_by = RankSource::kNone;
  std::vector<CollectiveInstance> instances;  // sorted by min start
  std::vector<RankStraggling> ranks;          // one per participant in a matched instance, participant order
  int64_t unmatched = 0;                      // collectives seen on one participant only
  int64_t without_rank = 0;                   // collectives with neither process nor GPU (cannot be matched)
  int64_t duplicates = 0;                     // a second record of one instance on one participant (not matched)
  bool matched_by_sequence = false;           // every matched instance was matched by sequence number
  int64_t matched_by_order = 0;               // matched instances matched by order
  int64_t max_skew_ns = 0, total_skew_ns = 0;
  // Participants of matched instances whose arrival fell back to their start (no API call,
  // or an unresolved stream wait: see collective_arrival.h).
  int64_t arrival_fallbacks = 0;
};

// `arrivals`, when given, holds each collective's arrival (parallel to trace.collectives()),
// estimated earlier on a trace that had the rank's events (CollectiveArrivals): the per-rank
// reduction matches a collectives-only trace gathered from every rank (engine/reduce.h).
// Without it the arrivals are estimated from `trace`'s events, on up to `threads` threads (the
// same result at any count).
CrossRankResult AnalyzeCrossRank(const model::Trace& trace, const std::vector<CollectiveArrival>* arrivals = nullptr,
                                 int threads = 1);

// Every collective's arrival (ArrivalEstimator), parallel to trace.collectives().
std::vector<CollectiveArrival> CollectiveArrivals(const model::Trace& trace);

}  // namespace overlapscope::analyze
