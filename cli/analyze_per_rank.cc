#include "cli/analyze_per_rank.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cli/analyze_mpi.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/option_values.h"
#include "engine/reduce.h"

namespace overlapscope::cli {
namespace {

int Usage(const std::string& msg) {
  std::fprintf(stderr, "overlapscope analyze: %s\n(see 'overlapscope analyze --help')\n", msg.c_str());
  return kExitUsage;
}

}  // namespace

absl::StatusOr<int64_t> ParseBytesOption(const std::string& flag, const std::string& text) {
  std::string t = absl::AsciiStrToUpper(text);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  std::string unit = end == nullptr ? "" : std::string(end);
  if (unit.size() > 1 && (unit.substr(1) == "IB" || unit.substr(1) == "B")) unit = unit.substr(0, 1);
  const int shift = unit.empty() || unit == "B" ? 0
                    : unit == "K"               ? 10
                    : unit == "M"               ? 20
                    : unit == "G"               ? 30
                    : unit == "T"               ? 40
                                                : -1;
  if (t.empty() || end == t.c_str() || shift < 0 || !std::isfinite(v) || v <= 0 || v * std::ldexp(1.0, shift) > 9e18)
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " '", text, "': expected a positive size such as 8G, 512M or 1073741824"));
  return static_cast<int64_t>(v * std::ldexp(1.0, shift));
}

bool WantsPerRank(const ParsedArgs& args) {
  return g_mpi_world != nullptr || args.Has("per-rank") || args.Has("jobs") || args.Has("memory-budget");
}

bool AutoPerRank(const ParsedArgs& args) {
  // Anything that needs every rank's events at once keeps the whole model, whatever it costs.
  for (const char* f : {"trace", "html", "explain-classes", "critical-path"})
    if (args.Has(f)) return false;
  absl::StatusOr<engine::JobEstimate> e = engine::EstimateJob(args.positionals);
  if (!e.ok() || e->files < 2) return false;  // the whole-model path reports the error
  const int64_t budget = engine::DefaultMemoryBudget();
  if (e->model_bytes <= budget) return false;
  std::fprintf(stderr,
               "overlapscope analyze: %lld rank files would take about %.1f GB as one model, more than the "
               "memory budget (%.1f GB): analyzing one rank at a time (--per-rank). The critical path and "
               "straggler causes need one model: --critical-path on asks for it.\n",
               static_cast<long long>(e->files), static_cast<double>(e->model_bytes) / 1e9,
               static_cast<double>(budget) / 1e9);
  return true;
}

int RunAnalyzePerRank(const ParsedArgs& args, const engine::AnalyzeOptions& options,
                      const engine::RenderOptions& render, engine::ReportFormat format,
                      const std::vector<std::string>& gates) {
  for (const char* f : {"trace", "html", "explain-classes"})
    if (args.Has(f))
      return Usage(absl::StrCat("--", f,
                                " needs the whole trace in memory: not with --per-rank, --jobs or "
                                "--memory-budget"));
  if (args.positionals.empty()) return Usage("no trace given");
  engine::ReduceOptions o;
  int rc = kExitOk;
  std::optional<engine::ClockAlign> align = ParseAlignOrReport("analyze", args.Get("align-clocks"), &rc);
  if (!align) return rc;
  o.align_clocks = *align;
  if (args.Has("jobs")) {
    auto n = ParseIntOption("jobs", args.Get("jobs"), 1, 4096);
    if (!n.ok()) return Usage(std::string(n.status().message()));
    o.jobs = static_cast<int>(*n);
  }
  if (args.Has("memory-budget")) {
    auto b = ParseBytesOption("memory-budget", args.Get("memory-budget"));
    if (!b.ok()) return Usage(std::string(b.status().message()));
    o.memory_budget_bytes = *b;
  }
  // Progress on a terminal (one line, rewritten), or, with OVERLAPSCOPE_PROGRESS=1, on stderr
  // whatever it is (a line per rank: logs of batch jobs, tests). Under MPI process 0 prints its
  // own share's progress (the shares are balanced by bytes); the others print nothing.
  const char* forced_env = std::getenv("OVERLAPSCOPE_PROGRESS");
  const bool forced = forced_env != nullptr && std::string(forced_env) == "1";
  const bool tty = !forced && StderrIsTerminal();
  const int processes = g_mpi_world != nullptr ? g_mpi_world->size : 1;
  if ((tty || forced) && (g_mpi_world == nullptr || g_mpi_world->rank == 0))
    o.progress = [tty, processes](const engine::ReduceProgress& p) {
      const double mb = static_cast<double>(p.bytes_done) / 1e6;
      const std::string share =
          processes > 1 ? absl::StrCat(" (process 0's share; ", processes, " processes)") : std::string();
      std::fprintf(stderr, "%sanalyzed %lld / %lld ranks%s, %.0f / %.0f MB, %.1f MB/s%s", tty ? "\r" : "",
                   static_cast<long long>(p.ranks_done), static_cast<long long>(p.ranks_total), share.c_str(), mb,
                   static_cast<double>(p.bytes_total) / 1e6, p.seconds > 0 ? mb / p.seconds : 0.0, tty ? "" : "\n");
      if (tty && p.ranks_done >= p.ranks_total) std::fputs("\r\033[K", stderr);
    };
  absl::StatusOr<engine::PerRankReport> reduced = absl::UnknownError("not run");
  if (g_mpi_world != nullptr) {  // each process its share; process 0 assembles and prints
    auto all =
        g_mpi_world->gather(engine::ReduceShare(args.positionals, options, o, g_mpi_world->rank, g_mpi_world->size));
    if (g_mpi_world->rank != 0) return all.ok() ? kExitOk : kExitBadInput;
    reduced = all.ok() ? engine::AssembleShares(args.positionals, options, o, std::move(all).value())
                       : absl::StatusOr<engine::PerRankReport>(all.status());
  } else {
    reduced = engine::ReducePerRank(args.positionals, options, o);
  }
  if (tty) std::fputs("\r\033[K", stderr);
  if (!reduced.ok()) {
    std::fprintf(stderr, "overlapscope analyze: %s\n", std::string(reduced.status().message()).c_str());
    return reduced.status().code() == absl::StatusCode::kInternal ? kExitError : kExitBadInput;
  }
  // The gates and --strict read the head: every rank's summary and the warnings.
  const report::Report& rep = reduced->head();
  if (args.Has("strict") && !rep.warnings.empty()) {
    for (const report::ImportWarning& w : rep.warnings) std::fprintf(stderr, "warning: %s\n", w.message.c_str());
    std::fprintf(stderr, "overlapscope analyze: --strict: part of the input could not be read (warnings above)\n");
    return kExitBadInput;
  }
  // Streamed to stdout: the report is never one string (~1.5 GB of JSON for 256 x 50 MB ranks).
  if (absl::Status w = engine::WriteReport(*reduced, format, render, stdout); !w.ok()) {
    std::fprintf(stderr, "overlapscope analyze: %s\n", std::string(w.message()).c_str());
    return kExitError;
  }
  if (gates.empty()) return kExitOk;
  auto gr = engine::EvaluateGates(rep, gates);
  if (!gr.ok()) return Usage(std::string(gr.status().message()));
  for (const std::string& line : gr->lines) std::fprintf(stderr, "gate: %s\n", line.c_str());
  return gr->passed ? kExitOk : kExitGateFailed;
}

}  // namespace overlapscope::cli
