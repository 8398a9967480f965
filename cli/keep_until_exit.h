// Ownership of a command's big results handed to the process's end: main() runs one command and
// exits, and the kernel takes the whole address space back at once, where destructors would free
// the model, the analyses and the report object by object first (about 20 ms of 1.2 CPU-s for
// `analyze --json` on a 500 MB trace: free() calls and one munmap per large array).
//
// Off unless main() turns it on: in-process callers (the MPI front end, tests) free as before.
// The kept handles stay reachable from a global, so leak checkers do not report them. Nothing
// about the output or the exit code changes: only what is freed before exit().
#pragma once

#include <memory>
#include <vector>

namespace overlapscope::cli {

// Turns the keeping on; main() only, before the command runs.
void KeepResultsUntilExit();

// Keeps a shared handle's state alive until the process ends when turned on; else nothing.
void KeepUntilExit(std::shared_ptr<const void> state);

}  // namespace overlapscope::cli
