// The import's parallel steps against one thread: a window's outputs merged in slices beside the
// ordered duplicate check (kineto_merge.cc), and the end-of-file joins and counts (kineto_finish.cc:
// the wanted ids in shards, the unmatched flows searched among the ids outside the API ids), on
// synthetic traces whose counts are known by construction, at 1, 2, 3 and 16 threads and in
// small windows (many windows, many parts each).
#include <algorithm>
#include <string>
#include <vector>

#include "test_util.h"

namespace overlapscope::import::testing {
namespace {

std::string X(const std::string& cat, const std::string& name, int tid, int64_t ts_us, const std::string& args) {
  return "{\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name +
         "\", \"pid\": " + (cat.rfind("cuda", 0) == 0 ? "10" : "0") + ", \"tid\": " + std::to_string(tid) +
         ", \"ts\": " + std::to_string(ts_us) + ", \"dur\": 1, \"args\": {" + args + "}}";
}

std::string Flow(int64_t id, int64_t ts_us) {
  return "{\"ph\": \"s\", \"id\": " + std::to_string(id) +
         ", \"pid\": 10, \"tid\": 11, \"ts\": " + std::to_string(ts_us) + ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}";
}

// Block b (correlation c = 1000 + 4b, at 10b us): a copy call (synchronous when b % 3 == 0) and its
// copy; a second call with c when b % 50 == 7 (a duplicate: skipped); a kernel with c + 1, launched
// by a call unless b % 4 == 0 (an orphan); a memset with c + 2 and no call when b % 7 == 0 (an
// orphan); a sync with c when b % 10 == 0 and with an id no call has when b % 10 == 5; a launch
// flow with c (b % 6 == 0), c + 1 (b % 6 == 1: a call's, or the orphan kernel's), or an id nothing
// has (b % 6 == 2: unmatched).
std::string Blocks(int blocks) {
  std::vector<std::string> ev;
  const std::string gpu = "\"device\": 0, \"stream\": 7, ";
  for (int b = 0; b < blocks; ++b) {
    const int64_t c = 1000 + 4 * int64_t{b}, ts = 10 * int64_t{b};
    const std::string corr = "\"correlation\": " + std::to_string(c);
    ev.push_back(X("cuda_runtime", b % 3 == 0 ? "cudaMemcpy" : "cudaMemcpyAsync", 11 + b % 3, ts, corr));
    if (b % 50 == 7) ev.push_back(X("cuda_runtime", "cudaMemcpy", 14, ts, corr));
    ev.push_back(X("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, ts + 1, gpu + corr + ", \"bytes\": 8"));
    const std::string corr1 = "\"correlation\": " + std::to_string(c + 1);
    if (b % 4 != 0) ev.push_back(X("cuda_runtime", "cudaLaunchKernel", 11, ts + 2, corr1));
    ev.push_back(X("kernel", "k" + std::to_string(b % 5), 7, ts + 3, gpu + corr1));
    if (b % 7 == 0)
      ev.push_back(X("gpu_memset", "Memset (Device)", 7, ts + 4, gpu + "\"correlation\": " + std::to_string(c + 2)));
    if (b % 10 == 0 || b % 10 == 5)
      ev.push_back(X("cuda_sync", "Event Sync", 1, ts + 5,
                     "\"cuda_sync_kind\": \"Event Sync\", \"stream\": -1, \"device\": 0, \"correlation\": " +
                         std::to_string(b % 10 == 0 ? c : 900000 + b)));
    if (b % 6 <= 2) ev.push_back(Flow(b % 6 == 0 ? c : b % 6 == 1 ? c + 1 : 700000 + b, ts + 6));
  }
  return Doc(ev);
}

int64_t CountOf(int blocks, int mod, std::vector<int> rests) {
  int64_t n = 0;
  for (int b = 0; b < blocks; ++b)
    for (int r : rests) n += b % mod == r;
  return n;
}

TEST(KinetoThreads, MergeAndFinishSameAtEveryThreadCount) {
  constexpr int kBlocks = 3000;
  const std::string path = WriteTemp("threads_blocks.json", Blocks(kBlocks));
  auto one = ImportOne(path, 1, int64_t{64} << 10);
  ASSERT_TRUE(one.ok()) << one.status();
  const model::SourceStats& s = one->sources()[0];
  EXPECT_EQ(DetailOf(s, model::Stat::kKinetoRuntimeEventSkipped, "duplicate correlation id"),
            CountOf(kBlocks, 50, {7}));                                                                     // 60
  EXPECT_EQ(s.Count(model::Stat::kGpuWithoutLaunch), CountOf(kBlocks, 4, {0}) + CountOf(kBlocks, 7, {0}));  // 750 + 429
  EXPECT_EQ(s.Count(model::Stat::kKinetoFlowIdUnmatched), CountOf(kBlocks, 6, {2}));                        // 500
  EXPECT_EQ(s.Count(model::Stat::kKinetoSyncWithoutCall), CountOf(kBlocks, 10, {5}));                       // 300
  ASSERT_EQ(one->api_calls().size(), static_cast<size_t>(kBlocks + kBlocks - CountOf(kBlocks, 4, {0})));
  ASSERT_EQ(one->memcpys().size(), static_cast<size_t>(kBlocks));
  for (const model::Memcpy& m : one->memcpys()) {
    const int64_t b = (m.correlation_id - 1000) / 4;
    EXPECT_EQ(m.is_async, b % 3 == 0 ? 0 : 1) << b;  // the first call's (the duplicates are cudaMemcpy)
  }
  for (const model::Sync& y : one->syncs()) {
    if (y.correlation_id >= 900000)
      EXPECT_EQ(y.thread, model::kNone);
    else
      EXPECT_EQ(one->threads()[y.thread].tid, 11 + (y.correlation_id - 1000) / 4 % 3);
  }
  const std::string want = Dump(*one);
  for (int threads : {2, 3, 16})
    for (int64_t chunk : {int64_t{64} << 10, int64_t{256} << 10, int64_t{0}}) {
      auto t = ImportOne(path, threads, chunk);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(Dump(*t), want) << "threads " << threads << " chunk " << chunk;
    }
}

// ROCm traces of 2021-2023: HIP calls and GPU work with "External id" only, which becomes their
// correlation id at the end of the file; two calls may then share one (not checked for
// duplicates: both are kept), and a copy is joined to the first of them.
TEST(KinetoThreads, HipExternalIdsSameAtEveryThreadCount) {
  std::vector<std::string> ev;
  const std::string gpu = "\"device\": 0, \"stream\": 7, ";
  constexpr int kCopies = 2000;
  for (int b = 0; b < kCopies; ++b) {
    const std::string ext = "\"External id\": " + std::to_string(100 + b);
    ev.push_back(X("cuda_runtime", b % 2 == 0 ? "hipMemcpy" : "hipMemcpyAsync", 11, 10 * b, ext));
    ev.push_back(X("cuda_runtime", b % 2 == 0 ? "hipMemcpyAsync" : "hipMemcpy", 12, 10 * b + 1, ext));  // same id
    ev.push_back(X("gpu_memcpy", "CopyHostToDevice", 7, 10 * b + 2, gpu + ext + ", \"bytes\": 8"));
  }
  const std::string path = WriteTemp("threads_hip.json", Doc(ev));
  auto one = ImportOne(path, 1, int64_t{64} << 10);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->sources()[0].Count(model::Stat::kKinetoCorrelationFromExternalId), 3 * kCopies);
  ASSERT_EQ(one->memcpys().size(), static_cast<size_t>(kCopies));
  for (const model::Memcpy& m : one->memcpys())
    EXPECT_EQ(m.is_async, (m.correlation_id - 100) % 2 == 0 ? 0 : 1) << m.correlation_id;  // the first call's
  const std::string want = Dump(*one);
  for (int threads : {2, 3, 16}) {
    auto t = ImportOne(path, threads, int64_t{64} << 10);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(Dump(*t), want) << "threads " << threads;
  }
}

