// PerfettoLayout — which Perfetto track every slice, instant and counter sample of a trace goes
// on, before anything is encoded.
//
// Tracks: one process per host process (rank), its thread tracks (API calls and host ranges
// nest there), per GPU a process-like group "GPU n — <name> · rank r" with one track per stream
// named by role ("stream 7 · compute", "stream 17 · nccl", "· copy"), a "waits" child per stream
// holding its cudaStreamWaitEvent records, and a per-device "synchronizations" track for host
// syncs. Analysis tracks are added by AddAnalysisTracks() (perfetto_analysis.cc).
//
// Nesting guarantee: TrackEvent only has BEGIN/END and an END closes the innermost open slice,
// so a slice that partially overlaps another on one track would be silently re-nested by
// trace_processor. AssignLanes() therefore splits every logical track into lanes: lane 0 stays
// on the track, lane k >= 1 becomes a child track "<name> · lane k"; inside a lane any two
// slices are either disjoint or nested. Slices inside a lane are ordered (start asc, end desc)
// so an enclosing slice always begins before the slices it contains.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "exporters/perfetto_writer.h"
#include "model/trace.h"

namespace overlapscope::exporters {

// Debian's Abseil has its own string_view type: bridge std::string_view into absl calls.
inline absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// True when `s` contains "nccl" in any letter case (the exporter's comm-kernel rule).
bool ContainsNccl(std::string_view s);

// Where a slice's data lives: the model vector it indexes, or the layout's own extras.
enum class Src : uint8_t { kKernel, kMemcpy, kMemset, kApi, kSync, kRange, kGpuRange, kExtra };
inline constexpr int kSrcCount = 8;

struct Item {
  int64_t start_ns = 0, end_ns = 0;
  int32_t index = 0;  // into the model vector named by src, or Layout::extras
  Src src = Src::kExtra;
};

// A writer-made event (analysis slices, instants): its name, category and args.
struct ExtraArg {
  std::string key;
  std::variant<int64_t, double, std::string> value;
};
struct ExtraEvent {
  std::string name;
  std::string category = "overlapscope";
  std::vector<ExtraArg> args;
};

struct TrackSpec {
  enum class Kind : uint8_t { kProcess, kThread, kPlain, kCounter };
  Kind kind = Kind::kPlain;
  uint64_t uuid = 0;
  uint64_t parent_uuid = 0;  // 0: none (processes and threads attach by pid)
  std::string name;
  std::string description;
  int64_t pid = 0, tid = 0;
  int32_t sibling_rank = 0;
  bool explicit_child_order = false;  // children sorted by their sibling_rank (GPU groups)
  std::string counter_unit;           // counters only
  bool counter_time_ns = false;       // counters only: values are ns (CounterDescriptor.unit)
  std::vector<Item> slices;           // after AssignLanes: nested or disjoint, ordered (start, -end)
  std::vector<Item> instants;
  std::vector<std::pair<int64_t, double>> counter_values;  // (ts_ns, value), sorted by ts
};

struct Layout {
  std::vector<TrackSpec> tracks;  // index == ordinal; uuid == ordinal + 1; parents first
  std::vector<ExtraEvent> extras;
  // Final track ordinal of every model item, per Src (filled by Finish()).
  std::array<std::vector<int32_t>, kSrcCount> track_of;
  int64_t lane_tracks = 0;  // child tracks created for partially overlapping slices
  // Track ordinals of the model's entities (kNone where absent), for analysis tracks.
  std::vector<int32_t> process_track, thread_track, device_group, stream_track;
  // Flow arrows between two extra slices (indexes into extras), with their start times (which
  // end the flow starts from; see perfetto_flows.h).
  struct ExtraLink {
    int32_t from = 0, to = 0;
    int64_t from_start_ns = 0, to_start_ns = 0;
  };
  std::vector<ExtraLink> extra_links;

