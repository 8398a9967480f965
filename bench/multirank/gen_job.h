// An N-rank Kineto job built from one real per-rank trace (bench/gen_multirank_job, the scale
// tests): each rank is the template tiled `tiles` times in time, so that the cross-rank results
// are known in advance.
//
// Tile k of rank r is the template shifted by OffsetNs(r, k) = k * period + jitter(r, k)
// (+ straggler_delay_ns for the straggler rank), where period = the template's span + the
// largest jitter + the delay + 100 µs (+ the pageable copy and 50 µs, JobSpec::pageable_rank), and jitter(r, k) is a
// deterministic hash in [0, jitter_ns). Correlation ids, external ids, flow ids and ProfilerStep numbers are renumbered
// per tile; every collective gets the same communicator and sequence number ("Seq": tile *
// collectives per tile + its index) on every rank, and distributedInfo names rank r of N. Since
// a tile is the same events shifted, every analysis figure of a tile is shift-invariant: each
// matched collective of tile k has skew max_r OffsetNs(r, k) − min_r OffsetNs(r, k) and, when
// the delay exceeds the jitter, the straggler as its last rank.
//
// Units: ns. Failure modes: the template cannot be read or parsed, an output cannot be written
// (the message names the file); nothing throws.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace overlapscope::bench {

struct JobSpec {
  std::string template_path;  // a Kineto .json (one rank)
  std::string out_dir;        // rank<r>.json are written here (created)
  int ranks = 8;
  int64_t tiles = 4;
  int64_t jitter_ns = 20000;
  int straggler = -1;  // rank that arrives late in every tile; -1: none
  int64_t straggler_delay_ns = 0;
  // A rank that copies pageable host memory once per tile: after the tile's events, a
  // cudaMemcpyAsync of `pageable_copy_ns` on the template's first runtime thread and its
  // "Memcpy HtoD (Pageable -> Device)" on the first kernel's stream (a pageable-async-copy
  // finding; the host blocked for the copy). -1: none. With one, the period grows by the copy
  // plus 50 µs for every rank (the other ranks' events are unchanged).
  int pageable_rank = -1;
  int64_t pageable_copy_ns = 400000;
  uint64_t seed = 1;
  // Hosts: ranks [h * ranks_per_host, (h + 1) * ranks_per_host) name host "node<h>" (the
  // trace's host_name), and host h's clock reads HostClockNs(h) = h * host_clock_step_ns ahead
  // (a clock error for clock alignment to find and remove). 0: no host names, one clock.
  int ranks_per_host = 0;
  int64_t host_clock_step_ns = 12345;
};

struct JobInfo {
  int64_t period_ns = 0;
  int64_t collectives_per_tile = 0;  // collectives a kernel carries, per tile
  int64_t bytes_per_rank = 0;        // of rank 0's file
  int64_t bytes_total = 0;
};

// The shift of tile k of rank r (the jitter is a hash of seed, r and k).
int64_t OffsetNs(const JobSpec& spec, int64_t period_ns, int rank, int64_t tile);

// How far host h's clock reads ahead (0 without hosts): not part of OffsetNs, since clock
// alignment removes it.
int64_t HostClockNs(const JobSpec& spec, int rank);

// Tiles needed for about `bytes_per_rank` bytes per rank file of `spec` (its template and ranks).
absl::StatusOr<int64_t> TilesForBytes(const JobSpec& spec, int64_t bytes_per_rank);

absl::StatusOr<JobInfo> WriteJob(const JobSpec& spec);

}  // namespace overlapscope::bench
