// overlapscope analyze: placeholder until its issue lands; says so and fails.
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"

namespace overlapscope::cli {

int RunAnalyze(int argc, char** argv) {
  std::fputs("overlapscope analyze: not available in this build yet\n", stderr);
  return kExitError;
}

}  // namespace overlapscope::cli
