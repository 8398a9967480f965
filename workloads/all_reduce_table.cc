// The host-only parts of the all-reduce workload (all_reduce.h): size lists, figure names,
// bandwidths and the table. No CUDA, so they are unit-tested with hand-made figures.
#include <cctype>
#include <cmath>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "workloads/all_reduce.h"

namespace overlapscope::workloads {
namespace {

constexpr int64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
constexpr size_t kMaxSizes = 64;

absl::StatusOr<int64_t> ParseOneSize(absl::string_view item) {
  const std::string s(absl::StripAsciiWhitespace(item));
  size_t unit_at = 0;
  while (unit_at < s.size() && (std::isdigit(static_cast<unsigned char>(s[unit_at])) || s[unit_at] == '.')) ++unit_at;
  std::string unit = s.substr(unit_at);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int64_t mult = 0;
  if (unit.empty() || unit == "B") mult = 1;
  if (unit == "K" || unit == "KB" || unit == "KIB") mult = kKiB;
  if (unit == "M" || unit == "MB" || unit == "MIB") mult = kMiB;
  if (unit == "G" || unit == "GB" || unit == "GIB") mult = kGiB;
  double v = 0;
  if (mult == 0 || unit_at == 0 || !absl::SimpleAtod(s.substr(0, unit_at), &v))
    return absl::InvalidArgumentError(
        absl::StrCat("--sizes: cannot read '", s, "' (a number and a unit B, KB, MB or GB, e.g. 0.5MB)"));
  const double bytes = v * static_cast<double>(mult);
  if (bytes < 1 || bytes > static_cast<double>(int64_t{1} << 40) || bytes != std::floor(bytes))
    return absl::InvalidArgumentError(
        absl::StrCat("--sizes: '", s, "' is not a whole number of bytes from 1 B to 1 TiB"));
  return static_cast<int64_t>(bytes);
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ParseAllReduceSizes(const std::string& spec) {
  std::vector<int64_t> out;
  const size_t range = spec.find("..");
  if (range != std::string::npos) {
    auto lo = ParseOneSize(absl::string_view(spec).substr(0, range));
    if (!lo.ok()) return lo.status();
    auto hi = ParseOneSize(absl::string_view(spec).substr(range + 2));
    if (!hi.ok()) return hi.status();
    if (*hi < *lo)
      return absl::InvalidArgumentError(absl::StrCat("--sizes ", spec, ": the range ends below its start"));
    for (int64_t b = *lo; b <= *hi && out.size() <= kMaxSizes; b *= 2) out.push_back(b);
  } else {
    for (absl::string_view item : absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
      auto b = ParseOneSize(item);
      if (!b.ok()) return b.status();
      out.push_back(*b);
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("--sizes: no size given (e.g. 0.5MB..64MB or 1MB,4MB)");
  if (out.size() > kMaxSizes)
    return absl::InvalidArgumentError(absl::StrCat("--sizes ", spec, ": more than ", kMaxSizes, " sizes"));
  return out;
}

std::string FormatBytes(int64_t b) {
  if (b >= kMiB && b % kMiB == 0) return absl::StrCat(b / kMiB, " MiB");
  if (b >= kKiB && b % kKiB == 0) return absl::StrCat(b / kKiB, " KiB");
  return absl::StrCat(b, " B");
}

double AllReduceBusBwGBps(int64_t bytes, double ms, int nranks) {
  if (ms <= 0 || nranks < 1) return 0;
  const double algbw = static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
  return algbw * 2.0 * (nranks - 1) / nranks;
}

std::string AllReduceFigureKey(const std::string& impl, int64_t bytes, const std::string& what) {
  std::string label = FormatBytes(bytes);
  label.erase(label.find(' '), 1);
  return absl::StrCat(impl, "_", label, "_", what);
}

void RenderAllReduceTable(const std::vector<int64_t>& sizes, const std::vector<std::string>& impls, int nranks,
                          WorkloadResult& r) {
  std::string t = absl::StrFormat("  %-9s", "size");
  for (const auto& impl : impls) absl::StrAppend(&t, absl::StrFormat(" | %-19s", impl));
  absl::StrAppend(&t, " | best (speed-up over nccl)\n", absl::StrFormat("  %-9s", ""));
  for (size_t k = 0; k < impls.size(); ++k) absl::StrAppend(&t, absl::StrFormat(" | %8s %10s", "ms", "busbw GB/s"));
  absl::StrAppend(&t, " |\n");
  for (int64_t bytes : sizes) {
    absl::StrAppend(&t, absl::StrFormat("  %-9s", FormatBytes(bytes)));
    std::string best;
    double best_ms = 0;
    for (const auto& impl : impls) {
      const double ms = r.Get(AllReduceFigureKey(impl, bytes, "ms"));
      if (ms <= 0) {
        absl::StrAppend(&t, absl::StrFormat(" | %-19s", "failed"));
        continue;
      }
      const double bus = AllReduceBusBwGBps(bytes, ms, nranks);
      r.figures[AllReduceFigureKey(impl, bytes, "busbw_gbps")] = bus;
      absl::StrAppend(&t, absl::StrFormat(" | %8.4f %10.1f", ms, bus));
      if (best.empty() || ms < best_ms) best = impl, best_ms = ms;
    }
    if (best.empty()) {
      absl::StrAppend(&t, " | -\n");
      continue;
    }
    r.figures[AllReduceFigureKey("best", bytes, "ms")] = best_ms;
    const double nccl = r.Get(AllReduceFigureKey("nccl", bytes, "ms"));
    absl::StrAppend(&t, " | ", best);
    if (nccl > 0) {
      r.figures[AllReduceFigureKey("best", bytes, "speedup_vs_nccl")] = nccl / best_ms;
      absl::StrAppend(&t, absl::StrFormat(" (%.2fx)", nccl / best_ms));
    }
    absl::StrAppend(&t, "\n");
  }
  absl::StrAppend(&t, "  (ms: median time of one all-reduce; busbw = bytes/time x 2(n-1)/n, n = ", nranks,
                  ", as nccl-tests)\n");
  r.table = t;
}

}  // namespace overlapscope::workloads
