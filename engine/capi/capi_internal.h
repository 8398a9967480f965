// What the C API's source files share: the handle types behind ovscope.h's opaque structs, the
// thread's last error, and the guard that keeps every exception inside the library.
#pragma once

#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "engine/capi/ovscope.h"
#include "engine/engine.h"

// A loaded and analyzed trace. Immutable after ovs_analyze / ovs_capture_stop built it.
struct ovs_report {
  overlapscope::engine::Session session;
  overlapscope::engine::Analysis analysis;
};

// A job's report assembled from its ranks' parts (ovs_job_assemble). Immutable.
struct ovs_job {
  overlapscope::report::Report report;
};

namespace overlapscope::capi {

// Records the failure for ovs_last_error() and returns `code`.
int Fail(int code, std::string message);
// Fail(code, status.message()).
int Fail(int code, const absl::Status& status);
// Clears the thread's last error; returns OVS_OK.
int Ok();

// A malloc'ed copy of `s` for the caller (released by ovs_free); nullptr when out of memory.
char* Dup(const std::string& s);
// Dup(s) into *out; OVS_ERROR when out of memory.
int Give(const std::string& s, char** out);

// Runs `f` (returning an ovs_code) so that no exception leaves the library.
template <typename F>
int Guard(const char* what, F&& f) noexcept {
  try {
    return std::forward<F>(f)();
  } catch (const std::bad_alloc&) {
    return Fail(OVS_ERROR, std::string("out of memory while ") + what);
  } catch (const std::exception& e) {
    return Fail(OVS_ERROR, std::string(what) + " failed: " + e.what());
  } catch (...) {
    return Fail(OVS_ERROR, std::string(what) + " failed");
  }
}

// ovs_report_gates' answer for any report (capi_gates.cc): *out the JSON, or an error code.
int ReportGates(const report::Report& r, const char* gates_json, char** out);

// Builds the report of `session` with the analysis options of `options_json`; OVS_BAD_ARGUMENT
// for bad options, OVS_BAD_INPUT for an unreadable rules file.
int AnalyzeSession(const engine::Session& session, const engine::AnalyzeOptions& options, ovs_report** out);

}  // namespace overlapscope::capi
