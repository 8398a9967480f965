// overlapscope export TRACE... -o OUT [--format perfetto|chrome] [--analyze]: writes a trace as
// Perfetto protobuf (.pftrace) or Kineto-compatible Chrome JSON (.json, .json.gz).
// With --per-rank (or --jobs, --memory-budget, or OUT a directory: "OUT/" or an existing one):
// one .pftrace per rank plus overview.pftrace in OUT, in bounded memory (engine/export_job.h).
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/analyze_per_rank.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/option_values.h"
#include "engine/engine.h"
#include "engine/export_job.h"

namespace overlapscope::cli {
namespace {

const CommandSpec kSpec{
    "export",
    "overlapscope export TRACE... -o OUT [--format perfetto|chrome] [--analyze] [--strict]\n"
    "       overlapscope export DIR|TRACE... -o OUTDIR --per-rank [--jobs N] [--memory-budget SIZE] [--analyze]",
    "Writes one or more traces (one file per rank) as a Perfetto trace (.pftrace: streams named\n"
    "by role, API-to-GPU flows, exact ns) or as Kineto-compatible Chrome JSON (.json, .json.gz;\n"
    "one file per rank, OUT.rank<r>.json, when the trace has several ranks).\n"
    "For jobs too large for one viewer trace, --per-rank writes OUTDIR/rank<r>.pftrace per rank\n"
    "(process<i>.pftrace for input file i without a rank) and OUTDIR/overview.pftrace with only the\n"
    "summary tracks of every rank: iterations, exposed communication, idle by cause, waiting for\n"
    "peers (the figures of `analyze --per-rank`). Each rank is read, analyzed, written and freed in\n"
    "turn, so memory stays about --jobs x one rank's model whatever the number of ranks.",
    {{"output", "OUT", "output file (also -o OUT)"},
     {"format", "FORMAT", "perfetto or chrome (default: from OUT's extension)"},
     {"analyze", "",
      "Perfetto only: draw the analysis (exposed communication, overlap %, blocking, "
      "idle gaps, findings) on extra tracks, as `analyze --trace` does"},
     {"align-clocks", "off|auto|on",
      "align the clocks of several hosts by matched collectives, as analyze does (default auto: when the "
      "trace names >= 2 hosts; on: also processes without a host name)"},
     {"strict", "",
      "exit 2 (nothing written) when part of the input could not be read; with --per-rank the files are "
      "written first"},
     {"per-rank", "",
      "OUT is a directory (created): one .pftrace per rank and overview.pftrace (implied by --jobs, "
      "--memory-budget, or OUT ending in '/' or naming an existing directory)"},
     {"jobs", "N", "with --per-rank: ranks read at once (default: the machine's cores)"},
     ThreadsFlag(),
     {"memory-budget", "SIZE",
      "with --per-rank: estimated memory of the ranks in flight, e.g. 8G (default: half the physical "
      "memory; one rank always runs)"}},
    "formats by extension: .pftrace / .perfetto-trace / .pb -> perfetto; .json / .json.gz -> chrome\n"
    "data-loss warnings of the import are printed to stderr\n"
    "--per-rank: Perfetto only; --analyze draws each rank's own analysis on its trace (no critical path,\n"
    "  waiting for peers on the overview); progress on a terminal\n"
    "exit codes: 0 ok, 1 the output cannot be written, 2 a trace cannot be read (with --strict: or part\n"
    "of a trace), 64 bad command line"};

int Usage(const std::string& message) {
  std::fprintf(stderr, "overlapscope export: %s\n(see 'overlapscope export --help')\n", message.c_str());
  return kExitUsage;
}

int Fail(const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "overlapscope export: %s%s\n", what.c_str(), std::string(s.message()).c_str());
  return kExitError;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool WantsPerRankExport(const ParsedArgs& args, const std::string& out) {
  return args.Has("per-rank") || args.Has("jobs") || args.Has("memory-budget") || (!out.empty() && out.back() == '/') ||
         IsDirectory(out);
}

void PrintProgress(const engine::ReduceProgress& p) {
  const double mb = static_cast<double>(p.bytes_done) / 1e6;
  std::fprintf(stderr, "\rexported %lld / %lld ranks, %.0f / %.0f MB, %.1f MB/s", static_cast<long long>(p.ranks_done),
               static_cast<long long>(p.ranks_total), mb, static_cast<double>(p.bytes_total) / 1e6,
               p.seconds > 0 ? mb / p.seconds : 0.0);
}

int RunPerRank(const ParsedArgs& args, const std::string& out) {
  if (args.Has("format") && args.Get("format") != "perfetto")
    return Usage("--per-rank writes Perfetto traces only (.pftrace per rank)");
  if (args.positionals.empty()) return Usage("no trace given");
  engine::JobExportOptions o;
  o.analyze = args.Has("analyze");
  int rc = kExitOk;
  std::optional<engine::ClockAlign> align = ParseAlignOrReport("export", args.Get("align-clocks"), &rc);
  if (!align) return rc;
  o.reduce.align_clocks = *align;
  if (args.Has("jobs")) {
    auto n = ParseIntOption("jobs", args.Get("jobs"), 1, 4096);
    if (!n.ok()) return Usage(std::string(n.status().message()));
    o.reduce.jobs = static_cast<int>(*n);
  }
  if (args.Has("memory-budget")) {
    auto b = ParseBytesOption("memory-budget", args.Get("memory-budget"));
    if (!b.ok()) return Usage(std::string(b.status().message()));
    o.reduce.memory_budget_bytes = *b;
  }
  const bool tty = StderrIsTerminal();
  if (tty) o.reduce.progress = PrintProgress;
  auto job = engine::ExportJob(args.positionals, out, o);
  if (tty) std::fputs("\r\033[K", stderr);
  if (!job.ok()) {
    std::fprintf(stderr, "overlapscope export: %s\n", std::string(job.status().message()).c_str());
    return engine::IsOutputError(job.status()) || job.status().code() == absl::StatusCode::kInternal ? kExitError
                                                                                                     : kExitBadInput;
  }
  for (const std::string& w : job->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  std::printf("wrote %zu rank traces (perfetto) to %s: %lld bytes\n", job->rank_files.size(), out.c_str(),
              static_cast<long long>(job->rank_bytes));
  const engine::PerfettoExport& ov = job->overview_stats;
  std::printf(
      "wrote %s (perfetto overview): %lld ranks, %lld iterations, %lld waits for peers, %lld slices, %lld counter "
      "samples on %lld tracks, %lld bytes\n",
      job->overview.c_str(), static_cast<long long>(job->stats.ranks), static_cast<long long>(job->iterations),
      static_cast<long long>(job->waits), static_cast<long long>(ov.slices), static_cast<long long>(ov.counter_samples),
      static_cast<long long>(ov.tracks), static_cast<long long>(ov.bytes));
  if (job->waits_unplaced > 0)
    std::printf("note: %lld waits for peers not drawn: their participant matches no single rank file\n",
                static_cast<long long>(job->waits_unplaced));
  if (ov.time_shift_ns != 0)
    std::printf("note: overview timestamps shifted by %lld ns (the job had times before 0)\n",
                static_cast<long long>(ov.time_shift_ns));
  if (args.Has("strict") && !job->warnings.empty()) {
    std::fprintf(stderr, "overlapscope export: --strict: part of the input could not be read (warnings above)\n");
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

int RunExport(int argc, char** argv) {
  // args.h knows only long flags: turn "-o X" into "--output X".
  std::vector<std::string> storage(argv, argv + argc);
  for (auto& a : storage)
    if (a == "-o") a = "--output";
  std::vector<char*> args_v;
  for (auto& a : storage) args_v.push_back(a.data());
  ParsedArgs args;
  if (int rc = ParseOrExit(kSpec, static_cast<int>(args_v.size()), args_v.data(), args); rc >= 0) return rc;

  const std::string out = args.Get("output");
  if (out.empty()) return Usage("no output given (-o OUT)");
  if (WantsPerRankExport(args, out)) return RunPerRank(args, out);
  absl::StatusOr<engine::TraceFormat> format = engine::TraceFormatFromPath(out);
  if (args.Has("format")) {
    const std::string f = args.Get("format");
    if (f == "perfetto")
      format = engine::TraceFormat::kPerfetto;
    else if (f == "chrome")
      format = engine::TraceFormat::kChrome;
    else
      return Usage(absl::StrCat("--format must be perfetto or chrome, not '", f, "'"));
  }
  if (!format.ok()) return Usage(absl::StrCat(format.status().message(), ", or --format"));
  if (args.Has("analyze") && *format != engine::TraceFormat::kPerfetto)
    return Usage("--analyze draws on Perfetto tracks; Chrome JSON keeps the events only");

  int rc = kExitOk;
  std::optional<int> threads = ParseThreadsOrReport("export", args, &rc);
  if (!threads) return rc;
  auto session = LoadOrReport("export", args.positionals, args.Get("align-clocks"), &rc, true, *threads);
  if (!session) return rc;
  if (!StrictCheckOrReport("export", *session, args.Has("strict"), true, &rc)) return rc;
  if (*format == engine::TraceFormat::kPerfetto) {
    std::optional<engine::Analysis> analysis;
    if (args.Has("analyze")) {
      engine::AnalyzeOptions ao;
      ao.threads = *threads;
      ao.keep_critical_path = true;  // drawn as the "critical path" track
      auto a = engine::Analyze(*session, ao);
      if (!a.ok()) return Fail("analysis failed: ", a.status());
      analysis = std::move(a).value();
    }
    engine::ExportOptions draw;
    draw.analysis = analysis ? &*analysis : nullptr;
    auto st = engine::ExportPerfetto(*session, out, draw);
    if (!st.ok()) return Fail("", st.status());
    std::printf(
        "wrote %s (perfetto): %lld slices, %lld flows, %lld instants, %lld counter samples on %lld tracks, "
        "%lld bytes\n",
        out.c_str(), static_cast<long long>(st->slices), static_cast<long long>(st->flows),
        static_cast<long long>(st->instants), static_cast<long long>(st->counter_samples),
        static_cast<long long>(st->tracks), static_cast<long long>(st->bytes));
    if (st->lane_tracks > 0)
      std::printf("note: %lld extra lane tracks hold slices that partially overlap others on their thread/stream\n",
                  static_cast<long long>(st->lane_tracks));
    if (st->time_shift_ns != 0)
      std::printf("note: timestamps shifted by %lld ns (the trace had times before 0)\n",
                  static_cast<long long>(st->time_shift_ns));
    return kExitOk;
  }
  auto st = engine::ExportChrome(*session, out);
  if (!st.ok()) return Fail("", st.status());
  for (const std::string& f : st->files) std::printf("wrote %s (chrome json)\n", f.c_str());
  std::printf("%lld events, %lld bytes of JSON, %lld bytes written\n", static_cast<long long>(st->events),
              static_cast<long long>(st->bytes), static_cast<long long>(st->file_bytes));
  if (st->not_written > 0)
    std::printf("note: %lld sync records without a device are not written (Kineto keeps syncs on GPU rows)\n",
                static_cast<long long>(st->not_written));
  if (st->nvtx_as_user_annotation > 0)
    std::printf("note: %lld NVTX ranges written as user_annotation (Kineto has no NVTX category)\n",
                static_cast<long long>(st->nvtx_as_user_annotation));
  return kExitOk;
}

}  // namespace overlapscope::cli
