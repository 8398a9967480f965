// overlapscope diff BASE TEST : did a change help? Two runs compared per rank on per-iteration
// values with a verdict (METRICS.md §10), as text, JSON (overlapscope.diff/1) or Markdown, with
// --fail-on gates on the deltas (exit 3).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/analyze_options.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "engine/engine.h"
#include "engine/timeline.h"
#include "report/diff.h"
#include "report/html.h"
#include "report/read_json.h"

namespace overlapscope::cli {
namespace {

const CommandSpec kSpec{
    "diff",
    "overlapscope diff BASE TEST [options]",
    "Compares two runs: per rank the step time, overlap, exposed communication, idle time by cause,\n"
    "host blocking and findings; per-iteration distributions judged by a rank-sum test; kernels by\n"
    "name and class; collectives by (op, communicator, size). The verdict comes first: the changes\n"
    "that moved the step time most, each significant or within noise. BASE and TEST are what\n"
    "`analyze` reads (a trace file or a directory of per-rank files) or a saved `analyze --json`\n"
    "report. Deltas are TEST - BASE.",
    {{"json", "", "machine-readable comparison (schema overlapscope.diff/1, docs/diff-schema.md)"},
     {"markdown", "", "Markdown for a pull-request comment"},
     {"html", "OUT.html", "also write a self-contained HTML page: verdict, deltas, both sides with their charts"},
     {"fail-on", "EXPR",
      "exit 3 when a rank's delta is beyond EXPR: METRIC>DELTA or METRIC<DELTA, DELTA absolute or "
      "relative to BASE with %, e.g. 'step_time_ns>+5%', 'overlap_ratio<-0.05'",
      true},
     {"sequential", "",
      "analyze BASE, then TEST (one trace in memory at a time); by default both run at once when their "
      "estimated peaks fit in half the available memory"},
     {"comm-kernel", "REGEX", "classify GPU activities whose name matches REGEX as communication", true},
     {"compute-kernel", "REGEX", "classify matching names as compute", true},
     {"memory-kernel", "REGEX", "classify matching names as memory", true},
     {"classes", "FILE", "classification rules file, one 'CLASS REGEX' per line (see docs)", true},
     {"iteration-marker", "NAME", "iterations are ranges whose name starts with NAME (default ProfilerStep#)"},
     {"min-gap", "TIME", "shortest GPU idle gap counted (default 5us)"},
     {"runtime-cutoff", "TIME", "launch calls longer than this are outliers (default 50us)"},
     {"launch-delay-cutoff", "TIME", "launch delays above this are outliers (default 100us)"},
     {"top", "N", "kernel names kept per class and side (default 100 for traces; a saved report keeps its own)"},
     {"align-clocks", "off|auto|on", "align the clocks of several hosts by matched collectives (default auto)"},
     ThreadsFlag()},
    "Gate metrics are step_time_ns (median per-iteration step time) and the keys of each rank's\n"
    "\"summary\" in the JSON report. A comparison is strict: an unchanged metric never fails.\n"
    "Significance: two-sided rank-sum test over iterations, p < 0.01 and medians > 1% apart; with\n"
    "fewer than 5 iterations a side it is not judged, and the output says so.\n"
    "exit codes: 0 ok, 2 an input cannot be read, 3 a --fail-on gate failed, 64 bad command line"};

int Usage(const std::string& msg) {
  std::fprintf(stderr, "overlapscope diff: %s\n(see 'overlapscope diff --help')\n", msg.c_str());
  return kExitUsage;
}

// A saved JSON report, when `path` is a regular file that starts like one.
bool IsSavedReport(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  char head[4096];
  in.read(head, sizeof head);
  if (!report::LooksLikeReportJson(std::string_view(head, static_cast<size_t>(in.gcount())))) return false;
  in.clear();
  in.seekg(0);
  std::stringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return true;
}

// One side of the comparison: a saved report read back, or the trace(s) at `path` loaded and
// analyzed. On failure the message is printed and rc set (exit code).
struct SideResult {
  std::optional<report::Report> report;
  std::string schema_version;
  std::vector<report::RankTimeline> timelines;  // with --html only
  int rc = kExitOk;
};

SideResult Side(const std::string& path, const engine::AnalyzeOptions& opt, const std::string& align, bool timelines,
                bool progress) {
  SideResult out;
  std::string text;
  if (IsSavedReport(path, &text)) {
    auto r = report::ReadReportJson(text, path, &out.schema_version);
    if (!r.ok()) {
      std::fprintf(stderr, "overlapscope diff: %s\n", std::string(r.status().message()).c_str());
      out.rc = kExitBadInput;
      return out;
    }
    out.report = std::move(r).value();
    return out;
  }
  auto session = LoadOrReport("diff", {path}, align, &out.rc, progress, opt.threads);
  if (!session) return out;
  auto analysis = engine::Analyze(*session, opt);
  if (!analysis.ok()) {
    std::fprintf(stderr, "overlapscope diff: %s: %s\n", path.c_str(), std::string(analysis.status().message()).c_str());
    out.rc = kExitError;
    return out;
  }
  out.schema_version = report::kSchemaVersion;
  if (timelines) out.timelines = engine::IterationTimelines(*analysis);
  out.report = analysis->report();
  return out;
}

// Bytes of a file, or of the files of a directory (one level, as `analyze` reads it); 0 when
// it cannot be read (the load will say why).
uint64_t InputBytes(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    const uintmax_t n = std::filesystem::file_size(path, ec);
    return ec ? 0 : static_cast<uint64_t>(n);
  }
  uint64_t sum = 0;
  for (const auto& e : std::filesystem::directory_iterator(path, ec))
    if (e.is_regular_file(ec)) sum += static_cast<uint64_t>(e.file_size(ec));
  return sum;
}

// Peak memory of loading and analyzing `path`, estimated from its size: at most half the bytes
// of a JSON trace (the target docs/PERFORMANCE.md checks, 0.35 measured on 500 MB), and a
// compressed input taken as 20 times its size uncompressed (a conservative ratio for Kineto
// JSON). Captures and saved reports are taken as JSON.
uint64_t PeakEstimate(const std::string& path) {
  const uint64_t bytes = InputBytes(path);
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  bool dir_gz = false;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      dir_gz = dir_gz || e.path().extension() == ".gz";
  return (gz || dir_gz ? 20 : 1) * bytes / 2;
}

// MemAvailable of /proc/meminfo in bytes; 0 when unknown (then the sides run one after the other).
uint64_t MemAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

// The two sides run at once (two threads, each loading and analyzing its input as `analyze`
// does) when both estimated peaks fit in half the available memory; otherwise one after the
// other, each side's trace freed before the next is read. Results are the same either way.
bool SidesAtOnce(const std::string& base, const std::string& test) {
  const uint64_t avail = MemAvailable();
  return avail > 0 && PeakEstimate(base) + PeakEstimate(test) <= avail / 2;
}

}  // namespace

