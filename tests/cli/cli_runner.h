// Runs the built overlapscope binary in a child process with its memory, time and output
// bounded, for tests that feed it bad input (catalogue_*_test.cc).
//
// Memory: the child's peak resident set (wait4's ru_maxrss) is measured and returned; as a
// safety net it also runs under RLIMIT_AS (plain builds) or ASan's hard_rss_limit_mb
// (sanitizer builds, whose shadow memory rules out an address-space limit), so that a gzip
// bomb fails the test instead of taking the machine. Time: a child still running after
// `timeout_s` is killed (SIGKILL) and reported as hung. Output: stdout and stderr go to files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace overlapscope::testing {

struct CliLimits {
  int64_t memory_mb = 1024;  // address space (plain) or RSS (sanitizers) of the child
  int timeout_s = 30;
};

struct CliRun {
  int exit_code = -1;  // the exit status, or 128 + signal when killed by one
  bool hung = false;   // killed after CliLimits::timeout_s
  int64_t peak_rss_kb = 0;
  std::string out, err;
  std::string Describe() const;  // "exit 2, peak 12 MB; stderr: ..." for failure messages
};

// Runs `overlapscope ARGS...` (no shell: arguments are passed as they are).
CliRun RunCliLimited(const std::vector<std::string>& args, const CliLimits& limits = {});

// True when this binary (and so the CLI built with it) runs under AddressSanitizer.
bool UnderSanitizer();

}  // namespace overlapscope::testing
