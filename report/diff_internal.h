// Internal to the report comparison (report/diff.h): the parts DiffReports assembles.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report/diff.h"

namespace overlapscope::report::diff_internal {

std::vector<double> Values(const std::map<int64_t, double>& by_iteration);
SeriesDelta Series(std::string metric, std::vector<double> base, std::vector<double> test);

std::vector<KernelDiff> DiffKernels(const Report& base, const Report& test, bool* limited);
std::vector<ClassDiff> DiffClasses(const Report& base, const Report& test);
std::vector<CollectiveDiff> DiffCollectives(const Report& base, const Report& test);
// pairs: matched (base, test) ranks, in the order of d.ranks.
Verdict BuildVerdict(const Report& base, const Report& test,
                     const std::vector<std::pair<const RankReport*, const RankReport*>>& pairs, const ReportDiff& d);

// Formatting shared by the diff renderers.
std::string SignedDur(double ns);                                              // "+59.8 µs", "-1.234 ms", "0 ns"
std::string SignedPct(const std::optional<double>& r);                         // "+13.4%", "n/a"
std::string Value(const std::string& metric, const std::optional<double>& v);  // by the metric's unit
std::string DeltaText(const std::string& metric, const Delta& v);              // "+59.8 µs (+13.4%)"
// "significant (p=0.0022)", "not judged (3 vs 3 iterations; 5 a side needed)".
std::string JudgedText(const Judgement& j, size_t nb, size_t nt, bool has_values);
// "rank 0: step time 445.0 µs -> 504.8 µs (+59.8 µs, +13.4%), not judged (...); overlap ...".
std::string StepLine(const std::string& label, const SeriesDelta& s, const Delta& overlap);

}  // namespace overlapscope::report::diff_internal
