// Capture windows in spill files (SpillWindow, spill_records.h) read into model windows; the
// records are framed as a writer frames them (SpillEncoder::Frame, version 2).
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "importers/ovspill/spill_reader.h"
#include "ovnccl_writer.h"
#include "test_util.h"

namespace overlapscope::import {
using namespace ::overlapscope::formats;  // the record layouts the tests encode
namespace {

std::string Base() {
  std::string b;
  SpillEncoder::AppendFileHeader(&b);
  SpillEncoder::AppendString(&b, 1, "cudaLaunchKernel");
  SpillEncoder::AppendString(&b, 2, "_Z1kv");
  SpillEncoder::AppendString(&b, 3, "train_step");
  SpillEncoder::Append(&b, SpillType::kProcess, SpillProcess{77, 0, 1, 0, 0, 0, 0});
  return b;
}

void Launch(std::string& b, uint32_t corr, int64_t api_start, int64_t k_start, int64_t k_end) {
  SpillEncoder::Append(&b, SpillType::kApi, SpillApi{api_start, api_start + 100, 77, 7, corr, 211, 0, 1, 0, {}});
  SpillKernel k{};
  k.start = k_start, k.end = k_end, k.stream = 7, k.correlation = corr, k.name_sid = 2;
  SpillEncoder::Append(&b, SpillType::kKernel, k);
}

TEST(SpillWindows, OpenAndCloseRecords) {
  std::string b = Base();
  // Window 1 opens at 500 (record with end 0) and closes at 3500; window 2 (an NVTX range named
  // train_step) opens at 5000 and its process dies inside it: it ends at the last record, 7000.
  SpillEncoder::Append(&b, SpillType::kWindow, SpillWindow{500, 0, 1, kWindowCudaProfilerApi, 0, kWindowEndStop});
  Launch(b, 1, 1000, 2000, 3000);
  SpillEncoder::Append(&b, SpillType::kWindow, SpillWindow{500, 3500, 1, kWindowCudaProfilerApi, 0, kWindowEndRange});
  SpillEncoder::Append(&b, SpillType::kWindow, SpillWindow{5000, 0, 2, kWindowNvtx, 3, kWindowEndStop});
  Launch(b, 2, 5500, 6000, 7000);
  model::TraceBuilder builder;
  ASSERT_TRUE(ReadSpillBytes(SpillEncoder::Frame(b), "w.ovspill", builder).ok());
  auto t = std::move(builder).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->windows().size(), 2u);
  const model::CaptureWindow& w1 = t->windows()[0];
  const model::CaptureWindow& w2 = t->windows()[1];
  EXPECT_EQ(w1.index, 1);
  EXPECT_EQ(w1.start_ns, 500);
  EXPECT_EQ(w1.end_ns, 3500);
  EXPECT_EQ(w1.trigger, model::WindowTrigger::kCudaProfilerApi);
  EXPECT_EQ(w1.process, 0);
  EXPECT_EQ(w2.index, 2);
  EXPECT_EQ(w2.start_ns, 5000);
  EXPECT_EQ(w2.end_ns, 7000);
  EXPECT_EQ(w2.trigger, model::WindowTrigger::kNvtx);
  EXPECT_EQ(t->str(w2.name), "train_step");
  bool noted = false;
  for (const auto& e : t->sources()[0].examples) noted |= e.find("capture window 2 was never closed") == 0;
  EXPECT_TRUE(noted);
  // Window records are metadata: read = kept + skipped still holds.
  const auto& s = t->sources()[0];
  EXPECT_EQ(s.events_read, s.events_kept + s.skipped());
}

TEST(SpillWindows, NoWindowRecordsNoWindows) {
  std::string b = Base();
  Launch(b, 1, 1000, 2000, 3000);
  model::TraceBuilder builder;
  ASSERT_TRUE(ReadSpillBytes(SpillEncoder::Frame(b), "old.ovspill", builder).ok());
  auto t = std::move(builder).Finalize();
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->windows().empty());
  EXPECT_EQ(t->kernels().size(), 1u);
}

TEST(SpillWindows, ShortWindowRecordIsCounted) {
  std::string b = Base();
  const char half[12] = {};
  SpillEncoder::AppendRaw(&b, SpillType::kWindow, half, sizeof(half), nullptr, 0);
  model::TraceBuilder builder;
  ASSERT_TRUE(ReadSpillBytes(SpillEncoder::Frame(b), "short.ovspill", builder).ok());
  auto t = std::move(builder).Finalize();
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->windows().empty());
  EXPECT_EQ(t->sources()[0].details.at({model::Stat::kSpillShortRecord, "capture window"}), 1);
}

// `overlapscope run -o DIR` keeps each mode's spill with a copy of the NCCL plugin's file next
// to it; that file covers the whole process (every mode). Read alone, the spill merges only the
// plugin collectives of its session window; a whole-process capture (`profile`) keeps them all.
int64_t OutsideWindowNextTo(uint32_t trigger, const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::create_directories(dir);
  std::string b = Base();
  SpillEncoder::Append(&b, SpillType::kWindow, SpillWindow{500, 0, 1, trigger, 0, kWindowEndStop});
  Launch(b, 1, 1000, 2000, 3000);
  SpillEncoder::Append(&b, SpillType::kWindow, SpillWindow{500, 3500, 1, trigger, 0, kWindowEndStop});
  // Plugin: an all-reduce whose group holds the launch at 1000 (on thread 7), and one of another
  // mode of the run at 9000 (nothing of this capture near it).
  ::overlapscope::testing::OvncclWriter w;
  w.Process(77).Comm(1, 0xabc, 2, 0);
  w.Api(1, 0, 1, kTypeGroupApi, 900, 7).Api(2, 1, 1, kTypeCollApi, 950, 7, "AllReduce", 256, "ncclFloat32", 0);
  w.Coll(3, 2, 1, 1050, 7, "AllReduce", 256, "ncclFloat32", 0, 1, "RING", "LL", 0);
  w.Stop(3, 1090).Stop(2, 1150).Stop(1, 1200);
  w.Api(10, 0, 1, kTypeGroupApi, 9000, 7).Api(11, 10, 1, kTypeCollApi, 9010, 7, "AllReduce", 256, "ncclFloat32", 1);
  w.Coll(12, 11, 1, 9050, 7, "AllReduce", 256, "ncclFloat32", 1, 1, "RING", "LL", 0);
  w.Stop(12, 9090).Stop(11, 9150).Stop(10, 9200);
  std::ofstream(dir + "/capture.ovspill", std::ios::binary) << SpillEncoder::Frame(b);
  std::ofstream(dir + "/nccl.77.ovnccl", std::ios::binary) << w.bytes();
  auto t = ReadSpillFiles({dir + "/capture.ovspill"});
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return -1;
  EXPECT_EQ(t->collectives().size(), 1u);  // the launch at 1000, created from the plugin
  for (const auto& src : t->sources())
    if (src.format == "nccl-plugin")
      return import::testing::DetailOf(src, model::Stat::kNcclPluginMerge,
                                       "plugin collectives outside the capture window");
  ADD_FAILURE() << "no plugin source";
  return -1;
}

TEST(SpillWindows, PluginFileNextToASessionCaptureKeepsItsWindow) {
  EXPECT_EQ(OutsideWindowNextTo(kWindowSession, "session_window"), 1);
  EXPECT_EQ(OutsideWindowNextTo(kWindowProcess, "process_window"), 0);
}

}  // namespace
}  // namespace overlapscope::import
