// Opening an input file without ever blocking: traces are files, and a path that names a FIFO
// (whose open waits for a writer, and whose read waits for data), a socket or a device is an
// error, not a hang.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace overlapscope::import {

// A read-only descriptor (close-on-exec, blocking reads) of the regular file at `path`
// (symbolic links followed). Errors name the path and offset 0: "cannot open: <errno text>",
// "cannot open: not a regular file (a FIFO)" / "(a directory)" / "(a socket)" / "(a device)".
absl::StatusOr<int> OpenRegularFile(const std::string& path);

}  // namespace overlapscope::import
