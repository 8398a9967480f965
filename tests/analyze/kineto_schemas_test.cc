// One small program, written as every Kineto version since 2020 writes it (categories, argument
// spellings, quoted ids, flows, non-JSON values, ROCm's roctracer era), must give the same
// numbers. The scenario, by hand (µs as in the files; one process, pid 4242, thread 4242):
//   ProfilerStep#1 [990, 1060)
//   launch corr 11 [995, 998)   -> gemm kernel, stream 7        [1000, 1010)   compute
//   launch corr 12 [1001, 1004) -> nccl all-reduce, stream 13   [1005, 1025)   comm
//   sync copy corr 13 [1028, 1036) -> DtoH copy, stream 7      [1030, 1035)
//   stream sync corr 14 [1040, 1042); device sync corr 15 [1050, 1051) (the final one)
// gives 2 kernels, 1 memcpy, 5 runtime calls; comm = 20 µs, hidden = [1005, 1010) = 5 µs; busy
// = 25 + 5 = 30 µs over a span of [1000, 1035) = 35 µs: idle 5 µs; blocked = the copy 8 µs +
// the stream sync 2 µs = 10 µs (the device sync starts after the last launch: final, not
// counted).
#include <cstdio>
#include <fstream>
#include <string>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze {
namespace {

struct Numbers {
  size_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0;
  int64_t comm_ns = 0, hidden_ns = 0, idle_ns = 0, blocked_ns = 0, final_sync_ns = 0;
  bool warnings = false;
};

Numbers Analyze(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/kineto_schemas." + name;
  std::ofstream(path, std::ios::binary) << text;
  auto t = import::ImportTraces({path});
  std::remove(path.c_str());
  EXPECT_TRUE(t.ok()) << name << ": " << t.status();
  if (!t.ok()) return {};
  auto r = AnalyzeAll(*t, AnalyzeOptions{});
  EXPECT_TRUE(r.ok()) << r.status();
  Numbers n;
  n.kernels = t->kernels().size(), n.memcpys = t->memcpys().size(), n.memsets = t->memsets().size();
  n.api_calls = t->api_calls().size();
  n.warnings = !model::ImportWarnings(t->sources()).empty();
  for (const RankSummary& s : r->ranks) {
    n.comm_ns += s.comm_ns, n.hidden_ns += s.hidden_comm_ns, n.idle_ns += s.gpu_idle_ns, n.blocked_ns += s.blocked_ns;
  }
  for (const ThreadBlocking& th : r->blocking.threads) n.final_sync_ns += th.final_sync_ns;
  return n;
}

void ExpectScenario(const std::string& name, const std::string& text, size_t memsets = 0) {
  SCOPED_TRACE(name);
  const Numbers n = Analyze(name, text);
  EXPECT_EQ(n.kernels, 2u);
  EXPECT_EQ(n.memcpys, 1u);
  EXPECT_EQ(n.memsets, memsets);
  EXPECT_EQ(n.api_calls, 5u);
  EXPECT_EQ(n.comm_ns, 20000);
  EXPECT_EQ(n.hidden_ns, 5000);
  EXPECT_EQ(n.idle_ns, 5000);
  EXPECT_EQ(n.blocked_ns, 10000);
  EXPECT_EQ(n.final_sync_ns, 1000);
  EXPECT_FALSE(n.warnings);
}

// PyTorch 1.8.0/1.8.1/1.9 (kineto 2020-12 .. 2021-06): "Operator", "Runtime", "Kernel",
// "Memcpy"; every X tid a string ("4242", "stream 7"); flows cat "async"; lower-case "external
// id"; 1.8.1 writes the bandwidth of a zero-length memset as a bare N/A (not JSON).
constexpr char kPt18Events[] = R"json(
  {"name": "process_name", "ph": "M", "ts": 990, "pid": 4242, "tid": 0, "args": {"name": "python"}},
  {"ph": "X", "cat": "Operator", "name": "ProfilerStep#1", "pid": 4242, "tid": "4242", "ts": 990, "dur": 70,
   "args": {"Input dims": [], "Input type": [], "Input names": [], "Output dims": [], "Output type": [],
            "Output names": [], "Device": 0, "External id": 1, "Extra arguments": {}, "Call stack": "",
            "Trace name": "PyTorch Profiler", "Trace iteration": 0}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": "4242", "ts": 995, "dur": 3,
   "args": {"cbid": 211, "correlation": 11, "external id": 1, "external ts": 990}},
  {"ph": "s", "id": 11, "pid": 4242, "tid": 4242, "ts": 995, "cat": "async", "name": "launch"},
  {"ph": "X", "cat": "Kernel", "name": "void gemm<float>(float*)", "pid": 0, "tid": "stream 7", "ts": 1000, "dur": 10,
   "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 11, "external id": 1,
            "registers per thread": 32, "shared memory": 0, "warps per SM": 4.0, "grid": [1, 1, 1],
            "block": [128, 1, 1]}},
  {"ph": "f", "id": 11, "pid": 0, "tid": "stream 7", "ts": 1000, "cat": "async", "name": "launch", "bp": "e"},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": "4242", "ts": 1001, "dur": 3,
   "args": {"cbid": 211, "correlation": 12, "external id": 1, "external ts": 990}},
  {"ph": "X", "cat": "Kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "pid": 0,
   "tid": "stream 13", "ts": 1005, "dur": 20,
   "args": {"queued": 0, "device": 0, "context": 1, "stream": 13, "correlation": 12, "external id": 1,
            "registers per thread": 64, "shared memory": 0, "warps per SM": 1.0, "grid": [1, 1, 1], "block": [256, 1, 1]}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemcpy", "pid": 4242, "tid": "4242", "ts": 1028, "dur": 8,
   "args": {"cbid": 31, "correlation": 13, "external id": 1, "external ts": 990}},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": "stream 7", "ts": 1030,
   "dur": 5, "args": {"device": 0, "context": 1, "stream": 7, "correlation": 13, "external id": 1, "bytes": 4096,
                      "memory bandwidth (GB/s)": 0.8192}},
  {"ph": "X", "cat": "Runtime", "name": "cudaStreamSynchronize", "pid": 4242, "tid": "4242", "ts": 1040, "dur": 2,
   "args": {"cbid": 131, "correlation": 14, "external id": 1, "external ts": 990}},
  {"ph": "X", "cat": "Runtime", "name": "cudaDeviceSynchronize", "pid": 4242, "tid": "4242", "ts": 1050, "dur": 1,
   "args": {"cbid": 165, "correlation": 15, "external id": 0, "external ts": 0}},
  {"ph": "X", "cat": "Trace", "ts": 980, "dur": 90, "pid": "Traces", "tid": "PyTorch Profiler",
   "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
  {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler",
   "ts": 990})json";

