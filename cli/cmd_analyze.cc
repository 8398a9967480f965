// overlapscope analyze TRACE... : overlap, exposed communication, CPU blocking, GPU idle gaps,
// sync points and findings, collectives across ranks, the critical path, straggler causes and
// stream concurrency (METRICS.md §1-9), as text, JSON or Markdown, with --require gates.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/phase_log.h"
#include "base/share_threads.h"
#include "cli/analyze_mpi.h"
#include "cli/analyze_options.h"
#include "cli/analyze_per_rank.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/keep_until_exit.h"
#include "cli/load.h"
#include "cli/option_values.h"
#include "engine/engine.h"
#include "engine/timeline.h"
#include "report/html.h"

namespace overlapscope::cli {
namespace {

const CommandSpec kSpec{
    "analyze",
    "overlapscope analyze TRACE... [options]",
    "Computes, per rank and GPU, how much communication hides under computation (whole trace, per\n"
    "iteration, per collective), where host threads block on the GPU, GPU idle gaps and their causes,\n"
    "sync points and findings with what to change, each iteration's critical path across ranks, why\n"
    "stragglers are late, and how long streams (and --group sets) ran concurrently. TRACE is a\n"
    "Kineto/PyTorch-profiler .json or .json.gz file or a directory of per-rank files.",
    {{"json", "", "machine-readable report (schema overlapscope.report/1, docs/report-schema.md)"},
     {"markdown", "", "Markdown summary for pull-request comments"},
     {"strict", "", "exit 2 (no report) when part of the input could not be read (data-loss warnings)"},
     {"html", "OUT.html", "also write a self-contained HTML page (charts, timeline of one iteration per rank)"},
     {"comm-kernel", "REGEX", "classify GPU activities whose name matches REGEX as communication", true},
     {"compute-kernel", "REGEX", "classify matching names as compute", true},
     {"memory-kernel", "REGEX", "classify matching names as memory", true},
     {"classes", "FILE", "classification rules file, one 'CLASS REGEX' per line (see docs)", true},
     {"explain-classes", "", "list the rules and which rule classified each activity name, then exit"},
     {"iteration-marker", "NAME", "iterations are ranges whose name starts with NAME (default ProfilerStep#)"},
     {"min-gap", "TIME", "shortest GPU idle gap reported (default 5us; units ns, us, ms; bare number = us)"},
     {"runtime-cutoff", "TIME", "launch calls longer than this are outliers (HTA's runtime_cutoff, default 50us)"},
     {"launch-delay-cutoff", "TIME", "launch delays above this are outliers (default 100us)"},
     {"top", "N", "rows per table (default 10)"},
     {"group", "NAME=REGEX",
      "stream concurrency of a user group: GPU activities whose name, or the name of an NVTX/annotation/op "
      "range around their launch call, matches REGEX (repeatable; pairs of groups are reported)",
      true},
     {"collectives", "N|all",
      "text/Markdown: list the first N matched collective instances (default 20; --json lists all)"},
     {"ranks", "N|all|R,R,...",
      "text/Markdown: detail blocks for the ranks that stand out and N others (the slowest steps), every rank, or "
      "these ranks (default: every rank up to 8, else those that stand out and the 4 slowest; --json has all)"},
     {"align-clocks", "off|auto|on",
      "align the clocks of several hosts by matched collectives (default auto: when the "
      "trace names >= 2 hosts; on: also processes without a host name)"},
     {"trace", "OUT.pftrace",
      "also write the analyzed trace as Perfetto with the analysis drawn in (docs/perfetto.md)"},
     {"critical-path", "on|off",
      "the critical path, straggler causes and the transfer/wait split of communication (default on; off: "
      "not computed, the report says so; on: one model of every rank even when it exceeds the memory budget)"},
     {"per-rank", "",
      "reduce one rank at a time in bounded memory (no critical path, straggler causes or transfer/wait split "
      "across ranks, so a collective finding's cost keeps the time it waited for a late peer; the rest of the "
      "report is the same as without it). Chosen by itself, with a note on stderr, when one "
      "model of the job would exceed the memory budget and nothing needs one model"},
     {"jobs", "N", "with --per-rank (implies it): ranks reduced at once (default: the machine's cores)"},
     ThreadsFlag(),
     {"memory-budget", "SIZE",
      "with --per-rank (implies it): memory for the ranks in flight, e.g. 8G (default: half the physical memory, "
      "or OVERLAPSCOPE_MEMORY_BUDGET bytes)"},
     {"require", "EXPR", "gate, e.g. 'overlap_ratio>=0.6' or 'blocked_share<=0.05' (per rank; exit 3 if violated)",
      true}},
    "Gate metrics are the keys of each rank's \"summary\" in the JSON report. A metric that is absent for a\n"
    "rank (overlap_ratio without communication) fails its gate and says so.\n"
    "Data-loss warnings of the import (records that were not understood) come first in every output.\n"
    "Under mpirun/srun with several processes the rank files are spread over them (as --per-rank; process 0\n"
    "prints the report; needs a build with MPI).\n"
    "exit codes: 0 ok, 2 a trace or rules file cannot be read (with --strict: or part of a trace), 3 a\n"
    "--require gate failed, 64 bad command line"};

int Usage(const std::string& msg) {
  std::fprintf(stderr, "overlapscope analyze: %s\n(see 'overlapscope analyze --help')\n", msg.c_str());
  return kExitUsage;
}

// Writes `text` to stdout; false (after saying so) when stdout cannot take it.
bool Print(const std::string& text) {
  if (std::fputs(text.c_str(), stdout) >= 0 && std::fflush(stdout) == 0) return true;
  std::fprintf(stderr, "overlapscope analyze: cannot write the report to stdout\n");
  return false;
}

// Writes `text` to `path`; false (after saying so) when it cannot.
bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (out && out.write(text.data(), static_cast<std::streamsize>(text.size())) && out.flush()) return true;
  std::fprintf(stderr, "overlapscope analyze: %s: cannot write\n", path.c_str());
  return false;
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "overlapscope analyze: %s\n", std::string(s.message()).c_str());
  return kExitError;
}

}  // namespace

