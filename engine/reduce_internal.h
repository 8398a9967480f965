// Internal to engine/reduce*.cc: one rank's reduction (its report parts and the compact record
// of its collectives) and the gathering of every rank's parts into the report.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyze/analysis.h"
#include "analyze/clock_align.h"
#include "analyze/collective_arrival.h"
#include "analyze/cross_rank.h"
#include "engine/reduce.h"
#include "model/trace.h"
#include "report/build.h"
#include "report/report.h"

namespace overlapscope::engine {
// What ReduceOptions::each_rank sees (engine/reduce.h).
struct RankModel {
  const model::Trace& trace;
  const analyze::AnalysisResult& result;
};
}  // namespace overlapscope::engine

namespace overlapscope::engine::reduce {

// One collective of a rank with its strings resolved (ids are the rank trace's own) and its
// arrival, estimated on the rank's events (analyze/collective_arrival.h).
struct CompactCollective {
  model::Collective c;  // process/device/stream: indexes into CompactRank's vectors
  std::string op, communicator, dtype, algorithm, protocol, reduce_op;
  analyze::CollectiveArrival arrival;
  int64_t exposed_ns = -1;  // own time minus the hidden part (report::ExposedByCollective); -1 unknown
};
struct CompactRank {
  model::Process process;  // string ids unused: the strings below
  std::string name, host, source;
  std::vector<std::pair<int32_t, std::string>> devices;  // ordinal, name (rank trace's DeviceId order)
  struct Stream {
    int32_t device = 0;
    int64_t native_id = -1;
    std::string name;
  };
  std::vector<Stream> streams;                 // rank trace's StreamId order
  std::vector<CompactCollective> collectives;  // sorted by start (the rank trace's order)
};

// Everything the report needs of one rank.
struct RankPart {
  report::Report header;  // Header(): options, class rules, warnings of this rank
  report::RankReport rank;
  report::GlobalPartial partial;
  report::StreamConcurrency concurrency;  // this rank's devices and group activity counts
  CompactRank compact;
  int64_t file_bytes = 0;
  // HTA's figures under the other step-filter decision than the rank's own (HTA filters when
  // the whole job holds >= 2 distinct ProfilerStep#N names), and the rank's first two distinct
  // step names: ChooseHtaVariant picks once every rank is in.
  std::optional<report::HtaCompat> hta_other;
  std::vector<std::string> hta_step_names;
};

// Whether HTA's step filter applies to the job: >= 2 distinct step names over every rank.
bool JobHasSteps(const std::vector<std::optional<RankPart>>& parts);
// Puts the rank's HTA figures for the job's decision in place (rank.hta_compat and the summary's
// hta_compat_overlap_pct), as the whole-model analysis of the job computes them.
void ChooseHtaVariant(RankPart* part, bool job_filter);

// Imports `file` (clock offset `shift_ns` added to every timestamp), analyzes it and reduces it;
// `each` (when not null and not empty) sees the model first; the model is freed on return.
absl::StatusOr<RankPart> ReduceRank(const std::string& file, const analyze::AnalyzeOptions& options, int64_t top_n,
                                    int64_t shift_ns, int parser_threads,
                                    const std::function<absl::Status(const RankModel&)>& each = nullptr);

// Moves a reduced rank by its host's clock offset, as if the offset had been added to every
// timestamp at import: its report parts (report/shift_times.h) and its collective records.
// Exact (tests/scale/shift_part_test.cc): the analyses are shift-invariant and HTA's
// µs-rounded figures use the timestamps as recorded (model::Process::clock_offset_ns).
void ShiftPart(RankPart* part, int64_t offset_ns);
// Its collective records alone (what the gathering reads back from a moved rank's stored part).
void ShiftCompact(CompactRank* r, int64_t offset_ns);

// The collectives-only trace of every rank's records (process i = parts[i]), in the order the
// whole-model trace has them, and the arrivals parallel to its collectives. With `shift`, clocks
// are aligned while it is finalized (analyze::ClockAlignmentShift into *alignment).
struct GatheredCollectives {
  model::Trace trace;
  std::vector<analyze::CollectiveArrival> arrivals;
  std::vector<int64_t> exposed;  // parallel too
};
// load(i): rank i's record (read back from ReducedRanks), i < n, each called once in order.
using CompactLoader = std::function<absl::StatusOr<CompactRank>(size_t i)>;
absl::StatusOr<GatheredCollectives> GatherCollectives(size_t n, const CompactLoader& load,
                                                      const std::string& base_clock_note,
                                                      const model::ClockShiftFn& shift);

}  // namespace overlapscope::engine::reduce

namespace overlapscope::engine::reduce {

// A RankPart as bytes and back (reduce_serial.cc): the MPI gather sends these to rank 0.
// Deserialize fails (InvalidArgument naming `source`) on bytes of another version or damaged.
std::string SerializePart(const RankPart& p);
absl::StatusOr<RankPart> DeserializePart(const std::string& bytes, const std::string& source);
// Where the rank's report JSON starts in `bytes` (npos: not a reduced rank of this version's
// framing; the version itself is checked by the Deserialize functions).
size_t ReportOffset(const std::string& bytes);
// The collective record alone (the report part is not parsed).
absl::StatusOr<CompactRank> DeserializeCompact(const std::string& bytes, const std::string& source);

}  // namespace overlapscope::engine::reduce

namespace overlapscope::engine {

// What a PerRankReport holds (engine/reduce_view.cc renders it).
struct PerRankReport::State {
  report::Report head;  // ranks: label, ids, summary; no collective instances (unless `whole`)
  bool whole = false;   // one input: head is the whole report
  reduce::GatheredCollectives gathered;
  analyze::CrossRankResult cross;
  std::shared_ptr<ReducedRanks> ranks;
  std::vector<std::string> files;
  // Per file: the clock offset of its host (clock alignment), applied to its stored part as it
  // is read (the gathering's records, the rank's body when rendered): not rewritten, not reduced
  // again. 0 for most; empty until the alignment is known.
  std::vector<int64_t> shift_ns;
  ReduceStats stats;
  mutable absl::Status status;  // the first part view() could not produce
};

namespace reduce {
// Rank i's shift (0 when none).
inline int64_t ShiftOf(const PerRankReport::State& s, size_t i) { return i < s.shift_ns.size() ? s.shift_ns[i] : 0; }
}  // namespace reduce

namespace reduce {
// With OVERLAPSCOPE_TIMING=1: "[per-rank] WHAT: wall W s, cpu C s, rss R MB, peak P MB" on
// stderr (the phases of a reduction, for profiling); nothing otherwise.
void Phase(const char* what);
// Gives the heap's free memory back to the system (glibc: malloc_trim), so that what one rank's
// model freed is not counted as resident while the next ranks run.
void GiveBackFreeMemory();
// The rank reduced to what the head keeps of it (label, rank, pid, host, source, summary).
void TrimRank(report::RankReport* r);
// Its stream-concurrency devices without their per-iteration figures (the JSON takes them from
// the stored rank; text and Markdown print the whole-trace figures only).
void TrimConcurrency(report::StreamConcurrency* c);
}  // namespace reduce

}  // namespace overlapscope::engine