std::string Object(const std::string& events, const std::string& head = "") {
  return "{\n  \"schemaVersion\": 1,\n" + head + "  \"traceEvents\": [" + events + "\n  ]\n}\n";
}

TEST(KinetoSchemas, PyTorch18) { ExpectScenario("pt18.json", Object(kPt18Events)); }

TEST(KinetoSchemas, Before18ABareArrayOfEvents) {
  ExpectScenario("pre18.json", std::string("[") + kPt18Events + "\n]\n");
}

TEST(KinetoSchemas, PyTorch181NotJsonBandwidth) {
  // A zero-length memset inside the busy time: no change to span, busy or idle.
  std::string events = kPt18Events;
  events += R"json(,
  {"ph": "X", "cat": "Runtime", "name": "cudaMemsetAsync", "pid": 4242, "tid": "4242", "ts": 1018, "dur": 1,
   "args": {"cbid": 51, "correlation": 16, "external id": 1, "external ts": 990}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 1020, "dur": 0,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 16, "external id": 1, "bytes": 64,
            "memory bandwidth (GB/s)": N/A}})json";
  SCOPED_TRACE("pt181");
  const Numbers n = Analyze("pt181.json", Object(events));
  EXPECT_EQ(n.kernels, 2u);
  EXPECT_EQ(n.memsets, 1u);
  EXPECT_EQ(n.api_calls, 6u);
  EXPECT_EQ(n.comm_ns, 20000);
  EXPECT_EQ(n.hidden_ns, 5000);
  EXPECT_EQ(n.idle_ns, 5000);
  EXPECT_EQ(n.blocked_ns, 10000);
  EXPECT_FALSE(n.warnings);
}

