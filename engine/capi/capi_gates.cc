// libovscope.so: gates (structured, for clients that raise on a failed one) and trace export.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/capi/capi_internal.h"
#include "engine/capi/capi_options.h"
#include "nlohmann/json.hpp"

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

// METRIC of "METRIC OP NUMBER" (CheckGate accepted it: the text up to the operator, no blanks).
std::string MetricOf(const std::string& gate) {
  std::string m;
  for (char c : gate.substr(0, gate.find_first_of("<>=")))
    if (c != ' ' && c != '\t') m += c;
  return m;
}

// One check per rank and gate: the engine's verdicts and lines (rank by rank, each rank's gates
// in order, as the CLI prints them), joined with the rank's label, number and value from the
// report the gates read.
int CheckGates(const ovs_report& r, const json& ranks, const std::vector<std::string>& gates, json* checks,
               bool* passed) {
  absl::StatusOr<engine::GateOutcome> outcome = engine::EvaluateGates(r.analysis, gates);
  if (!outcome.ok()) return Fail(OVS_BAD_ARGUMENT, outcome.status());
  *passed = outcome->passed;
  if (outcome->lines.size() != ranks.size() * gates.size())
    return Fail(OVS_ERROR, absl::StrCat(outcome->lines.size(), " gate results for ", ranks.size(), " ranks and ",
                                        gates.size(), " gates"));
  for (size_t i = 0; i < outcome->lines.size(); ++i) {
    const json& rank = ranks[i / gates.size()];
    const std::string& gate = gates[i % gates.size()];
    const std::string& line = outcome->lines[i];
    const std::string label = rank.value("label", "");
    if (!absl::StartsWith(line.substr(5), absl::StrCat(label, ": ", gate)))
      return Fail(OVS_ERROR, absl::StrCat("gate line '", line, "' is not gate '", gate, "' of rank '", label, "'"));
    const std::string metric = MetricOf(gate);
    const json& summary = rank["summary"];
    checks->push_back(json{{"gate", gate},
                           {"metric", metric},
                           {"label", label},
                           {"rank", rank.value("rank", json())},
                           {"value", summary.contains(metric) ? summary[metric] : json()},
                           {"passed", absl::StartsWith(line, "PASS ")},
                           {"line", line}});
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
}  // namespace overlapscope::capi

namespace capi = overlapscope::capi;
namespace engine = overlapscope::engine;
using nlohmann::json;

extern "C" {

int ovs_report_gates(const ovs_report* report, const char* gates_json, char** out) {
  return capi::Guard("checking the gates", [&] {
    if (report == nullptr || out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_report_gates: NULL argument");
    *out = nullptr;
    std::vector<std::string> gates;
    if (int rc = capi::ReadGates(gates_json, &gates); rc != OVS_OK) return rc;
    absl::StatusOr<std::string> doc = engine::RenderReport(report->analysis, engine::ReportFormat::kJson);
    if (!doc.ok()) return capi::Fail(OVS_ERROR, doc.status());
    const json ranks = json::parse(*doc).at("ranks");
    json checks = json::array();
    bool passed = true;
    if (!gates.empty())
      if (int rc = capi::CheckGates(*report, ranks, gates, &checks, &passed); rc != OVS_OK) return rc;
    return capi::Give(capi::Dump(json{{"passed", passed}, {"checks", std::move(checks)}}), out);
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
