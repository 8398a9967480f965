#include "exporters/perfetto_layout.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace overlapscope::exporters {
namespace {

using model::kNone;

// Synthetic pids for GPU groups and for host processes whose OS pid is ambiguous (two ranks
// with the same pid on different hosts, or none). Linux pids stay below 2^22, so these never
// collide with a real one.
constexpr int64_t kSyntheticPidBase = int64_t{1} << 28;

}  // namespace

bool ContainsNccl(std::string_view s) {
  for (size_t i = 0; i + 4 <= s.size(); ++i)
    if ((s[i] | 0x20) == 'n' && (s[i + 1] | 0x20) == 'c' && (s[i + 2] | 0x20) == 'c' && (s[i + 3] | 0x20) == 'l')
      return true;
  return false;
}

int32_t Layout::AddTrack(TrackSpec t) {
  t.uuid = tracks.size() + 1;
  tracks.push_back(std::move(t));
  return static_cast<int32_t>(tracks.size() - 1);
}

std::vector<std::string> StreamRoles(const model::Trace& trace) {
  // One pass over the activities (per-stream lookups would touch them in random order).
  struct Acc {
    int64_t comm_ns = 0, busy_ns = 0, kernels = 0, comm_kernels = 0, copies = 0;
  };
  std::vector<Acc> acc(trace.streams().size());
  std::vector<int8_t> nccl(trace.strings().size(), -1);  // per kernel name, computed once
  for (const model::Kernel& k : trace.kernels()) {
    Acc& a = acc[k.stream];
    if (nccl[k.name] < 0) nccl[k.name] = ContainsNccl(trace.str(k.name)) ? 1 : 0;
    const bool comm = k.collective != kNone || nccl[k.name] == 1;
    a.busy_ns += k.end_ns - k.start_ns;
    ++a.kernels;
    if (comm) a.comm_ns += k.end_ns - k.start_ns, ++a.comm_kernels;
  }
  for (const model::Memcpy& m : trace.memcpys()) {
    Acc& a = acc[m.stream];
    a.busy_ns += m.end_ns - m.start_ns;
    ++a.copies;
    if (m.collective != kNone) a.comm_ns += m.end_ns - m.start_ns;
  }
  for (const model::Memset& m : trace.memsets()) acc[m.stream].busy_ns += m.end_ns - m.start_ns;
  std::vector<std::string> roles(acc.size());
  for (size_t s = 0; s < acc.size(); ++s) {
    const Acc& a = acc[s];
    if (a.comm_ns > 0 && 2 * a.comm_ns > a.busy_ns) roles[s] = "nccl";
    // Only zero-length activities: decide by count instead of time.
    else if (a.busy_ns == 0 && a.kernels > 0 && 2 * a.comm_kernels > a.kernels)
      roles[s] = "nccl";
    else if (a.kernels == 0 && a.copies > 0)
      roles[s] = "copy";
    else if (a.kernels > 0)
      roles[s] = "compute";
  }
  return roles;
}

std::vector<std::vector<Item>> AssignLanes(std::vector<Item> slices) {
  auto before = [](const Item& a, const Item& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;
  };
  // Tracks are filled source by source, each already in time order: merge the few sorted runs
  // instead of sorting everything; many runs (equal starts in model order) fall back to a sort.
  std::vector<size_t> runs = {0};
  for (size_t i = 1; i < slices.size() && runs.size() <= 16; ++i)
    if (before(slices[i], slices[i - 1])) runs.push_back(i);
  if (runs.size() > 16) {
    std::stable_sort(slices.begin(), slices.end(), before);
  } else {
    runs.push_back(slices.size());
    while (runs.size() > 2) {
      std::vector<size_t> merged = {0};
      for (size_t r = 0; r + 2 < runs.size(); r += 2) {
        std::inplace_merge(slices.begin() + runs[r], slices.begin() + runs[r + 1], slices.begin() + runs[r + 2],
                           before);
        merged.push_back(runs[r + 2]);
      }
      if (runs.size() % 2 == 0) merged.push_back(runs.back());  // odd run count: last run as is
      runs = std::move(merged);
    }
  }
  // Lane of every slice; the common single-lane case keeps the vector as it is.
  std::vector<uint32_t> lane_of(slices.size(), 0);
  std::vector<std::vector<int64_t>> open_ends(1);  // per lane: ends of the open (enclosing) slices
  for (size_t i = 0; i < slices.size(); ++i) {
    const Item& it = slices[i];
    size_t lane = 0;
    for (; lane < open_ends.size(); ++lane) {
      auto& stack = open_ends[lane];
      // A slice that ends at or before this start is closed (END is written before BEGIN).
      while (!stack.empty() && stack.back() <= it.start_ns) stack.pop_back();
      if (stack.empty() || stack.back() >= it.end_ns) break;  // disjoint or nested: fits
    }
    if (lane == open_ends.size()) open_ends.emplace_back();
    open_ends[lane].push_back(it.end_ns);
    lane_of[i] = static_cast<uint32_t>(lane);
  }
  std::vector<std::vector<Item>> lanes(open_ends.size());
  if (lanes.size() == 1) {
    lanes[0] = std::move(slices);
    return lanes;
  }
  for (size_t i = 0; i < slices.size(); ++i) lanes[lane_of[i]].push_back(slices[i]);
  return lanes;
}

