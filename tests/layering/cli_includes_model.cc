// Must NOT compile: the trace model stays behind engine/'s API for the front ends. The test
// layering.cli_cannot_include_model builds this file and expects the build to fail here.
#include "model/trace.h"
