// overlapscope: main() only dispatches to the subcommands of cli/commands.h.
#include <malloc.h>

#include <cstdio>
#include <cstring>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/keep_until_exit.h"

namespace {

struct Entry {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

constexpr Entry kCommands[] = {
    {"info", overlapscope::cli::RunInfo, "what a trace holds: ranks, devices, streams, counts, import stats"},
    {"analyze", overlapscope::cli::RunAnalyze, "overlap, exposed communication, CPU blocking, idle gaps, sync points"},
    {"replay", overlapscope::cli::RunReplay,
     "replay the steps on the dependency graph; predict them under a change (what-if)"},
    {"diff", overlapscope::cli::RunDiff, "compare two runs: what changed, what moved the step time, is it noise"},
    {"export", overlapscope::cli::RunExport, "write a trace as Perfetto protobuf or Kineto-compatible Chrome JSON"},
    {"profile", overlapscope::cli::RunProfile, "run any CUDA program under CUPTI capture (like nsys profile)"},
    {"run", overlapscope::cli::RunWorkload, "run a built-in CUDA/NCCL workload under capture"},
};

void Usage(FILE* out) {
  std::fputs("usage: overlapscope <command> [options] (overlapscope <command> --help for more)\n\ncommands:\n", out);
  for (const auto& c : kCommands) std::fprintf(out, "  %-9s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  // A fixed mmap threshold: glibc otherwise raises it up to 32 MiB once a large block is freed,
  // after which the parser threads' buffers and the analyses' arrays come from heap arenas and
  // stay resident when freed. 500 MB trace (docs/PERFORMANCE.md), peak at 2 / 16 threads: 219 /
  // 237 MB as glibc grows it, 212 / 220 MB fixed at 16 MiB, 195 / 203 MB at 4 MiB, 183 / 184 MB
  // at 128 KiB; CPU the same within this machine's noise. 4 MiB: most of the gain without
  // mapping and unmapping every small array.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  // Free memory at the top of a heap (the main one and each thread's arena) is kept up to 16 MiB
  // instead of 128 KiB: the steps' short-lived vectors then reuse pages already touched instead
  // of giving them back and faulting them in again (~2 us a page here). 500 MB trace, `analyze
  // --json`: page faults at 1 / 2 / 16 threads 84 K / 104 K / 121 K -> 71 K / 79 K / 92 K, peak
  // +2 / +3 / +20 MB (173 / 186 / 220 MB: 0.44 x the JSON at most; docs/PERFORMANCE.md).
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
  if (argc < 2) {
    Usage(stderr);
    return overlapscope::cli::kExitUsage;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    Usage(stdout);
    return 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::puts("overlapscope 0.1.0");
    return 0;
  }
  // One command, then exit: its model and report go with the process (cli/keep_until_exit.h).
  overlapscope::cli::KeepResultsUntilExit();
  for (const auto& c : kCommands)
    if (!std::strcmp(argv[1], c.name)) return c.run(argc - 2, argv + 2);
  std::fprintf(stderr, "overlapscope: unknown command '%s'\n", argv[1]);
  Usage(stderr);
  return overlapscope::cli::kExitUsage;
}
