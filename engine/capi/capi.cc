// libovscope.so: version, errors, analyze, render, info (gates and export: capi_gates.cc;
// capture: capi_capture.cc).
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/capi/capi_internal.h"
#include "engine/capi/capi_options.h"

namespace overlapscope::capi {
namespace {

// Per thread, so that concurrent callers each see their own failure.
thread_local std::string t_error;
thread_local int t_code = OVS_OK;

// Copies the C array of paths; OVS_BAD_ARGUMENT when it is missing, empty or holds a NULL.
int CopyPaths(const char* const* paths, size_t n, std::vector<std::string>* out) {
  if (paths == nullptr || n == 0) return Fail(OVS_BAD_ARGUMENT, "no trace given");
  for (size_t i = 0; i < n; ++i) {
    if (paths[i] == nullptr) return Fail(OVS_BAD_ARGUMENT, absl::StrCat("path ", i, " is NULL"));
    out->emplace_back(paths[i]);
  }
  return Ok();
}

// Any Load failure is unreadable input, as the CLI treats it (exit 2).
int LoadPaths(const char* const* paths, size_t n, const engine::LoadOptions& load,
              std::optional<engine::Session>* out) {
  std::vector<std::string> inputs;
  if (int rc = CopyPaths(paths, n, &inputs); rc != OVS_OK) return rc;
  absl::StatusOr<engine::Session> session = engine::Load(inputs, load);
  if (!session.ok()) return Fail(OVS_BAD_INPUT, session.status());
  out->emplace(std::move(session).value());
  return Ok();
}

absl::StatusOr<engine::ReportFormat> FormatOf(const std::string& f) {
  if (f == "json") return engine::ReportFormat::kJson;
  if (f == "text") return engine::ReportFormat::kText;
  if (f == "markdown") return engine::ReportFormat::kMarkdown;
  return absl::InvalidArgumentError(
      absl::StrCat("format '", f, "': expected \"json\", \"text\", \"markdown\" or \"explain-classes\""));
}

// "json" -> true, "text" -> false for info; OVS_BAD_ARGUMENT otherwise.
int InfoFormat(const char* format, bool* json) {
  const std::string f = format == nullptr ? "" : format;
  if (f != "json" && f != "text")
    return Fail(OVS_BAD_ARGUMENT, absl::StrCat("format '", f, "': expected json or text"));
  *json = f == "json";
  return Ok();
}

}  // namespace

int Fail(int code, std::string message) {
  t_code = code;
  t_error = std::move(message);
  return code;
}
int Fail(int code, const absl::Status& status) { return Fail(code, std::string(status.message())); }
int Ok() {
  t_code = OVS_OK;
  t_error.clear();
  return OVS_OK;
}

char* Dup(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p != nullptr) std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

int Give(const std::string& s, char** out) {
  *out = Dup(s);
  return *out != nullptr ? Ok() : Fail(OVS_ERROR, "out of memory");
}

int AnalyzeSession(const engine::Session& session, const engine::AnalyzeOptions& options, ovs_report** out) {
  absl::StatusOr<engine::Analysis> analysis = engine::Analyze(session, options);
  if (!analysis.ok())
    return Fail(analysis.status().code() == absl::StatusCode::kInvalidArgument ? OVS_BAD_ARGUMENT : OVS_ERROR,
                analysis.status());
  *out = new ovs_report{session, std::move(analysis).value()};
  return Ok();
}

}  // namespace overlapscope::capi

namespace capi = overlapscope::capi;
namespace engine = overlapscope::engine;

extern "C" {

int ovs_abi_version(void) { return OVS_ABI_VERSION; }
const char* ovs_version(void) { return "overlapscope 0.1.0"; }
const char* ovs_last_error(void) { return capi::t_error.c_str(); }
int ovs_last_error_code(void) { return capi::t_code; }
void ovs_free(char* s) { std::free(s); }

int ovs_analyze(const char* const* paths, size_t n_paths, const char* options_json, ovs_report** out) {
  return capi::Guard("analyzing", [&] {
    if (out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_analyze: out is NULL");
    *out = nullptr;
    engine::LoadOptions load;
    engine::AnalyzeOptions options;
    if (int rc = capi::ReadAnalyzeOptions(options_json, &load, &options); rc != OVS_OK) return rc;
    std::optional<engine::Session> session;
    if (int rc = capi::LoadPaths(paths, n_paths, load, &session); rc != OVS_OK) return rc;
    return capi::AnalyzeSession(*session, options, out);
  });
}

void ovs_report_free(ovs_report* report) { delete report; }

int ovs_report_render(const ovs_report* report, const char* format, const char* options_json, char** out) {
  return capi::Guard("rendering the report", [&] {
    if (report == nullptr || out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_report_render: NULL argument");
    *out = nullptr;
    engine::RenderOptions render;
    if (int rc = capi::ReadRenderOptions(options_json, &render); rc != OVS_OK) return rc;
    const std::string f = format == nullptr ? "" : format;
    absl::StatusOr<std::string> text;
    if (f == "explain-classes") {
      text = engine::ExplainClasses(report->analysis);
    } else {
      absl::StatusOr<engine::ReportFormat> rf = capi::FormatOf(f);
      if (!rf.ok()) return capi::Fail(OVS_BAD_ARGUMENT, rf.status());
      text = engine::RenderReport(report->analysis, *rf, render);
    }
    if (!text.ok()) return capi::Fail(OVS_ERROR, text.status());
    return capi::Give(*text, out);
  });
}

int ovs_report_info(const ovs_report* report, const char* format, char** out) {
  return capi::Guard("describing the traces", [&] {
    if (report == nullptr || out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_report_info: NULL argument");
    *out = nullptr;
    bool json = false;
    if (int rc = capi::InfoFormat(format, &json); rc != OVS_OK) return rc;
    absl::StatusOr<std::string> text = engine::DescribeSession(report->session, json);
    if (!text.ok()) return capi::Fail(OVS_ERROR, text.status());
    return capi::Give(*text, out);
  });
}

int ovs_info(const char* const* paths, size_t n_paths, const char* options_json, const char* format, char** out) {
  return capi::Guard("describing the traces", [&] {
    if (out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_info: out is NULL");
    *out = nullptr;
    bool json = false;
    if (int rc = capi::InfoFormat(format, &json); rc != OVS_OK) return rc;
    engine::LoadOptions load;
    if (int rc = capi::ReadLoadOptions(options_json, &load); rc != OVS_OK) return rc;
    std::optional<engine::Session> session;
    if (int rc = capi::LoadPaths(paths, n_paths, load, &session); rc != OVS_OK) return rc;
    absl::StatusOr<std::string> text = engine::DescribeSession(*session, json);
    if (!text.ok()) return capi::Fail(OVS_ERROR, text.status());
    return capi::Give(*text, out);
  });
}

}  // extern "C"
