// replay --trace: the predicted timeline's tracks, decoded as a viewer reads them.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "engine/replay.h"
#include "engine/session.h"
#include "exporters/pftrace_decoder.h"

namespace overlapscope::engine {
namespace {

// The decoded file `req.trace_out` after a replay of `dir` under `changes`.
overlapscope::testing::PfTrace PredictedTrace(const std::string& dir, const std::vector<std::string>& changes) {
  auto s = Load({dir});
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  ReplayRequest req;
  req.changes = changes;
  req.trace_out = ::testing::TempDir() + "/replay_trace_test.pftrace";
  EXPECT_TRUE(RunReplay(*s, req, ReportFormat::kText).ok());
  std::ifstream f(req.trace_out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto t = overlapscope::testing::DecodePftrace(bytes);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : overlapscope::testing::PfTrace{};
}

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// async: moves the all-to-all's SendRecv kernels to a stream of their own: the predicted GPU draws
// them on a track of that stream ("... async (predicted) from stream N"), the measured GPU on the
// stream they were recorded on; without async: no such track.
TEST(ReplayTrace, MovedCollectivesOnAPredictedStreamOfTheirOwn) {
  const std::string dir = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/a2a_sync";
  const overlapscope::testing::PfTrace t = PredictedTrace(dir, {"async:/SendRecv/"});
  std::map<uint64_t, bool> side, predicted;  // per track: the side stream's; under a predicted group
  for (const auto& [uuid, tr] : t.tracks) {
    side[uuid] = Has(tr.name, " async (predicted) from stream ");
    uint64_t p = uuid;
    while (p != 0 && t.tracks.count(p) && !Has(t.tracks.at(p).name, " predicted")) p = t.tracks.at(p).parent;
    predicted[uuid] = p != 0 && t.tracks.count(p);
  }
  int on_side = 0, measured_send = 0, predicted_elsewhere = 0, other_on_side = 0;
  for (const auto& sl : t.slices) {
    const bool send = Has(sl.name, "SendRecv");
    if (side[sl.track]) {
      EXPECT_TRUE(predicted[sl.track]) << t.tracks.at(sl.track).name;
      send ? ++on_side : ++other_on_side;
    } else if (send) {
      predicted[sl.track] ? ++predicted_elsewhere : ++measured_send;
    }
  }
  EXPECT_GT(on_side, 0);
  EXPECT_EQ(on_side, measured_send);  // every one moved, drawn once on each side
  EXPECT_EQ(predicted_elsewhere, 0);
  EXPECT_EQ(other_on_side, 0);
  const overlapscope::testing::PfTrace plain = PredictedTrace(dir, {"scale:comm=0.5"});
  for (const auto& [uuid, tr] : plain.tracks) EXPECT_FALSE(Has(tr.name, "async (predicted)")) << tr.name;
}

}  // namespace
}  // namespace overlapscope::engine
