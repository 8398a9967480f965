// One function per subcommand, each in its own cmd_<name>.cc. Each takes argv after the
// subcommand name and returns the process exit code (see args.h).
#pragma once

namespace overlapscope::cli {

int RunInfo(int argc, char** argv);
int RunAnalyze(int argc, char** argv);
int RunDiff(int argc, char** argv);
int RunExport(int argc, char** argv);
int RunProfile(int argc, char** argv);
int RunWorkload(int argc, char** argv);
int RunReplay(int argc, char** argv);

}  // namespace overlapscope::cli
