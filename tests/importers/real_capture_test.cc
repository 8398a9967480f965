// Real CUPTI captures of known_work from 2 x H200 (tests/data/capture), read without a GPU and
// checked against what the program issued (the same checks the GPU tests run on fresh captures).
#include <string>

#include "capture_expect.h"
#include "gtest/gtest.h"
#include "importers/ovspill/spill_reader.h"

namespace overlapscope::testing {
namespace {

model::Trace Load(const std::string& name) {
  auto t = import::ReadSpillFiles({std::string(OVERLAPSCOPE_TEST_DATA) + "/capture/" + name});
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(*t) : model::Trace();
}

// True when a source says `part`: in an example, in the description of a statistic it hit, or
// in a statistic's detail ("signal 6").
bool NoteContains(const model::Trace& t, const std::string& part) {
  for (const auto& s : t.sources()) {
    for (const auto& e : s.examples)
      if (e.find(part) != std::string::npos) return true;
    for (size_t i = 0; i < model::kStatCount; ++i)
      if (s.counts[i] != 0 && model::Describe(static_cast<model::Stat>(i)).description.find(part) != std::string::npos)
        return true;
    for (const auto& [k, v] : s.details)
      if (k.second.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(RealCapture, KnownWorkNormal) {
  model::Trace t = Load("known_work_normal.ovspill");
  ExpectKnownWork(t);
  EXPECT_FALSE(NoteContains(t, "no end record"));
  EXPECT_EQ(t.str(t.devices()[0].name), "NVIDIA H200");
  // Every record of the file is accounted for (kept, skipped or unknown), none dropped.
  const auto& s = t.sources()[0];
  EXPECT_EQ(s.events_read, s.events_kept + s.skipped());
  EXPECT_GT(s.events_read, 300);
  EXPECT_EQ(s.Count(model::Stat::kCuptiDroppedRecords), 0);
}

TEST(RealCapture, KnownWorkAbortFlushedFromSignalHandler) {
  model::Trace t = Load("known_work_abort.ovspill");
  ExpectKnownWork(t);
  EXPECT_TRUE(NoteContains(t, "signal 6"));
}

TEST(RealCapture, KnownWorkForkParentComplete) {
  model::Trace t = Load("known_work_fork.ovspill");
  ExpectKnownWork(t);
  EXPECT_FALSE(NoteContains(t, "no end record"));
}

TEST(RealCapture, BatchAndPeerCopiesOnTwoGpus) { ExpectCopies(Load("known_work_copies.ovspill"), 2); }

}  // namespace
}  // namespace overlapscope::testing
