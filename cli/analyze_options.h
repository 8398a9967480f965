// The analysis options of `analyze` and `diff` (--comm-kernel, --compute-kernel, --memory-kernel,
// --classes, --iteration-marker, --min-gap, --runtime-cutoff, --launch-delay-cutoff, --top, --group),
// validated once for both commands.
#pragma once

#include "cli/args.h"
#include "engine/analysis.h"

namespace overlapscope::cli {

// The analysis options of the command line (--threads included: AnalyzeOptions::threads, also
// the parser threads the command loads with); on an error prints "overlapscope COMMAND: ...",
// sets *rc (kExitUsage, or kExitBadInput for an unreadable or invalid --classes file) and returns
// false.
bool ParseAnalyzeOptions(const char* command, const ParsedArgs& args, engine::AnalyzeOptions* opt, int* rc);

}  // namespace overlapscope::cli
