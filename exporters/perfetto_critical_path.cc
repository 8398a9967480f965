// The "critical path" tracks of the .pftrace (docs/perfetto.md): every iteration's critical path
// (analyze/critical_path.h) on one top-level track, the same slices on a "critical path" child of
// each thread and stream they lie on, and an arrow wherever the path moves to another lane.
#include <string>

#include "absl/strings/str_cat.h"
#include "analyze/critical_path.h"
#include "exporters/perfetto_layout.h"

namespace overlapscope::exporters {
namespace {

using model::kNone;

// How the track names the categories (analyze::ToString gives the JSON keys).
constexpr const char* kCategoryNames[] = {
    "compute", "comm",           "memory", "host", "host (no op)", "host blocked", "GPU waits for host",
    "GPU gap", "waits for peers"};

bool OnGpuLane(const analyze::PathSegment& s) { return !analyze::IsHostCategory(s.category); }

std::string Lane(const model::Trace& t, const analyze::PathSegment& s) {
  if (OnGpuLane(s))
    return s.stream == kNone ? std::string("?") : absl::StrCat("stream ", t.streams()[s.stream].native_id);
  return s.thread == kNone ? std::string("?") : absl::StrCat("thread ", t.threads()[s.thread].tid);
}

ExtraEvent EventOf(const model::Trace& t, const analyze::PathSegment& s, int64_t iteration) {
  const char* cat = kCategoryNames[static_cast<int>(s.category)];
  ExtraEvent ev{s.name ? absl::StrCat(cat, ": ", AV(t.str(s.name))) : std::string(cat), "overlapscope", {}};
  ev.args.push_back({"category", std::string(cat)});
  ev.args.push_back({"duration_ns", s.end_ns - s.start_ns});
  ev.args.push_back({"lane", Lane(t, s)});
  if (s.process != kNone) {
    const model::Process& p = t.processes()[s.process];
    ev.args.push_back({"rank", p.rank != kNone ? absl::StrCat("rank ", p.rank) : absl::StrCat("pid ", p.pid)});
  }
  if (iteration >= 0) ev.args.push_back({"iteration", iteration});
  return ev;
}

}  // namespace

void AddCriticalPathTracks(const model::Trace& t, const analyze::CriticalPathResult& path, Layout* L) {
  int32_t top = kNone;
  std::vector<int32_t> by_thread(t.threads().size(), kNone), by_stream(t.streams().size(), kNone);
  auto child = [&](std::vector<int32_t>& slot, int32_t id, const std::vector<int32_t>& parents) -> int32_t {
    if (id == kNone || static_cast<size_t>(id) >= parents.size() || parents[id] == kNone) return kNone;
    if (slot[id] == kNone) {
      TrackSpec ts;
      ts.parent_uuid = L->tracks[parents[id]].uuid;
      ts.name = "critical path";
      ts.sibling_rank = -50;
      ts.description = "the stretches of the critical path that lie on this thread or stream";
      slot[id] = L->AddTrack(std::move(ts));
    }
    return slot[id];
  };
  for (const analyze::IterationPath& ip : path.iterations) {
    if (ip.segments.empty()) continue;
    if (top == kNone) {
      TrackSpec ts;
      ts.name = "critical path";
      ts.description =
          "each iteration's critical path across ranks (METRICS.md §8): what every moment of the step waited for";
      top = L->AddTrack(std::move(ts));
    }
    int32_t prev = kNone;  // the previous lane slice (extras index), its lane and start
    int64_t prev_start = 0;
    std::string prev_lane;
    for (const analyze::PathSegment& s : ip.segments) {
      const int32_t g = L->AddExtra(EventOf(t, s, ip.number));
      L->tracks[top].slices.push_back(Item{s.start_ns, s.end_ns, g, Src::kExtra});
      const int32_t lane_track =
          OnGpuLane(s) ? child(by_stream, s.stream, L->stream_track) : child(by_thread, s.thread, L->thread_track);
      if (lane_track == kNone) continue;
      const int32_t x = L->AddExtra(EventOf(t, s, ip.number));
      L->tracks[lane_track].slices.push_back(Item{s.start_ns, s.end_ns, x, Src::kExtra});
      std::string lane = Lane(t, s);
      if (s.process != kNone) lane += absl::StrCat("@", s.process);
      if (prev != kNone && lane != prev_lane) L->extra_links.push_back({prev, x, prev_start, s.start_ns});
      prev = x, prev_start = s.start_ns, prev_lane = std::move(lane);
    }
  }
}

}  // namespace overlapscope::exporters