// PyTorch 1.10 (kineto 2021-09 .. 2021-11): "cpu_op" and "gpu_user_Annotation" from the
// generic writer, "Runtime"/"Kernel"/"Memcpy" from CUPTI's; integer tids; flows "async_gpu",
// forward-backward flows "forward_backward".
constexpr char kPt110Events[] = R"json(
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 4242, "tid": 4242, "ts": 990, "dur": 70,
   "args": {"External id": 1, "Trace name": "PyTorch Profiler", "Trace iteration": 0}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, "ts": 995, "dur": 3,
   "args": {"cbid": 211, "correlation": 11, "external id": 1, "external ts": 990}},
  {"ph": "s", "id": 11, "pid": 4242, "tid": 4242, "ts": 995, "cat": "async_gpu", "name": "cudaLaunchKernel"},
  {"ph": "X", "cat": "Kernel", "name": "void gemm<float>(float*)", "pid": 0, "tid": 7, "ts": 1000, "dur": 10,
   "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 11, "external id": 1,
            "registers per thread": 32, "shared memory": 0, "blocks per SM": 0.1, "warps per SM": 4.0,
            "grid": [1, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 3}},
  {"ph": "f", "id": 11, "pid": 0, "tid": 7, "ts": 1000, "cat": "async_gpu", "name": "cudaLaunchKernel", "bp": "e"},
  {"ph": "X", "cat": "gpu_user_Annotation", "name": "step", "pid": 0, "tid": 7, "ts": 999, "dur": 12,
   "args": {"External id": 1}},
  {"ph": "s", "id": 1, "pid": 4242, "tid": 4242, "ts": 990, "cat": "forward_backward", "name": "fwd_bwd"},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, "ts": 1001, "dur": 3,
   "args": {"cbid": 211, "correlation": 12, "external id": 1, "external ts": 990}},
  {"ph": "X", "cat": "Kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "pid": 0, "tid": 13,
   "ts": 1005, "dur": 20, "args": {"device": 0, "context": 1, "stream": 13, "correlation": 12, "external id": 1}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemcpy", "pid": 4242, "tid": 4242, "ts": 1028, "dur": 8,
   "args": {"cbid": 31, "correlation": 13, "external id": 1, "external ts": 990}},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, "ts": 1030, "dur": 5,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 13, "external id": 1, "bytes": 4096,
            "memory bandwidth (GB/s)": 0.8192}},
  {"ph": "X", "cat": "Runtime", "name": "cudaStreamSynchronize", "pid": 4242, "tid": 4242, "ts": 1040, "dur": 2,
   "args": {"cbid": 131, "correlation": 14, "external id": 1, "external ts": 990}},
  {"ph": "X", "cat": "Runtime", "name": "cudaDeviceSynchronize", "pid": 4242, "tid": 4242, "ts": 1050, "dur": 1,
   "args": {"cbid": 165, "correlation": 15, "external id": 0, "external ts": 0}},
  {"ph": "X", "cat": "Trace", "ts": 980, "dur": 90, "pid": "Spans", "tid": "PyTorch Profiler",
   "name": "PyTorch Profiler (0)", "args": {"Op count": 0}})json";

TEST(KinetoSchemas, PyTorch110) { ExpectScenario("pt110.json", Object(kPt110Events)); }

