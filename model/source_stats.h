// What happened while reading one source (an imported file or a live capture): how many
// records were read, kept, skipped and why. Nothing is ever dropped silently: every skipped or
// lost record is counted here and printed by `overlapscope info`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"

namespace overlapscope::model {

struct SourceStats {
  std::string path;                                          // file path, or "capture:<pid>" for live captures
  std::string format;                                        // "kineto-json", "kineto-json.gz", "cupti", ...
  int64_t bytes = 0;                                         // bytes read (uncompressed)
  int64_t events_read = 0;                                   // records seen in the source
  int64_t events_kept = 0;                                   // records turned into model events
  int64_t base_time_ns = 0;                                  // offset added to every timestamp of this source
  absl::btree_map<std::string, int64_t> kept_by_category;    // e.g. "kernel" -> 1234
  absl::btree_map<std::string, int64_t> skipped_by_reason;   // e.g. "negative dur" -> 2
  absl::btree_map<std::string, int64_t> unknown_categories;  // counted and skipped
  absl::btree_map<std::string, int64_t> unknown_args;        // arg key -> count (ignored)
  // Records recognized but deliberately not stored as model events (Kineto "ac2g" flow arrows,
  // sort-order metadata, profiler spans "Trace", instant markers "i"), by category. Counted so
  // that events_read == events_kept + skipped() + ignored + unknown categories.
  absl::btree_map<std::string, int64_t> ignored_by_category;
  // Informational counts that drop nothing, e.g. "ac2g flow id without matching correlation id"
  // or "invalid UTF-8 replaced by U+FFFD" (strings repaired, event kept).
  absl::btree_map<std::string, int64_t> notes;
  int64_t dropped_records = 0;  // records the producer lost (CUPTI dropped records)
  // The first few skipped records with file offset and reason, for the user to look at.
  std::vector<std::string> examples;

  int64_t skipped() const {
    int64_t n = 0;
    for (const auto& [reason, count] : skipped_by_reason) n += count;
    return n;
  }
  // Counts a skipped record and keeps its description if fewer than kMaxExamples are kept.
  void Skip(const std::string& reason, const std::string& example);
  static constexpr size_t kMaxExamples = 20;
};

}  // namespace overlapscope::model