// record_shapes' matrix products (a real 2 x H100 capture with "Input Dims") are merged by the
// window's parallel copies like the other host events: the same list, in file order, at every
// thread count and window size (they were once appended from several copy tasks at once).
TEST(KinetoThreads, OpShapesSameAtEveryThreadCount) {
  const std::string path =
      std::string(OVERLAPSCOPE_SOURCE_DIR) + "/tests/data/whatif_torch_shapes/g2_m8192/run1/a2a_sync/rank0.json.gz";
  auto one = ImportOne(path, 1, int64_t{64} << 10);
  ASSERT_TRUE(one.ok()) << one.status();
  auto text = [](const model::Trace& t) {
    std::string s;
    for (const model::OpShape& o : t.op_shapes())
      s += std::to_string(o.thread) + " " + std::to_string(o.external_id) + " " + std::string(t.str(o.op)) + " " +
           std::to_string(o.m) + "x" + std::to_string(o.n) + "x" + std::to_string(o.k) + "x" + std::to_string(o.batch) +
           "\n";
    return s;
  };
  ASSERT_GT(one->op_shapes().size(), 100u);  // 19 steps of 4 layers' two matmuls
  const std::string want = text(*one);
  for (int threads : {2, 3, 16})
    for (int64_t chunk : {int64_t{64} << 10, int64_t{0}}) {
      auto t = ImportOne(path, threads, chunk);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(text(*t), want) << "threads " << threads << " chunk " << chunk;
    }
}

// A minified file (no newline anywhere: the split cannot start at one) reads the same at every
// thread count and window size, and the same model and counts as the file with one event per
// line (only the examples' byte offsets differ).
TEST(KinetoThreads, MinifiedFileSameAtEveryThreadCount) {
  constexpr int kBlocks = 1500;
  std::string minified = Blocks(kBlocks);
  const auto without_examples = [](const std::string& dump) {
    std::string out;
    size_t at = 0;
    while (at < dump.size()) {
      const size_t end = std::min(dump.find('\n', at), dump.size());
      if (dump.compare(at, 4, " ex ") != 0) out.append(dump, at, end + 1 - at);
      at = end + 1;
    }
    return out;
  };
  auto lines = ImportOne(WriteTemp("threads_lines.json", minified), 1);
  ASSERT_TRUE(lines.ok()) << lines.status();
  minified.erase(std::remove(minified.begin(), minified.end(), '\n'), minified.end());
  const std::string path = WriteTemp("threads_minified.json", minified);
  auto one = ImportOne(path, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  const std::string want = Dump(*one);
  EXPECT_EQ(without_examples(want), without_examples(Dump(*lines)));
  for (int threads : {2, 16})
    for (int64_t chunk : {int64_t{64} << 10, int64_t{0}}) {
      auto t = ImportOne(path, threads, chunk);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(Dump(*t), want) << "threads " << threads << " chunk " << chunk;
    }
}

}  // namespace
}  // namespace overlapscope::import::testing
