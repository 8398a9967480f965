#include "cli/heap_policy.h"

#include <algorithm>  // also defines __GLIBC__ through the C library's headers

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace overlapscope::cli {

void ApplyHeapPolicy(int threads) {
#if defined(__GLIBC__)
  // A fixed mmap threshold: glibc otherwise raises it up to 32 MiB once a large block is freed,
  // after which the parser threads' buffers and the analyses' arrays come from heap arenas and
  // stay resident when freed. 500 MB trace (docs/PERFORMANCE.md), peak at 2 / 16 threads: 219 /
  // 237 MB as glibc grows it, 212 / 220 MB fixed at 16 MiB, 195 / 203 MB at 4 MiB, 183 / 184 MB
  // at 128 KiB; CPU the same within this machine's noise. 4 MiB: most of the gain without
  // mapping and unmapping every small array.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  // The trim threshold (glibc's default: 128 KiB) instead of giving back and faulting in again
  // (~2 us a page here). 500 MB trace, `analyze --json`, page faults at 1 / 2 / 16 threads
  // 84 K / 104 K / 121 K -> 72 K / 80 K / 113 K; peak +2 / +2 / +1 MB (docs/PERFORMANCE.md). One
  // 16 MiB for every thread count gave 92 K at 16 threads but +20 MB there: the bound per arena
  // times the arenas.
  const int n = std::max(threads, 1);
  mallopt(M_TRIM_THRESHOLD, std::clamp((32 << 20) / n, 2 << 20, 16 << 20));
#else
  (void)threads;
#endif
}

void ApplyReplayHeapPolicy() {
#if defined(__GLIBC__)
  // 64 MiB: a thread's arena maps heaps of at most that size, so larger blocks are mapped on
  // their own wherever the threshold is; below it, freed blocks go back to the heap they came
  // from. 1 GiB / 2 GiB and 256 MiB / 2 GiB gave the same faults for a higher peak.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace overlapscope::cli
