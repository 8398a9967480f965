#include "model/source_stats.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "model/bounds.h"

namespace overlapscope::model {
namespace {

constexpr StatDef kDefs[] = {
#define OVERLAPSCOPE_STAT_DEF(id, name, sev, eff, desc) {name, Severity::sev, StatEffect::eff, desc},
    OVERLAPSCOPE_IMPORT_STATS(OVERLAPSCOPE_STAT_DEF)
#undef OVERLAPSCOPE_STAT_DEF
};
static_assert(std::size(kDefs) == kStatCount);

int64_t SumOf(const SourceStats& s, StatEffect e) {
  int64_t n = 0;
  for (size_t i = 0; i < kStatCount; ++i)
    if (kDefs[i].effect == e) n += s.counts[i];
  return n;
}

// Stats whose records look like GPU or runtime activity: when a source kept no GPU activity
// and has any of these, its report has no GPU numbers at all.
bool IsGpuLooking(Stat s) {
  return s == Stat::kKinetoGpuEventSkipped || s == Stat::kKinetoRuntimeEventSkipped ||
         s == Stat::kKinetoDeviceCategoryUnknown || s == Stat::kKinetoOtherAccelerator ||
         s == Stat::kSpillTruncatedTail || s == Stat::kSpillBadTimestamps || s == Stat::kCuptiDroppedRecords;
}

}  // namespace

const StatDef& Describe(Stat s) { return kDefs[static_cast<size_t>(s)]; }

std::string_view ToString(Severity s) { return s == Severity::kDataLoss ? "data-loss" : "info"; }

void SourceStats::Add(Stat s, int64_t n, std::string_view detail) {
  // Counts can come from a file (a capture's own counters): never negative, never wrapping.
  n = std::max<int64_t>(n, 0);
  counts[static_cast<size_t>(s)] = SatAdd(counts[static_cast<size_t>(s)], n);
  // A detail names a category, key or reason: a few hundred bytes say it (a hostile file's
  // megabyte-long category name must not be kept whole).
  constexpr size_t kMaxDetail = 200;
  if (detail.size() > kMaxDetail) {
    int64_t& d = details[{s, std::string(detail.substr(0, kMaxDetail)) + "..."}];
    d = SatAdd(d, n);
    return;
  }
  if (!detail.empty()) {
    int64_t& d = details[{s, std::string(detail)}];
    d = SatAdd(d, n);
  }
}

void SourceStats::Skip(Stat s, std::string_view detail, std::string example) {
  Add(s, 1, detail);
  if (examples.size() < kMaxExamples) examples.push_back(std::move(example));
}

int64_t SourceStats::skipped() const { return SumOf(*this, StatEffect::kSkipped); }
int64_t SourceStats::ignored() const { return SumOf(*this, StatEffect::kIgnored); }

std::vector<std::pair<std::string, int64_t>> SourceStats::Details(Stat s) const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (auto it = details.lower_bound({s, std::string()}); it != details.end() && it->first.first == s; ++it)
    out.emplace_back(it->first.second, it->second);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::vector<ImportWarning> ImportWarnings(const std::vector<SourceStats>& sources) {
  std::vector<ImportWarning> out;
  for (const SourceStats& src : sources) {
    const size_t first = out.size();
    bool gpu_looking = false;
    for (size_t i = 0; i < kStatCount; ++i) {
      const Stat s = static_cast<Stat>(i);
      const int64_t n = src.counts[i];
      if (n <= 0 || kDefs[i].severity != Severity::kDataLoss) continue;
      gpu_looking |= IsGpuLooking(s);
      ImportWarning w;
      w.source = src.path;
      w.stat = s;
      w.count = n;
      w.message =
          absl::StrCat(src.path, ": ", n, " x ", std::string(kDefs[i].name), ": ", std::string(kDefs[i].description));
      const auto details = src.Details(s);
      for (size_t k = 0; k < details.size() && k < 3; ++k)
        absl::StrAppend(&w.message, k == 0 ? " (" : ", ", details[k].first, ": ", details[k].second);
      if (!details.empty()) absl::StrAppend(&w.message, details.size() > 3 ? ", ...)" : ")");
      out.push_back(std::move(w));
    }
    if (gpu_looking && src.gpu_activities_kept == 0) {
      ImportWarning w;
      w.source = src.path;
      w.message = absl::StrCat(src.path,
                               ": no GPU activity of this source could be read although it holds GPU or runtime "
                               "records: its numbers below cover no GPU work");
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(first), std::move(w));  // first: the worst
    }
  }
  return out;
}

}  // namespace overlapscope::model
