// Placeholder so the tree builds before the Kineto importer lands; replaced by it.
#include "capture/import/import.h"

namespace overlapscope::import {
absl::StatusOr<std::vector<std::string>> ExpandTracePaths(absl::Span<const std::string> paths) {
  return std::vector<std::string>(paths.begin(), paths.end());
}
absl::Status ImportKinetoFile(const std::string&, model::TraceBuilder&, const ImportOptions&) {
  return absl::UnimplementedError("importer not built yet");
}
absl::StatusOr<model::Trace> ImportTraces(absl::Span<const std::string>, const ImportOptions&) {
  return absl::UnimplementedError("importer not built yet");
}
}  // namespace overlapscope::import
