// Large heap blocks on transparent huge pages, for the front end (main()): where the kernel gives
// huge pages only on request (THP "madvise", the common default) and glibc's malloc can ask for
// them (the tunable glibc.malloc.hugetlb=1, glibc 2.35 and later), the process runs itself again
// once with that tunable set, before anything else: malloc reads its tunables only at start.
// Why: at 16 threads the 500 MB trace's steps fault in ~107 K fresh 4 KiB pages (~0.3 s of
// system CPU), many of them at once; with the tunable ~58 K, and `analyze --json --threads 16`
// 3-10 % less wall; peak up to ~15 MiB higher at 2 threads, still under 0.5 x the JSON
// (docs/PERFORMANCE.md, tenth round). Results never change.
// OVERLAPSCOPE_HUGEPAGES=0, GLIBC_TUNABLES already set, or any LD_PRELOAD (valgrind's preload
// would not follow the exec, so its run would check nothing; a preloaded allocator ignores the
// tunable) leave the process as it is. The
// variables it sets are removed again in the re-executed process, so commands that start other
// programs (capture's workload) pass the caller's environment on unchanged.
#pragma once

#include <string>

namespace overlapscope::cli {

// Whether to run again with the tunable: `tunables`, `opt_out` and `preload` are GLIBC_TUNABLES,
// OVERLAPSCOPE_HUGEPAGES and LD_PRELOAD (null: unset), `thp_enabled` the text of
// /sys/kernel/mm/transparent_hugepage/enabled (empty: unknown), `glibc` the C library's version
// ("2.36"; empty: not glibc).
bool WantHugePageRestart(const char* tunables, const char* opt_out, const char* preload, const std::string& thp_enabled,
                         const std::string& glibc);

// Runs this program again (/proc/self/exe, the same arguments) with glibc.malloc.hugetlb=1 where
// WantHugePageRestart says so; in the process so started, removes the variables it set. Returns
// where it does not run again (the exec failed: the process goes on as it is).
void UseHugePages(char** argv);

}  // namespace overlapscope::cli
