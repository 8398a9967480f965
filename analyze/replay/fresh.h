// Large per-node vectors sized with their pages faulted in by the kernel ahead of the fill
// (internal to analyze/replay). At 10 M nodes the replay's arrays are gigabytes touched for the first time:
// one page fault per 4 KiB page as a fill writes them costs about a third more here than asking
// the kernel to populate the range at once (MADV_POPULATE_WRITE, Linux 5.14+; elsewhere, or
// when the call fails, the fill faults the pages in as before). Only for arrays that are
// written whole: a populated page that is never written is memory spent for nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace overlapscope::analyze::replay {

// Faults in the whole pages of [p, p + bytes) for writing; smaller ranges than 1 MiB are left
// alone (they come from the allocator's heap, mostly touched already). In 2 MiB calls: the
// kernel holds the process's memory-map lock for the length of one call, and any other thread
// that maps or unmaps memory meanwhile (an allocation or a free of a large block) waits for it
// (one call over 256 MB held another thread's malloc/free 90-340 ms here; 2 MiB calls, under
// 1 ms, at the same cost per page).
inline void PopulateForWrite(void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr size_t kMin = size_t{1} << 20, kPage = 4096, kStep = size_t{2} << 20;
  if (bytes < kMin) return;
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + kPage - 1) & ~(kPage - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kPage - 1);
  for (uintptr_t at = lo; at < hi; at += kStep) {
    if (madvise(reinterpret_cast<void*>(at), std::min<uintptr_t>(kStep, hi - at), MADV_POPULATE_WRITE) != 0) return;
  }
#else
  (void)p;
  (void)bytes;
#endif
}

// v = n copies of x; where v's storage must grow, the new storage is populated first.
template <typename T, typename A>
void AssignFresh(std::vector<T, A>& v, size_t n, const T& x) {
  if (v.capacity() < n) {
    std::vector<T, A>().swap(v);
    v.reserve(n);
    PopulateForWrite(v.data(), n * sizeof(T));
  }
  v.assign(n, x);
}

}  // namespace overlapscope::analyze::replay
