// Internal to engine/: writes a report view to a stream as the renderer produces it (no
// whole-report string), shared by the one-model and the per-rank WriteReport.
#pragma once

#include <cstdio>

#include "absl/status/status.h"
#include "engine/analysis.h"
#include "report/render.h"

namespace overlapscope::engine {

// Renders `v` in `format` (the text forms with `options`' collectives_shown and ranks) into `out`
// and flushes it. Errors: ResourceExhausted / Internal when rendering throws (NoThrow's words),
// Internal "cannot write the report to stdout" when a write or the flush fails (the rest of the
// report is then not written).
absl::Status StreamReport(const report::ReportView& v, ReportFormat format, const RenderOptions& options,
                          std::FILE* out);

}  // namespace overlapscope::engine
