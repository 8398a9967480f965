// Bad input: unreadable files fail with "<path>: offset <N>: <reason>"; bad events are skipped
// and counted by reason with an example "offset N: reason". Synthetic files; the expected
// offsets are positions in the test's own text (found with std::string::find).
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "test_util.h"

namespace overlapscope::import::testing {
namespace {

std::string Kernel(const std::string& ts, const std::string& dur, const std::string& corr,
                   const std::string& extra_args = "", const std::string& name = "k") {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name + "\", \"pid\": 0, \"tid\": 7, \"ts\": " + ts +
         ", \"dur\": " + dur + ", \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " + corr + extra_args +
         "}}";
}

std::string Runtime(const std::string& ts, const std::string& corr, const std::string& name = "cudaLaunchKernel") {
  return "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"" + name +
         "\", \"pid\": 10, \"tid\": 11, \"ts\": " + ts + ", \"dur\": 1.5, \"args\": {\"correlation\": " + corr + "}}";
}

// Imports `content` written to a temp file; returns the status text or "" with *trace set.
std::string Try(const std::string& name, const std::string& content, absl::StatusOr<model::Trace>* trace,
                bool gz = false) {
  std::string path = WriteTemp(name, content, gz);
  *trace = ImportOne(path);
  return trace->ok() ? "" : std::string(trace->status().message());
}

std::string ErrorOf(const std::string& name, const std::string& content, bool gz = false) {
  absl::StatusOr<model::Trace> t;
  return Try(name, content, &t, gz);
}

std::string P(const std::string& name) { return TempPath(name); }

TEST(KinetoBadInput, UnreadableFilesAreErrorsWithOffsets) {
  EXPECT_EQ(ErrorOf("empty.json", ""), P("empty.json") + ": offset 0: empty file");
  EXPECT_EQ(ErrorOf("text.json", "hello"),
            P("text.json") + ": offset 0: top level is neither a JSON object nor an array of events");
  // A bare array is read as the events (Kineto before 1.8): numbers are no events.
  EXPECT_EQ(ErrorOf("array.json", "  [1, 2]"),
            P("array.json") + ": offset 3: expected '{' (an event object) in traceEvents");
  EXPECT_EQ(ErrorOf("array_tail.json", "[] x"), P("array_tail.json") + ": offset 3: data after the top-level array");
  // Truncated inside the event array: the offset is the end of the data.
  std::string full = Doc({Kernel("10", "1", "1"), Kernel("20", "1", "2")});
  std::string cut = full.substr(0, full.find("\"ts\": 20"));
  EXPECT_EQ(ErrorOf("cut.json", cut),
            P("cut.json") + ": offset " + std::to_string(cut.size()) + ": unexpected end of data (truncated file?)");
  // Missing ',' between two keys of an event: the offset is the unexpected '"'.
  std::string bad = Doc({"{\"ph\": \"X\" \"cat\": \"kernel\"}"});
  size_t at = bad.find("\"cat\"");
  EXPECT_EQ(ErrorOf("comma.json", bad),
            P("comma.json") + ": offset " + std::to_string(at) + ": expected ',' or '}' in event");
  // Two events without a ',' between them.
  std::string two = "{\"traceEvents\": [{\"ph\": \"i\"} {\"ph\": \"i\"}]}";
  EXPECT_EQ(ErrorOf("two.json", two),
            P("two.json") + ": offset " + std::to_string(two.find("} {") + 2) + ": expected ',' or ']' after an event");
  EXPECT_EQ(ErrorOf("noevents.json", "{\"schemaVersion\": 1}"),
            P("noevents.json") + ": offset 20: no traceEvents array in the file");
  EXPECT_EQ(ErrorOf("notarray.json", "{\"traceEvents\": 5}"),
            P("notarray.json") + ": offset 16: traceEvents is not an array");
  EXPECT_EQ(ErrorOf("after.json", "{\"traceEvents\": []} x"),
            P("after.json") + ": offset 20: data after the top-level object");
  auto t = ImportOne(P("does_not_exist.json"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), P("does_not_exist.json") + ": offset 0: cannot open: no such file or directory");
}

// The bytes of a file as stored (no inflate).
std::string RawBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void CheckGzipErrors() {
  std::string doc = Doc({Kernel("10", "1", "1"), Kernel("20", "1", "2")});
  std::string gz_path = WriteTemp("good.json.gz", doc, true);
  std::string bytes = ReadFileText(gz_path);  // decompressed: same as doc
  ASSERT_EQ(bytes, doc);
  // Truncated compressed stream.
  std::string raw;
  {
    std::ifstream f(gz_path, std::ios::binary);
    raw.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::string cut_path = WriteTemp("cut.json.gz", raw.substr(0, raw.size() / 2));
  auto t = ImportOne(cut_path);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(std::string(t.status().message()).starts_with(cut_path + ": offset "));
  EXPECT_NE(std::string(t.status().message()).find("truncated"), std::string::npos) << t.status();
  // Corrupt deflate data after the 10-byte gzip header.
  std::string corrupt = raw;
  for (size_t i = 12; i < corrupt.size() - 8; i += 3) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5A);
  std::string corrupt_path = WriteTemp("corrupt.json.gz", corrupt);
  t = ImportOne(corrupt_path);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(std::string(t.status().message()).starts_with(corrupt_path + ": offset ")) << t.status();
  // Two members are one stream; trailing garbage after a member is an error.
  const std::string half1 = doc.substr(0, 40), half2 = doc.substr(40);
  std::string m1 = RawBytes(WriteTemp("m1.json.gz", half1, true));
  std::string m2 = RawBytes(WriteTemp("m2.json.gz", half2, true));
  t = ImportOne(WriteTemp("members.json.gz", m1 + m2));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kernels().size(), 2u);
  t = ImportOne(WriteTemp("garbage.json.gz", raw + "garbage!"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.status().message()).find("gzip error"), std::string::npos) << t.status();
}

TEST(KinetoBadInput, GzipErrors) {
  for (const char* inflater : {"", "zlib"}) {
    SCOPED_TRACE(std::string("OVERLAPSCOPE_INFLATE=") + inflater);
    setenv("OVERLAPSCOPE_INFLATE", inflater, 1);
    CheckGzipErrors();
  }
  unsetenv("OVERLAPSCOPE_INFLATE");
}

// The offset of an error "<path>: offset <N>: ..." (-1 when the message has none).
int64_t OffsetOf(const std::string& message) {
  const size_t at = message.find(": offset ");
  return at == std::string::npos ? -1 : std::atoll(message.c_str() + at + 9);
}

// A truncated .json.gz names where the inflated data broke, whichever inflate reads it: the
// parallel one too, though the chunk that breaks holds all the bytes (offset 0 before) — it
// counts what that chunk decoded, at most a few symbols past the streaming inflates' offset (the
// last ones read from past the end).
TEST(KinetoBadInput, TruncatedGzipOffsetIsWhereItBrokeWithEveryInflate) {
  std::vector<std::string> ev;
  for (int i = 0; i < 20000; ++i)
    ev.push_back(Kernel(std::to_string(10 + 3 * i), std::to_string(1 + i % 7), std::to_string(i)));
  const std::string raw = RawBytes(WriteTemp("long.json.gz", Doc(ev), true));
  ASSERT_GT(raw.size(), 64u << 10);  // several deflate blocks
  const std::string cut_path = WriteTemp("long_cut.json.gz", raw.substr(0, raw.size() * 2 / 3));
  std::vector<int64_t> at;
  for (const char* inflater : {"serial", "zlib", "parallel"}) {
    setenv("OVERLAPSCOPE_INFLATE", inflater, 1);
    auto t = ImportOne(cut_path);
    ASSERT_FALSE(t.ok()) << inflater;
    const std::string m(t.status().message());
    EXPECT_TRUE(m.starts_with(cut_path + ": offset ")) << m;
    EXPECT_NE(m.find("truncated gzip stream"), std::string::npos) << m;
    at.push_back(OffsetOf(m));
  }
  // On 6 threads the chunk that breaks is one decoded from a guessed start, after kept ones.
  auto six = ImportOne(cut_path, 6);
  ASSERT_FALSE(six.ok());
  at.push_back(OffsetOf(std::string(six.status().message())));
  unsetenv("OVERLAPSCOPE_INFLATE");
  EXPECT_GT(at[0], static_cast<int64_t>(Doc(ev).size() / 2)) << "serial";
  EXPECT_NEAR(at[1], at[0], 16) << "zlib against serial";
  EXPECT_GE(at[2], at[0]) << "parallel against serial";
  EXPECT_LE(at[2], at[0] + 1024) << "parallel against serial";
  EXPECT_GE(at[3], at[0]) << "parallel, 6 threads, against serial";
  EXPECT_LE(at[3], at[0] + 1024) << "parallel, 6 threads, against serial";
}

TEST(KinetoBadInput, BadEventsAreSkippedAndCountedByReason) {
  // One malformed event per line, with the reason it must be skipped for.
  // clang-format off
  std::vector<std::string> ev = {
      Kernel("10", "1", "1"),                                            // fine
      Kernel("\"abc\"", "1", "2"),                                       // ts not a number
      Kernel("30", "-1", "3"),                                           // negative dur
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"dur\": 1}",  // missing ts
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1}",   // missing dur
      Kernel("NaN", "1", "6"),                                           // ts not finite
      Kernel("50", "Infinity", "7"),                                     // dur not finite
      Kernel("99999999999999999999", "1", "8"),                          // ts beyond int64 ns
      Kernel("60", "1", "\"x\""),                                        // bad arg value: correlation
      Kernel("70", "1", "1e30"),                                         // bad arg value: correlation
      Kernel("80", "1", "9", ", \"grid\": \"big\""),                     // bad arg value: grid
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 10, \"tid\": \"main\", \"ts\": 1, \"dur\": 1}",  // tid
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": {}, \"tid\": 7, \"ts\": 1, \"dur\": 1}",  // device
      "{\"ph\": \"B\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 10, \"tid\": 11, \"ts\": 1}",  // unsupported ph
      "{\"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 10, \"tid\": 11, \"ts\": 1}",                 // missing ph
      "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": 5, \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 1}",  // name
  };
  // clang-format on
  absl::StatusOr<model::Trace> t;
  std::string content = Doc(ev);
  ASSERT_EQ(Try("bad_events.json", content, &t), "");
  ASSERT_EQ(t->kernels().size(), 1u);
  EXPECT_EQ(t->kernels()[0].correlation_id, 1);
  const auto& s = t->sources()[0];
  EXPECT_EQ(s.events_read, 16);
  EXPECT_EQ(s.events_kept, 1);
  EXPECT_EQ(s.skipped(), 15);
  const std::map<std::string, int64_t> want = {{"ts not a number", 1},     {"negative dur", 1},
                                               {"missing ts", 1},          {"missing dur", 1},
                                               {"ts not finite", 1},       {"dur not finite", 1},
                                               {"ts beyond int64 ns", 1},  {"bad arg value: correlation", 2},
                                               {"bad arg value: grid", 1}, {"tid not an integer", 1},
                                               {"missing device", 1},      {"unsupported ph", 1},
                                               {"missing ph", 1},          {"name not a string", 1}};
  EXPECT_EQ(SkipDetails(s), want);
  // Counted under what the events are: 12 kernels, 1 host range, 2 of no readable kind (B and a
  // missing ph: the cpu_op category is known, the event's kind is not). Skipped kernels are
  // data loss: every output warns.
  EXPECT_EQ(s.Count(model::Stat::kKinetoGpuEventSkipped), 12);
  EXPECT_EQ(s.Count(model::Stat::kKinetoHostEventSkipped), 1);
  EXPECT_EQ(s.Count(model::Stat::kKinetoEventUnreadable), 2);
  EXPECT_FALSE(model::ImportWarnings(t->sources()).empty());
  // Examples name the byte offset of the skipped event's '{'.
  ASSERT_GE(s.examples.size(), 2u);
  size_t second = content.find(ev[1]);
  EXPECT_EQ(s.examples[0], "offset " + std::to_string(second) + ": ts not a number");
  size_t third = content.find(ev[2]);
  EXPECT_EQ(s.examples[1], "offset " + std::to_string(third) + ": negative dur");
}