void Layout::Finish(const model::Trace& trace) {
  const size_t logical = tracks.size();
  for (size_t i = 0; i < logical; ++i) {
    if (tracks[i].slices.empty()) continue;
    auto lanes = AssignLanes(std::move(tracks[i].slices));
    tracks[i].slices = std::move(lanes[0]);
    for (size_t k = 1; k < lanes.size(); ++k) {
      TrackSpec child;
      child.kind = TrackSpec::Kind::kPlain;
      child.parent_uuid = tracks[i].uuid;
      child.name = absl::StrCat(tracks[i].name, " · lane ", k);
      child.description = "slices that partially overlap slices of the parent track";
      child.sibling_rank = static_cast<int32_t>(k);
      child.slices = std::move(lanes[k]);
      AddTrack(std::move(child));
      ++lane_tracks;
    }
  }
  const size_t sizes[kSrcCount] = {trace.kernels().size(),    trace.memcpys().size(), trace.memsets().size(),
                                   trace.api_calls().size(),  trace.syncs().size(),   trace.ranges().size(),
                                   trace.gpu_ranges().size(), extras.size()};
  for (int s = 0; s < kSrcCount; ++s) track_of[s].assign(sizes[s], kNone);
  for (size_t t = 0; t < tracks.size(); ++t) {
    for (const Item& it : tracks[t].slices) track_of[static_cast<int>(it.src)][it.index] = static_cast<int32_t>(t);
    for (const Item& it : tracks[t].instants) track_of[static_cast<int>(it.src)][it.index] = static_cast<int32_t>(t);
  }
}

