// Every point in time of a rank's report parts, moved by one offset (report/shift_times.h).
#include "report/shift_times.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "analyze/findings/finding_rule.h"

namespace overlapscope::report {
namespace {

// A finding's message written with AnalyzeOptions::mark_message_times holds its points in time
// as marked absolute ns (analyze/findings/finding_rule.h); they become "+X ms" after the job's
// start only once every rank is in. Moves each marked time by `o`.
void ShiftMarkedTimes(std::string* s, int64_t o) {
  const std::string m(1, analyze::findings::kTimeMarker);
  *s = analyze::findings::RewriteMarkedTimes(*s, m, [o, &m](int64_t ns) { return absl::StrCat(m, ns + o, m); });
}

void Shift(GpuActivity* a, int64_t o) {
  a->start_ns += o;
  a->end_ns += o;
}

void ShiftDevice(DeviceReport* d, int64_t o) {
  for (IterationOverlap& it : d->iterations) {
    it.gpu_start_ns += o;
    it.gpu_end_ns += o;
    it.cpu_start_ns += o;
    it.cpu_end_ns += o;
  }
  for (CollectiveExposure& c : d->collectives.top_exposed) {
    c.start_ns += o;
    c.end_ns += o;
  }
  for (IdleGap& g : d->top_gaps) {
    g.start_ns += o;
    g.end_ns += o;
    if (g.ended_by) Shift(&*g.ended_by, o);
  }
}

}  // namespace

void ShiftRankTimes(RankReport* r, int64_t o) {
  if (o == 0) return;
  for (Window& w : r->windows) {
    w.capture_start_ns += o;
    w.capture_end_ns += o;
    w.start_ns += o;
    w.end_ns += o;
  }
  for (DeviceReport& d : r->devices) ShiftDevice(&d, o);
  for (BlockedInterval& b : r->blocked_intervals.top) {
    b.start_ns += o;
    if (b.released_by) Shift(&*b.released_by, o);
  }
  for (Finding& f : r->findings.items) {
    f.time_ns += o;
    f.end_ns += o;
    ShiftMarkedTimes(&f.message, o);
    ShiftMarkedTimes(&f.advice, o);
  }
}

std::string ShiftRankTimesJson(std::string_view element, int64_t o) {
  static constexpr std::string_view kKeys[] = {
      "\"start_ns\": ",     "\"end_ns\": ",     "\"time_ns\": ",          "\"gpu_start_ns\": ",  "\"gpu_end_ns\": ",
      "\"cpu_start_ns\": ", "\"cpu_end_ns\": ", "\"capture_start_ns\": ", "\"capture_end_ns\": "};
  std::string out;
  out.reserve(element.size() + 256);
  size_t i = 0;
  while (i < element.size()) {
    size_t nl = element.find('\n', i);
    if (nl == std::string_view::npos) nl = element.size();
    const std::string_view line = element.substr(i, nl - i);
    const size_t q = line.find_first_not_of(' ');
    bool done = false;
    for (std::string_view k : kKeys) {
      if (q == std::string_view::npos || line.substr(q, k.size()) != k) continue;
      const std::string_view num = line.substr(q + k.size());
      const bool comma = !num.empty() && num.back() == ',';
      const std::string digits(num.substr(0, num.size() - (comma ? 1 : 0)));
      char* end = nullptr;
      const long long v = std::strtoll(digits.c_str(), &end, 10);
      if (digits.empty() || end == nullptr || *end != '\0') break;  // not an integer (null): as it is
      out.append(line.substr(0, q + k.size()));
      absl::StrAppend(&out, static_cast<int64_t>(v) + o, comma ? "," : "");
      done = true;
      break;
    }
    if (!done) out.append(line);
    if (nl < element.size()) out.push_back('\n');
    i = nl + 1;
  }
  return out;
}

void ShiftPartialTimes(GlobalPartial* p, int64_t o) {
  if (o == 0 || !p->has_events) return;
  p->time_span.start_ns += o;
  p->time_span.end_ns += o;
}

}  // namespace overlapscope::report