TEST(KinetoBadInput, DuplicateCorrelationIdsUnsortedEventsAndBadUtf8) {
  std::vector<std::string> ev = {Runtime("30", "5"), Runtime("10", "5", "cudaMemcpyAsync"), Kernel("40", "2", "5"),
                                 Kernel("20", "2", "6", "", "bad\xFFname")};
  std::string content = Doc(ev);
  absl::StatusOr<model::Trace> t;
  ASSERT_EQ(Try("dups.json", content, &t), "");
  const auto& s = t->sources()[0];
  EXPECT_EQ(DetailOf(s, model::Stat::kKinetoRuntimeEventSkipped, "duplicate correlation id"), 1);
  EXPECT_EQ(s.examples.at(0), "offset " + std::to_string(content.find(ev[1])) + ": duplicate correlation id");
  ASSERT_EQ(t->api_calls().size(), 1u);
  EXPECT_EQ(t->str(t->api_calls()[0].name), "cudaLaunchKernel");  // the first in the file wins
  // Unsorted in the file, sorted in the trace (no base time here: ns = us * 1000).
  ASSERT_EQ(t->kernels().size(), 2u);
  EXPECT_EQ(t->kernels()[0].start_ns, 20000);
  EXPECT_EQ(t->kernels()[1].start_ns, 40000);
  EXPECT_EQ(t->str(t->kernels()[0].name), "bad\xEF\xBF\xBDname");
  EXPECT_EQ(s.Count(model::Stat::kStringsRepaired), 1);
}

