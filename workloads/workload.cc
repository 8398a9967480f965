#include "workloads/workload.h"

#include "absl/strings/str_cat.h"
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

absl::Status CheckDelay(const RunParams& p, int nranks) {
  if (p.delay_us < 0) return absl::InvalidArgumentError("--delay-us must be >= 0");
  if (p.delay_us == 0 && p.delay_rank < 0) return absl::OkStatus();
  if (p.delay_us == 0) return absl::InvalidArgumentError("--delay-rank needs --delay-us (the delay in µs)");
  if (p.delay_rank < 0 || p.delay_rank >= nranks)
    return absl::InvalidArgumentError(
        absl::StrCat("--delay-rank ", p.delay_rank, " but the ranks are 0..", nranks - 1, " (give --delay-rank R)"));
  return absl::OkStatus();
}

std::string DelayNote(const RunParams& p) {
  return absl::StrCat("straggler: rank ", p.delay_rank, " spins ", p.delay_us,
                      " us (one-block GPU kernel) on a collective's stream right before every collective");
}

}  // namespace overlapscope::workloads
