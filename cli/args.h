// Minimal command-line parsing shared by the subcommands: `--flag VALUE`, `--flag=VALUE`,
// boolean `--flag`, positionals, and everything after `--` kept verbatim (for `profile`).
// Unknown flags and missing values are errors (exit code kExitUsage), never ignored.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace overlapscope::cli {

// Exit codes, documented in README.md.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;         // runtime failure (CUDA error, I/O error on output)
inline constexpr int kExitBadInput = 2;      // an input trace cannot be read (path, offset, reason)
inline constexpr int kExitGateFailed = 3;    // a --require gate was violated
inline constexpr int kExitTargetFailed = 4;  // profile: the profiled program exited non-zero
inline constexpr int kExitUsage = 64;        // bad command line (EX_USAGE)

struct FlagSpec {
  std::string name;        // without the leading "--"
  std::string value_name;  // empty for boolean flags
  std::string help;
  bool repeatable = false;
};

struct CommandSpec {
  std::string name;
  std::string usage;    // e.g. "overlapscope info TRACE... [--json]"
  std::string summary;  // one line
  std::vector<FlagSpec> flags;
  std::string details;  // free text after the flag table
};

struct ParsedArgs {
  absl::flat_hash_map<std::string, std::vector<std::string>> values;
  std::vector<std::string> positionals;
  std::vector<std::string> after_dashdash;
  bool dashdash = false;

  bool Has(const std::string& flag) const { return values.contains(flag); }
  std::string Get(const std::string& flag, const std::string& fallback = "") const;
  const std::vector<std::string>& All(const std::string& flag) const;
};

// Parses argv after the subcommand name. `--help` is accepted by every command and reported
// through ParsedArgs::Has("help").
absl::StatusOr<ParsedArgs> ParseArgs(const CommandSpec& spec, int argc, char** argv);
std::string HelpText(const CommandSpec& spec);

// Parses and handles --help / usage errors; returns -1 when the command should go on.
int ParseOrExit(const CommandSpec& spec, int argc, char** argv, ParsedArgs& out);

}  // namespace overlapscope::cli
