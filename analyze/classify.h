// Classification of GPU activity (METRICS.md §1): every kernel, memcpy and memset gets exactly
// one class — comm, memory, sync or compute — from an ordered rule table; the first rule that
// matches wins. Sync records (cuda_sync, Stream Wait Event) are class sync by construction and
// never count as busy time.
//
// Rules match the activity's interned name (regex, prefix or substring) or a model fact (the
// activity carries a collective: Kernel.collective / Memcpy.collective, which importers set from
// Kineto's "Collective name" or NCCL attribution). Regexes are RE2 syntax (docs/report-schema.md),
// searched anywhere in the name; RE2 matches in time linear in the name and in bounded memory
// (no backtracking, no recursion), so a 10 MB kernel name or a pattern such as `(a*)*` cannot
// blow the stack or take quadratic time. They run once per distinct (StringId, activity kind) and
// are cached, never per event.
//
// Failure modes: an invalid regex (also one using what RE2 does not support: backreferences,
// lookaround), a regex whose compiled program exceeds RE2's memory budget, or a malformed
// rules-file line is an InvalidArgument error that names the origin ("--comm-kernel",
// "FILE:LINE") and the reason.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/trace.h"

namespace re2 {
class RE2;
}

namespace overlapscope::analyze {

enum class ActivityClass : uint8_t { kCompute, kComm, kMemory, kSync };
std::string_view ToString(ActivityClass c);
// Parses "comm", "compute", "memory", "sync"; InvalidArgument otherwise.
absl::StatusOr<ActivityClass> ParseActivityClass(std::string_view s);

enum class MatchKind : uint8_t {
  kRegex,              // RE2 partial match (search) on the name
  kPrefix,             // name starts with pattern
  kContains,           // name contains pattern
  kCarriesCollective,  // the kernel/memcpy has a collective id (pattern unused)
  kAnyMemcpy,          // any memcpy (pattern unused)
  kAnyMemset,          // any memset (pattern unused)
  kAnyKernel,          // any kernel (pattern unused): the compute fallback
};

struct ClassRule {
  ActivityClass cls = ActivityClass::kCompute;
  MatchKind match = MatchKind::kRegex;
  std::string pattern;
  std::string origin;  // "default", "--comm-kernel", "rules.txt:3", ...
  // Printable form, e.g. "comm regex ^ncclDevKernel" (for --explain-classes).
  std::string Describe() const;
};

// An ordered rule table. User rules go in front of the defaults, so they win.
class ClassRules {
 public:
  // The built-in table: collective carriers, NCCL/RCCL/NVSHMEM and custom all-reduce kernels,
  // memcpy/memset -> memory, every other kernel -> compute.
  static ClassRules Defaults();

  // Adds a user rule ahead of all defaults (and after earlier user rules). Validates regexes.
  absl::Status AddUserRule(ActivityClass cls, MatchKind match, std::string pattern, std::string origin);
  // Parses a rules file's text. Line format (documented in docs/report-schema.md):
  //   # comment            blank lines ignored
  //   CLASS REGEX          CLASS is comm|compute|memory; REGEX is the rest of the line (trimmed)
  //   CLASS prefix TEXT    CLASS contains TEXT    explicit match kinds
  // `source` names the file in errors ("FILE:LINE: reason").
  absl::Status AddRulesFromText(std::string_view text, std::string_view source);

  const std::vector<ClassRule>& rules() const { return rules_; }

 private:
  friend class Classifier;
  std::vector<ClassRule> rules_;
  size_t user_rules_ = 0;
};

// Classifies the activities of one trace; caches per (kind, name).
class Classifier {
 public:
  // Compiles the regexes of `rules`; InvalidArgument on a bad regex.
  static absl::StatusOr<Classifier> Create(const ClassRules& rules, const model::Trace& trace);
  Classifier(Classifier&&);
  Classifier& operator=(Classifier&&);
  ~Classifier();

  ActivityClass Classify(model::GpuRef r);
  // Index into rules() of the rule that matched this activity.
  int32_t RuleOf(model::GpuRef r);
  const std::vector<ClassRule>& rules() const { return rules_; }

 private:
  explicit Classifier(const model::Trace& t);
  int32_t Match(model::GpuKind kind, model::StringId name, bool carries_collective);
  const model::Trace* t_;
  std::vector<ClassRule> rules_;
  std::vector<std::unique_ptr<re2::RE2>> regex_;  // parallel to rules_, null when not a regex
  // Dense cache indexed by name id * 8 + kind * 2 + carries_collective; -2 = not computed yet.
  std::vector<int32_t> cache_;
};

// One line of --explain-classes: which rule classified which name, how often, how long.
struct ClassExplanation {
  model::StringId name = 0;
  model::GpuKind kind = model::GpuKind::kKernel;
  ActivityClass cls = ActivityClass::kCompute;
  int32_t rule = -1;  // index into ClassificationSummary::rules
  int64_t count = 0;
  int64_t total_ns = 0;
  int64_t max_ns = 0;
};

struct ClassificationSummary {
  std::vector<ClassRule> rules;
  std::vector<ClassExplanation> names;  // sorted by total_ns, descending
  // Per class totals over all devices: count and summed (not merged) duration.
  int64_t count[4] = {0, 0, 0, 0};
  int64_t total_ns[4] = {0, 0, 0, 0};
};

}  // namespace overlapscope::analyze
