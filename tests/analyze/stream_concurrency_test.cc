// Stream concurrency (analyze/stream_concurrency.h) on a hand-made trace; every number worked
// out by hand in the comments. One rank, one GPU, streams 7, 13 and 21; two iterations. Times in ns.
#include "analyze/stream_concurrency.h"

#include "gtest/gtest.h"
#include "multi_synth.h"
#include "path_fixture.h"

namespace overlapscope::analyze {
namespace {

using testing::MultiSynth;
using testing::Prepared;

model::Trace MakeTrace() {
  MultiSynth s(1);
  s.Range(0, "ProfilerStep#1", 0, 1000);
  s.Range(0, "ProfilerStep#2", 1000, 2000);
  // Step 1: embedding_lookup [100,400) on 7; adam_kernel [300,600) on 13, launched inside the
  // NVTX range "optimizer" > "adam_step"; small [350,380) on 21.
  s.Launch(0, "embedding_lookup", 7, 10, 100, 400);
  s.Range(0, "optimizer", 40, 80, model::RangeKind::kNvtx);
  s.Range(0, "adam_step", 45, 70, model::RangeKind::kNvtx);
  s.Launch(0, "adam_kernel", 13, 50, 300, 600);
  s.Launch(0, "small", 21, 90, 350, 380);
  // Step 2: embedding_lookup [1100,1200) on 7; adam_kernel [1300,1400) on 13 launched outside
  // any range (its name does not say "optimizer").
  s.Launch(0, "embedding_lookup", 7, 1010, 1100, 1200);
  s.Launch(0, "adam_kernel", 13, 1020, 1300, 1400);
  return s.Finish();
}

const PairConcurrency* Find(const std::vector<PairConcurrency>& v, int32_t a, int32_t b) {
  for (const PairConcurrency& p : v)
    if (p.a == a && p.b == b) return &p;
  return nullptr;
}

TEST(StreamConcurrency, StreamPairsAndGroupsByHand) {
  model::Trace t = MakeTrace();
  Prepared p(t);
  ConcurrencyOptions o;
  o.groups = {{"emb", "embedding"}, {"opt", "optimizer"}};
  auto r = AnalyzeStreamConcurrency(t, p.in().gpu, *p.in().iterations, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  const DeviceConcurrency& d = r->devices[0];
  const model::StreamId s7 = 0, s13 = 1, s21 = 2;  // streams in order of first use
  ASSERT_EQ(t.streams()[s13].native_id, 13);
  // Whole trace: |7| = 300 + 100 = 400, |13| = 300 + 100 = 400, both busy [300,400) = 100.
  const PairConcurrency* a = Find(d.whole.streams, s7, s13);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->concurrent_ns, 100);
  EXPECT_EQ(a->a_ns, 400);
  EXPECT_EQ(a->b_ns, 400);
  EXPECT_DOUBLE_EQ(*a->share, 0.25);
  // small [350,380) lies inside both: 30 with each, share 30 / min(400, 30) = 1.
  const PairConcurrency* b = Find(d.whole.streams, s7, s21);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->concurrent_ns, 30);
  EXPECT_DOUBLE_EQ(*b->share, 1.0);
  EXPECT_EQ(d.whole.streams.size(), 3u);
  // Step 1: (7,13) 100 of 300 and 300; step 2: no overlap, so no stream pair listed.
  ASSERT_EQ(d.iterations.size(), 2u);
  const PairConcurrency* i1 = Find(d.iterations[0].streams, s7, s13);
  ASSERT_NE(i1, nullptr);
  EXPECT_EQ(i1->concurrent_ns, 100);
  EXPECT_EQ(i1->a_ns, 300);
  EXPECT_DOUBLE_EQ(*i1->share, 100.0 / 300.0);
  EXPECT_TRUE(d.iterations[1].streams.empty());
  // Groups: emb = the embedding_lookup kernels (by kernel name), opt = adam_kernel of step 1 (its
  // launch lies in "adam_step" inside "optimizer"; step 2's launch lies in no range).
  EXPECT_EQ(r->group_activities, (std::vector<int64_t>{2, 1}));
  ASSERT_EQ(d.whole.groups.size(), 1u);
  EXPECT_EQ(d.whole.groups[0].concurrent_ns, 100);
  EXPECT_EQ(d.whole.groups[0].a_ns, 400);
  EXPECT_EQ(d.whole.groups[0].b_ns, 300);
  ASSERT_EQ(d.iterations[1].groups.size(), 1u);  // emb busy in step 2, opt not: share absent
  EXPECT_EQ(d.iterations[1].groups[0].concurrent_ns, 0);
  EXPECT_EQ(d.iterations[1].groups[0].a_ns, 100);
  EXPECT_FALSE(d.iterations[1].groups[0].share.has_value());
}

TEST(StreamConcurrency, GroupSpecsAreChecked) {
  auto g = ParseGroupSpec("opt=optim(izer)?");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->name, "opt");
  EXPECT_EQ(g->regex, "optim(izer)?");
  EXPECT_FALSE(ParseGroupSpec("noequals").ok());
  EXPECT_FALSE(ParseGroupSpec("=x").ok());
  EXPECT_FALSE(ParseGroupSpec("x=").ok());
  model::Trace t = MakeTrace();
  Prepared p(t);
  ConcurrencyOptions bad;
  bad.groups = {{"b", "(unclosed"}};
  auto r = AnalyzeStreamConcurrency(t, p.in().gpu, *p.in().iterations, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--group b=(unclosed"), std::string::npos) << r.status();
  ConcurrencyOptions dup;
  dup.groups = {{"a", "x"}, {"a", "y"}};
  EXPECT_FALSE(AnalyzeStreamConcurrency(t, p.in().gpu, *p.in().iterations, dup).ok());
}

}  // namespace
}  // namespace overlapscope::analyze