TEST(KinetoBadInput, UnknownCategoriesAndArgsAreCounted) {
  std::vector<std::string> ev = {
      "{\"ph\": \"X\", \"cat\": \"fancy_new_cat\", \"name\": \"x\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}",
      "{\"ph\": \"X\", \"name\": \"nocat\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}",
      Kernel("10", "1", "1", ", \"my arg\": [1, {\"a\": 2}], \"other\": \"s\""),
      "{\"ph\": \"s\", \"id\": 1, \"pid\": 1, \"tid\": 1, \"ts\": 1, \"cat\": \"ac2g\", \"name\": \"ac2g\"}",
      "{\"ph\": \"f\", \"id\": 99, \"pid\": 1, \"tid\": 1, \"ts\": 1, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": "
      "\"e\"}",
  };
  absl::StatusOr<model::Trace> t;
  ASSERT_EQ(Try("unknown.json", Doc(ev), &t), "");
  const auto& s = t->sources()[0];
  // Neither unknown category looks like device activity (no device/stream/correlation args, no
  // device-like name): info, not data loss.
  EXPECT_EQ(DetailOf(s, model::Stat::kKinetoCategoryUnknown, "fancy_new_cat"), 1);
  EXPECT_EQ(DetailOf(s, model::Stat::kKinetoCategoryUnknown, "<none>"), 1);
  EXPECT_EQ(s.Count(model::Stat::kKinetoDeviceCategoryUnknown), 0);
  EXPECT_EQ(DetailOf(s, model::Stat::kKinetoUnknownArg, "my arg"), 1);
  EXPECT_EQ(DetailOf(s, model::Stat::kKinetoUnknownArg, "other"), 1);
  EXPECT_EQ(s.Count(model::Stat::kKinetoLaunchFlow), 2);
  // Flow id 1 is the kernel's correlation id; 99 matches nothing.
  EXPECT_EQ(s.Count(model::Stat::kKinetoFlowIdUnmatched), 1);
  EXPECT_TRUE(model::ImportWarnings(t->sources()).empty());
  EXPECT_EQ(s.events_read, 5);
  EXPECT_EQ(s.events_kept, 1);
}

