#include "workloads/skew.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace overlapscope::workloads {
namespace {

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

absl::StatusOr<SkewStats> ComputeSkew(const std::vector<std::vector<double>>& durations) {
  const size_t ranks = durations.size();
  if (ranks < 2) return absl::InvalidArgumentError(absl::StrCat("skew needs at least 2 ranks, got ", ranks));
  const size_t n = durations[0].size();
  for (size_t r = 1; r < ranks; ++r)
    if (durations[r].size() != n)
      return absl::InvalidArgumentError(
          absl::StrCat("rank 0 timed ", n, " collectives but rank ", r, " timed ", durations[r].size()));
  if (n == 0) return absl::InvalidArgumentError("no collective was timed");
  SkewStats s;
  s.instances = static_cast<int64_t>(n);
  std::vector<double> skew(n);
  std::vector<std::vector<double>> wait(ranks, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i) {
    double lo = durations[0][i], hi = lo;
    for (size_t r = 1; r < ranks; ++r) {
      lo = std::min(lo, durations[r][i]);
      hi = std::max(hi, durations[r][i]);
    }
    skew[i] = hi - lo;
    for (size_t r = 0; r < ranks; ++r) wait[r][i] = durations[r][i] - lo;
  }
  s.median_skew_ms = MedianOf(skew);
  s.max_skew_ms = *std::max_element(skew.begin(), skew.end());
  for (auto& w : wait) s.median_wait_ms.push_back(MedianOf(std::move(w)));
  return s;
}

absl::Status AddSkewFigures(const std::vector<Series>& by_rank, const std::string& prefix,
                            std::map<std::string, double>& fig) {
  if (by_rank.size() < 2) return absl::OkStatus();  // one rank: no skew to speak of
  for (const auto& [name, unused] : by_rank[0]) {
    std::vector<std::vector<double>> d;
    for (size_t r = 0; r < by_rank.size(); ++r) {
      auto it = by_rank[r].find(name);
      if (it == by_rank[r].end())
        return absl::InternalError(absl::StrCat("rank ", r, " timed no collectives of '", name, "'"));
      d.push_back(it->second);
    }
    auto s = ComputeSkew(d);
    if (!s.ok()) return absl::Status(s.status().code(), absl::StrCat(name, ": ", s.status().message()));
    const std::string k = prefix + name;
    fig[k + "_skew_median_ms"] = s->median_skew_ms;
    fig[k + "_skew_max_ms"] = s->max_skew_ms;
    fig[k + "_skew_instances"] = static_cast<double>(s->instances);
    for (size_t r = 0; r < s->median_wait_ms.size(); ++r)
      fig[absl::StrCat(k, "_wait_rank", r, "_median_ms")] = s->median_wait_ms[r];
  }
  return absl::OkStatus();
}

std::string RenderSkew(const std::map<std::string, double>& fig, int nranks) {
  static const std::string kSuffix = "_skew_median_ms";
  std::string t;
  for (const auto& [key, median] : fig) {
    if (key.size() <= kSuffix.size() || key.compare(key.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
      continue;
    const std::string k = key.substr(0, key.size() - kSuffix.size());
    auto get = [&](const std::string& name) {
      auto it = fig.find(name);
      return it == fig.end() ? 0.0 : it->second;
    };
    absl::StrAppendFormat(&t, "    %-28s median %8.3f ms, max %8.3f ms over %4.0f; median wait", k, median,
                          get(k + "_skew_max_ms"), get(k + "_skew_instances"));
    for (int r = 0; r < nranks; ++r)
      absl::StrAppendFormat(&t, " r%d %.3f", r, get(absl::StrCat(k, "_wait_rank", r, "_median_ms")));
    t += " ms\n";
  }
  if (t.empty()) return t;
  return "\n  collective skew from the ranks' CUDA events (max - min over ranks of each rank's duration of the\n"
         "  collective = max(start) - min(start)), per collective instance; 'captured_' = the captured runs:\n" +
         t;
}

std::string SerializeSeries(const Series& s) {
  std::string out;
  for (const auto& [name, v] : s) {
    out += name;
    out += '\t';
    for (size_t i = 0; i < v.size(); ++i) absl::StrAppendFormat(&out, "%s%.17g", i ? "," : "", v[i]);
    out += '\n';
  }
  return out;
}

absl::StatusOr<Series> ParseSeries(const std::string& text) {
  Series s;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++line_no;
    auto tab = line.find('\t');
    if (tab == absl::string_view::npos || tab == 0)
      return absl::InvalidArgumentError(absl::StrCat("series line ", line_no, ": no name before a TAB"));
    std::vector<double>& v = s[std::string(line.substr(0, tab))];
    for (absl::string_view x : absl::StrSplit(line.substr(tab + 1), ',', absl::SkipEmpty())) {
      double d = 0;
      if (!absl::SimpleAtod(x, &d))
        return absl::InvalidArgumentError(absl::StrCat("series line ", line_no, ": bad number '", x, "'"));
      v.push_back(d);
    }
  }
  return s;
}

}  // namespace overlapscope::workloads
