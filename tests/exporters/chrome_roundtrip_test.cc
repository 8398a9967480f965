// Chrome JSON writer: import(export(T)) keeps every event, id and duration of T, for a
// hand-made trace and for the real PyTorch profiler captures in tests/data/kineto.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exporters/chrome_writer.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"
#include "model/trace_builder.h"
#include "synthetic_trace.h"

namespace overlapscope::exporters {
namespace {

namespace fs = std::filesystem;
using model::kNone;

// One line per event with every field the Kineto format carries, identified by rank/pid,
// device ordinal, stream id and thread id (dense ids may be renumbered by a round trip).
std::vector<std::string> Canon(const model::Trace& t) {
  std::vector<std::string> out;
  auto str = [&](model::StringId id) { return std::string(t.str(id)); };
  auto proc = [&](model::ProcessId p) {
    return absl::StrCat("r", t.processes()[p].rank, "/pid", t.processes()[p].pid);
  };
  auto dev = [&](model::DeviceId d) {
    return d == kNone ? std::string("-") : absl::StrCat(proc(t.devices()[d].process), "/gpu", t.devices()[d].ordinal);
  };
  auto stream = [&](model::StreamId s) {
    return s == kNone ? std::string("-") : absl::StrCat(t.streams()[s].native_id);
  };
  auto thread = [&](model::ThreadId th) {
    return th == kNone ? std::string("-") : absl::StrCat(proc(t.threads()[th].process), "/tid", t.threads()[th].tid);
  };
  auto col = [&](model::CollectiveId c) {
    if (c == kNone) return std::string("-");
    const auto& x = t.collectives()[c];
    return absl::StrCat(str(x.op), ",", str(x.communicator), ",", str(x.dtype), ",", x.sequence, ",", x.in_elements,
                        ",", x.out_elements, ",", x.bytes, ",", x.rank, ",", x.nranks, ",", x.correlation_id, ",",
                        x.start_ns, ",", x.end_ns);
  };
  for (const auto& k : t.kernels())
    out.push_back(absl::StrCat("K|", dev(k.device), "|", stream(k.stream), "|", k.start_ns, "|", k.end_ns, "|",
                               str(k.name), "|", k.correlation_id, "|", k.external_id, "|", k.grid.x, ",", k.grid.y,
                               ",", k.grid.z, "|", k.block.x, ",", k.block.y, ",", k.block.z, "|",
                               k.registers_per_thread, "|", k.shared_memory_bytes, "|", col(k.collective)));
  for (const auto& m : t.memcpys())
    out.push_back(absl::StrCat("C|", dev(m.device), "|", stream(m.stream), "|", m.start_ns, "|", m.end_ns, "|",
                               str(m.name), "|", m.correlation_id, "|", m.external_id, "|", m.bytes, "|",
                               static_cast<int>(m.kind), static_cast<int>(m.src_kind), static_cast<int>(m.dst_kind),
                               "|", m.is_async));
  for (const auto& m : t.memsets())
    out.push_back(absl::StrCat("S|", dev(m.device), "|", stream(m.stream), "|", m.start_ns, "|", m.end_ns, "|",
                               str(m.name), "|", m.correlation_id, "|", m.external_id, "|", m.bytes, "|",
                               static_cast<int>(m.memory_kind), "|", m.is_async));
  for (const auto& a : t.api_calls())
    out.push_back(absl::StrCat("A|", thread(a.thread), "|", a.start_ns, "|", a.end_ns, "|", str(a.name), "|",
                               a.correlation_id, "|", a.external_id, "|", static_cast<int>(a.kind)));
  for (const auto& y : t.syncs())
    out.push_back(absl::StrCat("Y|", dev(y.device), "|", stream(y.stream), "|", stream(y.wait_on_stream), "|",
                               thread(y.thread), "|", y.start_ns, "|", y.end_ns, "|", str(y.name), "|",
                               static_cast<int>(y.kind), "|", y.event_id, "|", y.event_record_correlation_id, "|",
                               y.correlation_id));
  for (const auto& r : t.ranges())
    out.push_back(absl::StrCat("R|", thread(r.thread), "|", r.start_ns, "|", r.end_ns, "|", str(r.name), "|",
                               static_cast<int>(r.kind), "|", r.external_id));
  for (const auto& g : t.gpu_ranges())
    out.push_back(absl::StrCat("G|", dev(g.device), "|", stream(g.stream), "|", g.start_ns, "|", g.end_ns, "|",
                               str(g.name), "|", g.correlation_id, "|", g.external_id));
  for (const auto& p : t.processes())
    out.push_back(absl::StrCat("P|", p.rank, "|", p.world_size, "|", p.pid, "|", str(p.name)));
  for (const auto& d : t.devices())
    out.push_back(absl::StrCat("D|", dev(static_cast<int32_t>(&d - &t.devices()[0])), "|", str(d.name)));
  std::sort(out.begin(), out.end());
  return out;
}

// Reports the first differing lines instead of two huge vectors.
void ExpectSameEvents(const model::Trace& a, const model::Trace& b, const std::string& what) {
  const auto ca = Canon(a), cb = Canon(b);
  EXPECT_EQ(ca.size(), cb.size()) << what;
  std::vector<std::string> only_a, only_b;
  std::set_difference(ca.begin(), ca.end(), cb.begin(), cb.end(), std::back_inserter(only_a));
  std::set_difference(cb.begin(), cb.end(), ca.begin(), ca.end(), std::back_inserter(only_b));
  EXPECT_TRUE(only_a.empty()) << what << ": lost in the round trip, e.g. " << only_a.front();
  EXPECT_TRUE(only_b.empty()) << what << ": appeared in the round trip, e.g. " << only_b.front();
}

absl::StatusOr<model::Trace> RoundTrip(const model::Trace& t, const std::string& name, ChromeStats* st = nullptr) {
  const std::string dir = ::testing::TempDir() + "/chrome_roundtrip";
  fs::create_directories(dir);
  auto written = WriteChrome(t, dir + "/" + name);
  if (!written.ok()) return written.status();
  if (st) *st = *written;
  return import::ImportTraces(written->files);
}

TEST(ChromeRoundTrip, SmallTraceKeepsEverything) {
  const model::Trace t = testing::MakeSmallTrace();
  ChromeStats st;
  auto back = RoundTrip(t, "small.json", &st);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(st.files.size(), 1u);
  EXPECT_EQ(st.not_written, 0);
  ExpectSameEvents(t, *back, "small trace");
  // Flows: 4 launches/copies + 2 sync calls = 6 ac2g pairs (stream-to-stream waits have no
  // Kineto category); 17 X events + 6 pairs + metadata (3 process rows x 2 + 3 streams + 1 thread).
  EXPECT_EQ(st.events, 17 + 12 + 6 + 3 + 1);
}

TEST(ChromeRoundTrip, GzipAndSeveralRanks) {
  const model::Trace t = testing::MakeStepsTrace(2, 3, 4, 1'790'857'026'123'456'789);
  ChromeStats st;
  auto back = RoundTrip(t, "steps.json.gz", &st);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(st.files.size(), 2u);
  EXPECT_NE(st.files[0].find("steps.rank0.json.gz"), std::string::npos);
  EXPECT_LT(st.file_bytes, st.bytes);  // compressed
  ExpectSameEvents(t, *back, "steps trace");
}

TEST(ChromeRoundTrip, TimestampsKeepThreeDecimals) {
  const model::Trace t = testing::MakeSmallTrace();
  auto json = EncodeChromeToString(t, 0);
  ASSERT_TRUE(json.ok());
  // base = 0 (trace starts at 900 ns): the kernel "gemm" [1500, 3000) is ts 1.500 dur 1.500.
  EXPECT_NE(json->find("\"name\": \"gemm\", \"pid\": 0, \"tid\": 7, \"ts\": 1.500, \"dur\": 1.500"), std::string::npos)
      << *json;
  EXPECT_NE(json->find("\"baseTimeNanoseconds\": 0,"), std::string::npos);
  EXPECT_NE(json->find("{\"ph\": \"s\", \"id\": 1, \"pid\": 100, \"tid\": 100, \"ts\": 1.100"), std::string::npos);
  EXPECT_NE(json->find("{\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 1.500, \"cat\": \"ac2g\", "
                       "\"name\": \"ac2g\", \"bp\": \"e\"}"),
            std::string::npos);
}

TEST(ChromeRoundTrip, NamesNeedingEscapesSurvive) {
  model::TraceBuilder b;
  model::Process pr;
  pr.pid = 42;
  pr.rank = 3;
  const auto p = b.AddProcess(pr);
  const auto th = b.GetOrAddThread(p, 42);
  const char* names[] = {
      "quote \" inside",    "back\\slash", "tab\tand\nnewline", "ctrl \x01 byte", "utf-8 \xc3\xa9\xe2\x80\x94 ok",
      "void k<\"x\">(int*)"};
  int64_t t0 = 5'000'000'123;
  for (const char* n : names) {
    model::Range r;
    r.thread = th;
    r.name = b.Intern(n);
    r.start_ns = t0;
    r.end_ns = t0 + 999;
    t0 += 1001;
    b.data().ranges.push_back(r);
  }
  auto t = std::move(b).Finalize();
  ASSERT_TRUE(t.ok());
  auto back = RoundTrip(*t, "escapes.json");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameEvents(*t, *back, "escaped names");
}

class RealTraceRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTraceRoundTrip, KeepsEveryEvent) {
  const std::string dir = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/" + GetParam();
  std::vector<std::string> files;
  for (const char* f : {"rank0.json.gz", "rank1.json.gz"})
    if (fs::exists(dir + "/" + f)) files.push_back(dir + "/" + f);
  if (files.empty()) GTEST_SKIP() << "no traces in " << dir;
  auto t = import::ImportTraces(files);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_GT(t->kernels().size(), 0u);
  ChromeStats st;
  auto back = RoundTrip(*t, GetParam() + ".json", &st);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(st.files.size(), files.size());
  ExpectSameEvents(*t, *back, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Kineto, RealTraceRoundTrip,
                         ::testing::Values("ag_sequential", "ag_overlap", "a2a_sync", "a2a_async", "d2h_blocking",
                                           "d2h_nonblocking_nosync", "d2h_nonblocking_event"));

}  // namespace
}  // namespace overlapscope::exporters
