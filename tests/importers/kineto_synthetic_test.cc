// Synthetic Kineto events for what the real traces do not show: other dtypes and sequence
// numbers of collectives, copy kinds and synchronous copies, stream-wait-event fields, python
// and overhead ranges. Expected values are worked out by hand in the comments.
#include <string>
#include <vector>

#include "test_util.h"

namespace overlapscope::import::testing {
namespace {

std::string Ev(const std::string& cat, const std::string& name, const std::string& pid, const std::string& tid,
               const std::string& ts, const std::string& dur, const std::string& args) {
  return "{\"ph\": \"X\", \"cat\": \"" + cat + "\", \"name\": \"" + name + "\", \"pid\": " + pid + ", \"tid\": " + tid +
         ", \"ts\": " + ts + ", \"dur\": " + dur + ", \"args\": {" + args + "}}";
}

absl::StatusOr<model::Trace> ImportDoc(const std::string& name, const std::vector<std::string>& ev) {
  return ImportOne(WriteTemp(name, Doc(ev)));
}

TEST(KinetoSynthetic, CollectivesFromKernelArgs) {
  const std::string gpu = "\"device\": 3, \"stream\": 20, ";
  auto t = ImportDoc(
      "coll.json",
      {
          // all-reduce of 1000 Float (4 B): bytes = max(1000, 1000) * 4 = 4000
          Ev("kernel", "ncclDevKernel_AllReduce", "3", "20", "100", "5",
             gpu + "\"correlation\": 1, \"Collective name\": \"allreduce\", \"In msg nelems\": 1000, "
                   "\"Out msg nelems\": 1000, \"Group size\": 8, \"dtype\": \"Float\", \"Process Group Name\": \"5\", "
                   "\"Seq\": 42"),
          // reduce-scatter, 8000 in / 1000 out BFloat16 (2 B): bytes = 8000 * 2 = 16000
          Ev("kernel", "ncclDevKernel_ReduceScatter", "3", "20", "200", "5",
             gpu +
                 "\"correlation\": 2, \"Collective name\": \"reduce_scatter\", \"In msg nelems\": 8000, "
                 "\"Out msg nelems\": 1000, \"Group size\": 8, \"dtype\": \"BFloat16\", \"Process Group Name\": \"5\""),
          // unknown dtype: bytes stay unknown (-1), elements are kept
          Ev("kernel", "ncclDevKernel_Broadcast", "3", "20", "300", "5",
             gpu + "\"correlation\": 3, \"Collective name\": \"broadcast\", \"In msg nelems\": 10, "
                   "\"Out msg nelems\": 10, \"dtype\": \"Weird\""),
          // a plain kernel: no collective
          Ev("kernel", "gemm", "3", "20", "400", "5", gpu + "\"correlation\": 4"),
      });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->collectives().size(), 3u);
  const auto& c0 = t->collectives()[0];
  EXPECT_EQ(t->str(c0.op), "allreduce");
  EXPECT_EQ(t->str(c0.communicator), "5");
  EXPECT_EQ(c0.bytes, 4000);
  EXPECT_EQ(c0.nranks, 8);
  EXPECT_EQ(c0.sequence, 42);
  EXPECT_EQ(c0.start_ns, 100000);  // ts 100 us
  EXPECT_EQ(c0.end_ns, 105000);
  EXPECT_EQ(t->devices()[c0.device].ordinal, 3);
  EXPECT_EQ(t->streams()[c0.stream].native_id, 20);
  const auto& c1 = t->collectives()[1];
  EXPECT_EQ(c1.bytes, 16000);
  EXPECT_EQ(c1.in_elements, 8000);
  EXPECT_EQ(c1.out_elements, 1000);
  EXPECT_EQ(c1.sequence, -1);  // no "Seq"
  const auto& c2 = t->collectives()[2];
  EXPECT_EQ(c2.bytes, -1);
  EXPECT_EQ(c2.nranks, model::kNone);  // no "Group size"
  EXPECT_EQ(t->str(c2.dtype), "Weird");
  EXPECT_EQ(t->kernels()[3].collective, model::kNone);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t->kernels()[i].collective, i);
}