int RunAnalyze(int argc, char** argv) {
  // Under mpirun/srun with several processes: the MPI binary spreads the ranks over them.
  if (g_mpi_world == nullptr && LauncherWorldSize() > 1) return ExecAnalyzeMpi(argc, argv);
  ParsedArgs args;
  if (int rc = ParseOrExit(kSpec, argc, argv, args); rc >= 0) return rc;
  if (args.Has("json") && args.Has("markdown")) return Usage("--json and --markdown exclude each other");
  engine::AnalyzeOptions opt;
  int rc = kExitOk;
  if (!ParseAnalyzeOptions("analyze", args, &opt, &rc)) return rc;
  opt.keep_critical_path = args.Has("trace");  // the Perfetto file draws the path
  if (args.Has("critical-path")) {
    const std::string v = args.Get("critical-path");
    if (v != "on" && v != "off") return Usage("--critical-path '" + v + "': expected on or off");
    opt.critical_path = v == "on";
  }
  engine::RenderOptions render;
  if (args.Has("collectives") && args.Get("collectives") == "all") {
    render.collectives_shown = SIZE_MAX;
  } else if (args.Has("collectives")) {
    auto n = ParseIntOption("collectives", args.Get("collectives"), 0, INT64_MAX);
    if (!n.ok()) return Usage(absl::StrCat(n.status().message(), " (or 'all')"));
    render.collectives_shown = static_cast<size_t>(*n);
  }
  if (args.Has("ranks")) {
    auto sel = report::ParseRankSelection(args.Get("ranks"));
    if (!sel.ok()) return Usage(std::string(sel.status().message()));
    render.ranks = *sel;
  }
  const std::vector<std::string>& gates = args.All("require");
  for (const std::string& g : gates)
    if (auto s = engine::CheckGate(g); !s.ok()) return Usage(std::string(s.message()));

  const engine::ReportFormat format = args.Has("json")       ? engine::ReportFormat::kJson
                                      : args.Has("markdown") ? engine::ReportFormat::kMarkdown
                                                             : engine::ReportFormat::kText;
  if (WantsPerRank(args) || AutoPerRank(args)) return RunAnalyzePerRank(args, opt, render, format, gates);
  rc = kExitOk;
  base::PhaseLog("start");
  auto session = LoadOrReport("analyze", args.positionals, args.Get("align-clocks"), &rc, true, opt.threads);
  if (!session) return rc;
  if (!StrictCheckOrReport("analyze", *session, args.Has("strict"), false, &rc)) return rc;
  // The analyses, the report and its rendering share one set of threads, started as their
  // parallel steps first ask for them, instead of each step's starting and joining its own.
  absl::StatusOr<engine::Analysis> analysis = absl::UnknownError("not analyzed");
  absl::Status written;
  const bool explain = args.Has("explain-classes");
  base::ShareThreads(opt.threads, [&] {
    analysis = engine::Analyze(*session, opt);
    // Written as rendered: a report of a long trace is tens of MB.
    if (analysis.ok() && !explain) written = engine::WriteReport(*analysis, format, render, stdout);
  });
  if (!analysis.ok()) return Fail(analysis.status());
  KeepUntilExit(session->state());  // freed by the process's end when main() runs this
  KeepUntilExit(analysis->state());
  if (explain) {
    auto out = engine::ExplainClasses(*analysis);
    if (!out.ok()) return Fail(out.status());
    if (!Print(*out)) return kExitError;
  } else if (!written.ok()) {
    return Fail(written);
  }
  base::PhaseLog("render and print");
  if (args.Has("html") && !explain) {
    const std::string page = report::RenderHtml(analysis->report(), engine::IterationTimelines(*analysis));
    if (!WriteFile(args.Get("html"), page)) return kExitError;
  }
  if (args.Has("trace")) {
    const std::string path = args.Get("trace");
    engine::ExportOptions draw;
    draw.analysis = &*analysis;
    auto st = engine::ExportPerfetto(*session, path, draw);
    if (!st.ok()) return Fail(st.status());
    std::fprintf(stderr, "wrote %s (%lld tracks, %lld slices, %lld flows, %lld bytes)\n", path.c_str(),
                 static_cast<long long>(st->tracks), static_cast<long long>(st->slices),
                 static_cast<long long>(st->flows), static_cast<long long>(st->bytes));
  }
  if (gates.empty() || explain) return kExitOk;
  auto gr = engine::EvaluateGates(*analysis, gates);
  if (!gr.ok()) return Usage(std::string(gr.status().message()));
  // Gate lines go to stderr so that --json output on stdout stays a valid document.
  for (const std::string& line : gr->lines) std::fprintf(stderr, "gate: %s\n", line.c_str());
  return gr->passed ? kExitOk : kExitGateFailed;
}

}  // namespace overlapscope::cli
