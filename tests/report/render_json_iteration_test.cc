// A device's iteration element written as text (render_json_iteration.h) is byte for byte the
// dump of its tree (IterationJson through Element): every figure at zero, negative and at the
// integer limits, ratios absent, NaN, infinite, whole, tiny and long; gap causes none, several,
// a name given twice (first place, last value), names that need escapes or are not UTF-8; at
// the indents the renderer uses. The same for stream concurrency's per-iteration element:
// no pair, several, streams absent, group names to escape.
#include "report/render_json_iteration.h"

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "report/render_json_deferred.h"

namespace overlapscope::report {
namespace {

const std::vector<std::optional<double>> kRatios = {
    std::nullopt, 0.0,  1.0,           0.5,          1.0 / 3.0,
    1e-300,       -0.0, 123456789.125, std::nan(""), std::numeric_limits<double>::infinity()};

const std::vector<int64_t> kInts = {
    0, 1, -1, 1234567890123, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};

const std::vector<std::string> kNames = {
    "host_blocked",   "launch_bound", "dependency", "unknown", "quote \" \\ and\nnewline", "invalid \xff utf-8", "",
    "micro \xc2\xb5s"};

IterationOverlap Random(std::mt19937_64& rng) {
  auto pick_int = [&rng] {
    return kInts[rng() % kInts.size()] + static_cast<int64_t>(rng() % 3 == 0 ? rng() % 1000 : 0);
  };
  IterationOverlap io;
  io.iteration = pick_int();
  io.gpu_start_ns = pick_int(), io.gpu_end_ns = pick_int();
  io.cpu_start_ns = pick_int(), io.cpu_end_ns = pick_int();
  OverlapFigures& s = io.stats;
  s.comm_ns = rng() % 2 == 0 ? 0 : pick_int();  // no_communication both ways
  s.hidden_comm_ns = pick_int(), s.exposed_comm_ns = pick_int();
  s.overlap_ratio = kRatios[rng() % kRatios.size()];
  s.compute_ns = pick_int();
  s.compute_share_overlapped = kRatios[rng() % kRatios.size()];
  s.contention_ns = pick_int(), s.net_overlap_gain_ns = pick_int();
  s.overlapped_compute_instances = pick_int(), s.contention_unknown_instances = pick_int();
  s.activities = pick_int();
  const size_t gaps = rng() % 6;
  for (size_t i = 0; i < gaps; ++i) io.gap_ns.push_back({kNames[rng() % kNames.size()], pick_int()});
  return io;
}

TEST(RenderJsonIteration, TextIsTheTreesDump) {
  std::mt19937_64 rng(26);
  for (int round = 0; round < 3000; ++round) {
    const IterationOverlap io = Random(rng);
    for (size_t indent : {size_t{0}, size_t{2}, size_t{8}}) {
      std::string text;
      AppendIterationText(io, indent, &text);
      ASSERT_EQ(text, Element(IterationJson(io), indent)) << "round " << round << " indent " << indent;
    }
  }
}

TEST(RenderJsonIteration, NameGivenTwiceKeepsFirstPlaceLastValue) {
  IterationOverlap io;
  io.gap_ns = {{"a", 1}, {"b", 2}, {"a", 3}};
  std::string text;
  AppendIterationText(io, 0, &text);
  EXPECT_NE(text.find("\"gap_ns\": {\n      \"a\": 3,\n      \"b\": 2\n    }"), std::string::npos) << text;
  EXPECT_EQ(text, Element(IterationJson(io), 0));
}

TEST(RenderJsonIteration, NoGapsIsAnEmptyObject) {
  IterationOverlap io;
  std::string text;
  AppendIterationText(io, 4, &text);
  EXPECT_NE(text.find("\"gap_ns\": {}\n"), std::string::npos) << text;
  EXPECT_EQ(text, Element(IterationJson(io), 4));
}

IterationConcurrency RandomConcurrency(std::mt19937_64& rng) {
  auto pick_int = [&rng] { return kInts[rng() % kInts.size()]; };
  auto pick_c = [&] { return Concurrency{pick_int(), pick_int(), pick_int(), kRatios[rng() % kRatios.size()]}; };
  IterationConcurrency w;
  w.iteration = pick_int();
  for (size_t i = rng() % 4; i > 0; --i) {
    StreamPair p;
    if (rng() % 3 != 0) p.a = pick_int();
    if (rng() % 3 != 0) p.b = pick_int();
    p.c = pick_c();
    w.pairs.streams.push_back(p);
  }
  for (size_t i = rng() % 4; i > 0; --i)
    w.pairs.groups.push_back({kNames[rng() % kNames.size()], kNames[rng() % kNames.size()], pick_c()});
  return w;
}

TEST(RenderJsonIteration, ConcurrencyTextIsTheTreesDump) {
  std::mt19937_64 rng(27);
  for (int round = 0; round < 3000; ++round) {
    const IterationConcurrency w = RandomConcurrency(rng);
    for (size_t indent : {size_t{0}, size_t{2}, size_t{8}}) {
      std::string text;
      AppendConcurrencyIterationText(w, indent, &text);
      ASSERT_EQ(text, Element(ConcurrencyIterationJson(w), indent)) << "round " << round << " indent " << indent;
    }
  }
  IterationConcurrency none;
  std::string text;
  AppendConcurrencyIterationText(none, 4, &text);
  EXPECT_NE(text.find("\"streams\": [],\n"), std::string::npos) << text;
  EXPECT_EQ(text, Element(ConcurrencyIterationJson(none), 4));
}

}  // namespace
}  // namespace overlapscope::report