TEST(KinetoSynthetic, CopiesAndTheirApiCalls) {
  const std::string gpu = "\"device\": 0, \"stream\": 7, ";
  auto t =
      ImportDoc("copies.json",
                {
                    Ev("cuda_runtime", "cudaMemcpy", "10", "11", "1", "9", "\"correlation\": 50"),
                    Ev("cuda_runtime", "cudaMemcpyAsync", "10", "11", "20", "2", "\"correlation\": 51"),
                    Ev("cuda_driver", "cuMemcpyDtoHAsync_v2", "10", "11", "30", "2", "\"correlation\": 52"),
                    Ev("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", "0", "7", "2", "3",
                       gpu + "\"correlation\": 50, \"bytes\": 1024"),
                    Ev("gpu_memcpy", "Memcpy PtoP (Device -> Device)", "0", "7", "21", "3",
                       gpu + "\"correlation\": 51, \"bytes\": 8"),
                    Ev("gpu_memcpy", "Memcpy DtoH (Device -> Managed)", "0", "7", "31", "3",
                       gpu + "\"correlation\": 52, \"bytes\": 8"),
                    Ev("gpu_memcpy", "Memcpy DtoD (Device -> Array)", "0", "7", "40", "3",
                       gpu + "\"correlation\": 53, \"bytes\": 8"),
                    Ev("gpu_memset", "Memset (Pinned)", "0", "7", "50", "1", gpu + "\"correlation\": 54, \"bytes\": 4"),
                });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->memcpys().size(), 4u);
  using model::MemcpyKind;
  using model::MemoryKind;
  const auto& m = t->memcpys();
  EXPECT_EQ(m[0].kind, MemcpyKind::kHtoD);
  EXPECT_EQ(m[0].src_kind, MemoryKind::kPageable);
  EXPECT_EQ(m[0].dst_kind, MemoryKind::kDevice);
  EXPECT_EQ(m[0].is_async, 0);  // cudaMemcpy
  EXPECT_EQ(m[0].bytes, 1024);
  EXPECT_EQ(m[1].kind, MemcpyKind::kPtoP);
  EXPECT_EQ(m[1].is_async, 1);  // cudaMemcpyAsync
  EXPECT_EQ(m[2].dst_kind, MemoryKind::kManaged);
  EXPECT_EQ(m[2].is_async, 1);  // cuMemcpyDtoHAsync_v2
  EXPECT_EQ(m[3].kind, MemcpyKind::kDtoD);
  EXPECT_EQ(m[3].dst_kind, MemoryKind::kArray);
  EXPECT_EQ(m[3].is_async, -1);  // no API call with correlation 53 in the file
  ASSERT_EQ(t->memsets().size(), 1u);
  EXPECT_EQ(t->memsets()[0].memory_kind, MemoryKind::kPinned);
  EXPECT_EQ(t->sources()[0].Count(model::Stat::kGpuWithoutLaunch), 2);
}

