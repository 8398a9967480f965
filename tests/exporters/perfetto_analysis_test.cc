// Analysis tracks of the .pftrace: a hand-made AnalysisResult on the small trace (every number
// below is copied from the result built here), and the real analysis of a real trace.
#include <filesystem>

#include "analyze/analysis.h"
#include "exporters/perfetto_writer.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"
#include "pftrace_decoder.h"
#include "synthetic_trace.h"

namespace overlapscope::exporters {
namespace {

using testing::DecodePftrace;
using testing::PfTrace;
using testing::PfTrack;

const PfTrack* TrackNamed(const PfTrace& d, const std::string& name) {
  for (const auto& [uuid, t] : d.tracks)
    if (t.name == name) return &t;
  return nullptr;
}

TEST(PerfettoAnalysis, HandMadeResultIsDrawn) {
  const model::Trace t = testing::MakeSmallTrace();
  analyze::AnalysisResult a;
  analyze::DeviceOverlap d;
  d.device = 0;
  d.process = 0;
  d.exposed_comm = {{3000, 4000}};  // nccl kernel [1600,4000) minus compute gemm [1500,3000)
  analyze::IterationOverlap it0;
  it0.number = 7;
  it0.gpu_start_ns = 1500;
  it0.gpu_end_ns = 4000;
  it0.stats.comm_ns = 2400;
  it0.stats.hidden_comm_ns = 1400;
  it0.stats.exposed_comm_ns = 1000;
  it0.stats.overlap_ratio = 1400.0 / 2400.0;
  analyze::IterationOverlap it1 = it0;
  it1.number = 8;
  it1.gpu_start_ns = 4000;
  it1.gpu_end_ns = 4100;
  it1.stats = {};  // no communication: a slice but no counter sample
  d.iterations = {it0, it1};
  a.overlap.push_back(d);
  analyze::IdleGap g;
  g.device = 0;
  g.start_ns = 4100;
  g.end_ns = 9000;
  g.cause = analyze::GapCause::kLaunchBound;
  g.ended_by = {model::GpuKind::kKernel, 0};
  a.gaps.push_back(g);
  analyze::BlockedInterval b;
  b.start_ns = 4050;
  b.end_ns = 4200;
  b.process = 0;
  b.thread = 0;
  b.call = t.FindString("cudaStreamSynchronize");
  b.reason = analyze::BlockReason::kStreamSync;
  b.stream = t.syncs()[1].stream;
  a.blocking.intervals.push_back(b);
  analyze::Finding f;
  f.kind = "unsynchronized-d2h";
  f.time_ns = 1400;
  f.process = 0;
  f.thread = 0;
  f.message = "async D2H copy never synchronized";
  f.advice = "record an event after the copy and synchronize on it before reading";
  a.sync.findings.push_back(f);

  // Collective 0 on this rank arrived 250 ns before the last rank (rank 1) did.
  analyze::CollectiveInstance ci;
  ci.op = t.collectives()[0].op;
  ci.sequence = 0;
  ci.skew_ns = 250;
  ci.last_rank = 1;
  ci.ranks.push_back({0, 0, 1600, 4000, 250});
  ci.ranks.back().arrival_ns = 1450;  // its stream reached the collective 150 ns before its start
  a.cross_rank.instances.push_back(ci);

  PerfettoStats st;
  auto bytes = EncodePerfettoToString(t, &a, &st);
  ASSERT_TRUE(bytes.ok());
  auto dec = DecodePftrace(*bytes);
  ASSERT_TRUE(dec.ok()) << dec.status();
  const PfTrack* gpu = TrackNamed(*dec, "GPU 0 — NVIDIA H100 · rank 0");
  ASSERT_NE(gpu, nullptr);
  for (const char* name : {"exposed communication", "waiting for peers", "iterations", "overlap %", "idle gaps"}) {
    const PfTrack* tr = TrackNamed(*dec, name);
    ASSERT_NE(tr, nullptr) << name;
    EXPECT_EQ(tr->parent, gpu->uuid) << name;
  }
  EXPECT_EQ(TrackNamed(*dec, "overlap %")->kind, PfTrack::kCounter);
  EXPECT_EQ(TrackNamed(*dec, "blocked on GPU")->parent, TrackNamed(*dec, "python main")->uuid);
  EXPECT_EQ(TrackNamed(*dec, "findings")->parent, TrackNamed(*dec, "rank 0 · python @ node1")->uuid);

  std::map<std::string, const testing::PfSlice*> by_name;
  for (const auto& s : dec->slices) by_name[s.name] = &s;
  ASSERT_TRUE(by_name.count("exposed communication"));
  EXPECT_EQ(by_name["exposed communication"]->ts, 3000u);
  EXPECT_EQ(by_name["exposed communication"]->dur, 1000u);
  ASSERT_TRUE(by_name.count("waiting for rank 1"));
  EXPECT_EQ(by_name["waiting for rank 1"]->ts, 1450u);  // from its arrival, for its wait
  EXPECT_EQ(by_name["waiting for rank 1"]->dur, 250u);
  EXPECT_EQ(by_name["waiting for rank 1"]->args.at("collective"), "allgather");
  ASSERT_TRUE(by_name.count("step 7: 58.3% of comm hidden"));
  EXPECT_EQ(by_name["step 7: 58.3% of comm hidden"]->args.at("exposed_comm_ns"), "1000");
  ASSERT_TRUE(by_name.count("step 8: no communication"));
  ASSERT_TRUE(by_name.count("idle: launch-bound"));
  EXPECT_EQ(by_name["idle: launch-bound"]->dur, 4900u);
  EXPECT_EQ(by_name["idle: launch-bound"]->args.at("ended by"), "gemm");
  ASSERT_TRUE(by_name.count("blocked: cudaStreamSynchronize"));
  EXPECT_EQ(by_name["blocked: cudaStreamSynchronize"]->args.at("stream"), "20");
  ASSERT_TRUE(by_name.count("unsynchronized-d2h"));
  const auto* finding = by_name["unsynchronized-d2h"];
  EXPECT_EQ(finding->ts, 1400u);
  EXPECT_EQ(finding->args.at("change"), f.advice);
  EXPECT_EQ(st.instants, 1);
  // One counter sample: iteration 7 at 1500 with 100 * 1400 / 2400 = 58.33...
  int counters = 0;
  for (const auto& e : dec->events)
    if (e.type == 4) {
      ++counters;
      EXPECT_EQ(e.ts, 1500u);
      EXPECT_NEAR(e.counter, 58.3333, 1e-3);
    }
  EXPECT_EQ(counters, 1);
  EXPECT_EQ(st.counter_samples, 1);
}

TEST(PerfettoAnalysis, RealTraceAnalysisDecodes) {
  const std::string dir = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/ag_overlap";
  if (!std::filesystem::exists(dir + "/rank0.json.gz")) GTEST_SKIP() << "no trace in " << dir;
  auto t = import::ImportTraces({dir + "/rank0.json.gz", dir + "/rank1.json.gz"});
  ASSERT_TRUE(t.ok()) << t.status();
  auto a = analyze::AnalyzeAll(*t, analyze::AnalyzeOptions{});
  ASSERT_TRUE(a.ok()) << a.status();
  auto bytes = EncodePerfettoToString(*t, &*a);
  ASSERT_TRUE(bytes.ok());
  auto dec = DecodePftrace(*bytes);  // validates interning, nesting, ordering
  ASSERT_TRUE(dec.ok()) << dec.status();
  // Streams named by role; Kineto's own "stream 7 " names add nothing and are not repeated.
  EXPECT_NE(TrackNamed(*dec, "stream 7 · compute"), nullptr);
  EXPECT_NE(TrackNamed(*dec, "stream 17 · nccl"), nullptr);
  size_t exposed = 0, blocked = 0, gaps = 0, instants = 0, want_findings = 0;
  for (const auto& s : dec->slices) {
    exposed += s.name == "exposed communication";
    blocked += s.name.rfind("blocked: ", 0) == 0;
    gaps += s.name.rfind("idle: ", 0) == 0;
  }
  for (const auto& e : dec->events) instants += e.type == 3;
  for (const auto& f : a->sync.findings) want_findings += f.process != model::kNone;
  size_t want_exposed = 0;
  for (const auto& d : a->overlap) want_exposed += d.exposed_comm.size();
  EXPECT_EQ(exposed, want_exposed);
  EXPECT_EQ(blocked, a->blocking.intervals.size());
  EXPECT_EQ(gaps, a->gaps.size());
  EXPECT_EQ(instants, want_findings);
  // Every model event is one slice; every GPU activity or sync record whose API call is in the
  // trace has one flow (no stream-wait records with a known source in these captures).
  size_t model_slices = 0, flow_begins = 0, flow_ends = 0;
  for (const auto& s : dec->slices) {
    model_slices += s.category != "overlapscope";
    flow_begins += s.flows.size();
    flow_ends += s.terminating_flows.size();
  }
  EXPECT_EQ(model_slices, static_cast<size_t>(t->total_events()));
  size_t want_flows = 0;
  auto count = [&](const auto& v, auto process_of) {
    for (const auto& e : v)
      if (process_of(e) != model::kNone && t->ApiCallByCorrelation(process_of(e), e.correlation_id)) ++want_flows;
  };
  auto by_device = [&](const auto& e) { return t->ProcessOfDevice(e.device); };
  count(t->kernels(), by_device);
  count(t->memcpys(), by_device);
  count(t->memsets(), by_device);
  count(t->syncs(),
        [&](const model::Sync& y) { return y.device != model::kNone ? t->ProcessOfDevice(y.device) : model::kNone; });
  EXPECT_EQ(flow_begins, want_flows);
  EXPECT_EQ(flow_ends, want_flows);
  EXPECT_GT(exposed + blocked + gaps, 0u);
}

}  // namespace
}  // namespace overlapscope::exporters