namespace {

// Track of every model entity (kNone: not written, or not made yet), filled as tracks are added.
struct Slots {
  std::vector<int32_t> thread, stream, waits, device_group, device_syncs;
  int32_t orphan_syncs = kNone;  // syncs without a device or thread (rare): one global track
};

// "stream 7 · nccl", plus the stream's own name when it says more than "stream 7".
std::string StreamTrackName(const model::Trace& trace, const model::Stream& st, const std::string& role) {
  std::string name = absl::StrCat("stream ", st.native_id);
  if (!role.empty()) absl::StrAppend(&name, " · ", role);
  // Kineto names streams "stream 7 ": only a name that says more is appended.
  std::string_view given = trace.str(st.name);
  while (!given.empty() && given.back() == ' ') given.remove_suffix(1);
  if (!given.empty() && given != absl::StrCat("stream ", st.native_id)) absl::StrAppend(&name, " · ", AV(given));
  return name;
}

// One GPU: a group (a process of its own in the viewer, synthetic pid) with one child per stream,
// in stream id order.
void AddDeviceTracks(const model::Trace& trace, int32_t d, const std::string& rank,
                     const std::vector<std::string>& roles, int64_t* next_synthetic, Layout* L, Slots* slots) {
  const model::Device& dev = trace.devices()[d];
  TrackSpec gt;
  gt.kind = TrackSpec::Kind::kProcess;
  gt.pid = (*next_synthetic)++;
  gt.explicit_child_order = true;  // analysis tracks first, then syncs, then streams by id
  gt.name = absl::StrCat("GPU ", dev.ordinal);
  if (!trace.str(dev.name).empty()) absl::StrAppend(&gt.name, " — ", AV(trace.str(dev.name)));
  if (!rank.empty()) absl::StrAppend(&gt.name, " · ", rank);
  const uint64_t group_uuid = L->tracks.size() + 1;
  slots->device_group[d] = L->AddTrack(std::move(gt));
  std::vector<int32_t> streams;
  for (size_t s = 0; s < trace.streams().size(); ++s)
    if (trace.streams()[s].device == d) streams.push_back(static_cast<int32_t>(s));
  std::stable_sort(streams.begin(), streams.end(),
                   [&](int32_t a, int32_t b) { return trace.streams()[a].native_id < trace.streams()[b].native_id; });
  int32_t rank_in_group = 0;
  for (int32_t s : streams) {
    TrackSpec sp;
    sp.parent_uuid = group_uuid;
    sp.name = StreamTrackName(trace, trace.streams()[s], roles[s]);
    sp.sibling_rank = rank_in_group++;
    slots->stream[s] = L->AddTrack(std::move(sp));
  }
}

// One process: its track (named by rank, name and host), one per thread by tid, and its GPUs by
// ordinal.
void AddProcessTracks(const model::Trace& trace, int32_t p, int64_t pid, bool real_pid,
                      const std::vector<std::string>& roles, int64_t* next_synthetic, Layout* L, Slots* slots) {
  const model::Process& pr = trace.processes()[p];
  const std::string rank = pr.rank >= 0 ? absl::StrCat("rank ", pr.rank) : "";
  std::string pname = std::string(trace.str(pr.name));
  if (pname.empty()) pname = "process";
  if (!trace.str(pr.host).empty()) absl::StrAppend(&pname, " @ ", AV(trace.str(pr.host)));
  TrackSpec pt;
  pt.kind = TrackSpec::Kind::kProcess;
  pt.pid = pid;
  pt.name = rank.empty() ? pname : absl::StrCat(rank, " · ", pname);
  if (!real_pid && pr.pid >= 0) pt.description = absl::StrCat("OS pid ", pr.pid);
  L->process_track[p] = L->AddTrack(std::move(pt));

  std::vector<int32_t> threads;
  for (size_t t = 0; t < trace.threads().size(); ++t)
    if (trace.threads()[t].process == p) threads.push_back(static_cast<int32_t>(t));
  std::stable_sort(threads.begin(), threads.end(),
                   [&](int32_t a, int32_t b) { return trace.threads()[a].tid < trace.threads()[b].tid; });
  for (int32_t t : threads) {
    const model::Thread& th = trace.threads()[t];
    TrackSpec tt;
    tt.kind = TrackSpec::Kind::kThread;
    tt.pid = pid;
    tt.tid = th.tid;
    tt.name = trace.str(th.name).empty() ? absl::StrCat("thread ", th.tid) : std::string(trace.str(th.name));
    slots->thread[t] = L->AddTrack(std::move(tt));
  }

  std::vector<int32_t> devices;
  for (size_t d = 0; d < trace.devices().size(); ++d)
    if (trace.devices()[d].process == p) devices.push_back(static_cast<int32_t>(d));
  std::stable_sort(devices.begin(), devices.end(),
                   [&](int32_t a, int32_t b) { return trace.devices()[a].ordinal < trace.devices()[b].ordinal; });
  for (int32_t d : devices) AddDeviceTracks(trace, d, rank, roles, next_synthetic, L, slots);
}

// The track of sync i, made on first use (a stream's "waits" child, a GPU's "synchronizations"
// child, the global orphan track), or kNone when its process is not written.
int32_t SyncTrack(const model::Trace& trace, const model::Sync& y, model::ProcessId only_process, Layout* L,
                  Slots* slots) {
  auto lazy_child = [&](std::vector<int32_t>& slot, int32_t id, uint64_t parent, std::string name, int32_t rank) {
    if (slot[id] == kNone) {
      TrackSpec t;
      t.parent_uuid = parent;
      t.name = std::move(name);
      t.sibling_rank = rank;
      slot[id] = L->AddTrack(std::move(t));
    }
    return slot[id];
  };
  if (y.kind == model::SyncKind::kStreamWaitEvent && y.stream != kNone) {
    const int32_t st = slots->stream[y.stream];
    if (st == kNone) return kNone;
    return lazy_child(slots->waits, y.stream, L->tracks[st].uuid, L->tracks[st].name + " · waits", 1000);
  }
  if (y.device != kNone) {
    if (slots->device_group[y.device] == kNone) return kNone;
    return lazy_child(slots->device_syncs, y.device, L->tracks[slots->device_group[y.device]].uuid, "synchronizations",
                      -1);
  }
  if (y.thread != kNone) return slots->thread[y.thread];
  if (only_process != kNone) return kNone;  // belongs to no process
  if (slots->orphan_syncs == kNone) {
    TrackSpec t;
    t.name = "synchronizations (no device)";
    slots->orphan_syncs = L->AddTrack(std::move(t));
  }
  return slots->orphan_syncs;
}

// Every event of the written processes as a slice of its track.
void FillSlices(const model::Trace& trace, model::ProcessId only_process, Layout* L, Slots* slots) {
  const std::vector<int32_t>& thread_track = slots->thread;
  const std::vector<int32_t>& stream_track = slots->stream;
  // Reserve each track's slices up front: the vectors get large (10^6) and regrowing them
  // costs more than this counting pass.
  {
    std::vector<size_t> n(L->tracks.size() + 1, 0);  // n[0]: items of processes not written
    for (const auto& a : trace.api_calls()) ++n[thread_track[a.thread] + 1];
    for (const auto& r : trace.ranges()) ++n[thread_track[r.thread] + 1];
    for (const auto& k : trace.kernels()) ++n[stream_track[k.stream] + 1];
    for (const auto& m : trace.memcpys()) ++n[stream_track[m.stream] + 1];
    for (const auto& m : trace.memsets()) ++n[stream_track[m.stream] + 1];
    for (const auto& g : trace.gpu_ranges()) ++n[stream_track[g.stream] + 1];
    for (size_t i = 0; i < L->tracks.size(); ++i) L->tracks[i].slices.reserve(n[i + 1]);
  }
  auto push = [&](int32_t track, int64_t s, int64_t e, size_t index, Src src) {
    if (track == kNone) return;  // a process that is not written
    L->tracks[track].slices.push_back(Item{s, e, static_cast<int32_t>(index), src});
  };
  auto push_all = [&](const auto& events, const std::vector<int32_t>& track_of, auto owner, Src src) {
    for (size_t i = 0; i < events.size(); ++i)
      push(track_of[owner(events[i])], events[i].start_ns, events[i].end_ns, i, src);
  };
  auto on_thread = [](const auto& e) { return e.thread; };
  auto on_stream = [](const auto& e) { return e.stream; };
  push_all(trace.api_calls(), thread_track, on_thread, Src::kApi);
  push_all(trace.ranges(), thread_track, on_thread, Src::kRange);
  push_all(trace.kernels(), stream_track, on_stream, Src::kKernel);
  push_all(trace.memcpys(), stream_track, on_stream, Src::kMemcpy);
  push_all(trace.memsets(), stream_track, on_stream, Src::kMemset);
  push_all(trace.gpu_ranges(), stream_track, on_stream, Src::kGpuRange);
  for (size_t i = 0; i < trace.syncs().size(); ++i) {
    const model::Sync& y = trace.syncs()[i];
    push(SyncTrack(trace, y, only_process, L, slots), y.start_ns, y.end_ns, i, Src::kSync);
  }
}

}  // namespace

