// Analysis options shared by `analyze` and `diff` (cli/analyze_options.h).
#include "cli/analyze_options.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/option_values.h"

namespace overlapscope::cli {
namespace {

// A rules file is a few lines; anything larger is not one.
constexpr int64_t kMaxRulesFileBytes = 1 << 20;

// Prints a usage error of `command` and returns false (the helpers return whether to go on).
bool BadUsage(const char* command, const std::string& msg) {
  std::fprintf(stderr, "overlapscope %s: %s\n(see 'overlapscope %s --help')\n", command, msg.c_str(), command);
  return false;
}

// Reads every --classes FILE; a file that cannot be read or parsed is bad input (exit 2).
bool ReadRulesFiles(const char* command, const ParsedArgs& args, engine::AnalyzeOptions* opt, int* rc) {
  for (const std::string& path : args.All("classes")) {
    auto text = ReadOptionFile(path, kMaxRulesFileBytes);
    if (!text.ok()) {
      std::fprintf(stderr, "overlapscope %s: --classes %s\n", command, std::string(text.status().message()).c_str());
      *rc = kExitBadInput;
      return false;
    }
    engine::RulesText rules{*std::move(text), path};
    if (auto s = engine::CheckRulesText(rules); !s.ok()) {
      std::fprintf(stderr, "overlapscope %s: %s\n", command, std::string(s.message()).c_str());
      *rc = kExitBadInput;
      return false;
    }
    opt->rules_files.push_back(std::move(rules));
  }
  return true;
}

// --min-gap, --runtime-cutoff, --launch-delay-cutoff and --top.
bool ParseNumbers(const char* command, const ParsedArgs& args, engine::AnalyzeOptions* opt) {
  struct {
    const char* flag;
    int64_t* dst;
  } const kTimes[] = {{"min-gap", &opt->min_gap_ns},
                      {"runtime-cutoff", &opt->runtime_cutoff_ns},
                      {"launch-delay-cutoff", &opt->launch_delay_cutoff_ns}};
  for (const auto& f : kTimes) {
    if (!args.Has(f.flag)) continue;
    auto ns = ParseTimeOption(f.flag, args.Get(f.flag));
    if (!ns.ok()) return BadUsage(command, std::string(ns.status().message()));
    *f.dst = *ns;
  }
  if (args.Has("top")) {
    auto n = ParseIntOption("top", args.Get("top"), 1, 1'000'000);
    if (!n.ok()) return BadUsage(command, std::string(n.status().message()));
    opt->top_n = static_cast<size_t>(*n);
  }
  return true;
}

}  // namespace

bool ParseAnalyzeOptions(const char* command, const ParsedArgs& args, engine::AnalyzeOptions* opt, int* rc) {
  std::optional<int> threads = ParseThreadsOrReport(command, args, rc);
  if (!threads) return false;
  opt->threads = *threads;
  *rc = kExitUsage;
  for (const char* flag : {"comm-kernel", "compute-kernel", "memory-kernel"})
    for (const std::string& re : args.All(flag)) {
      engine::ClassRuleSpec rule{std::string(flag).substr(0, std::string(flag).find('-')), re,
                                 absl::StrCat("--", flag)};
      if (auto s = engine::CheckClassRule(rule); !s.ok()) return BadUsage(command, std::string(s.message()));
      opt->class_rules.push_back(std::move(rule));
    }
  if (!ReadRulesFiles(command, args, opt, rc)) return false;
  *rc = kExitUsage;
  if (args.Has("iteration-marker")) {
    opt->iteration_marker = args.Get("iteration-marker");
    if (opt->iteration_marker.empty()) return BadUsage(command, "--iteration-marker needs a non-empty NAME");
  }
  if (!ParseNumbers(command, args, opt)) return false;
  for (const std::string& g : args.All("group")) {
    if (auto s = engine::CheckGroup(g); !s.ok()) return BadUsage(command, std::string(s.message()));
    const std::string name = g.substr(0, g.find('='));
    for (const std::string& h : opt->groups)
      if (h.substr(0, h.find('=')) == name) return BadUsage(command, "--group " + name + ": the name is given twice");
    opt->groups.push_back(g);
  }
  return true;
}

}  // namespace overlapscope::cli
