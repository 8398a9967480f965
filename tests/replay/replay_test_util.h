// Shared by the replay tests on real traces: the replay's JSON document of a trace and the job's
// step (the figure docs/RESULTS.md and tools/replay_pairs.py compare).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
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

}  // namespace overlapscope::engine
