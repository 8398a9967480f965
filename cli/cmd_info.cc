// overlapscope info TRACE... [--json]: what a trace holds and what its import skipped
// (engine/info.h renders both forms from one document).
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "engine/info.h"

namespace overlapscope::cli {
namespace {

const CommandSpec kSpec{"info",
                        "overlapscope info TRACE... [--json] [--strict]",
                        "Prints ranks, devices, streams (kernels/copies/memsets each), threads, counts per event\n"
                        "kind, time span and import statistics (skipped records with reasons) of one or more traces.\n"
                        "TRACE is a Kineto/PyTorch-profiler .json or .json.gz file or a directory of per-rank files.",
                        {{"json", "", "machine-readable output (schema overlapscope.info/1)"},
                         {"strict", "", "exit 2 when part of the input could not be read (data-loss warnings)"},
                         {"align-clocks", "off|auto|on",
                          "align the clocks of several hosts by matched collectives (default auto); the "
                          "time span is then that of the aligned trace"},
                         ThreadsFlag()},
                        "exit codes: 0 ok, 2 a trace cannot be read (with --strict: or part of it), 64 bad "
                        "command line"};

}  // namespace

int RunInfo(int argc, char** argv) {
  ParsedArgs args;
  if (int rc = ParseOrExit(kSpec, argc, argv, args); rc >= 0) return rc;
  int rc = kExitOk;
  std::optional<int> threads = ParseThreadsOrReport("info", args, &rc);
  if (!threads) return rc;
  auto session = LoadOrReport("info", args.positionals, args.Get("align-clocks"), &rc, true, *threads);
  if (!session) return rc;
  auto out = engine::DescribeSession(*session, args.Has("json"));
  if (!out.ok()) {
    std::fprintf(stderr, "overlapscope info: %s\n", std::string(out.status().message()).c_str());
    return kExitError;
  }
  std::fputs(out->c_str(), stdout);
  // info prints the statistics in any case; --strict then fails on their data-loss warnings.
  if (!StrictCheckOrReport("info", *session, args.Has("strict"), false, &rc)) return rc;
  return kExitOk;
}

}  // namespace overlapscope::cli
