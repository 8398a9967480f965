// Findings (METRICS.md §5): each kind of finding is one rule, in one file, behind this
// interface. A new finding is one new file analyze/findings/rule_<NN>_<name>.cc defining
//
//   namespace overlapscope::analyze::findings {
//   const FindingRule& rule_<NN>_<name>();   // returns a static instance
//   }
//
// The build lists every rule_*.cc file and registers them in file-name order, which is the
// order of the kinds in every report (analyze/CMakeLists.txt generates the registry); NN leaves
// room between rules (10, 20, ...). A rule reads the trace and the analyses that ran before the
// findings (FindingInputs) and emits findings; nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/cpu_blocking.h"
#include "analyze/graph/graph.h"
#include "analyze/iterations.h"
#include "analyze/overlap.h"
#include "analyze/sync_points.h"
#include "model/trace.h"

namespace overlapscope::analyze::findings {

// What rules read: the trace, the analyses that ran before the findings, and a few joins of them.
struct FindingInputs {
  const model::Trace& t;
  const IterationAssignment& iters;
  const BlockingResult& blocking;
  const std::vector<DeviceOverlap>& overlap;
  // Per thread: indexes of API calls that enqueued GPU work, by start.
  const std::vector<std::vector<int32_t>>& launches_by_thread;
  // Per stream: summed compute-class GPU time.
  const std::vector<int64_t>& stream_compute_ns;
  // The sync points found so far: point i is blocked interval i (SyncPointOfBlocked), for every
  // i < blocking.intervals.size(); its kind says what the interval waited for.
  const std::vector<SyncPoint>& points;
  // Per thread: indexes of its blocked intervals, by start.
  std::vector<std::vector<int32_t>> blocked_by_thread;
  // AnalyzeOptions::mark_message_times: At() writes a marker instead (kTimeMarker).
  bool mark_times = false;
  // The dependency graph (analyze/graph), when built before the findings; rules that read its
  // edges find nothing without it.
  const graph::Graph* graph = nullptr;
  // Threads a rule may use for its own work (AnalyzeOptions::threads); its findings must not
  // depend on the count.
  int threads = 1;

  // End of an iteration's CPU range (INT64_MAX for kNone: outside iterations).
  int64_t IterationEnd(int32_t iteration) const;
  // Message pieces: "+1.234 ms" after the trace start, "12.3 µs", "thread 42", "stream 7".
  std::string At(int64_t ns) const;
  std::string Us(int64_t ns) const;
  std::string Thread(model::ThreadId th) const;
  std::string Stream(model::StreamId s) const;
};

// With mark_times, At(ns) writes kTimeMarker, the absolute ns, kTimeMarker: the per-rank
// reduction replaces it with "+X ms" after the job's start, which one rank does not know.
inline constexpr char kTimeMarker = '\x1f';
// The marker as JSON text writes it (a control character is escaped).
inline constexpr std::string_view kTimeMarkerJson = "\\u001f";

// Each marked time of `s` (`marker`, the absolute ns, `marker`) replaced by write(ns); the rest
// as it is. `marker`: kTimeMarker's one byte, or kTimeMarkerJson in JSON text.
std::string RewriteMarkedTimes(const std::string& s, std::string_view marker,
                               const std::function<std::string(int64_t)>& write);
// The marked times as At() writes them without marking: "+X ms" after `origin_ns`.
std::string UnmarkTimes(const std::string& s, int64_t origin_ns,
                        std::string_view marker = std::string_view(&kTimeMarker, 1));

// One finding, and the blocked interval it is about (its sync point carries the finding), if any.
struct Emitted {
  Finding finding;
  int32_t blocked_interval = model::kNone;  // index into BlockingResult::intervals
};

class FindingRule {
 public:
  virtual ~FindingRule() = default;
  // The kind, as reports print it ("pageable-async-copy"); also Finding::kind.
  virtual std::string_view kind() const = 0;
  virtual void Find(const FindingInputs& in, std::vector<Emitted>* out) const = 0;
};

// Every registered rule, in report order (generated: see the header comment).
const std::vector<const FindingRule*>& Rules();

// The sync point of a blocked host interval: its span, kind, where it waited, the call, and the
// host time it blocked. The one place that maps BlockedInterval's fields (sync_points.cc);
// findings about a blocked interval start from its point (FindingOfBlocked).
SyncPoint SyncPointOfBlocked(const model::Trace& t, const BlockedInterval& b);

// A finding about blocked host interval `interval` (an index into in.blocking.intervals), made
// from its sync point: when, where, which call, its iteration and its cost (the time the host
// was blocked). The rule adds the message and the advice.
Finding FindingOfBlocked(std::string_view kind, const FindingInputs& in, int32_t interval);

// A finding about collective `co`: when, where, its launch call and thread, its iteration and its
// cost (its exposed time, own − hidden, less the exposed part of its wait for a late peer where
// the arrivals are known: CollectiveOverlap::exposed_wait_ns). The rule adds the message and the
// advice.
Finding FindingOfCollective(std::string_view kind, const FindingInputs& in, const CollectiveOverlap& co);
// The text a collective finding's message ends with when part of the collective's exposed time
// waited for a late peer ("; a further 1.2 ms exposed waiting for rank 3 ..."); "" otherwise.
std::string PeerWaitNote(const FindingInputs& in, const CollectiveOverlap& co);

// A collective on a stream that also runs at least 10% of its device's compute time
// (collective-on-compute-stream reports it; other collective rules leave it to that one).
bool OnComputeStream(const FindingInputs& in, const DeviceOverlap& dv, const CollectiveOverlap& co);
// Per stream: does it do a real share of its device's computation, at least a tenth of the
// compute time of the device's busiest stream.
std::vector<uint8_t> ComputeStreams(const FindingInputs& in);
// Summed compute-class GPU time of a device's streams.
int64_t DeviceComputeNs(const FindingInputs& in, model::DeviceId device);

// Every device's collectives in one sequence (device, then collective order), each given to
// `look` in ranges on in.threads threads, the findings joined in that order: one pass's findings
// at any thread count. `look` only reads `in` and appends to the vector it is given.
void ForEachCollective(
    const FindingInputs& in, std::vector<Emitted>* out,
    const std::function<void(const DeviceOverlap&, const CollectiveOverlap&, std::vector<Emitted>*)>& look);

// The call belongs to the HIP runtime (model/api_names.h): advice then names HIP's calls.
bool IsHipCall(const model::Trace& t, model::StringId call);

}  // namespace overlapscope::analyze::findings
