// What happened while reading one source (an imported file or a live capture): how many
// records were read and kept, and every declared import statistic (import_stats.h) that was
// hit. Nothing is ever dropped silently: every skipped, ignored or lost record is counted under
// a declared Stat, printed by `overlapscope info`, and data-loss stats put a warning at the top
// of every report (ImportWarnings).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "model/import_stats.h"

namespace overlapscope::model {

struct SourceStats {
  std::string path;          // file path, or "capture:<pid>" for live captures
  std::string format;        // "kineto-json", "kineto-json.gz", "cupti-spill", "nccl-plugin"
  int64_t bytes = 0;         // bytes read (uncompressed)
  int64_t events_read = 0;   // records seen in the source
  int64_t events_kept = 0;   // records turned into model events
  int64_t base_time_ns = 0;  // offset added to every timestamp of this source
  // GPU activities (kernels, memcpys, memsets) kept from this source; -1 when the source holds
  // none by design (an NCCL plugin file).
  int64_t gpu_activities_kept = -1;
  absl::btree_map<std::string, int64_t> kept_by_category;  // e.g. "kernel" -> 1234
  std::array<int64_t, kStatCount> counts{};                // per declared Stat
  // Per Stat, what the count is made of (a category, an arg key, a reason); a detail's counts
  // sum to at most the Stat's count.
  absl::btree_map<std::pair<Stat, std::string>, int64_t> details;
  // The first few skipped records with file offset and reason, for the user to look at.
  std::vector<std::string> examples;

  int64_t Count(Stat s) const { return counts[static_cast<size_t>(s)]; }
  void Add(Stat s, int64_t n = 1, std::string_view detail = {});
  // Counts a skipped record (Add) and keeps `example` if fewer than kMaxExamples are kept.
  void Skip(Stat s, std::string_view detail, std::string example);
  // Sums over the Stats of one effect.
  int64_t skipped() const;
  int64_t ignored() const;
  // Details of one Stat, by count (largest first).
  std::vector<std::pair<std::string, int64_t>> Details(Stat s) const;
  static constexpr size_t kMaxExamples = 20;
};

// One line at the top of every output: a data-loss statistic of one source.
struct ImportWarning {
  std::string source;  // path of the source
  Stat stat = Stat::kCount;
  int64_t count = 0;
  std::string message;  // "<path>: 12 GPU activity (...) could not be read (negative dur 12)"
};

// The warnings of a set of sources, in source order: every data-loss Stat with a count, and
// for a source from which no GPU activity was understood while GPU-looking records were
// skipped, one warning saying that its report has no GPU numbers. Empty when nothing was lost.
std::vector<ImportWarning> ImportWarnings(const std::vector<SourceStats>& sources);

}  // namespace overlapscope::model
