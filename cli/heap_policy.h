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

}  // namespace overlapscope::cli
