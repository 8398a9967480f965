// libovscope.so without CUDA: the capture entry points exist (the ABI is the same in every
// build) and say that this build cannot capture.
#include "engine/capi/capi_internal.h"

struct ovs_capture {};

namespace capi = overlapscope::capi;

namespace {

int Unavailable() {
  return capi::Fail(OVS_UNAVAILABLE,
                    "in-process capture is not in this build of libovscope.so (built without CUDA: "
                    "build on a machine with the CUDA toolkit under /usr/local/cuda)");
}

}  // namespace

extern "C" {

int ovs_capture_available(void) { return 0; }

int ovs_capture_start(const char* options_json, ovs_capture** out) {
  if (out != nullptr) *out = nullptr;
  return Unavailable();
}

int ovs_capture_stop(ovs_capture* capture, const char* options_json, ovs_report** out) {
  if (out != nullptr) *out = nullptr;
  return Unavailable();
}

void ovs_capture_free(ovs_capture* capture) { delete capture; }

}  // extern "C"
