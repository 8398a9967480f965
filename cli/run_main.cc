// overlapscope-run: the built-in workloads (cmd_run.cc) as their own executable, so that the
// analysis commands of `overlapscope` do not load cuBLAS and NCCL (over 200 MB of resident
// memory and a slow start). `overlapscope run ...` execs this binary; main() only dispatches.
#include "cli/commands.h"

int main(int argc, char** argv) { return overlapscope::cli::RunWorkload(argc - 1, argv + 1); }
