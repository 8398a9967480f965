// Internal to engine/: runs `f` (which returns an absl::Status or StatusOr) and turns an
// exception into an error, so that no exception leaves the engine: std::bad_alloc becomes
// ResourceExhausted "out of memory while <what>", any other std::exception Internal
// "<what> failed: <its message>".
#pragma once

#include <exception>
#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace overlapscope::engine {

template <typename F>
auto NoThrow(const char* what, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory while ", what));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(what, " failed: ", e.what()));
  }
}

}  // namespace overlapscope::engine
