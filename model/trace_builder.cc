#include "model/trace_builder.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "base/parallel_sort.h"
#include "base/phase_log.h"
#include "base/run_all.h"
#include "base/run_task_graph.h"
#include "model/gpu_by_corr.h"

namespace overlapscope::model {

ProcessId TraceBuilder::AddProcess(const Process& p) {
  d_.processes.push_back(p);
  return static_cast<ProcessId>(d_.processes.size() - 1);
}

ThreadId TraceBuilder::GetOrAddThread(ProcessId p, int64_t tid) {
  auto [it, inserted] = thread_ids_.try_emplace({p, tid}, static_cast<ThreadId>(d_.threads.size()));
  if (inserted) d_.threads.push_back(Thread{p, tid, 0});
  return it->second;
}

DeviceId TraceBuilder::GetOrAddDevice(ProcessId p, int32_t ordinal) {
  auto [it, inserted] = device_ids_.try_emplace({p, ordinal}, static_cast<DeviceId>(d_.devices.size()));
  if (inserted) d_.devices.push_back(Device{p, ordinal, 0});
  return it->second;
}

StreamId TraceBuilder::GetOrAddStream(DeviceId d, int64_t native_id) {
  auto [it, inserted] = stream_ids_.try_emplace({d, native_id}, static_cast<StreamId>(d_.streams.size()));
  if (inserted) d_.streams.push_back(Stream{d, native_id, 0});
  return it->second;
}

namespace {

bool InRange(int32_t id, size_t n, bool optional) {
  if (id == kNone) return optional;
  return id >= 0 && static_cast<size_t>(id) < n;
}

// Checks ids and time order of one event vector; `what` names the vector in the error.
template <typename T, typename Check>
absl::Status ValidateEvents(const std::vector<T>& v, const char* what, Check check) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].end_ns < v[i].start_ns)
      return absl::InvalidArgumentError(absl::StrCat(what, "[", i, "]: end_ns < start_ns"));
    if (!check(v[i])) return absl::InvalidArgumentError(absl::StrCat(what, "[", i, "]: id out of range"));
  }
  return absl::OkStatus();
}

// Sorting key: start, then end, then insertion order (stable) so output is deterministic.
// Importers deliver each file's events mostly in time order, so a multi-rank trace is a few
// sorted runs one after the other (one per file, or per host after a clock shift): those are
// merged (O(n log runs), stable: on ties the earlier run comes first); many runs fall back to
// stable_sort. One pass finds the runs; a sorted vector costs only that pass.
template <typename T>
void SortByTime(std::vector<T>& v, int threads) {
  auto less = [](const T& a, const T& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  };
  constexpr size_t kMaxRuns = 64;
  std::vector<size_t> bounds = {0};
  for (size_t i = 1; i < v.size() && bounds.size() <= kMaxRuns; ++i)
    if (less(v[i], v[i - 1])) bounds.push_back(i);
  if (bounds.size() == 1) return;
  constexpr size_t kChunk = size_t{1} << 14;
  if (bounds.size() > kMaxRuns) {
    // Sort 24-byte keys (start, end, position: stable by construction, and unique, so the
    // parallel sort gives std::sort's order), then move each event once: far fewer bytes moved
    // than a stable_sort of the events themselves.
    struct Key {
      int64_t start, end;
      size_t pos;
    };
    std::vector<Key> keys(v.size());
    for (size_t i = 0; i < v.size(); ++i) keys[i] = {v[i].start_ns, v[i].end_ns, i};
    base::ParallelSort(
        threads, keys,
        [](const Key& a, const Key& b) {
          return a.start != b.start ? a.start < b.start : a.end != b.end ? a.end < b.end : a.pos < b.pos;
        },
        kChunk);
    std::vector<T> sorted(v.size());
    base::ParallelFor(threads, v.size(), kChunk, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) sorted[i] = std::move(v[keys[i].pos]);
    });
    v = std::move(sorted);
    return;
  }
  // Neighbouring runs merged pairwise until one is left (each merge in pieces at once: the
  // bytes of one std::merge, stable).
  bounds.push_back(v.size());
  base::ParallelMergeRuns(threads, v, std::move(bounds), less, kChunk);
}

}  // namespace

