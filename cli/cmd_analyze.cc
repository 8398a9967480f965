// overlapscope analyze TRACE... : overlap, exposed communication, CPU blocking, GPU idle gaps,
// sync points and findings (METRICS.md §1-5), as text, JSON or Markdown, with --require gates.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analyze/analysis.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "exporters/perfetto_writer.h"
#include "report/report_render.h"

namespace overlapscope::cli {
namespace {

const CommandSpec kSpec{
    "analyze",
    "overlapscope analyze TRACE... [options]",
    "Computes, per rank and GPU, how much communication hides under computation (whole trace, per\n"
    "iteration, per collective), where host threads block on the GPU, GPU idle gaps and their causes,\n"
    "sync points and findings with what to change. TRACE is a Kineto/PyTorch-profiler .json or\n"
    ".json.gz file or a directory of per-rank files.",
    {{"json", "", "machine-readable report (schema overlapscope.report/1, docs/report-schema.md)"},
     {"markdown", "", "Markdown summary for pull-request comments"},
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
     {"collectives", "N|all",
      "text/Markdown: list the first N matched collective instances (default 20; --json lists all)"},
     {"align-clocks", "off|auto|on",
      "align the clocks of several hosts by matched collectives (default auto: when the "
      "trace names >= 2 hosts; on: also processes without a host name)"},
     {"trace", "OUT.pftrace",
      "also write the analyzed trace as Perfetto with the analysis drawn in (docs/perfetto.md)"},
     {"require", "EXPR", "gate, e.g. 'overlap_ratio>=0.6' or 'blocked_share<=0.05' (per rank; exit 3 if violated)",
      true}},
    "Gate metrics are the keys of each rank's \"summary\" in the JSON report. A metric that is absent for a\n"
    "rank (overlap_ratio without communication) fails its gate and says so.\n"
    "exit codes: 0 ok, 2 a trace or rules file cannot be read, 3 a --require gate failed, 64 bad command line"};

// "5us", "5000ns", "0.5ms", "5" (µs) -> ns.
bool ParseTime(const std::string& s, int64_t* ns) {
  std::string num = s;
  double scale = 1000;
  auto ends = [&](const std::string& suf) {
    return num.size() > suf.size() && num.compare(num.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends("ns"))
    scale = 1, num.resize(num.size() - 2);
  else if (ends("us"))
    scale = 1000, num.resize(num.size() - 2);
  else if (ends("ms"))
    scale = 1e6, num.resize(num.size() - 2);
  else if (ends("s"))
    scale = 1e9, num.resize(num.size() - 1);
  double v;
  if (!absl::SimpleAtod(num, &v) || v < 0) return false;
  *ns = static_cast<int64_t>(v * scale + 0.5);
  return true;
}

int Usage(const std::string& msg) {
  std::fprintf(stderr, "overlapscope analyze: %s\n(see 'overlapscope analyze --help')\n", msg.c_str());
  return kExitUsage;
}

}  // namespace

int RunAnalyze(int argc, char** argv) {
  ParsedArgs args;
  if (int rc = ParseOrExit(kSpec, argc, argv, args); rc >= 0) return rc;
  if (args.Has("json") && args.Has("markdown")) return Usage("--json and --markdown exclude each other");

  analyze::AnalyzeOptions opt;
  struct {
    const char* flag;
    analyze::ActivityClass cls;
  } const kClassFlags[] = {{"comm-kernel", analyze::ActivityClass::kComm},
                           {"compute-kernel", analyze::ActivityClass::kCompute},
                           {"memory-kernel", analyze::ActivityClass::kMemory}};
  for (const auto& f : kClassFlags)
    for (const std::string& re : args.All(f.flag))
      if (auto s = opt.rules.AddUserRule(f.cls, analyze::MatchKind::kRegex, re, absl::StrCat("--", f.flag)); !s.ok())
        return Usage(std::string(s.message()));
  for (const std::string& path : args.All("classes")) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "overlapscope analyze: %s: cannot read rules file\n", path.c_str());
      return kExitBadInput;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    if (auto s = opt.rules.AddRulesFromText(ss.str(), path); !s.ok()) {
      std::fprintf(stderr, "overlapscope analyze: %s\n", std::string(s.message()).c_str());
      return kExitBadInput;
    }
  }
  if (args.Has("iteration-marker")) {
    opt.iteration_marker = args.Get("iteration-marker");
    if (opt.iteration_marker.empty()) return Usage("--iteration-marker needs a non-empty NAME");
  }
  struct {
    const char* flag;
    int64_t* dst;
  } const kTimes[] = {{"min-gap", &opt.min_gap_ns},
                      {"runtime-cutoff", &opt.runtime_cutoff_ns},
                      {"launch-delay-cutoff", &opt.launch_delay_cutoff_ns}};
  for (const auto& f : kTimes)
    if (args.Has(f.flag) && !ParseTime(args.Get(f.flag), f.dst))
      return Usage(absl::StrCat("--", f.flag, " '", args.Get(f.flag), "' is not a time (e.g. 5us, 2000ns, 0.1ms)"));
  if (args.Has("top")) {
    int n;
    if (!absl::SimpleAtoi(args.Get("top"), &n) || n < 1) return Usage("--top needs a positive integer");
    opt.top_n = static_cast<size_t>(n);
  }
  size_t collectives_shown = 20;
  if (args.Has("collectives")) {
    int n;
    if (args.Get("collectives") == "all")
      collectives_shown = SIZE_MAX;
    else if (absl::SimpleAtoi(args.Get("collectives"), &n) && n >= 0)
      collectives_shown = static_cast<size_t>(n);
    else
      return Usage("--collectives needs a non-negative integer or 'all'");
  }
  std::vector<report::Gate> gates;
  for (const std::string& g : args.All("require")) {
    auto parsed = report::ParseGate(g);
    if (!parsed.ok()) return Usage(std::string(parsed.status().message()));
    auto names = report::GateMetricNames();
    if (std::find(names.begin(), names.end(), parsed->metric) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      return Usage(absl::StrCat("--require '", g, "': unknown metric '", parsed->metric, "'; metrics: ", list));
    }
    gates.push_back(*parsed);
  }

