// The evidence rule for cross-stream waits the trace does not link (METRICS §8 "inferred
// edges"). torch.profiler's defaults record cudaEventRecord / cudaStreamWaitEvent (and HIP's and
// the driver's twins) as runtime calls without the event or the stream.
//
// For a GPU activity X on stream S with stream predecessor P:
//  - evidence: X's launching thread issued a stream-wait call (ApiSemantic::kStreamWait, not
//    linked to a recorded wait) after P's launch call started and before X's started. A
//    collective's own wait (PyTorch's work.wait()) is such a call too;
//  - bound: max(GraphInputs::infer_min_bound_ns, L(S)), L(S) the launch latency of S
//    (Graph::LaunchLatencyNs): the median of (start - launch call start) over S's activities
//    launched at or after their predecessor's end (nothing but the launch held them), the
//    stream's first activity excluded (what ran before it may be unrecorded);
//  - ready = max(P.end, X's launch call start + L(S)): when X could have started without the wait;
//  - candidates: per other stream of X's device, the last activity Y that ended at or before
//    X.start, kept when Y.end >= ready and X.start - Y.end <= bound. (An earlier activity of the
//    same stream ends earlier: the stream's last one dominates, so streams, not activities, are
//    counted.)
//  - the call order: the activity enqueued by the waiting thread's last launch onto another
//    stream of the device before the stream-wait call (PyTorch enqueues the collective, records
//    its end event on its stream, then makes the issuing stream wait), kept when it ended by
//    X.start;
//  - one candidate: edge Y -> X, inferred. Several: the call order's source when it is one of
//    them (counted waits_inferred_by_order), else ambiguous, not taken. None: the call order's
//    source (a real edge that did not bind: the collective was done before X could start;
//    counted waits_inferred_by_order), else unresolved when
//    X was delayed (X.start - ready > bound), else not delayed (the wait did not hold X back and
//    there is nothing to place).
// An activity that a recorded wait already targets is left alone, and stream-wait calls that a
// recorded wait names are no evidence: inferred edges never duplicate recorded ones.
#include <algorithm>
#include <climits>
#include <functional>
#include <utility>
#include <vector>

#include "analyze/graph/graph_builder.h"
#include "base/phase_log.h"
#include "base/run_all.h"

