// overlapscope export TRACE... -o OUT [--format perfetto|chrome] [--analyze]: writes a trace as
// Perfetto protobuf (.pftrace) or Kineto-compatible Chrome JSON (.json, .json.gz).
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "engine/engine.h"

namespace overlapscope::cli {
namespace {

const CommandSpec kSpec{
    "export",
    "overlapscope export TRACE... -o OUT [--format perfetto|chrome] [--analyze] [--strict]",
    "Writes one or more traces (one file per rank) as a Perfetto trace (.pftrace: streams named\n"
    "by role, API-to-GPU flows, exact ns) or as Kineto-compatible Chrome JSON (.json, .json.gz;\n"
    "one file per rank, OUT.rank<r>.json, when the trace has several ranks).",
    {{"output", "OUT", "output file (also -o OUT)"},
     {"format", "FORMAT", "perfetto or chrome (default: from OUT's extension)"},
     {"analyze", "",
      "Perfetto only: draw the analysis (exposed communication, overlap %, blocking, "
      "idle gaps, findings) on extra tracks, as `analyze --trace` does"},
     {"align-clocks", "off|auto|on",
      "align the clocks of several hosts by matched collectives, as analyze does (default auto: when the "
      "trace names >= 2 hosts; on: also processes without a host name)"},
     {"strict", "", "exit 2 (nothing written) when part of the input could not be read"}},
    "formats by extension: .pftrace / .perfetto-trace / .pb -> perfetto; .json / .json.gz -> chrome\n"
    "data-loss warnings of the import are printed to stderr\n"
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
  auto session = LoadOrReport("export", args.positionals, args.Get("align-clocks"), &rc);
  if (!session) return rc;
  if (!StrictCheckOrReport("export", *session, args.Has("strict"), true, &rc)) return rc;
  if (*format == engine::TraceFormat::kPerfetto) {
    std::optional<engine::Analysis> analysis;
    if (args.Has("analyze")) {
      engine::AnalyzeOptions ao;
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