  int rc = kExitOk;
  auto trace = LoadTracesOrReport("analyze", args.positionals, &rc);
  if (!trace) return rc;
  analyze::ClockAlignment alignment;
  if (!AlignClocksOrReport("analyze", args.Get("align-clocks"), &*trace, &alignment, &rc)) return rc;
  auto result = analyze::AnalyzeAll(*trace, opt);
  if (!result.ok()) return Usage(std::string(result.status().message()));

  report::ReportInfo info;
  info.inputs = args.positionals;
  info.top_n = opt.top_n;
  info.collectives_shown = collectives_shown;
  info.clock_alignment = std::move(alignment);
  std::string out;
  if (args.Has("explain-classes"))
    out = report::RenderExplainClasses(*trace, *result);
  else if (args.Has("json"))
    out = report::RenderReportJson(*trace, *result, info);
  else if (args.Has("markdown"))
    out = report::RenderReportMarkdown(*trace, *result, info);
  else
    out = report::RenderReportText(*trace, *result, info);
  if (std::fputs(out.c_str(), stdout) < 0 || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "overlapscope analyze: cannot write the report to stdout\n");
    return kExitError;
  }
  if (args.Has("trace")) {
    const std::string path = args.Get("trace");
    exporters::PerfettoStats stats;
    absl::Status st = exporters::WritePerfetto(*trace, &*result, path, &stats);
    if (!st.ok()) {
      std::fprintf(stderr, "overlapscope analyze: %s\n", std::string(st.message()).c_str());
      return kExitError;
    }
    std::fprintf(stderr, "wrote %s (%lld tracks, %lld slices, %lld flows, %lld bytes)\n", path.c_str(),
                 static_cast<long long>(stats.tracks), static_cast<long long>(stats.slices),
                 static_cast<long long>(stats.flows), static_cast<long long>(stats.bytes));
  }
  if (gates.empty() || args.Has("explain-classes")) return kExitOk;
  auto gr = report::EvaluateGates(*trace, *result, gates);
  if (!gr.ok()) return Usage(std::string(gr.status().message()));
  // Gate lines go to stderr so that --json output on stdout stays a valid document.
  for (const std::string& line : gr->lines) std::fprintf(stderr, "gate: %s\n", line.c_str());
  return gr->passed ? kExitOk : kExitGateFailed;
}

}  // namespace overlapscope::cli
