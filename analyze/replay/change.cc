// Parsing of `--change SPEC` (replay.h documents the forms).
#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "analyze/replay/replay.h"
#include "re2/re2.h"

namespace overlapscope::analyze::replay {
namespace {

absl::Status Bad(std::string_view spec, std::string_view why) {
  std::string m = "--change '";
  m.append(spec).append("': ").append(why);
  return absl::InvalidArgumentError(m);
}

// Reads "/REGEX/" at the front of `s`; the regex may contain '/' escaped as "\/".
bool TakeRegex(std::string_view& s, std::string& out) {
  if (s.empty() || s[0] != '/') return false;
  out.clear();
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '/') {
      out.push_back('/');
      ++i;
    } else if (s[i] == '/') {
      s.remove_prefix(i + 1);
      return true;
    } else {
      out.push_back(s[i]);
    }
  }
  return false;
}

absl::Status CheckRegex(std::string_view spec, const std::string& re) {
  if (re.empty()) return Bad(spec, "empty regex");
  RE2 r(re, RE2::Quiet);
  if (!r.ok()) return Bad(spec, "invalid regex '" + re + "': " + r.error());
  return absl::OkStatus();
}

absl::StatusOr<Change> ParseScale(std::string_view spec, std::string_view rest, Change c) {
  const size_t eq = rest.rfind('=');
  if (eq == std::string_view::npos) return Bad(spec, "expected scale:CLASS=F or scale:/REGEX/=F");
  double f = 0;
  const std::string_view num = rest.substr(eq + 1);
  if (!absl::SimpleAtod(absl::string_view(num.data(), num.size()), &f) || !std::isfinite(f) || f <= 0)
    return Bad(spec, "the factor must be a number > 0");
  c.factor = f;
  std::string_view what = rest.substr(0, eq);
  if (!what.empty() && what[0] == '/') {
    if (!TakeRegex(what, c.regex) || !what.empty()) return Bad(spec, "expected /REGEX/ before '='");
    c.kind = ChangeKind::kScaleName;
    if (absl::Status s = CheckRegex(spec, c.regex); !s.ok()) return s;
    return c;
  }
  c.kind = ChangeKind::kScaleClass;
  if (what == "comm")
    c.cls = GpuClass::kComm;
  else if (what == "compute")
    c.cls = GpuClass::kCompute;
  else if (what == "memory")
    c.cls = GpuClass::kMemory;
  else
    return Bad(spec, "CLASS must be comm, compute or memory");
  return c;
}

}  // namespace

std::string_view ToString(GpuClass c) {
  switch (c) {
    case GpuClass::kCompute: return "compute";
    case GpuClass::kComm: return "comm";
    case GpuClass::kMemory: return "memory";
    case GpuClass::kSync: return "sync";
  }
  return "?";
}

std::string_view ToString(ContentionModel m) {
  switch (m) {
    case ContentionModel::kNone: return "none";
    case ContentionModel::kTraceSlowdowns: return "trace-slowdowns";
    case ContentionModel::kSmShare: return "sm-share";
    case ContentionModel::kMixed: return "trace-slowdowns+sm-share";
  }
  return "?";
}

absl::StatusOr<Change> ParseChange(std::string_view spec) {
  Change c;
  c.text = std::string(spec);
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos)
    return Bad(spec, "expected KIND:..., KIND one of scale, async, prefetch, ce, nosync, remove, defer");
  const std::string_view kind = spec.substr(0, colon);
  std::string_view rest = spec.substr(colon + 1);
  if (kind == "scale") return ParseScale(spec, rest, std::move(c));
  if (kind == "async" || kind == "prefetch") {
    c.kind = ChangeKind::kAsync;
    c.prefetch = kind == "prefetch";
  } else if (kind == "ce")
    c.kind = ChangeKind::kCopyEngine;
  else if (kind == "nosync")
    c.kind = ChangeKind::kNoSync;
  else if (kind == "remove")
    c.kind = ChangeKind::kRemove;
  else if (kind == "defer")
    c.kind = ChangeKind::kDefer;
  else
    return Bad(spec, "unknown kind; expected scale, async, prefetch, ce, nosync, remove or defer");
  if (!TakeRegex(rest, c.regex)) return Bad(spec, "expected /REGEX/");
  if (c.kind == ChangeKind::kAsync && !rest.empty()) {
    if (rest[0] != '@') return Bad(spec, "expected @/JOIN/ after the regex");
    rest.remove_prefix(1);
    if (!TakeRegex(rest, c.join_regex)) return Bad(spec, "expected @/JOIN/ after the regex");
    if (absl::Status s = CheckRegex(spec, c.join_regex); !s.ok()) return s;
  }
  if (!rest.empty()) return Bad(spec, "unexpected '" + std::string(rest) + "' after the regex");
  if (absl::Status s = CheckRegex(spec, c.regex); !s.ok()) return s;
  return c;
}

}  // namespace overlapscope::analyze::replay