// PyTorch 2.4 and later: lower-case categories, "ac2g"/"fwdbwd" flows, ts relative to a
// baseTimeNanoseconds written after the events, ns digits; displayTimeUnit is only a viewer
// hint (ts stay in µs).
TEST(KinetoSchemas, PyTorch24RelativeNanosecondTimes) {
  std::string events = kPt110Events;
  for (auto [from, to] : {std::pair<std::string, std::string>{"\"Runtime\"", "\"cuda_runtime\""},
                          {"\"Kernel\"", "\"kernel\""},
                          {"\"Memcpy\"", "\"gpu_memcpy\""},
                          {"\"async_gpu\"", "\"ac2g\""},
                          {"\"gpu_user_Annotation\"", "\"gpu_user_annotation\""},
                          {"\"forward_backward\"", "\"fwdbwd\""},
                          {"\"ts\": 1030, \"dur\": 5", "\"ts\": 1030.000, \"dur\": 5.000"}})
    for (size_t at = events.find(from); at != std::string::npos; at = events.find(from, at + to.size()))
      events.replace(at, from.size(), to);
  ExpectScenario("pt24.json", Object(events, "  \"displayTimeUnit\": \"ms\",\n") + "");  // base 0: numbers unchanged
  // With a base time written after the events every time moves by it; the numbers do not.
  std::string with_base = Object(events);
  with_base.insert(with_base.rfind('}'), ",\n  \"baseTimeNanoseconds\": 1790857026000000000\n");
  ExpectScenario("pt24_base.json", with_base);
}

// ROCm through roctracer (kineto 2021-11 .. 2022-06): HIP calls are "cuda_runtime" rows whose
// correlation id is written only as "External id"; kernels, copies and fills are all "kernel"
// rows named by roctracer ("CopyDeviceToHost"); pointers unquoted (not JSON); GPU rows pid =
// device, tid = HSA queue.
constexpr char kRocm2021Events[] = R"json(
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 4242, "tid": 4242, "ts": 990, "dur": 70,
   "args": {"External id": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 4242, "tid": 4242, "ts": 995, "dur": 3,
   "args": {"External id": 11, "kernel": "gemm", "grid dim": [1, 1, 1], "block dim": [128, 1, 1],
            "shared size": 0, "stream": 0x55d0a8e0}},
  {"ph": "X", "cat": "kernel", "name": "void gemm<float>(float*)", "pid": 0, "tid": 1, "ts": 1000, "dur": 10,
   "args": {"External id": 11, "grid dim": [1, 1, 1], "block dim": [128, 1, 1], "shared size": 0,
            "stream": 0x55d0a8e0}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipExtLaunchKernel", "pid": 4242, "tid": 4242, "ts": 1001, "dur": 3,
   "args": {"External id": 12, "stream": 0x55d0a9f0}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "pid": 0, "tid": 2,
   "ts": 1005, "dur": 20, "args": {"External id": 12, "stream": 0x55d0a9f0}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpy", "pid": 4242, "tid": 4242, "ts": 1028, "dur": 8,
   "args": {"External id": 13, "src": 0x7f00, "dst": 0x7f10, "size": 4096, "kind": 2}},
  {"ph": "X", "cat": "kernel", "name": "CopyDeviceToHost", "pid": 0, "tid": 1, "ts": 1030, "dur": 5,
   "args": {"External id": 13}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipStreamSynchronize", "pid": 4242, "tid": 4242, "ts": 1040, "dur": 2,
   "args": {"External id": 14, "stream": 0x55d0a8e0}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipDeviceSynchronize", "pid": 4242, "tid": 4242, "ts": 1050,
   "dur": 1, "args": {"External id": 15}})json";

TEST(KinetoSchemas, RocmRoctracer2021) { ExpectScenario("rocm2021.json", Object(kRocm2021Events)); }