Layout BuildModelLayout(const model::Trace& trace, model::ProcessId only_process) {
  Layout L;
  const auto& procs = trace.processes();
  std::vector<int32_t> order(procs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const int64_t ra = procs[a].rank < 0 ? INT32_MAX : procs[a].rank;
    const int64_t rb = procs[b].rank < 0 ? INT32_MAX : procs[b].rank;
    return ra < rb;
  });
  absl::flat_hash_map<int64_t, int> pid_count;
  for (const auto& p : procs) ++pid_count[p.pid];
  int64_t next_synthetic = kSyntheticPidBase;
  L.process_track.assign(procs.size(), kNone);
  Slots slots;
  slots.thread.assign(trace.threads().size(), kNone);
  slots.stream.assign(trace.streams().size(), kNone);
  slots.waits.assign(trace.streams().size(), kNone);
  slots.device_group.assign(trace.devices().size(), kNone);
  slots.device_syncs.assign(trace.devices().size(), kNone);

  const std::vector<std::string> roles = StreamRoles(trace);
  for (int32_t p : order) {
    if (only_process != kNone && p != only_process) continue;  // its tracks stay kNone: not written
    const model::Process& pr = procs[p];
    const bool real_pid = pr.pid > 0 && pr.pid < (int64_t{1} << 22) && pid_count[pr.pid] == 1;
    const int64_t pid = real_pid ? pr.pid : next_synthetic++;
    AddProcessTracks(trace, p, pid, real_pid, roles, &next_synthetic, &L, &slots);
  }
  L.thread_track = slots.thread;
  L.device_group = slots.device_group;
  L.stream_track = slots.stream;
  FillSlices(trace, only_process, &L, &slots);
  return L;
}

}  // namespace overlapscope::exporters
