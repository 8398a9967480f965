// The job overview of a multi-rank report: one row per rank with the figures that tell ranks
// apart (median step time, overlap, exposed communication, host blocked, GPU idle, times last,
// collective wait, the top category of the rank's own critical path), the job's median and
// spread per column, and the ranks that stand out by a robust rule. A pure function of the
// ranks' summaries (RankSummary, in the head of every report, also of a per-rank reduction), so
// the whole-model and the per-rank paths print the same overview bytes.
//
// Outlier rule (per numeric column, over the ranks that have the figure, 3 ranks or more):
//   median m, MAD = median |x - m|, spread s = 1.4826 x MAD (the standard deviation of normal
//   data); rank r stands out when |x_r - m| > max(3 s, floor), floor = max(rel x |m|, abs).
//   The floor keeps a column whose healthy ranks agree exactly (MAD 0) or jitter a little from
//   naming them: rel and abs per column are in Columns() (10 % of the median and 100 µs for the
//   time totals, 5 % and 1 µs for the step time, 5 points for the overlap, 2 for times last).
//   Both directions stand out (a straggler waits less than everyone else); the direction is
//   kept. Units: ns, ratios in [0, 1], counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "report/report.h"

namespace overlapscope::report {

enum class ColumnUnit { kNs, kRatio, kCount };

struct OverviewColumn {
  std::string key;    // the summary metric: "step_time_ns", "overlap_ratio", ...
  std::string title;  // "step", "overlap", ...
  ColumnUnit unit = ColumnUnit::kNs;
  double rel_floor = 0, abs_floor = 0;  // the outlier floor (header comment)
};
const std::vector<OverviewColumn>& OverviewColumns();

struct ColumnStats {
  int64_t ranks = 0;     // ranks with the figure
  double median = 0;     // 0 when none
  double spread = 0;     // 1.4826 x MAD
  double threshold = 0;  // |x - median| beyond this stands out
  double min = 0, max = 0;
};

// One figure of a rank that stands out.
struct Deviation {
  size_t column = 0;  // index into OverviewColumns()
  double value = 0, median = 0;
  double score = 0;  // |value - median| / threshold (> 1)
};

struct OverviewRow {
  size_t index = 0;  // into Report::ranks
  std::string label;
  std::optional<int64_t> rank;
  std::vector<std::optional<double>> values;  // parallel to OverviewColumns(); absent: no figure
  std::string path_top;                       // largest critical_path_<category>_share, "" when none
  std::vector<Deviation> deviations;          // columns where it stands out, largest score first
};

struct JobOverview {
  std::string title = "job overview";  // "change per rank (TEST - BASE)" for a diff
  std::vector<OverviewRow> rows;       // one per rank, in report order
  std::vector<ColumnStats> stats;      // parallel to OverviewColumns()
  std::vector<size_t> stand_out;       // indexes into rows, largest score first
};

// Empty rows for a report of fewer than 2 ranks.
JobOverview BuildOverview(const Report& r);
// The statistics and deviations of rows whose values are filled (one per column): what
// BuildOverview does after reading the summaries; the diff's overview of the change uses it.
JobOverview OverviewOfRows(std::vector<OverviewRow> rows);

// The median step time of a rank (report/diff.h StepTimes: per iteration the GPU span from the
// end of the previous one, the largest over the rank's GPUs), rounded to ns; 0 without iterations.
int64_t MedianStepNs(const RankReport& rk);

// --ranks: which ranks get a detail block in text and Markdown.
struct RankSelection {
  enum class Mode { kDefault, kAll, kCount, kList } mode = Mode::kDefault;
  int64_t count = 0;           // kCount: outliers + this many others (the slowest steps)
  std::vector<int64_t> ranks;  // kList: rank numbers (a process without a rank by its pid)
};
// "all", "N" (>= 0) or "R,R,...": InvalidArgument naming the text otherwise.
absl::StatusOr<RankSelection> ParseRankSelection(std::string_view text);
// Per rank of r (parallel to r.ranks): whether its detail block is printed. kDefault: every rank
// up to 8 ranks, else the ranks that stand out and the 4 slowest median steps.
std::vector<bool> SelectRanks(const Report& r, const JobOverview& o, const RankSelection& s);

// Renderers (render_overview.cc): "" for fewer than 2 ranks. Text and Markdown list every rank
// up to 16 ranks, else the ranks that stand out and the selected ones (the JSON has every row).
std::string OverviewText(const JobOverview& o, const std::vector<bool>& selected);
std::string OverviewMarkdown(const JobOverview& o, const std::vector<bool>& selected);
// The line after the detail blocks when some were left out; "" when every rank has one.
std::string LeftOutText(const std::vector<bool>& selected);
// A figure of column c as the overview prints it ("1.234 ms", "62.3%", "12").
std::string OverviewValue(size_t c, const std::optional<double>& v);

}  // namespace overlapscope::report