// ROCm today (kineto 2024-05 and later, ROCm 6): "correlation" args, copies as "gpu_memcpy"
// named like CUDA's; hipMemcpyWithStream is a synchronous copy.
TEST(KinetoSchemas, RocmToday) {
  const std::string events = R"json(
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 4242, "tid": 4242, "ts": 990.000,
   "dur": 70.000, "args": {"External id": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 4242, "tid": 4242, "ts": 995.000, "dur": 3.000,
   "args": {"External id": 2, "kernel": "gemm", "cid": 107, "correlation": 11, "grid": [1, 1, 1], "block": [128, 1, 1]}},
  {"ph": "s", "id": 11, "pid": 4242, "tid": 4242, "ts": 995.000, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "void gemm<float>(float*)", "pid": 2, "tid": 0, "ts": 1000.000, "dur": 10.000,
   "args": {"device": 2, "stream": 0, "correlation": 11, "kind": "Dispatch Kernel"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipExtModuleLaunchKernel", "pid": 4242, "tid": 4242, "ts": 1001.000,
   "dur": 3.000, "args": {"cid": 100, "correlation": 12}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "pid": 2,
   "tid": 1, "ts": 1005.000, "dur": 20.000, "args": {"device": 2, "stream": 1, "correlation": 12}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 4242, "tid": 4242, "ts": 1028.000,
   "dur": 8.000, "args": {"stream": "0x0", "cid": 153, "correlation": 13, "src": "0x7f00", "dst": "0x7f10",
                          "size": "4096", "kind": "2"}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Host)", "pid": 2, "tid": 0, "ts": 1030.000,
   "dur": 5.000, "args": {"device": 2, "stream": 0, "correlation": 13, "kind": "DtoH"}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipStreamSynchronize", "pid": 4242, "tid": 4242, "ts": 1040.000,
   "dur": 2.000, "args": {"cid": 70, "correlation": 14}},
  {"ph": "X", "cat": "cuda_runtime", "name": "hipDeviceSynchronize", "pid": 4242, "tid": 4242, "ts": 1050.000,
   "dur": 1.000, "args": {"cid": 71, "correlation": 15}},
  {"ph": "f", "id": 1, "pid": 4242, "tid": 4242, "ts": 1000.000, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})json";
  ExpectScenario("rocm_today.json", Object(events, "  \"roctracer_version\": \"4.1\",\n"));
}

// A category nobody knows that looks like GPU work is data loss: every output must warn, and a
// trace whose GPU activity was all of that kind must say it has no GPU numbers.
TEST(KinetoSchemas, UnknownDeviceLikeCategoriesWarn) {
  const std::string events = R"json(
  {"ph": "X", "cat": "gpu_kernel_v9", "name": "k", "pid": 0, "tid": 7, "ts": 1000, "dur": 10,
   "args": {"device": 0, "stream": 7, "correlation": 11}},
  {"ph": "X", "cat": "xpu_runtime", "name": "zeLaunch", "pid": 1, "tid": 1, "ts": 990, "dur": 2, "args": {}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 990, "dur": 5, "args": {}})json";
  const std::string path = ::testing::TempDir() + "/kineto_schemas.unknown.json";
  std::ofstream(path) << Object(events);
  auto t = import::ImportTraces({path});
  std::remove(path.c_str());
  ASSERT_TRUE(t.ok()) << t.status();
  const model::SourceStats& s = t->sources()[0];
  EXPECT_EQ(s.details.at({model::Stat::kKinetoDeviceCategoryUnknown, "gpu_kernel_v9"}), 1);
  EXPECT_EQ(s.details.at({model::Stat::kKinetoOtherAccelerator, "xpu_runtime"}), 1);
  const auto warnings = model::ImportWarnings(t->sources());
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0].stat, model::Stat::kCount);  // "no GPU activity could be read", first
  EXPECT_NE(warnings[0].message.find("no GPU activity"), std::string::npos);
}

}  // namespace
}  // namespace overlapscope::analyze
