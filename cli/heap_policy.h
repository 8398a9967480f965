// How the process's heap (glibc malloc) hands memory back to the system, set by the front end's
// main() and again once --threads is known. Only the resident memory and the page faults change,
// never a result. Elsewhere than glibc: nothing.
#pragma once

namespace overlapscope::cli {

// Large blocks (4 MiB and more) mapped and unmapped on their own, whatever was freed before; free
// memory at the top of each heap (the main one and each thread's arena) kept up to
// clamp(32 MiB / threads, 2 MiB, 16 MiB) before it is given back, so the steps' short-lived
// vectors reuse pages already touched while all arenas together keep about 32 MiB at most.
// threads < 1 counts as 1.
void ApplyHeapPolicy(int threads);

// `replay` only, before its import (after ApplyHeapPolicy): blocks below 64 MiB (the most one
// thread's arena holds) come from the heaps, and up to 512 MiB free at a heap's top is kept
// instead of given back. A replay allocates its per-node arrays (gigabytes at 10 M events) after
// the import and the graph freed memory of their own, and frees and allocates again in its
// contention rounds: kept, those pages are reused instead of faulted in fresh (about 2 us a page
// on this VM). A 10 M-event trace (docs/PERFORMANCE.md, eleventh round): a third fewer minor
// faults, 0.3-0.7 s less system time, peak resident memory +2-6 % (replay) and about +10 %
// (what-if).
// Only where blocks come from and when they go back changes, never a result.
void ApplyReplayHeapPolicy();

}  // namespace overlapscope::cli
