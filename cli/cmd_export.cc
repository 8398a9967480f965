// overlapscope export: placeholder until its issue lands; says so and fails.
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"

namespace overlapscope::cli {

int RunExport(int argc, char** argv) {
  std::fputs("overlapscope export: not available in this build yet\n", stderr);
  return kExitError;
}

}  // namespace overlapscope::cli