absl::Status TraceBuilder::Validate(int threads) const {
  const size_t np = d_.processes.size(), nt = d_.threads.size(), nd = d_.devices.size(), ns = d_.streams.size(),
               nc = d_.collectives.size();
  for (const auto& t : d_.threads)
    if (!InRange(t.process, np, false)) return absl::InvalidArgumentError("thread without process");
  for (const auto& dev : d_.devices)
    if (!InRange(dev.process, np, false)) return absl::InvalidArgumentError("device without process");
  for (const auto& s : d_.streams)
    if (!InRange(s.device, nd, false)) return absl::InvalidArgumentError("stream without device");
  auto gpu_ok = [&](const auto& e) {
    return InRange(e.device, nd, false) && InRange(e.stream, ns, false) && d_.streams[e.stream].device == e.device;
  };
  // One check per event vector, at once; the first failure in this order is the error, as
  // when they run one after the other.
  absl::Status st[7];
  base::RunAll(threads, {[&] {
                           st[0] = ValidateEvents(d_.kernels, "kernels", [&](const Kernel& k) {
                             return gpu_ok(k) && InRange(k.collective, nc, true);
                           });
                         },
                         [&] {
                           st[1] = ValidateEvents(d_.memcpys, "memcpys", [&](const Memcpy& m) {
                             return gpu_ok(m) && InRange(m.collective, nc, true) && InRange(m.dst_device, nd, true);
                           });
                         },
                         [&] { st[2] = ValidateEvents(d_.memsets, "memsets", gpu_ok); },
                         [&] { st[3] = ValidateEvents(d_.gpu_ranges, "gpu_ranges", gpu_ok); },
                         [&] {
                           st[4] = ValidateEvents(d_.api_calls, "api_calls", [&](const ApiCall& a) {
                             return InRange(a.thread, nt, false) && InRange(a.name, d_.strings.size(), false);
                           });
                         },
                         [&] {
                           st[5] = ValidateEvents(d_.ranges, "ranges",
                                                  [&](const Range& r) { return InRange(r.thread, nt, false); });
                         },
                         [&] {
                           st[6] = ValidateEvents(d_.syncs, "syncs", [&](const Sync& y) {
                             return InRange(y.thread, nt, true) && InRange(y.device, nd, true) &&
                                    InRange(y.stream, ns, true) && InRange(y.wait_on_stream, ns, true);
                           });
                         }});
  for (const absl::Status& s : st)
    if (!s.ok()) return s;
  for (const auto& c : d_.collectives)
    if (!InRange(c.process, np, true) || !InRange(c.device, nd, true) || !InRange(c.stream, ns, true))
      return absl::InvalidArgumentError("collective id out of range");
  for (const auto& w : d_.windows)
    if (!InRange(w.process, np, false) || w.end_ns < w.start_ns)
      return absl::InvalidArgumentError("capture window: process out of range or end_ns < start_ns");
  return absl::OkStatus();
}

// Collective spans from their carriers (kernels, copy-engine memcpys), and the stream, device
// and process of a collective that has none from its first carrier in time order: the carrier
// with the smallest (start, end, kind, index), as the per-collective activity list orders them.
void TraceBuilder::DeriveCollectiveSpans() {
  const size_t nc = d_.collectives.size();
  std::vector<int64_t> cstart(nc, INT64_MAX), cend(nc, INT64_MIN);
  std::vector<std::tuple<int64_t, int64_t, int, size_t>> first(nc, {INT64_MAX, INT64_MAX, 2, 0});
  std::vector<StreamId> first_stream(nc, kNone);
  auto visit = [&](const auto& v, int kind) {
    for (size_t i = 0; i < v.size(); ++i) {
      const auto& e = v[i];
      if (e.collective == kNone) continue;
      const size_t c = static_cast<size_t>(e.collective);
      cstart[c] = std::min(cstart[c], e.start_ns);
      cend[c] = std::max(cend[c], e.end_ns);
      const auto key = std::make_tuple(e.start_ns, e.end_ns, kind, i);
      if (first_stream[c] == kNone || key < first[c]) {
        first[c] = key;
        first_stream[c] = e.stream;
      }
    }
  };
  visit(d_.kernels, 0);
  visit(d_.memcpys, 1);
  for (size_t c = 0; c < nc; ++c) {
    Collective& col = d_.collectives[c];
    if (cstart[c] == INT64_MAX) continue;
    col.start_ns = cstart[c];
    col.end_ns = cend[c];
    if (col.stream == kNone) col.stream = first_stream[c];
    if (col.device == kNone) col.device = d_.streams[first_stream[c]].device;
    if (col.process == kNone) col.process = d_.devices[col.device].process;
  }
}

