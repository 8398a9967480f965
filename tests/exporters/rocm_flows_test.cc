// Perfetto flows on a ROCm trace: every HIP launch and copy call is linked to the GPU work it
// enqueued, as CUDA's are, whether the trace carries "correlation" (Kineto since 2024) or only
// "External id" (roctracer-era Kineto, 2021-2024). tests/data/kineto/rocm_hip_loop: 7 calls
// enqueue GPU work (5 hipLaunchKernel, 1 hipExtModuleLaunchKernel, 1 hipMemcpyWithStream); the
// other 6 HIP calls (malloc, stream wait, syncs) enqueue nothing and have no sync rows.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "exporters/perfetto_writer.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"
#include "pftrace_decoder.h"

namespace overlapscope::exporters {
namespace {

const std::string kTrace = std::string(OVERLAPSCOPE_TEST_DATA) + "/kineto/rocm_hip_loop/rank0.json";

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

std::multiset<std::pair<std::string, std::string>> Links(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/rocm_flows_test." + name + ".json";
  std::ofstream(path, std::ios::binary) << text;
  auto t = import::ImportTraces({path});
  std::remove(path.c_str());
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  auto bytes = EncodePerfettoToString(*t, nullptr);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  if (!bytes.ok()) return {};
  auto d = testing::DecodePftrace(*bytes);
  EXPECT_TRUE(d.ok()) << d.status();
  if (!d.ok()) return {};
  std::map<uint64_t, std::string> begins, ends;
  for (const auto& s : d->slices) {
    for (uint64_t f : s.flows) begins[f] = s.name;
    for (uint64_t f : s.terminating_flows) ends[f] = s.name;
  }
  EXPECT_EQ(begins.size(), ends.size());
  std::multiset<std::pair<std::string, std::string>> links;
  for (const auto& [id, from] : begins) links.insert({from, ends[id]});
  return links;
}

std::multiset<std::pair<std::string, std::string>> Want(const std::string& copy) {
  return {{"hipLaunchKernel", "void gemm<float>(float*)"},
          {"hipLaunchKernel", "void gemm<float>(float*)"},
          {"hipExtModuleLaunchKernel", "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"},
          {"hipMemcpyWithStream", copy},
          {"hipLaunchKernel", "void relu<float>(float*)"},
          {"hipLaunchKernel", "void relu<float>(float*)"},
          {"hipLaunchKernel", "void add<float>(float*)"}};
}

TEST(RocmFlows, HipCallsLinkToTheirGpuWork) {
  std::ifstream in(kTrace, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  ASSERT_FALSE(text.empty()) << kTrace;
  EXPECT_EQ(Links("today", text), Want("Memcpy DtoH (Device -> Host)"));

  std::string old = text;
  ReplaceAll(old, "\"correlation\"", "\"External id\"");
  ReplaceAll(old, "\"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoH (Device -> Host)\"",
             "\"cat\": \"kernel\", \"name\": \"CopyDeviceToHost\"");
  EXPECT_EQ(Links("roctracer2021", old), Want("CopyDeviceToHost"));
}

}  // namespace
}  // namespace overlapscope::exporters
