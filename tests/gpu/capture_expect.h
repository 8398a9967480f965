// Checks of captures of known_work (tests/gpu/programs/known_work.h) against what it issued.
// Model-only (no CUDA): used by the GPU tests on fresh captures and by tests/capture_cpu on the
// real H200 captures kept in tests/data/capture.
#pragma once

#include <string>

#include "model/trace.h"

namespace overlapscope::testing {

// One-line-per-fact description of a capture (printed by every test, for the logs).
std::string Describe(const model::Trace& t);

// Adds gtest failures for every way `t` differs from what RunKnownWork("normal") issues.
void ExpectKnownWork(const model::Trace& t);

// Same for RunKnownWork("copies") on a machine with `devices` GPUs.
void ExpectCopies(const model::Trace& t, int devices);

}  // namespace overlapscope::testing
