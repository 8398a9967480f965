// Bounds applied once at import (model/bounds.h) and the inputs that used to hang, wrap or take
// gigabytes: times out of range, a 2^62-element collective, huge names, a FIFO given as a trace.
#include "model/bounds.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "importers/import_any.h"
#include "importers/kineto/import.h"
#include "importers/nccl/nccl_attribution.h"
#include "importers/nccl/nccl_plugin_records.h"
#include "ovnccl_writer.h"

namespace overlapscope::import {
namespace {

std::string Temp(const std::string& name) { return ::testing::TempDir() + "/bounds_test." + name; }

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = Temp(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string WriteGz(const std::string& name, const std::string& text) {
  const std::string path = Temp(name);
  gzFile f = gzopen(path.c_str(), "wb9");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
  return path;
}

std::string Kernel(const std::string& ts, const std::string& dur, int corr, const std::string& name = "k") {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name + "\", \"pid\": 0, \"tid\": 7, \"ts\": " + ts +
         ", \"dur\": " + dur + ", \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(corr) +
         "}}";
}

std::string Doc(const std::string& events, const std::string& head = "") {
  return "{" + head + "\"traceEvents\": [" + events + "]}";
}

// |ts| beyond 4e18 ns or a duration beyond 1e15 ns: skipped and counted, never a negative or
// wrapped span later (the trace span of these three was INT64_MIN-ish before).
TEST(Bounds, TimesOutOfRangeAreSkippedAndCounted) {
  const std::string path =
      Write("times.json", Doc(Kernel("10", "1", 1) + ", " + Kernel("9000000000000000", "1", 2) + ", " +
                              Kernel("-9000000000000000", "1", 3) + ", " + Kernel("20", "2000000000000", 4)));
  auto t = ImportTraces({path});
  std::remove(path.c_str());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->kernels().size(), 1u);
  EXPECT_EQ(t->start_ns(), 10000);
  EXPECT_EQ(t->end_ns(), 11000);
  const auto& s = t->sources()[0];
  EXPECT_EQ(s.Count(model::Stat::kTimeOutOfBounds), 3);
  EXPECT_EQ(s.details.at({model::Stat::kKinetoGpuEventSkipped, "ts or dur out of bounds"}), 3);
  EXPECT_FALSE(model::ImportWarnings(t->sources()).empty());  // data loss: every output says so
  // A base time that pushes ts out of range is an error for the whole file.
  const std::string based =
      Write("base.json", Doc(Kernel("10", "1", 1), "\"baseTimeNanoseconds\": 4000000000000000000, "));
  auto b = ImportTraces({based});
  std::remove(based.c_str());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(std::string(b.status().message()).find("baseTimeNanoseconds + ts beyond the supported range"),
            std::string::npos)
      << b.status();
}

// A collective the plugin reports with 2^62 elements: sizes unknown and counted, not 2^62 x 4
// wrapped into a small number.
TEST(Bounds, HugeElementCountsLeaveSizesUnknown) {
  model::TraceBuilder b;
  const model::ProcessId p = b.AddProcess(model::Process{4242, 0, 2});
  const model::ThreadId th = b.GetOrAddThread(p, 11);
  const model::DeviceId dev = b.GetOrAddDevice(p, 0);
  auto& d = b.data();
  d.ranges.push_back(
      {1000, 2000, model::RangeKind::kNvtx, th, model::kNoCorrelation, b.Intern("ncclAllReduce"), b.Intern("NCCL")});
  model::ApiCall a;
  a.start_ns = 1100, a.end_ns = 1200, a.thread = th, a.correlation_id = 5, a.name = b.Intern("cudaLaunchKernel");
  d.api_calls.push_back(a);
  model::Kernel k;
  k.start_ns = 3000, k.end_ns = 4000, k.device = dev, k.stream = b.GetOrAddStream(dev, 7), k.correlation_id = 5;
  d.kernels.push_back(k);
  const NcclAttribution nvtx = AttributeNcclRanges(b, p);
  ASSERT_EQ(nvtx.collectives, 1);
  ::overlapscope::testing::OvncclWriter w;
  w.Process(4242).Comm(1, 0xabc, 2, 0);
  w.Api(1, 0, 1, formats::kTypeCollApi, 1050, 11, "AllReduce", uint64_t{1} << 62, "ncclFloat32", 0);
  w.Coll(2, 1, 1, 1150, 11, "AllReduce", uint64_t{1} << 62, "ncclFloat32", 0, 2, "RING", "LL", 0);
  w.Stop(2, 1190).Stop(1, 1900);
  auto f = ParseNcclPluginBytes(w.bytes(), "nccl.4242.ovnccl");
  ASSERT_TRUE(f.ok()) << f.status();
  MergeNcclPlugin(std::move(f).value(), nvtx, b, p, NcclMergeOptions{});
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->collectives().size(), 1u);
  const model::Collective& c = t->collectives()[0];
  EXPECT_EQ(t->str(c.op), "AllReduce");
  EXPECT_EQ(c.in_elements, -1);
  EXPECT_EQ(c.bytes, -1);
  // And the checked product itself: 2^62 x 4 is no size; 2^20 x 4 is.
  EXPECT_EQ(model::BytesOf(int64_t{1} << 62, 4), -1);
  EXPECT_EQ(model::BytesOf(int64_t{1} << 20, 4), int64_t{4} << 20);
  EXPECT_EQ(model::SatAdd(INT64_MAX - 1, 5), INT64_MAX);
}

// A name of 2 MiB is cut to 1 MiB and counted; one event of more than 64 MiB (here a 70 MiB name
// in a gzip file of about 70 KiB) is an error naming its offset, after reading at most a bounded
// window, never gigabytes.
TEST(Bounds, HugeNamesAreCutAndHugeEventsRefused) {
  const std::string two_mib(size_t{2} << 20, 'a');
  const std::string cut_path = WriteGz("name2m.json.gz", Doc(Kernel("10", "1", 1, two_mib)));
  auto t = ImportTraces({cut_path});
  std::remove(cut_path.c_str());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->kernels().size(), 1u);
  EXPECT_EQ(t->str(t->kernels()[0].name).size(), size_t{1} << 20);
  EXPECT_EQ(t->sources()[0].Count(model::Stat::kStringsTruncated), 1);

  const std::string big_path =
      WriteGz("name70m.json.gz", Doc(Kernel("10", "1", 1, std::string(size_t{70} << 20, 'b'))));
  auto big = ImportTraces({big_path});
  std::remove(big_path.c_str());
  ASSERT_FALSE(big.ok());
  const std::string msg(big.status().message());
  EXPECT_NE(msg.find("a single JSON value (one event) is larger than 64 MiB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("offset "), std::string::npos) << msg;
}

// A FIFO given as a trace: an error at once, not a read that waits forever for a writer.
TEST(Bounds, FifoIsAnErrorNotAHang) {
  const std::string fifo = Temp("fifo." + std::to_string(::getpid()) + ".json");
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto t = ImportAny({fifo});
  std::remove(fifo.c_str());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(std::string(t.status().message()), fifo + ": offset 0: cannot open: not a regular file (a FIFO)");
}

}  // namespace
}  // namespace overlapscope::import