TEST(KinetoBadInput, BaseTimeBeforeOrAfterEventsGivesTheSameNanoseconds) {
  std::vector<std::string> ev = {Kernel("4430921397406.746", "340.605", "1")};
  // 1790857026000000000 + 4430921397406746 = 1795287947397406746; + 340605 = 1795287947397747351
  absl::StatusOr<model::Trace> before, after;
  ASSERT_EQ(Try("base_before.json", Doc(ev, "  \"baseTimeNanoseconds\": 1790857026000000000,\n"), &before), "");
  ASSERT_EQ(Try("base_after.json", Doc(ev, "", ",\n  \"baseTimeNanoseconds\": 1790857026000000000"), &after), "");
  for (const auto* t : {&before, &after}) {
    ASSERT_EQ((*t)->kernels().size(), 1u);
    EXPECT_EQ((*t)->kernels()[0].start_ns, 1795287947397406746);
    EXPECT_EQ((*t)->kernels()[0].end_ns, 1795287947397747351);
    EXPECT_EQ((*t)->sources()[0].base_time_ns, 1790857026000000000);
  }
  // A base that pushes ts beyond int64 is a file-level error (every timestamp would be wrong).
  std::string content = Doc(ev, "  \"baseTimeNanoseconds\": 9223372036854775000,\n");
  EXPECT_EQ(ErrorOf("base_overflow.json", content),
            P("base_overflow.json") + ": offset " + std::to_string(content.find("9223372036854775000")) +
                ": baseTimeNanoseconds + ts beyond the supported range (|t| <= 4e18 ns)");
}

