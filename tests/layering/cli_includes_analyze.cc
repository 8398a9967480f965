// Must NOT compile: cli/ is a thin client of engine/ (DESIGN.md) and sees engine/, report/ and
// base/ only. The test layering.cli_cannot_include_analyze builds this file and expects the build
// to fail on this include.
#include "analyze/analysis.h"
