// Helpers of the analyze tests that read the real torch.profiler captures of tests/data/torch_diag
// (tools/torch_traces/diagnosis_traces.py, made on the GPU machine).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "analyze/analysis.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"

namespace overlapscope::analyze::testing {

// The ranks of tests/data/torch_diag/VARIANT/SCENARIO (w4_*: 4 ranks, w2_*: 2) as one model.
inline model::Trace LoadTorchDiag(const std::string& variant, const std::string& scenario) {
  const std::string dir = std::string(OVERLAPSCOPE_TEST_DATA) + "/torch_diag/" + variant + "/" + scenario;
  std::vector<std::string> files;
  for (int r = 0; r < (variant.rfind("w4", 0) == 0 ? 4 : 2); ++r)
    files.push_back(dir + "/rank" + std::to_string(r) + ".json.gz");
  auto t = import::ImportTraces(files);
  EXPECT_TRUE(t.ok()) << dir << ": " << t.status();
  return std::move(t).value();
}

// AnalyzeAll with default options on one thread.
inline AnalysisResult AnalyzeOneThread(const model::Trace& t) {
  AnalyzeOptions o;
  o.threads = 1;
  auto r = AnalyzeAll(t, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return std::move(r).value();
}

}  // namespace overlapscope::analyze::testing
