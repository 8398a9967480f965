// overlapscope: main() only dispatches to the subcommands of cli/commands.h.
#include <cstdio>
#include <cstring>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/heap_policy.h"
#include "cli/huge_pages.h"
#include "cli/keep_until_exit.h"
#include "engine/session.h"

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
  // First: it may run this program again with malloc's huge pages on (cli/huge_pages.h).
  overlapscope::cli::UseHugePages(argv);
  // Until a command knows its --threads: the machine's cores (cli/heap_policy.h).
  overlapscope::cli::ApplyHeapPolicy(static_cast<int>(std::thread::hardware_concurrency()));
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
  // This process owns its signals: plain .json files are mapped, not copied, with a file cut
  // while mapped answered as an error (engine/session.h); library users keep pread.
  overlapscope::engine::MapInputFiles();
  // One command, then exit: its model and report go with the process (cli/keep_until_exit.h).
  overlapscope::cli::KeepResultsUntilExit();
  for (const auto& c : kCommands)
    if (!std::strcmp(argv[1], c.name)) return c.run(argc - 2, argv + 2);
  std::fprintf(stderr, "overlapscope: unknown command '%s'\n", argv[1]);
  Usage(stderr);
  return overlapscope::cli::kExitUsage;
}