TEST(KinetoSynthetic, SyncFieldsAndHostThread) {
  auto t = ImportDoc("syncs.json",
                     {
                         Ev("cuda_runtime", "cudaStreamWaitEvent", "10", "12", "1", "1", "\"correlation\": 70"),
                         Ev("cuda_runtime", "cudaEventSynchronize", "10", "11", "5", "100", "\"correlation\": 71"),
                         Ev("cuda_sync", "Stream Wait Event", "0", "17", "1.5", "0.75",
                            "\"cuda_sync_kind\": \"Stream Wait Event\", \"wait_on_stream\": 7, "
                            "\"wait_on_cuda_event_record_corr_id\": 123, "
                            "\"wait_on_cuda_event_id\": 5, \"stream\": 17, \"correlation\": 70, \"device\": 0"),
                         Ev("cuda_sync", "Event Sync", "0", "1", "5.25", "99.5",
                            "\"cuda_sync_kind\": \"Event Sync\", \"stream\": -1, \"correlation\": 71, \"device\": 0"),
                         Ev("cuda_sync", "Context Sync", "0", "1", "200", "3",
                            "\"stream\": -1, \"correlation\": 72, \"device\": 0"),  // no API call in the file
                     });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->syncs().size(), 3u);
  const auto& w = t->syncs()[0];  // sorted by start: 1.5 us, 5.25 us, 200 us
  EXPECT_EQ(w.kind, model::SyncKind::kStreamWaitEvent);
  EXPECT_EQ(w.start_ns, 1500);
  EXPECT_EQ(w.end_ns, 2250);  // 1500 + 750
  EXPECT_EQ(t->streams()[w.stream].native_id, 17);
  EXPECT_EQ(t->streams()[w.wait_on_stream].native_id, 7);
  EXPECT_EQ(w.event_record_correlation_id, 123);
  EXPECT_EQ(w.event_id, 5);
  EXPECT_EQ(t->threads()[w.thread].tid, 12);
  const auto& e = t->syncs()[1];
  EXPECT_EQ(e.kind, model::SyncKind::kEventSync);
  EXPECT_EQ(e.stream, model::kNone);
  EXPECT_EQ(e.wait_on_stream, model::kNone);
  EXPECT_EQ(t->threads()[e.thread].tid, 11);
  EXPECT_EQ(e.end_ns, 104750);  // 5250 + 99500
  const auto& c = t->syncs()[2];
  EXPECT_EQ(c.kind, model::SyncKind::kContextSync);
  EXPECT_EQ(c.thread, model::kNone);
  EXPECT_EQ(t->devices()[c.device].ordinal, 0);
  EXPECT_EQ(t->sources()[0].Count(model::Stat::kKinetoSyncWithoutCall), 1);
}

TEST(KinetoSynthetic, HostRangesAndMetadata) {
  auto t = ImportDoc(
      "ranges.json",
      {
          "{\"name\": \"process_labels\", \"ph\": \"M\", \"pid\": 42, \"tid\": 0, \"args\": {\"labels\": \"CPU\"}}",
          "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 42, \"tid\": 0, \"args\": {\"name\": \"trainer\"}}",
          "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 42, \"tid\": 43, \"args\": {\"name\": \"main\"}}",
          "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": \"Spans\", \"tid\": 0, \"args\": "
          "{\"sort_index\": 1}}",
          Ev("python_function", "train.py(10): step", "42", "43", "1", "10", "\"Python id\": 3"),
          Ev("overhead", "Instrumentation", "42", "43", "2", "1", ""),
          Ev("cpu_op", "aten::mm", "42", "43", "3", "4", "\"External id\": 9"),
          Ev("user_annotation", "ProfilerStep#1", "42", "43", "0", "20", "\"External id\": 8"),
      });
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->ranges().size(), 4u);
  using model::RangeKind;
  EXPECT_EQ(t->ranges()[0].kind, RangeKind::kUserAnnotation);  // ts 0
  EXPECT_EQ(t->ranges()[1].kind, RangeKind::kPythonFunction);  // ts 1
  EXPECT_EQ(t->ranges()[2].kind, RangeKind::kOverhead);        // ts 2
  EXPECT_EQ(t->ranges()[3].kind, RangeKind::kCpuOp);           // ts 3
  EXPECT_EQ(t->ranges()[3].external_id, 9);
  EXPECT_EQ(t->processes()[0].pid, 42);
  EXPECT_EQ(t->str(t->processes()[0].name), "trainer");
  ASSERT_EQ(t->threads().size(), 1u);
  EXPECT_EQ(t->str(t->threads()[0].name), "main");
  const auto& s = t->sources()[0];
  EXPECT_EQ(s.kept_by_category.at("M"), 3);
  EXPECT_EQ(s.Count(model::Stat::kKinetoDisplayMetadata), 1);
  EXPECT_EQ(s.kept_by_category.at("python_function"), 1);
  EXPECT_EQ(s.kept_by_category.at("overhead"), 1);
  EXPECT_EQ(DetailOf(s, model::Stat::kKinetoUnknownArg, "Python id"), 0);  // a known Kineto arg, not "unknown"
}

}  // namespace
}  // namespace overlapscope::import::testing