namespace overlapscope::analyze::graph {

using model::kNone;

namespace {

// FindAll's ranges per thread: enough that the costly neighbourhoods spread over the threads.
constexpr size_t kRangesPerThread = 8;

int64_t Median(std::vector<int64_t>& v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Launch latency of every stream (graph.h LaunchLatencyNs), from its activities after the first.
// Activities that waited for another stream (`waited`: a recorded wait or evidence of one) are
// left out: their start - launch holds the wait (a compiled program's compute stream waits for
// every all_to_all: with them the median was 178 us and hid the waits it should bound). A stream
// with no other sample takes the median of its device's other streams' samples.
std::vector<int64_t> StreamLatencies(const Graph& g, const model::Trace& t, const std::vector<int32_t>& launch,
                                     const std::vector<uint8_t>& waited) {
  const int32_t ns = static_cast<int32_t>(t.streams().size());
  std::vector<int64_t> out(ns, -1);
  std::vector<std::vector<int64_t>> by_dev(t.devices().size());
  std::vector<int64_t> v;
  for (int32_t s = 0; s < ns; ++s) {
    v.clear();
    for (NodeId n = g.StreamBegin(s); n < g.StreamEnd(s); ++n) {
      if (launch[n] == kNone || waited[n]) continue;
      const int64_t ls = t.api_calls()[launch[n]].start_ns;
      // The stream's first activity may sit behind work the trace did not record (a profiler's
      // warm-up backlog: the host ran milliseconds ahead): its delay says nothing of a launch.
      if (n == g.StreamBegin(s) || ls < g.EndNs(n - 1)) continue;  // else queued behind its predecessor
      if (g.StartNs(n) >= ls) v.push_back(g.StartNs(n) - ls);
    }
    const model::DeviceId d = t.streams()[s].device;
    if (d != kNone && static_cast<size_t>(d) < by_dev.size()) by_dev[d].insert(by_dev[d].end(), v.begin(), v.end());
    if (!v.empty()) out[s] = Median(v);
  }
  std::vector<int64_t> dev_median(by_dev.size(), 0);
  for (size_t d = 0; d < by_dev.size(); ++d)
    if (!by_dev[d].empty()) dev_median[d] = Median(by_dev[d]);
  for (int32_t s = 0; s < ns; ++s) {
    if (out[s] >= 0) continue;
    const model::DeviceId d = t.streams()[s].device;
    out[s] = d != kNone && static_cast<size_t>(d) < dev_median.size() ? dev_median[d] : 0;
  }
  return out;
}

}  // namespace

bool GraphBuilder::OneCpuOpEncloses(int32_t first, int32_t second) const {
  const model::ApiCall& a = t_.api_calls()[first];
  const model::ApiCall& b = t_.api_calls()[second];
  if (a.thread == kNone || static_cast<size_t>(a.thread) >= thread_ops_.size()) return false;
  const auto& ops = thread_ops_[a.thread];
  auto it = std::upper_bound(ops.begin(), ops.end(), std::pair<int64_t, int64_t>{a.start_ns, INT64_MAX});
  // Ops starting at or before `first`, latest first: the enclosing ones are among them, after
  // the siblings that ended before it (bounded: an op enclosing both has few children before).
  constexpr int kMaxOpsBack = 256;
  for (int k = 0; it != ops.begin() && k < kMaxOpsBack; ++k) {
    --it;
    if (it->second >= b.end_ns) return true;
  }
  return false;
}

bool GraphBuilder::HeldByLaterOnStream(NodeId y, NodeId x) const {
  const model::StreamId o = g_.Stream(y);
  const int64_t xs = g_.start_[x];
  // The last activity of y's stream starting before X did.
  const auto b = g_.start_.begin() + y + 1, e = g_.start_.begin() + g_.StreamEnd(o);
  const NodeId z = static_cast<NodeId>(std::lower_bound(b, e, xs) - g_.start_.begin()) - 1;
  return z > y && g_.end_[z] > xs;
}

NodeId GraphBuilder::SourceByCallOrder(NodeId x, int32_t call) const {
  if (call == kNone || call_node_.empty()) return kNone;
  const auto& calls = t_.api_calls();
  const model::ThreadId th = calls[call].thread;
  const model::StreamId s = g_.Stream(x);
  const model::DeviceId dev = t_.DeviceOfStream(s);
  // Bounded: the record and the wait follow the launch they cover within a few calls of the
  // thread (PyTorch's collectives: launch, record on the collective's stream, wait on the issuing
  // stream). Walked over the thread's own calls: how many calls of other threads (NCCL's, the
  // data loader's, other ranks' in a one-model job) interleave must not change the answer.
  constexpr int kMaxCallsBack = 64;
  if (th == kNone || static_cast<size_t>(th) >= thread_calls_.size()) return kNone;
  const std::vector<int32_t>& own = thread_calls_[th];
  const auto at = std::lower_bound(own.begin(), own.end(), call);
  for (auto it = at; it != own.begin() && at - it < kMaxCallsBack;) {
    const int32_t i = *--it;
    const NodeId y = call_node_[i];
    if (y == kNone || g_.Stream(y) == s) continue;
    if (t_.DeviceOfStream(g_.Stream(y)) != dev || g_.end_[y] > g_.start_[x]) return kNone;
    // The last launch before a wait need not be what the wait waits for (FSDP2 waits for an
    // all-gather issued long before, after launching a reduce-scatter): only a launch and a wait
    // inside one framework op are taken as a pair; or where X started while a later activity of
    // y's stream was running: y's stream had moved on, and X was kept out by that activity (a
    // GEMM holding every SM keeps an NCCL kernel waiting after its source ended), which no
    // timing can name.
    return HeldByLaterOnStream(y, x) || OneCpuOpEncloses(i, call) ? y : kNone;
  }
  return kNone;
}

GraphBuilder::Placement GraphBuilder::FindPlacement(NodeId x, int32_t call) const {
  const model::StreamId s = g_.Stream(x);
  const model::DeviceId dev = t_.DeviceOfStream(s);
  const int64_t bound = std::max(in_.infer_min_bound_ns, g_.latency_[s]);
  const int64_t xs = g_.start_[x];
  int64_t ready = x > g_.StreamBegin(s) ? g_.end_[x - 1] : INT64_MIN;
  // X could not start before its launch call plus the stream's usual launch latency: a wait
  // whose source ended before that did not hold X back (the launch did). Less the GPU's own delay
  // from a wait's release to the waiter's start (a few us, measured 1-10 us on H100 against
  // recorded waits: tests/analyze/graph_own_capture_test.cc), which a source ending just before
  // the launch latency is up still costs.
  constexpr int64_t kReleaseNs = 10'000;
  if (launch_[x] != kNone)
    ready =
        std::max(ready, t_.api_calls()[launch_[x]].start_ns + g_.latency_[s] - std::min(g_.latency_[s], kReleaseNs));
  const NodeId by_order = SourceByCallOrder(x, call);
  NodeId only = kNone;
  int candidates = 0;
  bool order_is_candidate = false;
  for (model::StreamId o : dev_streams_[dev]) {
    if (o == s || g_.StreamBegin(o) == g_.StreamEnd(o)) continue;
    // The last activity of o starting before xs, then back over those still running at xs.
    const auto b = g_.start_.begin() + g_.StreamBegin(o), e = g_.start_.begin() + g_.StreamEnd(o);
    NodeId y = static_cast<NodeId>(std::lower_bound(b, e, xs) - g_.start_.begin()) - 1;
    for (int k = 0; y >= g_.StreamBegin(o) && k < 8 && g_.end_[y] > xs; ++k) --y;
    if (y < g_.StreamBegin(o) || g_.end_[y] > xs) continue;
    if (g_.end_[y] < ready || xs - g_.end_[y] > bound) continue;
    ++candidates;
    only = y;
    order_is_candidate |= y == by_order;
  }
  Placement p{only, candidates, false, ready == INT64_MIN || xs - ready > bound};
  // The timing alone decides where it names one source; the call order settles a tie between
  // several, and places a wait that held nothing back (the source ended before X could start:
  // the edge is real, it just did not bind).
  if (candidates > 1 && order_is_candidate) {
    p.only = by_order, p.candidates = 1, p.by_call_order = true;
  } else if (candidates == 0 && by_order != kNone) {
    // Also where X was delayed: the source ended before the bound, so something else (a slow
    // launch) held X; the edge is still what the program asked for.
    p.only = by_order, p.candidates = 1, p.by_call_order = true;
  }
  return p;
}

bool GraphBuilder::SearchInferredWaits() {
  const auto& calls = t_.api_calls();
  // Evidence: start times of stream-wait calls no recorded wait names, per thread (in call
  // order: calls are sorted by start), from the threads' stream-wait calls (BuildThreadCalls).
  std::vector<std::vector<int64_t>> waits(t_.threads().size());
  std::vector<std::vector<int32_t>> wait_call(t_.threads().size());
  bool any = false;
  for (size_t th = 0; th < thread_waits_.size(); ++th)
    for (const int32_t i : thread_waits_[th]) {
      if (recorded_call_[i]) continue;
      waits[th].push_back(calls[i].start_ns);
      wait_call[th].push_back(i);
      any = true;
    }
  if (!any) return false;
  // Per activity, the evidence of a wait: the last stream-wait call of its launching thread
  // between its stream predecessor's launch and its own (kNone: none). Found in ranges of
  // activities beside the indexes the placement reads.
  std::vector<int32_t> evidence(g_.num_gpu(), kNone);
  std::vector<uint8_t> waited(g_.num_gpu(), 0);
  auto find_evidence = [&](NodeId begin, NodeId end) {
    for (NodeId x = begin; x < end; ++x) {
      const model::StreamId s = g_.Stream(x);
      const NodeId p = x - 1;
      if (x == g_.StreamBegin(s) || t_.streams()[s].device == kNone) continue;
      if (launch_[x] == kNone || launch_[p] == kNone) continue;
      const model::ApiCall& lx = calls[launch_[x]];
      if (lx.thread == kNone || static_cast<size_t>(lx.thread) >= waits.size()) continue;
      const std::vector<int64_t>& w = waits[lx.thread];
      auto it = std::upper_bound(w.begin(), w.end(), calls[launch_[p]].start_ns);
      if (it == w.end() || *it >= lx.start_ns) continue;  // no evidence
      evidence[x] = wait_call[lx.thread][(std::lower_bound(it, w.end(), lx.start_ns) - w.begin()) - 1];
      waited[x] = 1;
    }
  };
  const int parts = std::max(1, std::min(in_.threads, g_.num_gpu() / std::max(1, in_.min_chunk)));
  std::vector<std::function<void()>> tasks = {[&] { BuildInferIndexes(); }, [&] { BuildThreadOps(); }};
  for (int k = 0; k < parts; ++k) {
    const NodeId n = g_.num_gpu();
    tasks.emplace_back([&, k, n] {
      find_evidence(static_cast<NodeId>(int64_t{n} * k / parts), static_cast<NodeId>(int64_t{n} * (k + 1) / parts));
    });
  }
  base::RunAll(in_.threads, tasks);
  g_.latency_ = StreamLatencies(g_, t_, launch_, waited);
  // The activities with evidence, in activity order, searched now (FindPlacement reads nothing
  // the recorded waits write); those a recorded wait targets are dropped when placed.
  evidence_wanted_.clear();
  for (NodeId x = 0; x < g_.num_gpu(); ++x)
    if (evidence[x] != kNone) evidence_wanted_.push_back({x, evidence[x], kNone});
  evidence_found_ = FindAll(evidence_wanted_);
  return true;
}

void GraphBuilder::PlaceInferredWaits(bool searched) {
  if (!in_.infer_waits) {
    for (const SourcelessWait& w : sourceless_) {
      if (recorded_wait_[w.to] & 2) continue;
      ++S(w.to).waits_unresolved;
      MarkUnresolved(w.to);
    }
    return;
  }
  if (!searched) {
    if (sourceless_.empty()) return;
    // No evidence anywhere, but recorded waits without their record: the latencies and indexes
    // the placement reads (the evidence search then finds none).
    SearchWithoutEvidence();
  }
  // Recorded waits without their record: the trace names the waiting activity, the source is
  // placed by the rule. Each wait placed (an activity may wait for several: torch.compile issues
  // two all_to_alls and then waits for each), none where a wait with its record already targets
  // the activity.
  std::stable_sort(sourceless_.begin(), sourceless_.end(),
                   [](const SourcelessWait& a, const SourcelessWait& b) { return a.to < b.to; });
  std::vector<Wanted> wanted;
  for (const SourcelessWait& w : sourceless_)
    if (!(recorded_wait_[w.to] & 2) && t_.DeviceOfStream(g_.Stream(w.to)) != kNone)
      wanted.push_back({w.to, w.call, w.sync});
  std::vector<Placement> found;
  {
    base::PhaseSpan s_("gi search");
    found = FindAll(wanted);
  }
  base::PhaseSpan s_("gi apply");
  ApplyPlacements(wanted, found, false);
  // Then the activities with evidence, in activity order.
  ApplyPlacements(evidence_wanted_, evidence_found_, true);
}

void GraphBuilder::SearchWithoutEvidence() {
  base::RunAll(in_.threads, {[&] { BuildInferIndexes(); }, [&] { BuildThreadOps(); }});
  g_.latency_ = StreamLatencies(g_, t_, launch_, std::vector<uint8_t>(g_.num_gpu(), 0));
}

std::vector<GraphBuilder::Placement> GraphBuilder::FindAll(const std::vector<Wanted>& wanted) const {
  // Searched in ranges at once (FindPlacement only reads; each range writes its own slots). A
  // search's cost varies by far (the call-order walk, the enclosing-op search) and neighbours
  // cost alike, so one range per thread left one thread with most of the work (the 500 MB bench
  // trace: 27 of 39 ms in one of two ranges): eight ranges per thread, each taken by the next
  // idle thread.
  std::vector<Placement> found(wanted.size());
  const size_t n = wanted.size(), threads = static_cast<size_t>(std::max(1, in_.threads));
  const size_t parts = std::max<size_t>(
      1, std::min(threads == 1 ? 1 : threads * kRangesPerThread, n / static_cast<size_t>(std::max(1, in_.min_chunk))));
  auto search = [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) found[i] = FindPlacement(wanted[i].to, wanted[i].call);
  };
  if (parts == 1) {
    search(0, n);
    return found;
  }
  std::vector<std::function<void()>> tasks;
  tasks.reserve(parts);
  for (size_t k = 0; k < parts; ++k)
    tasks.emplace_back([&search, k, n, parts] { search(n * k / parts, n * (k + 1) / parts); });
  base::RunAll(in_.threads, tasks);
  return found;
}

}  // namespace overlapscope::analyze::graph
