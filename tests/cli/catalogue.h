// The bad-input catalogue (issue 11): malformed inputs run through the real CLI, each with the
// exit code and the message it must give, a time limit and a bound on peak memory
// (cli_runner.h). catalogue_test.cc runs every case as its own test; the case lists are in
// catalogue_kineto.cc, catalogue_files.cc, catalogue_captures.cc and catalogue_options.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace overlapscope::testing {

struct CatalogueCase {
  std::string name;  // test name: letters, digits, '_'
  // Writes the inputs into `dir` (an empty directory of this case) and returns the CLI
  // arguments. "$DATA" in an argument is tests/data.
  std::function<std::vector<std::string>(const std::string& dir)> setup;
  int exit_code = 0;
  // Must occur in stderr (stdout for exit 0 cases with `in_stdout`); "$DIR" stands for `dir`.
  std::string message;
  bool in_stdout = false;
  int64_t max_rss_mb = 200;  // peak resident memory allowed (sanitizer builds: x4)
  int timeout_s = 30;
  // Non-empty: the fix this case waits for (e.g. "h11a: FIFO"). While it still fails, the test
  // is reported as skipped with the reason and what happened; once it passes, the test fails
  // until the mark is removed, so that no case stays pending unnoticed.
  std::string pending;
};

void PrintTo(const CatalogueCase& c, std::ostream* os);

std::vector<CatalogueCase> KinetoCases();
std::vector<CatalogueCase> FileCases();
std::vector<CatalogueCase> CaptureCases();
std::vector<CatalogueCase> OptionCases();

// Helpers for the case lists.
void WriteFile(const std::string& path, const std::string& bytes);
// gzip member of `bytes` (level 1).
std::string Gzip(const std::string& bytes);
// gzip stream of `prefix`, then `repeat` bytes of `fill`, then `suffix`, compressed as it is
// generated (a bomb needs no memory to make).
void WriteGzipBomb(const std::string& path, const std::string& prefix, char fill, int64_t repeat,
                   const std::string& suffix);
// A minimal valid Kineto document holding `events` (JSON objects separated by commas).
std::string KinetoDoc(const std::string& events, const std::string& extra_top_level = "");
// One kernel event as JSON, with `name` spliced in raw (already JSON-escaped by the caller).
std::string KernelEvent(const std::string& name_json, const std::string& ts = "10", const std::string& dur = "5");
std::string ReadFile(const std::string& path);
std::string DataDir();  // tests/data

}  // namespace overlapscope::testing
