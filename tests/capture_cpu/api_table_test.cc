// The default API selection (capture/cupti/api_table.h) against the callback ids of the CUPTI
// headers this build uses and against the call names the analyses look for (analyze/context.h).
#include "capture/cupti/api_table.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "model/api_names.h"

namespace overlapscope::cupti {
namespace {

// Names of every callback id in a CUPTI cbid header, version suffix stripped.
std::set<std::string> HeaderNames(const std::string& file, const std::string& prefix) {
  std::ifstream in(std::string(OVERLAPSCOPE_CUPTI_INCLUDE_DIR) + "/" + file);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::set<std::string> out;
  const std::regex re(prefix + "([A-Za-z0-9_]+)\\s*=");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    const std::string n((*it)[1]);
    if (n == "INVALID" || n == "SIZE" || n == "FORCE_INT") continue;
    out.insert(std::string(StripApiVersion(n)));
  }
  return out;
}

struct Names {
  std::set<std::string> runtime = HeaderNames("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_");
  std::set<std::string> driver = HeaderNames("cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_");
};
const Names& N() {
  static const Names* n = new Names;
  return *n;
}

bool Selected(const std::string& name) {
  const bool driver = name.rfind("cuda", 0) != 0;
  return MatchApi(driver, name) != nullptr;
}

TEST(ApiTable, StripVersion) {
  EXPECT_EQ(StripApiVersion("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(StripApiVersion("cuMemAlloc_v2"), "cuMemAlloc");
  EXPECT_EQ(StripApiVersion("cuMemcpyHtoD_v2_ptds"), "cuMemcpyHtoD_v2_ptds");
  EXPECT_EQ(StripApiVersion("cudaLaunchKernel_ptsz_v7000"), "cudaLaunchKernel_ptsz");
  EXPECT_EQ(StripApiVersion("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(StripApiVersion("x_v"), "x_v");
}

TEST(ApiTable, HeadersRead) {
  // Guards the tests below against passing on an empty list.
  ASSERT_GT(N().runtime.size(), 300u) << OVERLAPSCOPE_CUPTI_INCLUDE_DIR;
  ASSERT_GT(N().driver.size(), 500u);
}

// Every call the issue lists, by name as CUPTI spells it; each must exist in the headers.
TEST(ApiTable, RecordsWhatTheAnalysesUse) {
  const char* want[] = {
      // launches, every variant
      "cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz",
      "cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernelMultiDevice", "cudaGraphLaunch",
      "cudaGraphLaunch_ptsz", "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
      "cuGraphLaunch", "cuGraphLaunch_ptsz",
      // copies and memsets
      "cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpyAsync_ptsz", "cudaMemcpy2DAsync", "cudaMemcpyPeerAsync",
      "cudaMemcpyBatchAsync", "cudaMemcpyToSymbol", "cuMemcpyHtoDAsync", "cuMemcpyDtoH", "cuMemcpyBatchAsync",
      "cuMemcpyAsync", "cudaMemset", "cudaMemsetAsync", "cudaMemsetAsync_ptsz", "cuMemsetD32Async", "cuMemsetD8",
      // synchronization and queries
      "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaStreamSynchronize_ptsz", "cudaEventSynchronize",
      "cudaStreamQuery", "cudaEventQuery", "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
      "cuStreamQuery", "cuEventQuery",
      // event record, stream wait
      "cudaEventRecord", "cudaEventRecordWithFlags", "cudaEventRecord_ptsz", "cudaStreamWaitEvent",
      "cudaStreamWaitEvent_ptsz", "cuEventRecord", "cuEventRecordWithFlags", "cuStreamWaitEvent",
      // allocation, host allocation
      "cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost", "cudaHostAlloc", "cudaHostRegister",
      "cudaMallocAsync", "cudaFreeAsync", "cuMemAlloc", "cuMemFree", "cuMemAllocHost", "cuMemHostAlloc",
      // streams; NCCL's stream memory operations; reset
      "cudaStreamCreate", "cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority", "cudaStreamDestroy",
      "cuStreamCreate", "cuStreamDestroy", "cuStreamWaitValue32", "cuStreamWriteValue64", "cuStreamBatchMemOp",
      "cudaDeviceReset"};
  for (const char* w : want) {
    const std::string n(w);
    const bool in_header = N().runtime.count(n) || N().driver.count(n);
    EXPECT_TRUE(in_header) << n << " is not a callback of this CUPTI";
    EXPECT_TRUE(Selected(n)) << n << " is not recorded by default";
  }
}

TEST(ApiTable, LeavesOutWhatNoAnalysisReads) {
  const char* noise[] = {"cudaGetDevice",
                         "cudaSetDevice",
                         "cudaGetLastError",
                         "cudaPeekAtLastError",
                         "cudaStreamIsCapturing",
                         "cudaFuncGetAttributes",
                         "cudaDeviceGetAttribute",
                         "cudaPointerGetAttributes",
                         "cudaGetDeviceCount",
                         "cudaEventCreate",
                         "cudaEventDestroy",
                         "cudaProfilerStart",
                         "cuCtxGetCurrent",
                         "cuModuleGetFunction",
                         "cuGetProcAddress",
                         "cuStreamGetCaptureInfo",
                         "cuDevicePrimaryCtxRetain",
                         "cuKernelGetAttribute",
                         "cuStreamIsCapturing",
                         "cuCtxSetCurrent"};
  for (const char* w : noise) {
    const std::string n(w);
    EXPECT_TRUE(N().runtime.count(n) || N().driver.count(n)) << n << " is not a callback of this CUPTI";
    EXPECT_FALSE(Selected(n)) << n << " should not be recorded by default";
  }
}

// Every header name of a launch/copy/memset family is selected, so a new variant (a new _ptsz,
// a new batch copy) is recorded without touching the table.
TEST(ApiTable, EveryVariantOfAFamily) {
  int checked = 0;
  for (const auto* names : {&N().runtime, &N().driver})
    for (const std::string& n : *names)
      for (const char* family : {"cudaLaunch", "cuLaunch", "cudaMemcpy", "cuMemcpy", "cudaMemset", "cuMemset",
                                 "cudaGraphLaunch", "cuGraphLaunch", "cudaEventRecord", "cuEventRecord"})
        if (n.rfind(family, 0) == 0) {
          ++checked;
          EXPECT_TRUE(Selected(n)) << n;
        }
  EXPECT_GT(checked, 150);
}

// The calls the analyses read as blocking or implicitly synchronizing (their model::ApiSemantic,
// model/api_names.h) are all recorded.
TEST(ApiTable, CoversTheAnalysesNamePredicates) {
  using model::ApiSemantic;
  int matched = 0;
  for (const auto* names : {&N().runtime, &N().driver})
    for (const std::string& n : *names)
      if (const ApiSemantic k = model::ClassifyApiCall(n);
          k == ApiSemantic::kStreamSync || k == ApiSemantic::kEventSync || k == ApiSemantic::kDeviceSync ||
          k == ApiSemantic::kCopy || k == ApiSemantic::kMemset || k == ApiSemantic::kAlloc || k == ApiSemantic::kFree) {
        ++matched;
        EXPECT_TRUE(Selected(n)) << n << " is read by an analysis but not recorded";
      }
  EXPECT_GT(matched, 50);
}

TEST(ApiTable, SelectionSizes) {
  int rt = 0, drv = 0;
  for (const std::string& n : N().runtime) rt += MatchApi(false, n) != nullptr;
  for (const std::string& n : N().driver) drv += MatchApi(true, n) != nullptr;
  std::printf("recorded by default: %d of %zu runtime calls, %d of %zu driver calls\n", rt, N().runtime.size(), drv,
              N().driver.size());
  EXPECT_LT(rt, static_cast<int>(N().runtime.size()) / 2);
  EXPECT_LT(drv, static_cast<int>(N().driver.size()) / 2);
}

}  // namespace
}  // namespace overlapscope::cupti

namespace overlapscope::cupti {
namespace {

TEST(ApiTable, SyncRoles) {
  bool pt = false;
  EXPECT_EQ(SyncRoleOf(false, "cudaEventRecord", &pt), SyncRole::kEventRecord);
  EXPECT_FALSE(pt);
  EXPECT_EQ(SyncRoleOf(false, "cudaEventRecordWithFlags_ptsz", &pt), SyncRole::kEventRecord);
  EXPECT_TRUE(pt);
  EXPECT_EQ(SyncRoleOf(false, "cudaStreamWaitEvent_ptsz", &pt), SyncRole::kStreamWait);
  EXPECT_TRUE(pt);
  EXPECT_EQ(SyncRoleOf(true, "cuStreamWaitEvent", &pt), SyncRole::kStreamWait);
  EXPECT_EQ(SyncRoleOf(false, "cudaEventSynchronize", &pt), SyncRole::kEventSync);
  EXPECT_EQ(SyncRoleOf(true, "cuStreamSynchronize_ptsz", &pt), SyncRole::kStreamSync);
  EXPECT_TRUE(pt);
  EXPECT_EQ(SyncRoleOf(false, "cudaDeviceSynchronize", &pt), SyncRole::kContextSync);
  EXPECT_EQ(SyncRoleOf(true, "cuCtxSynchronize_v2", &pt), SyncRole::kContextSync);
  EXPECT_EQ(SyncRoleOf(true, "cuCtxSynchronize", &pt), SyncRole::kContextSync);
  EXPECT_EQ(SyncRoleOf(false, "cudaEventQuery", &pt), SyncRole::kNone);
  EXPECT_EQ(SyncRoleOf(false, "cudaLaunchKernel", &pt), SyncRole::kNone);
  EXPECT_EQ(SyncRoleOf(true, "cudaEventRecord", &pt), SyncRole::kNone);  // a runtime name in the driver domain
  // Every call with a role is recorded by default (its callback is what makes the record).
  for (const auto* names : {&N().runtime, &N().driver})
    for (const std::string& n : *names) {
      const bool driver = names == &N().driver;
      if (SyncRoleOf(driver, n, &pt) != SyncRole::kNone) {
        EXPECT_NE(MatchApi(driver, n), nullptr) << n;
      }
    }
}

}  // namespace
}  // namespace overlapscope::cupti
