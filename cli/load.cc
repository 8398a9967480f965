#include "cli/load.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "base/natural_order.h"
#include "cli/args.h"
#include "cli/heap_policy.h"
#include "cli/option_values.h"

namespace overlapscope::cli {

std::optional<engine::ClockAlign> ParseAlignOrReport(const std::string& command, const std::string& align,
                                                     int* exit_code) {
  auto m = engine::ParseClockAlign(align.empty() ? "auto" : align);
  if (m.ok()) return *m;
  std::fprintf(stderr, "overlapscope %s: %s\n(see 'overlapscope %s --help')\n", command.c_str(),
               std::string(m.status().message()).c_str(), command.c_str());
  *exit_code = kExitUsage;
  return std::nullopt;
}

std::optional<engine::Session> LoadOrReport(const std::string& command, const std::vector<std::string>& paths,
                                            const std::string& align, int* exit_code, bool progress, int threads) {
  if (paths.empty()) {
    std::fprintf(stderr, "overlapscope %s: no trace given (see --help)\n", command.c_str());
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  std::optional<engine::ClockAlign> mode = ParseAlignOrReport(command, align, exit_code);
  if (!mode) return std::nullopt;
  engine::LoadOptions options;
  options.align_clocks = *mode;
  options.threads = threads;
  if (progress && StderrIsTerminal()) {
    options.progress = [](const engine::LoadProgress& p) {
      if (p.total_bytes <= 0) return;
      std::fprintf(stderr, "\rreading %3d%% (%lld / %lld MB)", static_cast<int>(100 * p.done_bytes / p.total_bytes),
                   static_cast<long long>(p.done_bytes >> 20), static_cast<long long>(p.total_bytes >> 20));
      if (p.done_bytes >= p.total_bytes) std::fputs("\r\033[K", stderr);
    };
  }
  auto session = engine::Load(paths, options);
  if (!session.ok()) {
    std::fprintf(stderr, "overlapscope %s: %s\n", command.c_str(), std::string(session.status().message()).c_str());
    *exit_code = kExitBadInput;
    return std::nullopt;
  }
  return std::move(session).value();
}

FlagSpec ThreadsFlag() {
  return {"threads", "N",
          "threads that read each trace file and run the analyses (default: the machine's cores; 1: one "
          "thread); the output is the same at any count"};
}

std::optional<int> ParseThreadsOrReport(const std::string& command, const ParsedArgs& args, int* exit_code) {
  if (!args.Has("threads")) return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  auto n = ParseIntOption("threads", args.Get("threads"), 1, 256);
  if (n.ok()) {
    ApplyHeapPolicy(static_cast<int>(*n));  // what each thread's arena keeps (heap_policy.h)
    return static_cast<int>(*n);
  }
  std::fprintf(stderr, "overlapscope %s: %s\n(see 'overlapscope %s --help')\n", command.c_str(),
               std::string(n.status().message()).c_str(), command.c_str());
  *exit_code = kExitUsage;
  return std::nullopt;
}

bool StrictCheckOrReport(const std::string& command, const engine::Session& session, bool strict, bool print_always,
                         int* exit_code) {
  if (!strict && !print_always) return true;
  const std::vector<std::string> warnings = session.import_warnings();
  if (warnings.empty()) return true;
  for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!strict) return true;
  std::fprintf(stderr, "overlapscope %s: --strict: part of the input could not be read (warnings above)\n",
               command.c_str());
  *exit_code = kExitBadInput;
  return false;
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
  std::sort(out.begin(), out.end(), base::NaturalLess);
  return out;
}

}  // namespace overlapscope::cli
