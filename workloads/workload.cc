#include "workloads/workload.h"

#include "absl/strings/str_format.h"

namespace overlapscope::workloads {

std::string Row(const std::string& label, double ms, const std::string& extra) {
  return absl::StrFormat("  %-30s %10.3f ms  %s\n", label, ms, extra);
}

std::optional<double> OverlapEfficiency(double t_seq, double t_ovl, double ideal) {
  // Undefined when sequential is not slower than the ideal (nothing to hide).
  if (t_seq - ideal <= 0) return std::nullopt;
  return (t_seq - t_ovl) / (t_seq - ideal);
}

std::string FormatEfficiency(std::optional<double> e) {
  return e ? absl::StrFormat("%.3f", *e) : std::string("n/a (sequential not slower than the ideal)");
}

}  // namespace overlapscope::workloads
