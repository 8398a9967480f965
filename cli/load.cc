#include "cli/load.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "cli/args.h"
#include "importers/kineto/import.h"
#if defined(OVERLAPSCOPE_HAVE_CUPTI)
#include "importers/ovspill/spill_reader.h"
#endif

namespace overlapscope::cli {

bool AlignClocksOrReport(const std::string& command, const std::string& mode, model::Trace* trace,
                         analyze::ClockAlignment* alignment, int* exit_code) {
  auto m = analyze::ParseClockAlignMode(mode.empty() ? "auto" : mode);
  if (!m.ok()) {
    std::fprintf(stderr, "overlapscope %s: %s\n(see 'overlapscope %s --help')\n", command.c_str(),
                 std::string(m.status().message()).c_str(), command.c_str());
    *exit_code = kExitUsage;
    return false;
  }
  *alignment = analyze::EstimateClockAlignment(*trace, *m);
  if (!alignment->applied()) return true;
  auto shifted = analyze::ApplyClockAlignment(*trace, *alignment);
  if (!shifted.ok()) {  // cannot happen for a finalized trace; say so rather than go on unaligned
    std::fprintf(stderr, "overlapscope %s: clock alignment: %s\n", command.c_str(),
                 std::string(shifted.status().message()).c_str());
    *exit_code = kExitError;
    return false;
  }
  *trace = std::move(shifted).value();
  return true;
}

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

std::vector<std::string> FilesEndingIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(dir + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

#if defined(OVERLAPSCOPE_HAVE_CUPTI)
// Each directory that holds *.ovspill files becomes those files; other paths stay as given.
static std::vector<std::string> ExpandSpillDirectories(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    std::vector<std::string> spills;
    if (std::filesystem::is_directory(p, ec)) spills = FilesEndingIn(p, ".ovspill");
    if (spills.empty()) {
      out.push_back(p);
    } else {
      out.insert(out.end(), spills.begin(), spills.end());
    }
  }
  return out;
}
#endif

std::optional<model::Trace> LoadTracesOrReport(const std::string& command, const std::vector<std::string>& paths,
                                               int* exit_code) {
  if (paths.empty()) {
    std::fprintf(stderr, "overlapscope %s: no trace given (see --help)\n", command.c_str());
    *exit_code = kExitUsage;
    return std::nullopt;
  }
#if defined(OVERLAPSCOPE_HAVE_CUPTI)
  // Raw captures of `overlapscope profile` (DIR/rank<R>.ovspill) are read by the capture's own
  // reader; they cannot be mixed with other formats in one call. A directory holding spill files
  // (a profile's output directory) stands for them: the .pftrace/.json written next to them are
  // exports of the same capture.
  std::vector<std::string> expanded = ExpandSpillDirectories(paths);
  bool all_spill = true;
  for (const auto& p : expanded) all_spill &= p.size() > 8 && p.compare(p.size() - 8, 8, ".ovspill") == 0;
  if (all_spill) {
    auto spill = import::ReadSpillFiles(expanded);
    if (!spill.ok()) {
      std::fprintf(stderr, "overlapscope %s: %s\n", command.c_str(), std::string(spill.status().message()).c_str());
      *exit_code = kExitBadInput;
      return std::nullopt;
    }
    return std::move(spill).value();
  }
#endif
  import::ImportOptions options;
  if (StderrIsTerminal()) {
    options.progress = [](int64_t done, int64_t total) {
      if (total <= 0) return;
      std::fprintf(stderr, "\rreading %3d%% (%lld / %lld MB)", static_cast<int>(100 * done / total),
                   static_cast<long long>(done >> 20), static_cast<long long>(total >> 20));
      if (done >= total) std::fputs("\r\033[K", stderr);
    };
  }
  auto trace = import::ImportTraces(paths, options);
  if (!trace.ok()) {
    std::fprintf(stderr, "overlapscope %s: %s\n", command.c_str(), std::string(trace.status().message()).c_str());
    *exit_code = kExitBadInput;
    return std::nullopt;
  }
  return std::move(trace).value();
}

}  // namespace overlapscope::cli
