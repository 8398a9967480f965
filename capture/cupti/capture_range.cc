// Parsing of the capture-range settings (capture_range.h).
#include "capture/cupti/capture_range.h"

#include <cstdint>
#include <cstdlib>

namespace overlapscope::cupti {
namespace {

std::string Quote(std::string_view v) {
  std::string q(1, '\'');  // built by appending: GCC 12 warns (-Wrestrict) about "'" + std::string
  q.append(v);
  q += '\'';
  return q;
}

// Digits only, into an int64 without overflow; false otherwise.
bool ParseCount(std::string_view v, int64_t* out) {
  if (v.empty() || v.size() > 19) return false;
  int64_t x = 0;
  for (char ch : v) {
    if (ch < '0' || ch > '9') return false;
    if (x > (INT64_MAX - (ch - '0')) / 10) return false;
    x = x * 10 + (ch - '0');
  }
  *out = x;
  return true;
}

}  // namespace

std::string_view ToString(RangeTrigger t) {
  switch (t) {
    case RangeTrigger::kNone: return "none";
    case RangeTrigger::kCudaProfilerApi: return "cudaProfilerApi";
    case RangeTrigger::kNvtx: return "nvtx";
  }
  return "?";
}

std::string ParseCaptureRange(std::string_view v, RangeConfig* c) {
  if (v == "none" || v.empty()) {
    c->trigger = RangeTrigger::kNone;
  } else if (v == "cudaProfilerApi") {
    c->trigger = RangeTrigger::kCudaProfilerApi;
  } else if (v == "nvtx") {
    c->trigger = RangeTrigger::kNvtx;
  } else {
    return "capture range " + Quote(v) + ": expected none, cudaProfilerApi or nvtx";
  }
  return "";
}

std::string ParseNvtxCapture(std::string_view v, RangeConfig* c) {
  const size_t at = v.rfind('@');
  std::string_view name = at == std::string_view::npos ? v : v.substr(0, at);
  std::string_view domain = at == std::string_view::npos ? std::string_view() : v.substr(at + 1);
  if (name.empty()) return "nvtx capture " + Quote(v) + ": expected NAME or NAME@DOMAIN (NAME not empty)";
  if (at != std::string_view::npos && domain.empty())
    return "nvtx capture " + Quote(v) + ": empty domain after '@' (leave out '@' for the default domain)";
  if (domain == "*") return "nvtx capture " + Quote(v) + ": any-domain matching (@*) is not supported; name the domain";
  c->nvtx_name = std::string(name);
  c->nvtx_domain = std::string(domain);
  return "";
}

std::string ParseRangeEnd(std::string_view v, RangeConfig* c) {
  if (v == "repeat") {
    c->max_windows = 0;
    return "";
  }
  if (v == "stop") {
    c->max_windows = 1;
    return "";
  }
  int64_t n = 0;
  if (v.substr(0, 7) == "repeat:" && ParseCount(v.substr(7), &n) && n >= 1 && n <= 1000000) {
    c->max_windows = static_cast<int32_t>(n);
    return "";
  }
  return "capture range end " + Quote(v) + ": expected repeat, repeat:N (N >= 1) or stop";
}

std::string ParseSeconds(std::string_view v, int64_t* ns) {
  // DIGITS[.DIGITS], at most 9 fraction digits, at most 10^7 s: exact in ns, no locale.
  const size_t dot = v.find('.');
  std::string_view whole = dot == std::string_view::npos ? v : v.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : v.substr(dot + 1);
  int64_t w = 0, f = 0;
  const bool ok = (!whole.empty() || !frac.empty()) && (whole.empty() || ParseCount(whole, &w)) &&
                  (frac.empty() || (frac.size() <= 9 && ParseCount(frac, &f))) &&
                  !(dot != std::string_view::npos && frac.empty() && whole.empty()) && w <= 10000000;
  if (!ok) return "seconds " + Quote(v) + ": expected a non-negative decimal number of seconds, e.g. 2 or 0.5";
  for (size_t i = frac.size(); i < 9; ++i) f *= 10;
  *ns = w * 1000000000 + f;
  return "";
}

std::string CheckRangeConfig(const RangeConfig& c) {
  if (c.trigger == RangeTrigger::kNvtx && c.nvtx_name.empty())
    return "--capture-range=nvtx needs --nvtx-capture=NAME[@DOMAIN]";
  if (c.trigger != RangeTrigger::kNvtx && !c.nvtx_name.empty()) return "--nvtx-capture needs --capture-range=nvtx";
  if (c.trigger == RangeTrigger::kNone && c.max_windows > 1)
    return "--capture-range-end repeat:N needs a --capture-range";
  return "";
}

std::string RangeConfigFromEnv(RangeConfig* c) {
  auto env = [](const char* n) -> const char* {
    const char* v = std::getenv(n);
    return v && *v ? v : nullptr;
  };
  std::string err;
  if (const char* v = env(kEnvCaptureRange)) err = ParseCaptureRange(v, c);
  if (const char* v = env(kEnvNvtxCapture); v && err.empty()) err = ParseNvtxCapture(v, c);
  if (const char* v = env(kEnvRangeEnd); v && err.empty()) err = ParseRangeEnd(v, c);
  if (const char* v = env(kEnvDelay); v && err.empty()) err = ParseSeconds(v, &c->delay_ns);
  if (const char* v = env(kEnvDuration); v && err.empty()) err = ParseSeconds(v, &c->duration_ns);
  if (const char* v = env(kEnvT0); v && err.empty()) {
    int64_t t0 = 0;
    if (!ParseCount(v, &t0)) err = std::string(kEnvT0) + " " + Quote(v) + ": expected CLOCK_REALTIME nanoseconds";
    c->t0_ns = t0;
  }
  if (err.empty()) err = CheckRangeConfig(*c);
  return err;
}

bool NvtxMatches(const RangeConfig& c, std::string_view message, std::string_view domain) {
  return c.trigger == RangeTrigger::kNvtx && message == c.nvtx_name && domain == c.nvtx_domain;
}

}  // namespace overlapscope::cupti
