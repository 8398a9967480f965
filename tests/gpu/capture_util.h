// Shared helpers of the capture GPU tests: GPU presence, where the binaries are, and the check
// of a capture of known_work (tests/gpu/programs/known_work.h) against what it issued.
#pragma once

#include <string>
#include <vector>

#include "capture_expect.h"

namespace overlapscope::testing {

// Empty when a CUDA device is usable, else why not (for GTEST_SKIP).
std::string NoGpuReason();

// Path of a helper binary (overlapscope, known_work, spill_dump): $OVERLAPSCOPE_BIN_DIR/<name>
// first (the GPU machine carries them flat), else its place in the build tree.
std::string BinaryPath(const std::string& name);

// A fresh empty directory under $OVERLAPSCOPE_TEST_OUT (or $TMPDIR) named after `tag`.
std::string FreshDir(const std::string& tag);

// The .ovspill files of a directory, sorted.
std::vector<std::string> SpillFilesIn(const std::string& dir);

// Runs a shell command, returns its exit code (-1 if it did not exit normally) and prints it.
int RunCommand(const std::string& cmd);

}  // namespace overlapscope::testing