namespace overlapscope::import::testing {
namespace {

TEST(KinetoSynthetic, EventsLargerThanTheWindow) {
  // A 600 KB args array and a 300 KB name: larger than the 256 KiB room kept for an unparsed
  // tail and than small windows, so the window must grow; the result must not depend on it.
  std::string dims = "[";
  for (int i = 0; i < 100000; ++i) dims += (i ? ", [" : "[") + std::to_string(i) + "]";
  dims += "]";
  std::string long_name(300000, 'n');
  std::vector<std::string> ev;
  for (int i = 0; i < 6; ++i) {
    ev.push_back("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" + (i % 2 ? long_name : "op") +
                 "\", \"pid\": 1, \"tid\": 2, \"ts\": " + std::to_string(10 * i) +
                 ", \"dur\": 1, \"args\": {\"Input Dims\": " + dims + ", \"External id\": " + std::to_string(i) + "}}");
  }
  std::string path = WriteTemp("huge_events.json", Doc(ev));
  auto ref = ImportOne(path, 1);
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_EQ(ref->ranges().size(), 6u);
  EXPECT_EQ(ref->str(ref->ranges()[1].name).size(), 300000u);
  EXPECT_EQ(ref->ranges()[5].external_id, 5);
  const std::string want = Dump(*ref);
  for (int64_t chunk : {4096, 100000, 1 << 20}) {
    for (int threads : {1, 2, 5, 16}) {
      auto t = ImportOne(path, threads, chunk);
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_EQ(Dump(*t), want) << "chunk " << chunk << " threads " << threads;
    }
  }
}

TEST(KinetoSynthetic, BlocksReadInSlicesOnManyThreads) {
  // 16 and 32 parser threads read each 16 MiB block of a plain file in 4 and 8 slices at once
  // (input_stream.cc); the file's last block is short (the end of the file falls in a slice).
  // Same trace as one thread, and a cut file fails at the same offset with the same message.
  std::vector<std::string> ev;
  for (int i = 0; i < 120000; ++i) {
    const std::string ts = std::to_string(1000 + 10 * i), corr = std::to_string(i + 1);
    ev.push_back(
        "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 2, "
        "\"ts\": " +
        ts + ", \"dur\": 3, \"args\": {\"correlation\": " + corr + "}}");
    ev.push_back("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" + std::to_string(i % 7) +
                 "\", \"pid\": 0, \"tid\": 7, \"ts\": " + ts +
                 ".5, \"dur\": 4, \"args\": {\"device\": 0, "
                 "\"stream\": 7, \"correlation\": " +
                 corr + "}}");
  }
  const std::string text = Doc(ev);
  ASSERT_GT(text.size(), size_t{24} << 20);
  const std::string path = WriteTemp("sliced.json", text);
  auto ref = ImportOne(path, 1, int64_t{16} << 20);
  ASSERT_TRUE(ref.ok()) << ref.status();
  ASSERT_EQ(ref->kernels().size(), 120000u);
  const std::string want = Dump(*ref);
  for (int threads : {16, 32}) {
    auto t = ImportOne(path, threads, int64_t{16} << 20);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(Dump(*t), want) << threads << " threads";
  }
  const std::string cut = WriteTemp("sliced_cut.json", text.substr(0, (size_t{20} << 20) + 12345));
  auto one = ImportOne(cut, 1, int64_t{16} << 20);
  ASSERT_FALSE(one.ok());
  auto many = ImportOne(cut, 32, int64_t{16} << 20);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.status().message(), one.status().message());
}

}  // namespace
}  // namespace overlapscope::import::testing