TEST(KinetoBadInput, RankFromDistributedInfoOrFileName) {
  EXPECT_EQ(RankFromFileName("/x/y/rank3.json"), 3);
  EXPECT_EQ(RankFromFileName("trace_rank_12.json.gz"), 12);
  EXPECT_EQ(RankFromFileName("Rank-4.pt.trace.json"), 4);
  EXPECT_EQ(RankFromFileName("/runs/worker-7.json"), 7);
  EXPECT_EQ(RankFromFileName("/rank9/trace.json"), -1);  // the base name only
  EXPECT_EQ(RankFromFileName("host_1234.1700000000.pt.trace.json"), -1);
  std::vector<std::string> ev = {Kernel("1", "1", "1")};
  absl::StatusOr<model::Trace> t;
  ASSERT_EQ(Try("job-5.json", Doc(ev), &t), "");
  EXPECT_EQ(t->processes()[0].rank, 5);
  ASSERT_EQ(Try("plain.json", Doc(ev), &t), "");
  EXPECT_EQ(t->processes()[0].rank, model::kNone);
  // distributedInfo wins over the name.
  ASSERT_EQ(Try("rank7.json",
                Doc(ev, "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 2, \"world_size\": 4},\n"), &t),
            "");
  EXPECT_EQ(t->processes()[0].rank, 2);
  EXPECT_EQ(t->processes()[0].world_size, 4);
}

TEST(KinetoBadInput, HostFromPyTorchFileName) {
  // tensorboard_trace_handler's default: <host>_<pid>.<time>.pt.trace.json[.gz], the time in ns
  // (time.time_ns(), 19 digits) or, in older PyTorch, in ms (13 digits).
  EXPECT_EQ(HostFromTraceFileName("/runs/n1.cluster_1234.1700000000000000000.pt.trace.json"), "n1.cluster");
  EXPECT_EQ(HostFromTraceFileName("gpu-node-7_99.1623143089861.pt.trace.json.gz"), "gpu-node-7");
  EXPECT_EQ(HostFromTraceFileName("rank0.json.gz"), "");
  EXPECT_EQ(HostFromTraceFileName("worker_a.1623143089861.pt.trace.json"), "");  // no pid: a custom worker name
  EXPECT_EQ(HostFromTraceFileName("_12.1623143089861.pt.trace.json"), "");       // nothing left for the host
  EXPECT_EQ(HostFromTraceFileName("host_12.pt.trace.json"), "");                 // no time stamp
  EXPECT_EQ(HostFromTraceFileName("host_12.17.pt.trace.json"), "");              // 17 is no time stamp
  // HTA's test data: "rank-0.Apr_03_18_51_38.1102" is a worker name with a date, no host.
  EXPECT_EQ(HostFromTraceFileName("rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"), "");
  EXPECT_EQ(HostFromTraceFileName("my_host_12.1700000000000000000.pt.trace.json"), "");  // '_' is no host character
  std::vector<std::string> ev = {Kernel("1", "1", "1")};
  absl::StatusOr<model::Trace> t;
  ASSERT_EQ(Try("nodeA_42.1700000000000000000.pt.trace.json", Doc(ev), &t), "");
  EXPECT_EQ(t->strings().Get(t->processes()[0].host), "nodeA");
  // Its own file name: ctest runs the tests of this file in parallel in one temp directory.
  ASSERT_EQ(Try("no_host.json", Doc(ev), &t), "");
  EXPECT_EQ(t->strings().Get(t->processes()[0].host), "");
  // What the trace records wins over the file name (Kineto's top-level "host_name"), before or
  // after traceEvents.
  ASSERT_EQ(Try("nodeB_43.1700000000000000000.pt.trace.json", Doc(ev, "  \"host_name\": \"gpu-17.example\",\n"), &t),
            "");
  EXPECT_EQ(t->strings().Get(t->processes()[0].host), "gpu-17.example");
  ASSERT_EQ(Try("host_after.json", Doc(ev, "", ",\n  \"host_name\": \"late-host\""), &t), "");
  EXPECT_EQ(t->strings().Get(t->processes()[0].host), "late-host");
}

