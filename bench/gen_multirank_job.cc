// Writes an N-rank Kineto job from one real per-rank trace (bench/multirank/gen_job.h says how):
//   gen_multirank_job TEMPLATE.json OUT_DIR RANKS [--bytes-per-rank B | --tiles T]
//                     [--jitter-us J] [--straggler R --delay-us D] [--seed S]
//                     [--pageable R [--copy-us C]]   (rank R copies pageable memory once per tile)
//                     [--ranks-per-host N]   (hosts node0, node1, ...; host h's clock h x 12.345 us ahead)
// Prints the period, the collectives per tile, the bytes written and, per tile, the expected
// skew of its collectives (max − min of the ranks' offsets) when --print-skews is given.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/multirank/gen_job.h"

namespace {

int Usage() {
  std::fprintf(
      stderr,
      "usage: gen_multirank_job TEMPLATE.json OUT_DIR RANKS [--bytes-per-rank B | --tiles T] "
      "[--jitter-us J] [--straggler R --delay-us D] [--pageable R [--copy-us C]] [--seed S] [--ranks-per-host N] "
      "[--print-skews]\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Usage();
  overlapscope::bench::JobSpec s;
  s.template_path = argv[1];
  s.out_dir = argv[2];
  s.ranks = std::atoi(argv[3]);
  int64_t bytes_per_rank = 0;
  bool print_skews = false;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> long long { return i + 1 < argc ? std::atoll(argv[++i]) : -1; };
    if (a == "--bytes-per-rank")
      bytes_per_rank = next();
    else if (a == "--tiles")
      s.tiles = next();
    else if (a == "--jitter-us")
      s.jitter_ns = next() * 1000;
    else if (a == "--straggler")
      s.straggler = static_cast<int>(next());
    else if (a == "--delay-us")
      s.straggler_delay_ns = next() * 1000;
    else if (a == "--pageable")
      s.pageable_rank = static_cast<int>(next());
    else if (a == "--copy-us")
      s.pageable_copy_ns = next() * 1000;
    else if (a == "--seed")
      s.seed = static_cast<uint64_t>(next());
    else if (a == "--ranks-per-host")
      s.ranks_per_host = static_cast<int>(next());
    else if (a == "--print-skews")
      print_skews = true;
    else
      return Usage();
  }
  if (s.ranks < 1 || s.tiles < 1 || s.jitter_ns < 0 || s.ranks_per_host < 0) return Usage();
  if (bytes_per_rank > 0) {
    auto t = overlapscope::bench::TilesForBytes(s, bytes_per_rank);
    if (!t.ok()) {
      std::fprintf(stderr, "gen_multirank_job: %s\n", std::string(t.status().message()).c_str());
      return 2;
    }
    s.tiles = *t;
  }
  auto info = overlapscope::bench::WriteJob(s);
  if (!info.ok()) {
    std::fprintf(stderr, "gen_multirank_job: %s\n", std::string(info.status().message()).c_str());
    return 1;
  }
  std::printf("ranks %d, tiles %lld, period %lld ns, collectives per tile %lld, %lld bytes per rank, %lld bytes\n",
              s.ranks, static_cast<long long>(s.tiles), static_cast<long long>(info->period_ns),
              static_cast<long long>(info->collectives_per_tile), static_cast<long long>(info->bytes_per_rank),
              static_cast<long long>(info->bytes_total));
  if (print_skews)
    for (int64_t k = 0; k < s.tiles; ++k) {
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int r = 0; r < s.ranks; ++r) {
        const int64_t o = overlapscope::bench::OffsetNs(s, info->period_ns, r, k) - k * info->period_ns;
        lo = std::min(lo, o), hi = std::max(hi, o);
      }
      std::printf("tile %lld: expected skew %lld ns\n", static_cast<long long>(k), static_cast<long long>(hi - lo));
    }
  return 0;
}
