// Validation of option values shared by the subcommands: times (`--min-gap 5us`), counts and
// files named by an option (`--classes FILE`). Every bad value is refused with a message that
// names the option and the value; nothing is clamped or wrapped silently (issue 11: `--min-gap
// nan|inf|1e300` once became INT64_MIN and inverted the filter).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace overlapscope::cli {

// Largest time an option accepts: 10^6 s (11.6 days) in ns. Far beyond any profiled span, and
// small enough that no analysis sum or difference with a trace time can overflow int64.
inline constexpr int64_t kMaxOptionTimeNs = 1'000'000'000'000'000;

// Parses TIME = NUMBER [ns|us|ms|s], NUMBER a plain decimal (digits, an optional fraction and
// exponent: "5", "0.5ms", "2e3ns"; bare = µs), into ns rounded to the nearest ns.
// InvalidArgument "--FLAG 'TEXT': ..." for anything else: signs, nan, inf, hex, a value over
// kMaxOptionTimeNs or an empty string.
absl::StatusOr<int64_t> ParseTimeOption(const std::string& flag, const std::string& text);

// Parses a decimal integer in [min, max]; InvalidArgument "--FLAG 'TEXT': ..." otherwise.
absl::StatusOr<int64_t> ParseIntOption(const std::string& flag, const std::string& text, int64_t min, int64_t max);

// Reads a small text file named by an option (a rules file). Opening never blocks (a FIFO is
// refused, not waited on); directories, devices, FIFOs and sockets are refused; files over
// max_bytes are refused. NotFound / PermissionDenied / InvalidArgument with "PATH: reason" (the
// CLI maps every failure to exit 2, an unreadable input).
absl::StatusOr<std::string> ReadOptionFile(const std::string& path, int64_t max_bytes);

}  // namespace overlapscope::cli
