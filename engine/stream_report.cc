#include "engine/stream_report.h"

#include <string_view>

#include "engine/no_throw.h"

namespace overlapscope::engine {

absl::Status StreamReport(const report::ReportView& v, ReportFormat format, const RenderOptions& options,
                          std::FILE* out) {
  bool written = true;
  const report::RenderSink sink = [&](std::string_view text) {
    if (written && !text.empty()) written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  };
  const absl::Status rendered = NoThrow("rendering the report", [&]() -> absl::Status {
    report::TextOptions text;
    text.collectives_shown = options.collectives_shown;
    text.ranks = options.ranks;
    switch (format) {
      case ReportFormat::kJson: report::RenderJson(v, sink); break;
      case ReportFormat::kMarkdown: report::RenderMarkdown(v, text, sink); break;
      case ReportFormat::kText: report::RenderText(v, text, sink); break;
    }
    return absl::OkStatus();
  });
  if (!rendered.ok()) return rendered;
  if (!written || std::fflush(out) != 0) return absl::InternalError("cannot write the report to stdout");
  return absl::OkStatus();
}

}  // namespace overlapscope::engine
