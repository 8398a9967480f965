// Shared by the replay tests on real traces: the replay's JSON document of a trace and the job's
// step (the figure docs/RESULTS.md and tools/replay_pairs.py compare).
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "engine/replay.h"
#include "engine/session.h"
#include "nlohmann/json.hpp"

namespace overlapscope::engine {

inline nlohmann::json ReplayJson(const std::string& path, const std::vector<std::string>& changes = {}) {
  auto s = Load({path});
  EXPECT_TRUE(s.ok()) << path << ": " << s.status();
  if (!s.ok()) return {};
  ReplayRequest req;
  req.changes = changes;
  auto out = RunReplay(*s, req, ReportFormat::kJson);
  EXPECT_TRUE(out.ok()) << path << ": " << out.status();
  return out.ok() ? nlohmann::json::parse(*out) : nlohmann::json{};
}

// Lower median over iterations of the slowest rank's step (`key`: measured, predicted, ...): the
// middle value, the smaller of the two middle ones for an even count. A host stall only lengthens
// an iteration, so the lower median ignores up to half of them (docs/RESULTS.md "What-if").
inline double JobStep(const nlohmann::json& doc, const std::string& key) {
  std::map<int64_t, int64_t> by_it;
  for (const auto& it : doc["iterations"]) {
    if (!it.contains(key)) continue;
    int64_t& m = by_it[it["iteration"].get<int64_t>()];
    m = std::max(m, it[key]["step_ns"].get<int64_t>());
  }
  std::vector<int64_t> v;
  for (const auto& [k, s] : by_it) v.push_back(s);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[(v.size() - 1) / 2]);
}

// The job's predicted step as docs/RESULTS.md and tools/replay_pairs.py compare it: the base's
// measured job step (JobStep) times 1 + the replay's change of the job step (`job` in --json:
// the median over iterations of predicted against replayed of the same iteration; with contention
// where it ran). 0 without a prediction.
inline double PredictedJobStep(const nlohmann::json& doc, bool contention = true) {
  if (!doc.contains("job")) return 0;
  const nlohmann::json& j = doc["job"];
  const char* key = contention && j.contains("change_contention") ? "change_contention" : "change";
  if (!j.contains(key)) return 0;
  return JobStep(doc, "measured") * (1 + j[key].get<double>());
}

// The whole text of a gzip file (or a plain one, which gzread passes through); "" when it cannot
// be opened.
inline std::string ReadGzText(const std::string& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) return "";
  std::string text;
  char buf[4096];
  int n;
  while ((n = gzread(in, buf, sizeof(buf))) > 0) text.append(buf, n);
  gzclose(in);
  return text;
}

// The un-profiled median iteration (ms) of the session that captured `dir` (timings.json.gz: 20
// iterations timed with CUDA events on rank 0 before the capture); 0 when absent.
inline double Unprofiled(const std::string& dir) {
  const nlohmann::json j = nlohmann::json::parse(ReadGzText(dir + "/timings.json.gz"), nullptr, false);
  if (j.is_discarded() || !j.contains("timing")) return 0;
  return j["timing"].value("median_iter_ms", 0.0);
}

// The other capture of the same program: .../run1/... <-> .../run2/...
inline std::string Twin(std::string dir) {
  const size_t at = dir.find("/run1/");
  if (at != std::string::npos) return dir.replace(at, 6, "/run2/");
  return dir.replace(dir.find("/run2/"), 6, "/run1/");
}

// "noise", "missed", "right" or "WRONG" (tools/replay_pairs.py judge()).
inline std::string Judge(double measured, double predicted, double bound) {
  if (std::abs(measured) < bound) return "noise";
  if (std::abs(predicted) < bound) return "missed";
  return predicted * measured > 0 ? "right" : "WRONG";
}

}  // namespace overlapscope::engine
