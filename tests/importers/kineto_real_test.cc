// The importer on the real PyTorch-profiler traces of tests/data/kineto (2x H200, torch 2.11).
// Expected counts come from an independent parse of the same file with nlohmann::json.
#include <cstdlib>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace overlapscope::import::testing {
namespace {

using nlohmann::json;

const char* kScenarios[] = {"ag_sequential",          "ag_overlap",           "a2a_sync", "a2a_async", "d2h_blocking",
                            "d2h_nonblocking_nosync", "d2h_nonblocking_event"};

json Load(const std::string& path) { return json::parse(ReadFileText(path)); }

// Count of "ph":"X" events by cat, and flows (cat ac2g) and all events.
std::map<std::string, int64_t> CountByCat(const json& doc) {
  std::map<std::string, int64_t> n;
  for (const auto& e : doc["traceEvents"]) {
    n["<all>"]++;
    std::string cat = e.contains("cat") ? e["cat"].get<std::string>() : "<none>";
    n[cat + "/" + e.value("ph", "")]++;
  }
  return n;
}

TEST(KinetoReal, CountsMatchIndependentParse) {
  for (const char* sc : kScenarios) {
    for (int rank = 0; rank < 2; ++rank) {
      std::string path = DataPath(std::string("kineto/") + sc + "/rank" + std::to_string(rank) + ".json.gz");
      SCOPED_TRACE(path);
      auto n = CountByCat(Load(path));
      auto t = ImportOne(path);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(static_cast<int64_t>(t->kernels().size()), n["kernel/X"]);
      EXPECT_EQ(static_cast<int64_t>(t->memcpys().size()), n["gpu_memcpy/X"]);
      EXPECT_EQ(static_cast<int64_t>(t->memsets().size()), n["gpu_memset/X"]);
      EXPECT_EQ(static_cast<int64_t>(t->api_calls().size()), n["cuda_runtime/X"] + n["cuda_driver/X"]);
      EXPECT_EQ(static_cast<int64_t>(t->syncs().size()), n["cuda_sync/X"]);
      EXPECT_EQ(static_cast<int64_t>(t->ranges().size()),
                n["cpu_op/X"] + n["user_annotation/X"] + n["python_function/X"] + n["overhead/X"]);
      EXPECT_EQ(static_cast<int64_t>(t->gpu_ranges().size()), n["gpu_user_annotation/X"]);
      ASSERT_EQ(t->sources().size(), 1u);
      const auto& s = t->sources()[0];
      EXPECT_EQ(s.events_read, n["<all>"]);
      EXPECT_EQ(s.kept_by_category.at("kernel"), n["kernel/X"]);
      EXPECT_EQ(s.kept_by_category.at("cuda_runtime"), n["cuda_runtime/X"]);
      EXPECT_EQ(s.Count(model::Stat::kKinetoLaunchFlow), n["ac2g/s"] + n["ac2g/f"]);
      EXPECT_EQ(s.skipped(), 0);
      // Every arg key torch 2.11 writes is known (kept or deliberately ignored).
      EXPECT_EQ(s.Count(model::Stat::kKinetoUnknownArg), 0);
      EXPECT_TRUE(model::ImportWarnings(t->sources()).empty());
      EXPECT_EQ(s.format, "kineto-json.gz");
      EXPECT_EQ(s.base_time_ns, 1790857026000000000);
      // Every event is accounted for exactly once.
      EXPECT_EQ(s.events_read, s.events_kept + s.skipped() + s.ignored());
      // Flow ids all name correlation ids of the file.
      EXPECT_EQ(s.Count(model::Stat::kKinetoFlowIdUnmatched), 0);
      // Rank from distributedInfo.
      ASSERT_EQ(t->processes().size(), 1u);
      EXPECT_EQ(t->processes()[0].rank, rank);
      EXPECT_EQ(t->processes()[0].world_size, 2);
      EXPECT_EQ(t->str(t->processes()[0].name), "python");
      for (const auto& d : t->devices()) EXPECT_EQ(t->str(d.name), "NVIDIA H200");
    }
  }
}

TEST(KinetoReal, ExactNanosecondsFromTheText) {
  auto t = ImportOne(DataPath("kineto/ag_overlap/rank0.json"));
  ASSERT_TRUE(t.ok()) << t.status();
  // First event of the file: "ProfilerStep#2", "ts": 4430921397268.557, "dur": 302.515, and
  // "baseTimeNanoseconds": 1790857026000000000 at the top level.
  //   start = 1790857026000000000 + 4430921397268557 = 1795287947397268557
  //   end   = start + 302515                       = 1795287947397571072
  auto step = t->FindString("ProfilerStep#2");
  ASSERT_NE(step, model::kNone);
  bool found = false;
  for (const auto& r : t->ranges()) {
    if (r.name != step) continue;
    EXPECT_EQ(r.start_ns, 1795287947397268557);
    EXPECT_EQ(r.end_ns, 1795287947397571072);
    EXPECT_EQ(r.external_id, 513);
    found = true;
  }
  EXPECT_TRUE(found);
  // The all-gather kernel: "ts": 4430921397406.746, "dur": 340.605, stream 17, correlation 2990.
  //   start = 1790857026000000000 + 4430921397406746 = 1795287947397406746
  //   end   = start + 340605                       = 1795287947397747351
  found = false;
  for (const auto& k : t->kernels()) {
    if (k.correlation_id != 2990) continue;
    EXPECT_EQ(k.start_ns, 1795287947397406746);
    EXPECT_EQ(k.end_ns, 1795287947397747351);
    EXPECT_EQ(t->streams()[k.stream].native_id, 17);
    EXPECT_EQ(k.grid.x, 24);
    EXPECT_EQ(k.block.x, 544);
    EXPECT_EQ(k.registers_per_thread, 96);
    EXPECT_EQ(k.shared_memory_bytes, 103808);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(KinetoReal, AllTimestampsAgreeWithDoubleParseWithinOneNs) {
  const std::string path = DataPath("kineto/a2a_async/rank0.json.gz");
  json doc = Load(path);
  auto t = ImportOne(path);
  ASSERT_TRUE(t.ok()) << t.status();
  // A double holds ~16 significant digits, so ts * 1000 via double may be 1 ns off; never more.
  absl::flat_hash_map<int64_t, std::pair<double, double>> by_corr;
  for (const auto& e : doc["traceEvents"])
    if (e.value("cat", "") == "kernel") by_corr[e["args"]["correlation"].get<int64_t>()] = {e["ts"], e["dur"]};
  ASSERT_EQ(by_corr.size(), t->kernels().size());
  for (const auto& k : t->kernels()) {
    auto [ts, dur] = by_corr.at(k.correlation_id);
    int64_t rel = k.start_ns - 1790857026000000000;
    EXPECT_LE(std::llabs(rel - std::llround(ts * 1000)), 1);
    EXPECT_LE(std::llabs((k.end_ns - k.start_ns) - std::llround(dur * 1000)), 1);
  }
}

TEST(KinetoReal, JsonAndGzipAndChunkingGiveIdenticalTraces) {
  for (const char* sc : {"ag_overlap", "d2h_blocking"}) {
    for (int rank = 0; rank < 2; ++rank) {
      std::string base = DataPath(std::string("kineto/") + sc + "/rank" + std::to_string(rank));
      auto plain = ImportOne(base + ".json");
      auto gz = ImportOne(base + ".json.gz");
      ASSERT_TRUE(plain.ok() && gz.ok());
      const std::string want = Dump(*plain);
      EXPECT_EQ(want, Dump(*gz));
      EXPECT_EQ(plain->sources()[0].bytes, gz->sources()[0].bytes);
      // zlib (the fallback where ISA-L is not built in) inflates to the same trace.
      setenv("OVERLAPSCOPE_INFLATE", "zlib", 1);
      auto gz_zlib = ImportOne(base + ".json.gz");
      unsetenv("OVERLAPSCOPE_INFLATE");
      ASSERT_TRUE(gz_zlib.ok()) << gz_zlib.status();
      EXPECT_EQ(want, Dump(*gz_zlib));
      // Small windows force events across chunk boundaries and the N-thread split guesses.
      for (int64_t chunk : {4096, 1000, 777, 65536}) {
        for (int threads : {1, 2, 3, 16}) {
          auto c = ImportOne(base + ".json.gz", threads, chunk);
          ASSERT_TRUE(c.ok()) << c.status();
          EXPECT_EQ(want, Dump(*c)) << "chunk " << chunk << " threads " << threads;
        }
      }
    }
  }
}

TEST(KinetoReal, CollectiveFromNcclKernelArgs) {
  auto t = ImportOne(DataPath("kineto/ag_overlap/rank1.json.gz"));
  ASSERT_TRUE(t.ok()) << t.status();
  // rank1's all-gather kernels carry "Collective name": "_allgather_base", "In msg nelems":
  // 8388608, "Out msg nelems": 16777216, "Group size": 2, "dtype": "Half", "Process Group
  // Name": "0". Bytes = max(in, out) * 2 bytes (Half) = 16777216 * 2 = 33554432 (32 MiB).
  int n = 0;
  for (const auto& k : t->kernels()) {
    if (k.collective == model::kNone) continue;
    const auto& c = t->collectives()[k.collective];
    EXPECT_EQ(t->str(c.op), "_allgather_base");
    EXPECT_EQ(t->str(c.communicator), "0");
    EXPECT_EQ(t->str(c.dtype), "Half");
    EXPECT_EQ(c.in_elements, 8388608);
    EXPECT_EQ(c.out_elements, 16777216);
    EXPECT_EQ(c.bytes, 33554432);
    EXPECT_EQ(c.nranks, 2);
    EXPECT_EQ(c.rank, 1);
    EXPECT_EQ(c.correlation_id, k.correlation_id);
    EXPECT_EQ(c.start_ns, k.start_ns);
    EXPECT_EQ(c.end_ns, k.end_ns);
    EXPECT_EQ(c.stream, k.stream);
    ++n;
  }
  // Independent: kernels with a "Collective name" arg in the JSON.
  int want = 0;
  const json doc = Load(DataPath("kineto/ag_overlap/rank1.json.gz"));
  for (const auto& e : doc["traceEvents"])
    if (e.value("cat", "") == "kernel" && e["args"].contains("Collective name")) ++want;
  EXPECT_GT(want, 0);
  EXPECT_EQ(n, want);
  EXPECT_EQ(static_cast<int>(t->collectives().size()), want);
}

TEST(KinetoReal, SyncThreadsAndKindsByCorrelation) {
  for (const char* sc : {"d2h_blocking", "d2h_nonblocking_event", "a2a_async"}) {
    std::string path = DataPath(std::string("kineto/") + sc + "/rank1.json.gz");
    SCOPED_TRACE(path);
    json doc = Load(path);
    std::map<int64_t, int64_t> api_tid;
    std::map<std::string, int> kinds;
    for (const auto& e : doc["traceEvents"]) {
      std::string cat = e.value("cat", "");
      if (cat == "cuda_runtime" || cat == "cuda_driver") api_tid[e["args"]["correlation"]] = e["tid"];
      if (cat == "cuda_sync") kinds[e["name"]]++;
    }
    auto t = ImportOne(path);
    ASSERT_TRUE(t.ok()) << t.status();
    std::map<std::string, int> got;
    for (const auto& y : t->syncs()) {
      std::string name(t->str(y.name));
      got[name]++;
      using model::SyncKind;
      SyncKind want = name == "Stream Wait Event" ? SyncKind::kStreamWaitEvent
                      : name == "Event Sync"      ? SyncKind::kEventSync
                      : name == "Stream Sync"     ? SyncKind::kStreamSync
                                                  : SyncKind::kContextSync;
      EXPECT_EQ(y.kind, want);
      auto it = api_tid.find(y.correlation_id);
      if (it == api_tid.end()) {
        EXPECT_EQ(y.thread, model::kNone);
      } else {
        ASSERT_NE(y.thread, model::kNone);
        EXPECT_EQ(t->threads()[y.thread].tid, it->second);
      }
      if (y.kind == SyncKind::kEventSync || y.kind == SyncKind::kContextSync) {
        EXPECT_EQ(y.stream, model::kNone);  // "stream": -1
      } else {
        ASSERT_NE(y.stream, model::kNone);
      }
    }
    EXPECT_EQ(got, kinds);
  }
}

TEST(KinetoReal, MemcpyKindsAndAsyncFromTheRuntimeCall) {
  std::string path = DataPath("kineto/d2h_nonblocking_event/rank0.json.gz");
  json doc = Load(path);
  std::map<int64_t, std::string> api_name;
  for (const auto& e : doc["traceEvents"])
    if (e.value("cat", "") == "cuda_runtime") api_name[e["args"]["correlation"]] = e["name"];
  auto t = ImportOne(path);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->memcpys().size(), 3u);
  for (const auto& m : t->memcpys()) {
    EXPECT_EQ(t->str(m.name), "Memcpy DtoH (Device -> Pinned)");
    EXPECT_EQ(m.kind, model::MemcpyKind::kDtoH);
    EXPECT_EQ(m.src_kind, model::MemoryKind::kDevice);
    EXPECT_EQ(m.dst_kind, model::MemoryKind::kPinned);
    EXPECT_EQ(m.bytes, 4);
    ASSERT_TRUE(api_name.count(m.correlation_id));
    EXPECT_EQ(api_name[m.correlation_id], "cudaMemcpyAsync");
    EXPECT_EQ(m.is_async, 1);
  }
  for (const auto& m : t->memsets()) {
    EXPECT_EQ(m.memory_kind, model::MemoryKind::kDevice);
    if (api_name.count(m.correlation_id)) {
      EXPECT_EQ(m.is_async, api_name[m.correlation_id] == "cudaMemsetAsync" ? 1 : 0);
    }
  }
}

TEST(KinetoReal, MultiFileAndDirectoryImport) {
  auto one0 = ImportOne(DataPath("kineto/a2a_sync/rank0.json.gz"));
  auto one1 = ImportOne(DataPath("kineto/a2a_sync/rank1.json.gz"));
  ASSERT_TRUE(one0.ok() && one1.ok());
  auto both = ImportTraces({DataPath("kineto/a2a_sync/rank1.json.gz"), DataPath("kineto/a2a_sync/rank0.json.gz")});
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_EQ(both->processes().size(), 2u);
  EXPECT_EQ(both->processes()[0].rank, 0);  // read in rank order (RankOrder), not as given
  EXPECT_EQ(both->processes()[1].rank, 1);
  EXPECT_NE(both->processes()[0].source, both->processes()[1].source);
  EXPECT_EQ(both->kernels().size(), one0->kernels().size() + one1->kernels().size());
  EXPECT_EQ(both->api_calls().size(), one0->api_calls().size() + one1->api_calls().size());
  EXPECT_EQ(both->collectives().size(), one0->collectives().size() + one1->collectives().size());
  EXPECT_EQ(both->sources().size(), 2u);
  for (const auto& k : both->kernels()) {
    // Each kernel's device belongs to the process of its file: device ordinal == rank here.
    const auto& dev = both->devices()[k.device];
    EXPECT_EQ(dev.ordinal, both->processes()[dev.process].rank);
  }
  // A directory: ag_overlap holds rank{0,1}.json and .json.gz and timings.json; the .json.gz
  // files are taken once each, timings.json is not a trace.
  auto files = ExpandTracePaths({DataPath("kineto/ag_overlap")});
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_TRUE((*files)[0].ends_with("rank0.json.gz"));
  EXPECT_TRUE((*files)[1].ends_with("rank1.json.gz"));
  auto dir = ImportTraces({DataPath("kineto/ag_overlap")});
  ASSERT_TRUE(dir.ok()) << dir.status();
  ASSERT_EQ(dir->processes().size(), 2u);
  EXPECT_EQ(dir->processes()[0].rank, 0);
  EXPECT_EQ(dir->processes()[1].rank, 1);
}

TEST(KinetoReal, StreamAndThreadNamesFromMetadata) {
  auto t = ImportOne(DataPath("kineto/ag_overlap/rank0.json"));
  ASSERT_TRUE(t.ok()) << t.status();
  // "thread_name" metadata: pid 0 tid 17 -> "stream 17 ", pid 628 tid 628 -> "thread 628 (python)".
  bool s17 = false, th = false;
  for (const auto& s : t->streams())
    if (s.native_id == 17) s17 = t->str(s.name) == "stream 17 ";
  for (const auto& x : t->threads())
    if (x.tid == 628) th = t->str(x.name) == "thread 628 (python)";
  EXPECT_TRUE(s17);
  EXPECT_TRUE(th);
  EXPECT_EQ(t->processes()[0].pid, 628);
}

}  // namespace
}  // namespace overlapscope::import::testing