int RunDiff(int argc, char** argv) {
  ParsedArgs args;
  if (int rc = ParseOrExit(kSpec, argc, argv, args); rc >= 0) return rc;
  if (args.positionals.size() != 2) return Usage("expected two inputs, BASE and TEST");
  if (args.Has("json") && args.Has("markdown")) return Usage("--json and --markdown exclude each other");
  engine::AnalyzeOptions opt;
  opt.top_n = 100;
  int rc = kExitOk;
  if (!ParseAnalyzeOptions("diff", args, &opt, &rc)) return rc;
  std::vector<report::DiffGate> gates;
  for (const std::string& g : args.All("fail-on")) {
    auto parsed = report::ParseDiffGate(g);
    if (!parsed.ok()) return Usage(std::string(parsed.status().message()));
    gates.push_back(*parsed);
  }
  const std::string align = args.Get("align-clocks");
  const bool html = args.Has("html");
  SideResult base, test;
  if (!args.Has("sequential") && SidesAtOnce(args.positionals[0], args.positionals[1])) {
    std::thread other([&] { base = Side(args.positionals[0], opt, align, html, false); });
    test = Side(args.positionals[1], opt, align, html, false);
    other.join();
  } else {
    base = Side(args.positionals[0], opt, align, html, true);
    if (base.rc != kExitOk) return base.rc;
    test = Side(args.positionals[1], opt, align, html, true);
  }
  if (base.rc != kExitOk) return base.rc;
  if (test.rc != kExitOk) return test.rc;
  report::DiffInfo info{base.schema_version, test.schema_version};
  const report::ReportDiff d = report::DiffReports(*base.report, *test.report, info);
  const std::vector<std::string> names = report::DiffMetricNames(d);
  for (const report::DiffGate& g : gates)
    if (!d.ranks.empty() && std::find(names.begin(), names.end(), g.metric) == names.end())
      return Usage(absl::StrCat("--fail-on '", g.text, "': no metric ", g.metric,
                                " (metrics: ", absl::StrJoin(names, ", "), ")"));
  const std::string out = args.Has("json")       ? report::RenderDiffJson(d, gates)
                          : args.Has("markdown") ? report::RenderDiffMarkdown(d)
                                                 : report::RenderDiffText(d);
  if (std::fputs(out.c_str(), stdout) < 0 || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "overlapscope diff: cannot write to stdout\n");
    return kExitError;
  }
  if (args.Has("html")) {
    const std::string page = report::RenderDiffHtml(*base.report, *test.report, d, base.timelines, test.timelines);
    std::ofstream f(args.Get("html"), std::ios::binary);
    if (!f || !f.write(page.data(), static_cast<std::streamsize>(page.size())) || !f.flush()) {
      std::fprintf(stderr, "overlapscope diff: %s: cannot write\n", args.Get("html").c_str());
      return kExitError;
    }
  }
  if (gates.empty()) return kExitOk;
  const report::DiffGateResult g = report::EvaluateDiffGates(d, gates);
  for (const std::string& line : g.lines) std::fprintf(stderr, "fail-on: %s\n", line.c_str());
  return g.passed ? kExitOk : kExitGateFailed;
}

}  // namespace overlapscope::cli
