// FileReader's per-window timeline (OVERLAPSCOPE_WINDOWS; see file_reader.h): a measurement aid,
// not part of any output.
#include <cstdio>
#include <ctime>

#include "base/phase_log.h"
#include "importers/kineto/file_reader.h"

namespace overlapscope::import {

double FileReader::Now() { return base::ClockSeconds(CLOCK_MONOTONIC) - base::PhaseWall0(); }

void FileReader::PrintTimeline() const {
  if (!timeline_on_) return;
  // Per window, in ms: when it started, the Refill before it (and its wait for the read), the
  // thread starts, the merge of the previous window, part 0's parse, the last other part's end,
  // the join.
  for (size_t k = 0; k < timeline_.size(); ++k) {
    const WindowTimes& w = timeline_[k];
    auto ms = [&w](double t) { return (t - w.start) * 1e3; };
    std::fprintf(stderr,
                 "window %3zu at %7.2f ms  %5.1f MB  parts %2zu  refill %5.2f (wait %5.2f)  spawned %5.2f  merged %5.2f"
                 "  part0 %5.2f  last part %5.2f  joined %5.2f ms\n",
                 k, w.start * 1e3, static_cast<double>(w.bytes) / 1e6, w.parts, w.refill * 1e3, w.refill_wait * 1e3,
                 ms(w.spawned), ms(w.merged), ms(w.part0), ms(w.last_part), ms(w.joined));
  }
}

}  // namespace overlapscope::import