  int32_t AddTrack(TrackSpec t);
  int32_t AddExtra(ExtraEvent e) {
    extras.push_back(std::move(e));
    return static_cast<int32_t>(extras.size() - 1);
  }
  // Splits every track's slices into lanes and fills track_of. Call once, after all slices
  // were added.
  void Finish(const model::Trace& trace);
};

// Role suffix of every stream (indexed by StreamId): "nccl" when most of its busy time is
// communication (kernels carrying a collective or named *nccl*, copies carrying a collective),
// "copy" when it ran only copies (and memsets), "compute" when it ran kernels, "" when it ran
// nothing.
std::vector<std::string> StreamRoles(const model::Trace& trace);

// Splits slices into lanes (see header comment). Each returned lane is ordered (start, -end).
std::vector<std::vector<Item>> AssignLanes(std::vector<Item> slices);

// Adds the analysis tracks (perfetto_analysis.cc): per device "exposed communication",
// "iterations" with an "overlap %" counter and "idle gaps"; per thread "blocked on GPU"; per
// process "findings" instants. Call after BuildModelLayout and before Finish().
}  // namespace overlapscope::exporters
namespace overlapscope::analyze {
struct AnalysisResult;
struct DeviceOverlap;
struct IdleGap;
struct CrossRankResult;
struct BlockedInterval;
struct Finding;
struct CriticalPathResult;
}  // namespace overlapscope::analyze
namespace overlapscope::exporters {

// The parts of an analysis (of the same trace) that the analysis tracks draw.
struct DrawnAnalysis {
  absl::Span<const analyze::DeviceOverlap> overlap;      // exposed communication, iterations
  absl::Span<const analyze::IdleGap> gaps;               // idle gaps
  const analyze::CrossRankResult* cross_rank = nullptr;  // waiting for peers (may be null)
  absl::Span<const analyze::BlockedInterval> blocked;    // blocked on GPU
  absl::Span<const analyze::Finding> findings;           // findings
  // Critical path (may be null): drawn when the analysis kept its segments.
  const analyze::CriticalPathResult* critical_path = nullptr;
  static DrawnAnalysis Of(const analyze::AnalysisResult& r);
};
void AddAnalysisTracks(const model::Trace& trace, const DrawnAnalysis& analysis, Layout* layout);
// Adds the "critical path" tracks (perfetto_critical_path.cc): a top-level track with every
// iteration's path, a "critical path" child of each thread and stream track it crosses, and an
// arrow wherever the path moves from one thread or stream to another. Needs the analysis to have
// kept its path segments (analyze::AnalyzeOptions::keep_path_segments); draws nothing otherwise.
// Called by AddAnalysisTracks.
void AddCriticalPathTracks(const model::Trace& trace, const analyze::CriticalPathResult& path, Layout* layout);

// Appends one TrackDescriptor packet per track (parents first) to `out`, each stamped with
// `ts` and `sequence_id`; returns the number of packets (perfetto_descriptors.cc).
int64_t AppendTrackDescriptors(const Layout& layout, uint64_t ts, uint32_t sequence_id, std::string* out);

// Encodes a finished layout (Finish() called with `trace`, whose items its slices index) into
// `sink` (perfetto_writer.cc; the overview trace encodes a layout of extras over an empty trace).
absl::StatusOr<PerfettoStats> EncodeLayout(const model::Trace& trace, const Layout& layout, const ByteSink& sink);
// Creates `path` and writes into it what `encode` sends to its sink; errors name the path.
absl::Status WriteFile(const std::string& path,
                       const std::function<absl::StatusOr<PerfettoStats>(const ByteSink&)>& encode,
                       PerfettoStats* stats);

// Builds the model part of the layout (processes, threads, GPUs, streams); the caller may add
// analysis tracks before calling Finish(). `only_process` != kNone: that process's tracks only
// (the others' events get no track and are not written).
Layout BuildModelLayout(const model::Trace& trace, model::ProcessId only_process = model::kNone);

}  // namespace overlapscope::exporters