// Shifts every event of the processes the callback names, in place, before the sort: one
// linear pass, where a shifted copy of a finalized trace would cost a second Finalize().
absl::Status TraceBuilder::ApplyClockShift(const ClockShiftFn& fn) {
  Trace view;
  view.d_.strings = std::move(d_.strings);
  view.d_.processes = d_.processes;
  view.d_.threads = d_.threads;
  view.d_.devices = d_.devices;
  view.d_.streams = d_.streams;
  view.d_.collectives = d_.collectives;
  auto by_start = [](const Collective& a, const Collective& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(view.d_.collectives.begin(), view.d_.collectives.end(), by_start))
    std::stable_sort(view.d_.collectives.begin(), view.d_.collectives.end(), by_start);
  absl::StatusOr<ClockShift> shift = fn(view);
  d_.strings = std::move(view.d_.strings);
  if (!shift.ok()) return shift.status();
  const std::vector<int64_t>& off = shift->process_offset_ns;
  if (!off.empty() && off.size() != d_.processes.size())
    return absl::InvalidArgumentError(
        absl::StrCat("clock shift for ", off.size(), " processes, trace has ", d_.processes.size()));
  if (!shift->note.empty()) absl::StrAppend(&d_.clock_note, d_.clock_note.empty() ? "" : "; ", shift->note);
  if (std::all_of(off.begin(), off.end(), [](int64_t o) { return o == 0; })) return absl::OkStatus();
  auto of_device = [&](DeviceId d) { return d == kNone ? 0 : off[d_.devices[d].process]; };
  auto of_thread = [&](ThreadId t) { return t == kNone ? 0 : off[d_.threads[t].process]; };
  auto shift_all = [](auto& v, auto offset_of) {
    for (auto& e : v) {
      const int64_t o = offset_of(e);
      e.start_ns += o;
      e.end_ns += o;
    }
  };
  auto by_device = [&](const auto& e) { return of_device(e.device); };
  auto by_thread = [&](const auto& e) { return of_thread(e.thread); };
  shift_all(d_.kernels, by_device);
  shift_all(d_.memcpys, by_device);
  shift_all(d_.memsets, by_device);
  shift_all(d_.gpu_ranges, by_device);
  shift_all(d_.api_calls, by_thread);
  shift_all(d_.ranges, by_thread);
  shift_all(d_.syncs, [&](const Sync& y) { return y.device != kNone ? of_device(y.device) : of_thread(y.thread); });
  shift_all(d_.collectives,
            [&](const Collective& c) { return c.process != kNone ? off[c.process] : of_device(c.device); });
  shift_all(d_.windows, [&](const CaptureWindow& w) { return off[w.process]; });
  for (size_t p = 0; p < d_.processes.size(); ++p) d_.processes[p].clock_offset_ns += off[p];
  DeriveCollectiveSpans();  // spans of collectives with carriers follow their (shifted) carriers
  return absl::OkStatus();
}

// Collectives sorted by start (stable); the carriers' collective ids are remapped.
// One vocabulary for CUDA and HIP calls: the semantic kind of each distinct name, once.
void TraceBuilder::ClassifyApiCalls(TraceData& d) {
  std::vector<int8_t> semantic_of(d.strings.size(), -1);
  for (ApiCall& a : d.api_calls) {
    int8_t& s = semantic_of[a.name];
    if (s < 0) s = static_cast<int8_t>(ClassifyApiCall(d.strings.Get(a.name)));
    a.semantic = static_cast<ApiSemantic>(s);
  }
}

void TraceBuilder::SortCollectives(TraceData& d) {
  const size_t nc = d.collectives.size();
  std::vector<int32_t> order(nc);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return d.collectives[a].start_ns < d.collectives[b].start_ns; });
  std::vector<int32_t> new_id(nc);
  std::vector<Collective> sorted(nc);
  for (size_t i = 0; i < nc; ++i) {
    new_id[order[i]] = static_cast<int32_t>(i);
    sorted[i] = d.collectives[order[i]];
  }
  d.collectives = std::move(sorted);
  for (auto& k : d.kernels)
    if (k.collective != kNone) k.collective = new_id[k.collective];
  for (auto& m : d.memcpys)
    if (m.collective != kNone) m.collective = new_id[m.collective];
}

