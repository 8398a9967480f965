// Large heap blocks on transparent huge pages, for the front end (main()), on request
// (OVERLAPSCOPE_HUGEPAGES=1): where the kernel gives huge pages only on request (THP "madvise",
// the common default) and glibc's malloc can ask for them (the tunable glibc.malloc.hugetlb=1,
// glibc 2.35 and later), the process runs itself again once with that tunable set, before
// anything else: malloc reads its tunables only at start. Results never change.
// Why on request only (docs/PERFORMANCE.md, tenth round): on freshly started machines the 500 MB
// trace faults in ~58 K pages instead of ~107 K and `analyze --json --threads 16` takes 3-10 %
// less wall; but where the machine's memory is fragmented (a long-running host) the kernel
// compacts memory in the faults of those regions (THP defrag "madvise"): on the development
// machine `analyze --threads 2` of the 500 MB `.json` ran 0.53-0.94 s against 0.60-0.83 s without,
// and the first replay of 10 M events in a process 4.0-4.8 s against 1.4-2.4 s.
// GLIBC_TUNABLES already set, or any LD_PRELOAD (valgrind's preload would not follow the exec,
// so its run would check nothing; a preloaded allocator ignores the tunable) leave the process as
// it is. The variables it sets are removed again in the re-executed process, so commands that
// start other programs (capture's workload) pass the caller's environment on unchanged.
#pragma once

#include <string>

namespace overlapscope::cli {

// Whether to run again with the tunable: `tunables`, `opt_in` and `preload` are GLIBC_TUNABLES,
// OVERLAPSCOPE_HUGEPAGES and LD_PRELOAD (null: unset), `thp_enabled` the text of
// /sys/kernel/mm/transparent_hugepage/enabled (empty: unknown), `glibc` the C library's version
// ("2.36"; empty: not glibc).
bool WantHugePageRestart(const char* tunables, const char* opt_in, const char* preload, const std::string& thp_enabled,
                         const std::string& glibc);

// Runs this program again (/proc/self/exe, the same arguments) with glibc.malloc.hugetlb=1 where
// WantHugePageRestart says so; in the process so started, removes the variables it set. Returns
// where it does not run again (the exec failed: the process goes on as it is).
void UseHugePages(char** argv);

}  // namespace overlapscope::cli
