// overlapscope replay TRACE... [--change SPEC]... : replays every iteration on the dependency graph
// and predicts it under changes (METRICS.md §11, engine/replay.h), as text, JSON
// (overlapscope.replay/1) or Markdown. The replay error comes first, always.
#include <cstdio>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "cli/analyze_options.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/heap_policy.h"
#include "cli/load.h"
#include "engine/replay.h"

namespace overlapscope::cli {
namespace {

const CommandSpec kSpec{
    "replay",
    "overlapscope replay TRACE... [--change SPEC]... [--json|--markdown] [--html OUT.html] [options]",
    "Replays every iteration forward on the trace's dependency graph with the recorded durations\n"
    "(collective waits recomputed from the replayed arrivals across ranks) and prints the measured\n"
    "step, the replayed step and the replay error per rank (medians over iterations; every iteration\n"
    "in --json's \"iterations\"). With --change it predicts the step under the change, with and\n"
    "without the contention model, the gain, the change in exposed communication and the critical\n"
    "path's composition next to today's.",
    {{"change", "SPEC",
      "a what-if, repeatable (applied together): scale:CLASS=F (comm|compute|memory), scale:/REGEX/=F, "
      "async:/REGEX/[@/JOIN/], prefetch:/REGEX/[@/JOIN/], ce:/REGEX/, nosync:/CALL-REGEX/, remove:/REGEX/, "
      "defer:/REGEX/",
      true},
     {"no-contention", "", "predict without the contention model only"},
     {"strict", "",
      "no fallbacks: GPU activities behind unresolved waits or starting later than the graph explains are "
      "replayed from their predecessors alone (what the graph by itself explains)"},
     {"sm-count", "N", "SMs per GPU for the SM-share contention model (default: from the GPU's name, else 132)"},
     {"trace", "OUT.pftrace",
      "also write the predicted timeline beside the measured one (Perfetto; per rank a \"<name> predicted\" "
      "process and its GPUs' \"GPU N — <device> predicted\" groups)"},
     {"html", "OUT.html",
      "also write a self-contained HTML page (the tables, and per rank the step and critical path of each "
      "schedule as bars)"},
     {"json", "", "machine-readable output (schema overlapscope.replay/1, docs/report-schema.md)"},
     {"markdown", "", "Markdown output"},
     {"comm-kernel", "REGEX", "classify GPU activities whose name matches REGEX as communication", true},
     {"compute-kernel", "REGEX", "classify matching names as compute", true},
     {"memory-kernel", "REGEX", "classify matching names as memory", true},
     {"classes", "FILE", "classification rules file, one 'CLASS REGEX' per line (see docs)", true},
     {"iteration-marker", "NAME", "iterations are ranges whose name starts with NAME (default ProfilerStep#)"},
     {"align-clocks", "off|auto|on", "align the clocks of several hosts by matched collectives (default auto)"},
     ThreadsFlag()},
    "async:/REGEX/[@/JOIN/]: matching collectives on their own stream at the same point of the program;\n"
    "the issuing stream waits for each before the first later activity matching JOIN, by its name or\n"
    "the name of a host range enclosing its launch (CPU op, record_function, NVTX) (default: the\n"
    "next collective of the same communicator, else the next iteration's first activity).\n"
    "prefetch: as async:, issued at the start of the iteration on its stream (with its first activity).\n"
    "ce: matching collectives on copy engines (they hold no SMs, keep their recorded transfer time and\n"
    "wait, like a kernel, for SMs a compute kernel fills: their own chunk is copied by SMs).\n"
    "nosync: matching blocking host calls wait for nothing. remove: matching GPU activities take no\n"
    "time. defer: matching GPU activities move after the next compute activity of their stream (a\n"
    "collective moved by async: is still issued after the last activity not deferred). A prediction\n"
    "over a rank whose replay error exceeds 5 % says so next to its number.\n"
    "exit codes: 0 ok, 2 a trace cannot be read, 64 bad command line (a malformed --change)"};

}  // namespace

int RunReplay(int argc, char** argv) {
  ParsedArgs args;
  if (int rc = ParseOrExit(kSpec, argc, argv, args); rc >= 0) return rc;
  engine::ReplayRequest req;
  int rc = kExitOk;
  if (!ParseAnalyzeOptions("replay", args, &req.analyze, &rc)) return rc;
  if (args.Has("json") && args.Has("markdown")) {
    std::fprintf(stderr, "overlapscope replay: --json and --markdown exclude each other\n");
    return kExitUsage;
  }
  for (const std::string& c : args.All("change")) {
    if (absl::Status s = engine::CheckChange(c); !s.ok()) {
      std::fprintf(stderr, "overlapscope replay: %s\n", std::string(s.message()).c_str());
      return kExitUsage;
    }
    req.changes.push_back(c);
  }
  req.contention = !args.Has("no-contention");
  req.strict = args.Has("strict");
  req.trace_out = args.Get("trace");
  req.html_out = args.Get("html");
  if (args.Has("sm-count")) {
    int n = 0;
    if (!absl::SimpleAtoi(args.Get("sm-count"), &n) || n < 2 || n > 100000) {
      std::fprintf(stderr, "overlapscope replay: --sm-count '%s': expected an integer >= 2\n",
                   args.Get("sm-count").c_str());
      return kExitUsage;
    }
    req.sm_count = n;
  }
  if (args.positionals.empty()) {
    std::fprintf(stderr, "overlapscope replay: no TRACE given\n%s", HelpText(kSpec).c_str());
    return kExitUsage;
  }
  // --threads: the import's parser threads and the analyses' (absent: the import's default, the
  // machine's cores, and the replay's own); the output is the same at any count.
  int threads = 0;
  if (args.Has("threads")) {
    std::optional<int> n = ParseThreadsOrReport("replay", args, &rc);
    if (!n) return rc;
    threads = req.analyze.threads = *n;
  }
  ApplyReplayHeapPolicy();  // the replay reuses what the import frees (heap_policy.h)
  auto session = LoadOrReport("replay", args.positionals, args.Get("align-clocks"), &rc, true, threads);
  if (!session) return rc;
  const engine::ReportFormat fmt = args.Has("json")       ? engine::ReportFormat::kJson
                                   : args.Has("markdown") ? engine::ReportFormat::kMarkdown
                                                          : engine::ReportFormat::kText;
  auto out = engine::RunReplay(*session, req, fmt);
  if (!out.ok()) {
    std::fprintf(stderr, "overlapscope replay: %s\n", std::string(out.status().message()).c_str());
    return out.status().code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitError;
  }
  std::fputs(out->c_str(), stdout);
  return kExitOk;
}

}  // namespace overlapscope::cli
