#include "model/source_stats.h"

namespace overlapscope::model {

void SourceStats::Skip(const std::string& reason, const std::string& example) {
  ++skipped_by_reason[reason];
  if (examples.size() < kMaxExamples) examples.push_back(example);
}

}  // namespace overlapscope::model
