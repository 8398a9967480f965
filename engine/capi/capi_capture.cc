// libovscope.so: in-process capture (CUPTI) for builds with CUDA; capi_capture_none.cc is the
// build without it.
#include <memory>
#include <string>

#include "capture/cupti/capture_session.h"
#include "engine/capi/capi_internal.h"
#include "engine/capi/capi_options.h"
#include "engine/capture.h"

struct ovs_capture {
  std::unique_ptr<overlapscope::cupti::CaptureSession> session;  // null once stopped
  std::string input;                                             // what the report names as its input
};

namespace overlapscope::capi {
namespace {

int ReadCaptureOptions(const char* json, cupti::CaptureOptions* o) {
  OptionReader r(json, "capture options");
  r.String("spill_path", &o->spill_path);
  o->keep_spill_file = !o->spill_path.empty();
  r.Int("buffer_bytes", 1 << 16, &o->buffer_bytes);
  int64_t n = o->max_buffers, rank = o->rank, world = o->world_size;
  if (r.Int("max_buffers", 1, &n)) o->max_buffers = static_cast<int32_t>(std::min<int64_t>(n, 1 << 20));
  r.Bool("driver_api", &o->driver_api);
  r.Bool("nvtx", &o->nvtx);
  if (r.Int("rank", 0, &rank)) o->rank = static_cast<int32_t>(std::min<int64_t>(rank, INT32_MAX));
  if (r.Int("world_size", 1, &world)) o->world_size = static_cast<int32_t>(std::min<int64_t>(world, INT32_MAX));
  return r.Finish();
}

}  // namespace
}  // namespace overlapscope::capi

namespace capi = overlapscope::capi;
namespace engine = overlapscope::engine;
namespace cupti = overlapscope::cupti;

extern "C" {

int ovs_capture_available(void) { return 1; }

int ovs_capture_start(const char* options_json, ovs_capture** out) {
  return capi::Guard("starting the capture", [&] {
    if (out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_capture_start: out is NULL");
    *out = nullptr;
    cupti::CaptureOptions options;
    if (int rc = capi::ReadCaptureOptions(options_json, &options); rc != OVS_OK) return rc;
    absl::StatusOr<std::unique_ptr<cupti::CaptureSession>> s = cupti::CaptureSession::Start(options);
    if (!s.ok()) return capi::Fail(OVS_ERROR, s.status());
    const std::string input = options.keep_spill_file ? options.spill_path : "in-process capture";
    *out = new ovs_capture{std::move(s).value(), input};
    return capi::Ok();
  });
}

int ovs_capture_stop(ovs_capture* capture, const char* options_json, ovs_report** out) {
  return capi::Guard("stopping the capture", [&] {
    if (capture == nullptr || out == nullptr) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_capture_stop: NULL argument");
    *out = nullptr;
    if (!capture->session) return capi::Fail(OVS_BAD_ARGUMENT, "ovs_capture_stop: the capture was stopped already");
    engine::LoadOptions unused;
    engine::AnalyzeOptions options;
    if (int rc = capi::ReadAnalyzeOptions(options_json, &unused, &options); rc != OVS_OK) return rc;
    absl::StatusOr<engine::Session> session = engine::StopCaptureSession(*capture->session, capture->input);
    capture->session.reset();
    if (!session.ok()) return capi::Fail(OVS_ERROR, session.status());
    return capi::AnalyzeSession(*session, options, out);
  });
}

void ovs_capture_free(ovs_capture* capture) {
  capi::Guard("discarding the capture", [&] {
    delete capture;
    return OVS_OK;
  });
}

}  // extern "C"
