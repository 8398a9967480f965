// ovs_replay (ovscope.h): replay and what-if (engine/replay.h) for the C API and Python.
#include <optional>
#include <string>
#include <vector>

#include "engine/capi/capi_internal.h"
#include "engine/capi/capi_options.h"
#include "engine/capi/ovscope.h"
#include "engine/replay.h"

namespace overlapscope::capi {
namespace {

// {"changes": [SPEC...] | SPEC, "contention": bool, "sm_count": int, "strict": bool, "trace": path,
//  "html": path}
int ReadReplayOptions(const char* json, engine::ReplayRequest* req) {
  OptionReader r(json, "replay options");
  std::vector<std::string> changes;
  if (r.Strings("changes", &changes)) {
    for (const std::string& c : changes) {
      if (absl::Status s = engine::CheckChange(c); !s.ok()) {
        r.Bad("changes", std::string(s.message()));
        break;
      }
      req->changes.push_back(c);
    }
  }
  r.Bool("contention", &req->contention);
  int64_t sms = 0;
  if (r.Int("sm_count", 2, &sms)) req->sm_count = static_cast<int>(sms);
  r.Bool("strict", &req->strict);
  r.String("trace", &req->trace_out);
  r.String("html", &req->html_out);
  return r.Finish();
}

int ReplayFormat(const char* format, engine::ReportFormat* out) {
  const std::string f = format == nullptr ? "json" : format;
  if (f == "json")
    *out = engine::ReportFormat::kJson;
  else if (f == "text")
    *out = engine::ReportFormat::kText;
  else if (f == "markdown")
    *out = engine::ReportFormat::kMarkdown;
  else
    return Fail(OVS_BAD_ARGUMENT, "ovs_replay: format '" + f + "': expected json, text or markdown");
  return OVS_OK;
}

// The paths as a session; OVS_BAD_ARGUMENT for a missing path, OVS_BAD_INPUT when one cannot be
// read (as the CLI treats it: exit 2).
int LoadSession(const char* const* paths, size_t n, const engine::LoadOptions& load,
                std::optional<engine::Session>* out) {
  if (paths == nullptr || n == 0) return Fail(OVS_BAD_ARGUMENT, "no trace given");
  std::vector<std::string> inputs;
  for (size_t i = 0; i < n; ++i) {
    if (paths[i] == nullptr) return Fail(OVS_BAD_ARGUMENT, "path " + std::to_string(i) + " is NULL");
    inputs.emplace_back(paths[i]);
  }
  absl::StatusOr<engine::Session> session = engine::Load(inputs, load);
  if (!session.ok()) return Fail(OVS_BAD_INPUT, session.status());
  out->emplace(std::move(session).value());
  return Ok();
}

}  // namespace
}  // namespace overlapscope::capi

extern "C" {

int ovs_replay(const char* const* paths, size_t n_paths, const char* options_json, const char* replay_json,
               const char* format, char** out) {
  using namespace overlapscope;
  return capi::Guard("replaying", [&] {
    if (out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_replay: out is NULL");
    *out = nullptr;
    engine::ReportFormat fmt = engine::ReportFormat::kText;  // set by ReplayFormat (GCC cannot see it)
    if (int rc = capi::ReplayFormat(format, &fmt); rc != OVS_OK) return rc;
    engine::LoadOptions load;
    engine::ReplayRequest req;
    if (int rc = capi::ReadAnalyzeOptions(options_json, &load, &req.analyze); rc != OVS_OK) return rc;
    if (int rc = capi::ReadReplayOptions(replay_json, &req); rc != OVS_OK) return rc;
    std::optional<engine::Session> session;
    if (int rc = capi::LoadSession(paths, n_paths, load, &session); rc != OVS_OK) return rc;
    absl::StatusOr<std::string> text = engine::RunReplay(*session, req, fmt);
    if (!text.ok()) return capi::Fail(OVS_ERROR, text.status());
    return capi::Give(*text, out);
  });
}

}  // extern "C"
