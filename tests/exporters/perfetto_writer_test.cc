// .pftrace writer: decoded with our own decoder (pftrace_decoder.h), which replays BEGIN/END
// the way trace_processor does; expectations are worked out by hand in synthetic_trace.cc.
#include "exporters/perfetto_writer.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "gtest/gtest.h"
#include "model/trace_builder.h"
#include "pftrace_decoder.h"
#include "synthetic_trace.h"

namespace overlapscope::exporters {
namespace {

using testing::DecodePftrace;
using testing::PfSlice;
using testing::PfTrace;
using testing::PfTrack;

PfTrace Decode(const model::Trace& t, const analyze::AnalysisResult* a = nullptr, PerfettoStats* st = nullptr) {
  auto bytes = EncodePerfettoToString(t, a, st);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  auto d = DecodePftrace(*bytes);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : PfTrace{};
}

const PfTrack* TrackNamed(const PfTrace& d, const std::string& name) {
  for (const auto& [uuid, t] : d.tracks)
    if (t.name == name) return &t;
  return nullptr;
}

const PfSlice* SliceNamed(const PfTrace& d, const std::string& name) {
  const PfSlice* found = nullptr;
  for (const auto& s : d.slices)
    if (s.name == name) {
      EXPECT_EQ(found, nullptr) << "two slices named " << name;
      found = &s;
    }
  return found;
}

TEST(PerfettoWriter, TracksAreNamedAndParented) {
  const model::Trace t = testing::MakeSmallTrace();
  PerfettoStats st;
  const PfTrace d = Decode(t, nullptr, &st);
  const PfTrack* proc = TrackNamed(d, "rank 0 · python @ node1");
  ASSERT_NE(proc, nullptr);
  EXPECT_EQ(proc->kind, PfTrack::kProcess);
  EXPECT_EQ(proc->pid, 100);
  const PfTrack* thread = TrackNamed(d, "python main");
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ(thread->kind, PfTrack::kThread);
  EXPECT_EQ(thread->pid, 100);
  EXPECT_EQ(thread->tid, 100);
  const PfTrack* gpu = TrackNamed(d, "GPU 0 — NVIDIA H100 · rank 0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->kind, PfTrack::kProcess);
  EXPECT_NE(gpu->pid, 100);
  for (const char* name : {"stream 7 · compute", "stream 13 · nccl", "stream 20 · copy", "synchronizations"}) {
    const PfTrack* s = TrackNamed(d, name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(s->parent, gpu->uuid) << name;
  }
  const PfTrack* waits = TrackNamed(d, "stream 13 · nccl · waits");
  ASSERT_NE(waits, nullptr);
  EXPECT_EQ(waits->parent, TrackNamed(d, "stream 13 · nccl")->uuid);
  // Lanes: "aten::mm" partially overlaps "step" on the thread, "gemm" partially overlaps
  // "gemm_range" on stream 7.
  const PfTrack* lane = TrackNamed(d, "python main · lane 1");
  ASSERT_NE(lane, nullptr);
  EXPECT_EQ(lane->parent, thread->uuid);
  const PfTrack* gpu_lane = TrackNamed(d, "stream 7 · compute · lane 1");
  ASSERT_NE(gpu_lane, nullptr);
  EXPECT_EQ(gpu_lane->parent, TrackNamed(d, "stream 7 · compute")->uuid);
  // process, thread, thread lane, GPU group, 3 streams, stream-7 lane, waits, synchronizations.
  EXPECT_EQ(d.tracks.size(), 10u);
  EXPECT_EQ(st.tracks, 10);
  EXPECT_EQ(st.lane_tracks, 2);
}

TEST(PerfettoWriter, SlicesReplayToTheModelTimes) {
  const model::Trace t = testing::MakeSmallTrace();
  const PfTrace d = Decode(t);
  // 2 ranges + 7 API calls + 3 kernels + 1 memcpy + 2 GPU ranges + 2 syncs.
  ASSERT_EQ(d.slices.size(), 17u);
  std::multiset<std::tuple<std::string, uint64_t, uint64_t>> got, want;
  for (const auto& s : d.slices) got.insert({s.name, s.ts, s.dur});
  auto add = [&](const auto& v) {
    for (const auto& e : v) want.insert({std::string(t.str(e.name)), e.start_ns, e.end_ns - e.start_ns});
  };
  add(t.ranges());
  add(t.api_calls());
  add(t.kernels());
  add(t.memcpys());
  add(t.gpu_ranges());
  add(t.syncs());
  EXPECT_EQ(got, want);

  const uint64_t thread = TrackNamed(d, "python main")->uuid;
  const uint64_t lane = TrackNamed(d, "python main · lane 1")->uuid;
  EXPECT_EQ(SliceNamed(d, "step")->track, thread);
  EXPECT_EQ(SliceNamed(d, "aten::mm")->track, lane);
  EXPECT_EQ(SliceNamed(d, "aten::mm")->depth, 0);
  // c1 [1100,1200) is nested in "step"; c2 [1300,1400) and c3 [1400,1450) touch: both depth 0.
  for (const auto& s : d.slices) {
    if (s.name == "cudaLaunchKernel" && s.ts == 1100) {
      EXPECT_EQ(s.depth, 1);
    }
    if (s.name == "cudaLaunchKernel" && s.ts == 1300) {
      EXPECT_EQ(s.depth, 0);
    }
    if (s.name == "cudaMemcpyAsync") {
      EXPECT_EQ(s.depth, 0);
      EXPECT_EQ(s.track, thread);
    }
  }
  const PfSlice* empty = SliceNamed(d, "empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->ts, 3000u);
  EXPECT_EQ(empty->dur, 0u);
  EXPECT_EQ(empty->depth, 0);  // after "gemm_range" ended at 2000, not inside it
  EXPECT_EQ(empty->track, TrackNamed(d, "stream 7 · compute")->uuid);
  EXPECT_EQ(SliceNamed(d, "gemm")->track, TrackNamed(d, "stream 7 · compute · lane 1")->uuid);
  EXPECT_EQ(SliceNamed(d, "ncclDevKernel_AllGather")->depth, 1);  // inside "nccl:all_gather"
  EXPECT_EQ(SliceNamed(d, "Stream Wait Event")->track, TrackNamed(d, "stream 13 · nccl · waits")->uuid);
  EXPECT_EQ(SliceNamed(d, "Stream Sync")->track, TrackNamed(d, "synchronizations")->uuid);
}

TEST(PerfettoWriter, FlowsLinkCallsToTheirGpuWork) {
  const model::Trace t = testing::MakeSmallTrace();
  PerfettoStats st;
  const PfTrace d = Decode(t, nullptr, &st);
  std::map<uint64_t, std::vector<const PfSlice*>> begins, ends;
  for (const auto& s : d.slices) {
    for (uint64_t f : s.flows) begins[f].push_back(&s);
    for (uint64_t f : s.terminating_flows) ends[f].push_back(&s);
  }
  EXPECT_EQ(st.flows, 7);
  ASSERT_EQ(begins.size(), 7u);
  ASSERT_EQ(ends.size(), 7u);
  std::set<std::pair<std::string, std::string>> links;
  for (const auto& [id, b] : begins) {
    ASSERT_EQ(b.size(), 1u) << "flow " << id;
    ASSERT_EQ(ends[id].size(), 1u) << "flow " << id;
    EXPECT_LE(b[0]->ts, ends[id][0]->ts) << "flow " << id << " starts after it ends";
    links.insert({b[0]->name, ends[id][0]->name});
  }
  const std::set<std::pair<std::string, std::string>> want = {
      {"cudaLaunchKernel", "gemm"},
      {"cudaLaunchKernel", "ncclDevKernel_AllGather"},
      {"cudaLaunchKernel", "empty"},
      {"cudaMemcpyAsync", "Memcpy DtoH (Device -> Pinned)"},
      {"cudaStreamWaitEvent", "Stream Wait Event"},
      {"cudaStreamSynchronize", "Stream Sync"},
      // The wait record (1475) comes before the kernel it waits for ("empty", enqueued by c4
      // before record c5, runs at 3000): the flow starts at the earlier slice.
      {"Stream Wait Event", "empty"},
  };
  EXPECT_EQ(links, want);
}

TEST(PerfettoWriter, ArgsAreDebugAnnotations) {
  const model::Trace t = testing::MakeSmallTrace();
  const PfTrace d = Decode(t);
  const PfSlice* gemm = SliceNamed(d, "gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->category, "kernel");
  EXPECT_EQ(gemm->args.at("correlation"), "1");
  EXPECT_EQ(gemm->args.at("grid"), "[24, 1, 1]");
  EXPECT_EQ(gemm->args.at("block"), "[544, 1, 1]");
  EXPECT_EQ(gemm->args.at("class"), "compute");
  const PfSlice* nccl = SliceNamed(d, "ncclDevKernel_AllGather");
  EXPECT_EQ(nccl->args.at("class"), "comm");
  EXPECT_EQ(nccl->args.at("collective"), "allgather");
  EXPECT_EQ(nccl->args.at("dtype"), "Half");
  EXPECT_EQ(nccl->args.at("bytes"), "32");
  EXPECT_EQ(nccl->args.at("out elements"), "16");
  EXPECT_EQ(nccl->args.at("nccl algorithm"), "RING");
  EXPECT_EQ(nccl->args.at("nccl protocol"), "SIMPLE");
  EXPECT_EQ(nccl->args.at("nccl channels"), "2");
  EXPECT_EQ(nccl->args.at("channel span ns"), "2300");
  EXPECT_EQ(nccl->args.at("root or peer"), "1");
  EXPECT_EQ(nccl->args.at("reduce op"), "sum");
  const PfSlice* copy = SliceNamed(d, "Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(copy->category, "gpu_memcpy");
  EXPECT_EQ(copy->args.at("bytes"), "4096");
  EXPECT_EQ(copy->args.at("copy kind"), "DtoH");
  const PfSlice* wait = SliceNamed(d, "Stream Wait Event");
  EXPECT_EQ(wait->args.at("wait on stream"), "7");
  EXPECT_EQ(wait->args.at("event record correlation"), "5");
  EXPECT_EQ(SliceNamed(d, "aten::mm")->category, "cpu_op");
  EXPECT_EQ(SliceNamed(d, "step")->category, "user_annotation");
}

TEST(PerfettoWriter, NamesAreInternedOnce) {
  // 2 ranks x 50 steps x 8 launches: "cudaLaunchKernel" is used 800 times and must be stored
  // once; the decoder already rejects a reference before its definition.
  const model::Trace t = testing::MakeStepsTrace(2, 50, 8, 1'700'000'000'000'000'000);
  auto bytes = EncodePerfettoToString(t, nullptr);
  ASSERT_TRUE(bytes.ok());
  size_t count = 0;
  for (size_t pos = bytes->find("cudaLaunchKernel"); pos != std::string::npos;
       pos = bytes->find("cudaLaunchKernel", pos + 1))
    ++count;
  EXPECT_EQ(count, 1u);
  auto d = DecodePftrace(*bytes);
  ASSERT_TRUE(d.ok()) << d.status();
  int64_t launches = 0;
  for (const auto& s : d->slices) launches += s.name == "cudaLaunchKernel";
  EXPECT_EQ(launches, 800);
  // Exact ns survive at 1.7e18 (beyond double precision).
  const auto& k0 = t.kernels()[0];
  bool found = false;
  for (const auto& s : d->slices)
    if (s.ts == static_cast<uint64_t>(k0.start_ns) && s.dur == static_cast<uint64_t>(k0.end_ns - k0.start_ns))
      found = true;
  EXPECT_TRUE(found);
}

// Random intervals on one thread and one stream, many partial overlaps and equal timestamps:
// after replay every slice keeps its exact times and no two slices of a track partially overlap.
TEST(PerfettoWriter, RandomOverlapsNeverRenest) {
  std::mt19937_64 rng(7);
  model::TraceBuilder b;
  model::Process pr;
  pr.pid = 5;
  const auto p = b.AddProcess(pr);
  const auto th = b.GetOrAddThread(p, 5);
  const auto dev = b.GetOrAddDevice(p, 0);
  const auto s = b.GetOrAddStream(dev, 7);
  for (int i = 0; i < 400; ++i) {
    const int64_t start = static_cast<int64_t>(rng() % 50) * 10;  // many equal starts
    const int64_t len = static_cast<int64_t>(rng() % 6) * 10;     // zero lengths included
    model::Range r;
    r.thread = th;
    r.name = b.Intern(absl::StrCat("r", i));
    r.start_ns = start;
    r.end_ns = start + len;
    b.data().ranges.push_back(r);
    model::Kernel k;
    k.device = dev;
    k.stream = s;
    k.name = b.Intern(absl::StrCat("k", i));
    k.start_ns = start + 5;
    k.end_ns = start + 5 + len;
    b.data().kernels.push_back(k);
  }
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok());
  const PfTrace d = Decode(*t);
  ASSERT_EQ(d.slices.size(), 800u);
  std::map<std::string, std::pair<uint64_t, uint64_t>> want;
  for (const auto& r : t->ranges()) want[std::string(t->str(r.name))] = {r.start_ns, r.end_ns - r.start_ns};
  for (const auto& k : t->kernels()) want[std::string(t->str(k.name))] = {k.start_ns, k.end_ns - k.start_ns};
  std::map<uint64_t, std::vector<const PfSlice*>> by_track;
  for (const auto& sl : d.slices) {
    EXPECT_EQ(want.at(sl.name), std::make_pair(sl.ts, sl.dur)) << sl.name;
    by_track[sl.track].push_back(&sl);
  }
  for (const auto& [track, v] : by_track)
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = i + 1; j < v.size(); ++j) {
        const uint64_t a0 = v[i]->ts, a1 = a0 + v[i]->dur, b0 = v[j]->ts, b1 = b0 + v[j]->dur;
        const bool disjoint = a1 <= b0 || b1 <= a0;
        const bool nested = (a0 <= b0 && b1 <= a1) || (b0 <= a0 && a1 <= b1);
        EXPECT_TRUE(disjoint || nested) << v[i]->name << " and " << v[j]->name << " partially overlap";
      }
}

TEST(PerfettoWriter, NegativeTimesAreShifted) {
  model::TraceBuilder b;
  model::Process pr;
  pr.pid = 5;
  const auto p = b.AddProcess(pr);
  const auto th = b.GetOrAddThread(p, 5);
  model::Range r;
  r.thread = th;
  r.name = b.Intern("early");
  r.start_ns = -300;
  r.end_ns = -100;
  b.data().ranges.push_back(r);
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok());
  PerfettoStats st;
  const PfTrace d = Decode(*t, nullptr, &st);
  EXPECT_EQ(st.time_shift_ns, 300);
  ASSERT_EQ(d.slices.size(), 1u);
  EXPECT_EQ(d.slices[0].ts, 0u);
  EXPECT_EQ(d.slices[0].dur, 200u);
}

TEST(PerfettoWriter, UnwritablePathNamesThePath) {
  const model::Trace t = testing::MakeSmallTrace();
  absl::Status s = WritePerfetto(t, nullptr, "/nonexistent-dir/x.pftrace");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/x.pftrace"), std::string::npos);
}

}  // namespace
}  // namespace overlapscope::exporters

namespace overlapscope::exporters {
namespace {

TEST(PerfettoWriter, EmptyTraceIsValid) {
  auto t = model::TraceBuilder().Finalize();
  ASSERT_TRUE(t.ok());
  PerfettoStats st;
  auto bytes = EncodePerfettoToString(*t, nullptr, &st);
  ASSERT_TRUE(bytes.ok());
  auto d = testing::DecodePftrace(*bytes);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->slices.size(), 0u);
  EXPECT_EQ(d->packets, 1);  // the incremental-state packet alone
  EXPECT_EQ(st.slices, 0);
}

}  // namespace
}  // namespace overlapscope::exporters
