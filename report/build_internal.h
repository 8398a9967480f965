// Internal to the report builders: id resolution that never reads out of bounds.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "analyze/analysis.h"
#include "model/trace.h"
#include "report/report.h"

namespace overlapscope::report::build {

template <typename V>
bool InRange(const V& v, int64_t i) {
  return i >= 0 && static_cast<size_t>(i) < v.size();
}
inline std::string Str(const model::Trace& t, model::StringId id) {
  return InRange(t.strings(), id) ? std::string(t.str(id)) : std::string();
}
inline std::optional<std::string> NameOrNone(const model::Trace& t, model::StringId id) {
  if (id == 0 || !InRange(t.strings(), id)) return std::nullopt;
  return std::string(t.str(id));
}
inline std::optional<int64_t> Tid(const model::Trace& t, model::ThreadId th) {
  if (!InRange(t.threads(), th)) return std::nullopt;
  return t.threads()[th].tid;
}
inline std::optional<int64_t> NativeStream(const model::Trace& t, model::StreamId s) {
  if (!InRange(t.streams(), s)) return std::nullopt;
  return t.streams()[s].native_id;
}
inline std::optional<int64_t> IterationNumber(const analyze::AnalysisResult& r, int32_t it) {
  if (!InRange(r.iterations.iterations, it)) return std::nullopt;
  return r.iterations.iterations[it].number;
}
inline std::optional<int64_t> IntOrNone(int64_t v) {
  if (v < 0) return std::nullopt;
  return v;
}
// "host-blocked" -> "host_blocked" (summary and JSON object keys).
inline std::string Key(std::string_view kebab) {
  std::string k(kebab);
  std::replace(k.begin(), k.end(), '-', '_');
  return k;
}
std::optional<GpuActivity> Activity(const model::Trace& t, const model::GpuRef& r);
// Whether r names an activity of t (Activity() gives one).
bool ValidRef(const model::Trace& t, const model::GpuRef& r);

}  // namespace overlapscope::report::build