TEST(KinetoBadInput, SplitGuessesInsideStringsAreCaught) {
  // Names that look like event boundaries ("}, {") make the parallel split guess wrong; the
  // result must still equal a one-thread parse, whatever the window size.
  std::vector<std::string> ev;
  for (int i = 0; i < 400; ++i) {
    std::string name = i % 3 == 0 ? "x},\\n  {\\\"ph\\\": \\\"X\\\"" : "y }  ,  { " + std::to_string(i);
    ev.push_back(Kernel(std::to_string(1000 + i), "1", std::to_string(i + 1), "", name));
  }
  std::string path = WriteTemp("tricky.json", Doc(ev));
  auto one = ImportOne(path, 1);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->kernels().size(), 400u);
  const std::string want = Dump(*one);
  for (int64_t chunk : {300, 1024, 4096, 10000, 50000}) {
    for (int threads : {2, 4, 16}) {
      auto two = ImportOne(path, threads, chunk);
      ASSERT_TRUE(two.ok()) << two.status();
      EXPECT_EQ(Dump(*two), want) << "chunk " << chunk << " threads " << threads;
    }
  }
}

TEST(KinetoBadInput, TruncationAtEveryNthByteNeverCrashes) {
  const std::string path = DataPath("kineto/ag_overlap/rank0.json");
  const std::string text = ReadFileText(path);
  ASSERT_GT(text.size(), 50000u);
  const size_t array_close = text.rfind(']');  // traceEvents closes; only "traceName" follows
  const size_t last_brace = text.rfind('}');
  ASSERT_NE(text.find("\"traceName\"", array_close), std::string::npos);
  auto full = ImportOne(path);
  ASSERT_TRUE(full.ok());
  std::vector<size_t> cuts;
  for (size_t n = 0; n < text.size(); n += 97) cuts.push_back(n);
  for (size_t n : {array_close, array_close + 1, last_brace, last_brace + 1}) cuts.push_back(n);
  int errors = 0, partial = 0;
  for (size_t n : cuts) {
    std::string cut_path = WriteTemp("trunc.json", text.substr(0, n));
    for (int64_t chunk : {int64_t{0}, int64_t{4096}}) {
      auto t = ImportOne(cut_path, 2, chunk);
      if (n <= array_close) {
        // Cut before traceEvents closes: an error naming the file and an offset (the end of
        // the data); never a crash, never a silently partial trace.
        ASSERT_FALSE(t.ok()) << "cut at " << n;
        EXPECT_EQ(std::string(t.status().message()),
                  cut_path + ": offset " + std::to_string(n) + ": " +
                      (n == 0 ? "empty file" : "unexpected end of data (truncated file?)"));
        ++errors;
      } else {
        // Every event is in: the import succeeds with the same events, and says it was cut.
        ASSERT_TRUE(t.ok()) << t.status();
        EXPECT_EQ(t->kernels().size(), full->kernels().size());
        EXPECT_EQ(t->api_calls().size(), full->api_calls().size());
        EXPECT_EQ(t->sources()[0].events_read, full->sources()[0].events_read);
        if (n <= last_brace) {
          EXPECT_EQ(t->sources()[0].Count(model::Stat::kKinetoTruncatedAfterEvents), 1);
        }
        ++partial;
      }
    }
  }
  EXPECT_GT(errors, 500);
  EXPECT_GE(partial, 4);
}

TEST(KinetoBadInput, CorruptedBytesEitherFailOrAreCounted) {
  const std::string text = ReadFileText(DataPath("kineto/d2h_blocking/rank1.json"));
  const char replacements[] = {'"', '}', '{', ',', '\xFF', '\0', '9', '['};
  int ok = 0, failed = 0;
  for (size_t at = 5; at < text.size(); at += 131) {
    std::string bad = text;
    bad[at] = replacements[(at / 131) % sizeof replacements];
    std::string path = WriteTemp("flip.json", bad);
    auto t = ImportOne(path, 2, 8192);
    if (!t.ok()) {
      EXPECT_TRUE(std::string(t.status().message()).starts_with(path + ": offset ")) << t.status();
      ++failed;
      continue;
    }
    ++ok;
    const auto& s = t->sources()[0];
    EXPECT_EQ(s.events_read, s.events_kept + s.skipped() + s.ignored()) << "byte " << at;
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
}

}  // namespace
}  // namespace overlapscope::import::testing
