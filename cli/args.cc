#include "cli/args.h"

#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace overlapscope::cli {

std::string ParsedArgs::Get(const std::string& flag, const std::string& fallback) const {
  auto it = values.find(flag);
  if (it == values.end() || it->second.empty()) return fallback;
  return it->second.back();
}

const std::vector<std::string>& ParsedArgs::All(const std::string& flag) const {
  static const std::vector<std::string> kEmpty;
  auto it = values.find(flag);
  return it == values.end() ? kEmpty : it->second;
}

absl::StatusOr<ParsedArgs> ParseArgs(const CommandSpec& spec, int argc, char** argv) {
  ParsedArgs out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      out.dashdash = true;
      for (++i; i < argc; ++i) out.after_dashdash.push_back(argv[i]);
      break;
    }
    if (a == "--help" || a == "-h") {
      out.values["help"].push_back("");
      continue;
    }
    if (!absl::StartsWith(a, "--") || a.size() == 2) {
      out.positionals.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool has_inline = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline = true;
    }
    const FlagSpec* f = nullptr;
    for (const auto& fs : spec.flags)
      if (fs.name == name) f = &fs;
    if (f == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown option --", name));
    if (f->value_name.empty()) {
      if (has_inline) return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
    } else if (!has_inline) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat("--", name, " needs ", f->value_name));
      value = argv[++i];
    }
    auto& slot = out.values[name];
    if (!slot.empty() && !f->repeatable)
      return absl::InvalidArgumentError(absl::StrCat("--", name, " given more than once"));
    slot.push_back(value);
  }
  return out;
}

std::string HelpText(const CommandSpec& spec) {
  std::string s = absl::StrCat("usage: ", spec.usage, "\n\n", spec.summary, "\n\noptions:\n");
  for (const auto& f : spec.flags) {
    std::string left = absl::StrCat("  --", f.name, f.value_name.empty() ? "" : " " + f.value_name);
    if (left.size() < 28)
      left.resize(28, ' ');
    else
      left += "\n" + std::string(28, ' ');
    absl::StrAppend(&s, left, f.help, f.repeatable ? " (repeatable)" : "", "\n");
  }
  absl::StrAppend(&s, "  --help                    this text\n");
  if (!spec.details.empty()) absl::StrAppend(&s, "\n", spec.details, "\n");
  return s;
}

int ParseOrExit(const CommandSpec& spec, int argc, char** argv, ParsedArgs& out) {
  auto parsed = ParseArgs(spec, argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "overlapscope %s: %s\n(see 'overlapscope %s --help')\n", spec.name.c_str(),
                 std::string(parsed.status().message()).c_str(), spec.name.c_str());
    return kExitUsage;
  }
  out = std::move(parsed).value();
  if (out.Has("help")) {
    std::fputs(HelpText(spec).c_str(), stdout);
    return kExitOk;
  }
  return -1;
}

}  // namespace overlapscope::cli
