// libovscope.so: gates (structured, for clients that raise on a failed one) and trace export.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/capi/capi_internal.h"
#include "engine/capi/capi_options.h"
#include "nlohmann/json.hpp"
#include "report/gates.h"

namespace overlapscope::capi {

using nlohmann::json;

// Invalid UTF-8 (a path) is replaced rather than thrown on.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

namespace {

// The gate expressions of a JSON array of strings.
int ReadGates(const char* gates_json, std::vector<std::string>* out) {
  json v = json::parse(gates_json == nullptr ? "" : gates_json, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded() || !v.is_array())
    return Fail(OVS_BAD_ARGUMENT, "gates: expected a JSON array of strings like [\"overlap_ratio>=0.6\"]");
  for (const json& g : v) {
    if (!g.is_string()) return Fail(OVS_BAD_ARGUMENT, absl::StrCat("gates: ", g.dump(), " is not a string"));
    if (absl::Status s = engine::CheckGate(g.get_ref<const std::string&>()); !s.ok()) return Fail(OVS_BAD_ARGUMENT, s);
    out->push_back(g.get<std::string>());
  }
  return Ok();
}

// A metric's value as the JSON report prints it: an integer, a ratio, or null (absent).
json ValueOf(const std::optional<report::Metric>& m) {
  if (!m) return nullptr;
  if (!m->is_ratio) return m->integer;
  return m->ratio ? json(*m->ratio) : json(nullptr);
}

// One check per rank and gate, as the engine judged them on the typed report (rank by rank, each
// rank's gates in order, with the lines the CLI prints).
int CheckGates(const report::Report& r, const std::vector<std::string>& gates, json* checks, bool* passed) {
  absl::StatusOr<engine::GateOutcome> outcome = engine::EvaluateGates(r, gates);
  if (!outcome.ok()) return Fail(OVS_BAD_ARGUMENT, outcome.status());
  *passed = outcome->passed;
  const std::vector<report::RankReport>& ranks = r.ranks;
  std::vector<std::string> metrics;  // of each gate (EvaluateGates parsed them: they parse)
  for (const std::string& g : gates) {
    absl::StatusOr<report::Gate> parsed = report::ParseGate(g);
    if (!parsed.ok()) return Fail(OVS_BAD_ARGUMENT, parsed.status());
    metrics.push_back(parsed->metric);
  }
  for (size_t i = 0; i < outcome->checks.size(); ++i) {
    const report::GateCheck& c = outcome->checks[i];
    const report::RankReport& rank = ranks.at(c.rank);
    checks->push_back(json{{"gate", gates.at(c.gate)},
                           {"metric", metrics.at(c.gate)},
                           {"label", rank.label},
                           {"rank", rank.rank ? json(*rank.rank) : json(nullptr)},
                           {"value", ValueOf(c.value)},
                           {"passed", c.passed},
                           {"line", outcome->lines.at(i)}});
  }
  return Ok();
}

int ExportPerfetto(const ovs_report& r, const std::string& path, bool draw, json* out) {
  engine::ExportOptions options;
  if (draw) options.analysis = &r.analysis;
  absl::StatusOr<engine::PerfettoExport> e = engine::ExportPerfetto(r.session, path, options);
  if (!e.ok()) return Fail(OVS_ERROR, e.status());
  *out = json{{"format", "perfetto"},  {"files", {path}},         {"analysis", draw},
              {"packets", e->packets}, {"tracks", e->tracks},     {"lane_tracks", e->lane_tracks},
              {"slices", e->slices},   {"instants", e->instants}, {"counter_samples", e->counter_samples},
              {"flows", e->flows},     {"bytes", e->bytes},       {"time_shift_ns", e->time_shift_ns}};
  return Ok();
}

int ExportChrome(const ovs_report& r, const std::string& path, json* out) {
  absl::StatusOr<engine::ChromeExport> e = engine::ExportChrome(r.session, path);
  if (!e.ok()) return Fail(OVS_ERROR, e.status());
  *out = json{{"format", "chrome"},
              {"files", e->files},
              {"events", e->events},
              {"bytes", e->bytes},
              {"file_bytes", e->file_bytes},
              {"not_written", e->not_written},
              {"nvtx_as_user_annotation", e->nvtx_as_user_annotation}};
  return Ok();
}

}  // namespace

int ReportGates(const report::Report& r, const char* gates_json, char** out) {
  *out = nullptr;
  std::vector<std::string> gates;
  if (int rc = ReadGates(gates_json, &gates); rc != OVS_OK) return rc;
  json checks = json::array();
  bool passed = true;
  if (!gates.empty())
    if (int rc = CheckGates(r, gates, &checks, &passed); rc != OVS_OK) return rc;
  return Give(Dump(json{{"passed", passed}, {"checks", std::move(checks)}}), out);
}

}  // namespace overlapscope::capi

namespace capi = overlapscope::capi;
namespace engine = overlapscope::engine;
using nlohmann::json;

extern "C" {

int ovs_report_gates(const ovs_report* report, const char* gates_json, char** out) {
  return capi::Guard("checking the gates", [&] {
    if (report == nullptr || out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_report_gates: NULL argument");
    return capi::ReportGates(report->analysis.report(), gates_json, out);
  });
}

int ovs_check_gates(const char* gates_json) {
  return capi::Guard("checking the gates", [&] {
    std::vector<std::string> gates;
    return capi::ReadGates(gates_json, &gates);
  });
}

int ovs_report_export(const ovs_report* report, const char* path, const char* options_json, char** out) {
  return capi::Guard("exporting the trace", [&] {
    if (report == nullptr || path == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_report_export: NULL argument");
    if (out != nullptr) *out = nullptr;
    capi::OptionReader r(options_json, "export options");
    bool draw = true;
    r.Bool("analysis", &draw);
    if (int rc = r.Finish(); rc != OVS_OK) return rc;
    absl::StatusOr<engine::TraceFormat> format = engine::TraceFormatFromPath(path);
    if (!format.ok()) return capi::Fail(OVS_BAD_ARGUMENT, format.status());
    json written;
    int rc = *format == engine::TraceFormat::kPerfetto ? capi::ExportPerfetto(*report, path, draw, &written)
                                                       : capi::ExportChrome(*report, path, &written);
    if (rc != OVS_OK || out == nullptr) return rc;
    return capi::Give(capi::Dump(written), out);
  });
}

}  // extern "C"