absl::StatusOr<Trace> TraceBuilder::Finalize(const FinalizeOptions& options) && {
  const int threads = options.threads;
  {
    base::PhaseSpan s_("validate");
    if (absl::Status s = Validate(threads); !s.ok()) return s;
  }
  base::PhaseSpan d_s("derive, shift, sorts");
  DeriveCollectiveSpans();
  if (options.clock_shift)
    if (absl::Status s = ApplyClockShift(options.clock_shift); !s.ok()) return s;
  for (size_t c = 0; c < d_.collectives.size(); ++c)
    if (d_.collectives[c].end_ns < d_.collectives[c].start_ns)
      return absl::InvalidArgumentError(absl::StrCat("collectives[", c, "]: end_ns < start_ns"));
  // The data moved into the trace, then sorted and indexed there as a graph of tasks
  // (base::RunTaskGraph): each vector sorted on its own, each index started once the vectors it
  // reads are sorted (the API calls' correlation index beside the kernels' sort, the activity
  // lists beside the collectives' sort). Each task writes only its own vector or members of t,
  // so the trace is the same at any thread count. The activities' collective ids are rewritten
  // by the collectives' sort while the merge by time, the stream and device lists, the
  // correlation keys and the launch joins read other members of the same activities (start,
  // end, stream, device, correlation id): distinct objects, no task reads what it writes.
  Trace t;
  t.d_ = std::move(d_);
  TraceData& d = t.d_;
  std::vector<GpuRef> all;
  enum : size_t { kKernels, kApi, kMemcpys, kMemsets, kSyncs, kRanges, kGpuRanges, kWindows, kApiIndex };
  enum : size_t { kCollectives = kApiIndex + 1, kGpuRefs, kLists, kByCorr, kCollLists, kLaunches, kTimeSpan };
  std::vector<base::GraphTask> tasks(kTimeSpan + 1);
  tasks[kKernels].run = [&] {
    base::PhaseSpan s_("sort kernels");
    SortByTime(d.kernels, threads);
  };
  tasks[kApi].run = [&] {
    base::PhaseSpan s_("sort api, classify");
    SortByTime(d.api_calls, threads), ClassifyApiCalls(d);
  };
  tasks[kMemcpys].run = [&] { SortByTime(d.memcpys, threads); };
  tasks[kMemsets].run = [&] { SortByTime(d.memsets, threads); };
  tasks[kSyncs].run = [&] { SortByTime(d.syncs, threads); };
  tasks[kRanges].run = [&] { SortByTime(d.ranges, threads); };
  tasks[kGpuRanges].run = [&] { SortByTime(d.gpu_ranges, threads); };
  tasks[kWindows].run = [&] {
    std::stable_sort(d.windows.begin(), d.windows.end(), [](const CaptureWindow& a, const CaptureWindow& b) {
      return a.process != b.process ? a.process < b.process : a.start_ns < b.start_ns;
    });
  };
  tasks[kApiIndex] = {{kApi}, [&] {
                        base::PhaseSpan s_("corr index");
                        BuildApiIndex(t, threads);
                      }};
  tasks[kCollectives] = {{kKernels, kMemcpys}, [&] {
                           base::PhaseSpan s_("sort collectives");
                           SortCollectives(d);
                         }};
  tasks[kGpuRefs] = {{kKernels, kMemcpys, kMemsets}, [&] {
                       base::PhaseSpan s_("gpu refs");
                       all = GpuRefsByTime(t);
                     }};
  tasks[kLists] = {{kGpuRefs}, [&] {
                     base::PhaseSpan s_("gpu lists");
                     BuildStreamDeviceLists(t, all, threads);
                   }};
  tasks[kByCorr] = {{kGpuRefs}, [&] {
                      base::PhaseSpan s_("gpu by corr");
                      BuildGpuByCorrelationIndex(t, all, threads, &t.gpu_by_corr_keys_, &t.gpu_by_corr_refs_);
                    }};
  tasks[kCollLists] = {{kGpuRefs, kCollectives}, [&] { BuildCollectiveLists(t, all); }};
  tasks[kLaunches] = {{kApiIndex, kKernels, kMemcpys, kMemsets}, [&] {
                        base::PhaseSpan s_("launch joins");
                        BuildLaunchJoins(t, threads);
                      }};
  tasks[kTimeSpan] = {{kKernels, kApi, kMemcpys, kMemsets, kSyncs, kRanges, kGpuRanges}, [&] {
                        base::PhaseSpan s_("time span");
                        ComputeTimeSpan(t, threads);
                      }};
  base::RunTaskGraph(threads, tasks);
  return t;
}

}  // namespace overlapscope::model
