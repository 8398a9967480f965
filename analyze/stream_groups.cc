// Group membership for stream concurrency: a regex over the activity's own name or the names of
// the host ranges around its launch call.
#include "analyze/stream_groups.h"

#include <memory>
#include <regex>
#include <string>

#include "absl/strings/str_cat.h"

namespace overlapscope::analyze {

using model::kNone;

namespace {

class NameMasks {
 public:
  NameMasks(const model::Trace& t, std::vector<std::regex> re)
      : t_(t), re_(std::move(re)), cache_(t.strings().size(), -1) {}
  // Groups whose regex matches the name; computed once per distinct name. On a regex failure
  // returns 0 and keeps the error for status().
  uint32_t Of(model::StringId name) {
    const int64_t c = cache_[name];
    return c >= 0 ? static_cast<uint32_t>(c) : Compute(name);
  }
  const absl::Status& status() const { return status_; }

 private:
  uint32_t Compute(model::StringId name) {
    uint32_t m = 0;
    const std::string_view s = t_.str(name);
    for (size_t g = 0; g < re_.size(); ++g) {
      try {
        if (std::regex_search(s.begin(), s.end(), re_[g])) m |= uint32_t{1} << g;
      } catch (const std::regex_error& e) {  // e.g. the engine's complexity limit on a long name
        if (status_.ok())
          status_ = absl::InvalidArgumentError(
              absl::StrCat("--group: regex failed on a name of ", s.size(), " characters: ", e.what()));
      }
    }
    cache_[name] = m;
    return m;
  }

  const model::Trace& t_;
  std::vector<std::regex> re_;
  std::vector<int64_t> cache_;
  absl::Status status_;
};

// Per API call: the groups of the host ranges enclosing its start on its thread (innermost and
// all its ancestors). One pass over calls and ranges in start order, a stack per thread.
absl::Status CallMasks(const model::Trace& t, NameMasks& names, std::vector<uint32_t>* out) {
  const size_t nt = t.threads().size();
  std::vector<std::vector<int32_t>> ranges(nt);
  for (size_t i = 0; i < t.ranges().size(); ++i)
    if (t.ranges()[i].thread != kNone) ranges[t.ranges()[i].thread].push_back(static_cast<int32_t>(i));
  struct Open {
    int64_t end;
    uint32_t mask;
  };
  std::vector<std::vector<Open>> stack(nt);
  std::vector<size_t> next(nt, 0);
  out->assign(t.api_calls().size(), 0);
  for (size_t i = 0; i < t.api_calls().size(); ++i) {
    const model::ApiCall& a = t.api_calls()[i];
    if (a.thread == kNone || ranges[a.thread].empty()) continue;
    auto& st = stack[a.thread];
    const auto& rs = ranges[a.thread];
    for (size_t& k = next[a.thread]; k < rs.size() && t.ranges()[rs[k]].start_ns <= a.start_ns; ++k) {
      const model::Range& r = t.ranges()[rs[k]];
      while (!st.empty() && st.back().end <= r.start_ns) st.pop_back();
      st.push_back({r.end_ns, names.Of(r.name) | (st.empty() ? 0u : st.back().mask)});
    }
    while (!st.empty() && st.back().end <= a.start_ns) st.pop_back();
    if (!st.empty()) (*out)[i] = st.back().mask;
  }
  return names.status();
}

}  // namespace

absl::StatusOr<std::vector<std::regex>> CompileGroups(const std::vector<GroupSpec>& groups) {
  if (groups.size() > kMaxGroups)
    return absl::InvalidArgumentError(
        absl::StrCat("--group: at most ", kMaxGroups, " groups (got ", groups.size(), ")"));
  std::vector<std::regex> re;
  for (const GroupSpec& g : groups) {
    try {
      re.emplace_back(g.regex, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(absl::StrCat("--group ", g.name, "=", g.regex, ": invalid regex: ", e.what()));
    }
  }
  return re;
}

absl::Status GroupMasks(const model::Trace& t, const GpuFacts& gpu, const std::vector<GroupSpec>& groups,
                        std::vector<uint32_t> out[3], std::vector<int64_t>* members) {
  auto re = CompileGroups(groups);
  if (!re.ok()) return re.status();
  members->assign(groups.size(), 0);
  if (groups.empty()) return absl::OkStatus();
  NameMasks names(t, std::move(re).value());
  std::vector<uint32_t> call;
  if (absl::Status s = CallMasks(t, names, &call); !s.ok()) return s;
  auto fill = [&](model::GpuKind kind, size_t n, auto name_of) -> absl::Status {
    std::vector<uint32_t>& v = out[static_cast<int>(kind)];
    v.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const model::GpuRef r{kind, static_cast<int32_t>(i)};
      if (gpu.Cls(r) == ActivityClass::kSync) continue;  // never busy: in no set
      const int32_t launch = t.LaunchOf(r);
      v[i] = names.Of(name_of(i)) | (launch != kNone ? call[launch] : 0u);
      for (size_t g = 0; g < groups.size(); ++g) (*members)[g] += (v[i] >> g) & 1u;
    }
    return names.status();
  };
  if (absl::Status s = fill(model::GpuKind::kKernel, t.kernels().size(), [&](size_t i) { return t.kernels()[i].name; });
      !s.ok())
    return s;
  if (absl::Status s = fill(model::GpuKind::kMemcpy, t.memcpys().size(), [&](size_t i) { return t.memcpys()[i].name; });
      !s.ok())
    return s;
  return fill(model::GpuKind::kMemset, t.memsets().size(), [&](size_t i) { return t.memsets()[i].name; });
}

}  // namespace overlapscope::analyze
