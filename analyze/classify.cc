#include "analyze/classify.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analyze/strings.h"
#include "re2/re2.h"

namespace overlapscope::analyze {
namespace {

// Compiles a user or default regex. RE2 (not std::regex): matching is linear in the name and
// needs no recursion, so no name can overflow the stack or take quadratic time.
absl::StatusOr<std::unique_ptr<re2::RE2>> CompileRegex(const std::string& pattern, const std::string& origin) {
  re2::RE2::Options o;
  o.set_log_errors(false);  // the error goes into the Status, not to stderr
  auto re = std::make_unique<re2::RE2>(pattern, o);
  if (!re->ok())
    return absl::InvalidArgumentError(absl::StrCat(origin, ": invalid regex '", pattern, "': ", re->error(),
                                                   " (RE2 syntax, see docs/report-schema.md)"));
  return re;
}

}  // namespace

Classifier::Classifier(Classifier&&) = default;
Classifier& Classifier::operator=(Classifier&&) = default;
Classifier::~Classifier() = default;
Classifier::Classifier(const model::Trace& t) : t_(&t) {}

std::string_view ToString(ActivityClass c) {
  switch (c) {
    case ActivityClass::kCompute: return "compute";
    case ActivityClass::kComm: return "comm";
    case ActivityClass::kMemory: return "memory";
    case ActivityClass::kSync: return "sync";
  }
  return "?";
}

absl::StatusOr<ActivityClass> ParseActivityClass(std::string_view s) {
  if (s == "compute") return ActivityClass::kCompute;
  if (s == "comm") return ActivityClass::kComm;
  if (s == "memory") return ActivityClass::kMemory;
  if (s == "sync") return ActivityClass::kSync;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown class '", S(s), "' (expected comm, compute, memory or sync)"));
}

std::string ClassRule::Describe() const {
  std::string cls(ToString(this->cls));
  switch (match) {
    case MatchKind::kRegex: return absl::StrCat(cls, " regex ", pattern);
    case MatchKind::kPrefix: return absl::StrCat(cls, " prefix ", pattern);
    case MatchKind::kContains: return absl::StrCat(cls, " contains ", pattern);
    case MatchKind::kCarriesCollective: return absl::StrCat(cls, " carries-collective");
    case MatchKind::kAnyMemcpy: return absl::StrCat(cls, " any-memcpy");
    case MatchKind::kAnyMemset: return absl::StrCat(cls, " any-memset");
    case MatchKind::kAnyKernel: return absl::StrCat(cls, " any-kernel");
  }
  return cls;
}

ClassRules ClassRules::Defaults() {
  ClassRules r;
  auto add = [&](ActivityClass c, MatchKind m, std::string p) {
    r.rules_.push_back(ClassRule{c, m, std::move(p), "default"});
  };
  using C = ActivityClass;
  using M = MatchKind;
  // The importer/capture linked it to a collective (Kineto "Collective name", NCCL attribution,
  // copy-engine collectives moved by cudaMemcpyBatchAsync).
  add(C::kComm, M::kCarriesCollective, "");
  add(C::kComm, M::kPrefix, "ncclKernel");
  add(C::kComm, M::kPrefix, "ncclDevKernel");
  add(C::kComm, M::kPrefix, "nccl");
  add(C::kComm, M::kRegex, "^void .*nccl");  // demangled forms: "void ncclKernel_...", "void (anon)::nccl..."
  add(C::kComm, M::kContains, "rccl");
  add(C::kComm, M::kContains, "nvshmem");
  add(C::kComm, M::kContains, "cross_device_reduce");  // vLLM / SGLang custom all-reduce
  // One-shot / two-shot all-reduce kernels (TensorRT-LLM, torch symmetric memory, FlashInfer).
  add(C::kComm, M::kRegex, "([Oo]ne|[Tt]wo)_?[Ss]hot_?[Aa]ll_?[Rr]educe");
  // overlapscope's own all-reduce kernels (workloads/all_reduce_kernels.cu), mangled or not.
  add(C::kComm, M::kContains, "ovs_allreduce_");
  add(C::kMemory, M::kAnyMemcpy, "");
  add(C::kMemory, M::kAnyMemset, "");
  add(C::kCompute, M::kAnyKernel, "");
  return r;
}

absl::Status ClassRules::AddUserRule(ActivityClass cls, MatchKind match, std::string pattern, std::string origin) {
  if (match == MatchKind::kRegex && !pattern.empty())
    if (auto re = CompileRegex(pattern, origin); !re.ok()) return re.status();
  if ((match == MatchKind::kRegex || match == MatchKind::kPrefix || match == MatchKind::kContains) && pattern.empty())
    return absl::InvalidArgumentError(absl::StrCat(origin, ": empty pattern"));
  rules_.insert(rules_.begin() + static_cast<std::ptrdiff_t>(user_rules_),
                ClassRule{cls, match, std::move(pattern), std::move(origin)});
  ++user_rules_;
  return absl::OkStatus();
}

absl::Status ClassRules::AddRulesFromText(std::string_view text, std::string_view source) {
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = Trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::string origin = absl::StrCat(S(source), ":", line_no);
    size_t sp = line.find_first_of(" \t");
    if (sp == std::string_view::npos)
      return absl::InvalidArgumentError(absl::StrCat(origin, ": expected 'CLASS REGEX', got '", S(line), "'"));
    auto cls = ParseActivityClass(line.substr(0, sp));
    if (!cls.ok()) return absl::InvalidArgumentError(absl::StrCat(origin, ": ", cls.status().message()));
    std::string_view rest = Trim(line.substr(sp));
    MatchKind kind = MatchKind::kRegex;
    for (auto [word, k] : {std::pair<std::string_view, MatchKind>{"prefix", MatchKind::kPrefix},
                           {"contains", MatchKind::kContains},
                           {"regex", MatchKind::kRegex}}) {
      if (StartsWith(rest, word) && rest.size() > word.size() &&
          (rest[word.size()] == ' ' || rest[word.size()] == '\t')) {
        kind = k;
        rest = Trim(rest.substr(word.size()));
        break;
      }
    }
    if (auto s = AddUserRule(*cls, kind, std::string(rest), origin); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<Classifier> Classifier::Create(const ClassRules& rules, const model::Trace& trace) {
  Classifier c(trace);
  c.rules_ = rules.rules();
  c.regex_.resize(c.rules_.size());
  for (size_t i = 0; i < c.rules_.size(); ++i) {
    if (c.rules_[i].match != MatchKind::kRegex) continue;
    auto re = CompileRegex(c.rules_[i].pattern, c.rules_[i].origin);
    if (!re.ok()) return re.status();
    c.regex_[i] = std::move(re).value();
  }
  return c;
}

int32_t Classifier::Match(model::GpuKind kind, model::StringId name, bool carries_collective) {
  size_t key = static_cast<size_t>(name) * 8 + static_cast<size_t>(kind) * 2 + (carries_collective ? 1 : 0);
  if (key >= cache_.size()) cache_.resize(std::max(key + 1, t_->strings().size() * 8), -2);
  if (cache_[key] != -2) return cache_[key];
  std::string_view s = t_->str(name);
  int32_t hit = -1;
  for (size_t i = 0; i < rules_.size() && hit < 0; ++i) {
    const ClassRule& r = rules_[i];
    bool m = false;
    switch (r.match) {
      case MatchKind::kRegex: m = re2::RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *regex_[i]); break;
      case MatchKind::kPrefix: m = StartsWith(s, r.pattern); break;
      case MatchKind::kContains: m = Contains(s, r.pattern); break;
      case MatchKind::kCarriesCollective: m = carries_collective; break;
      case MatchKind::kAnyMemcpy: m = kind == model::GpuKind::kMemcpy; break;
      case MatchKind::kAnyMemset: m = kind == model::GpuKind::kMemset; break;
      case MatchKind::kAnyKernel: m = kind == model::GpuKind::kKernel; break;
    }
    if (m) hit = static_cast<int32_t>(i);
  }
  cache_[key] = hit;
  return hit;
}

int32_t Classifier::RuleOf(model::GpuRef r) {
  switch (r.kind) {
    case model::GpuKind::kKernel: {
      const auto& k = t_->kernels()[r.index];
      return Match(r.kind, k.name, k.collective != model::kNone);
    }
    case model::GpuKind::kMemcpy: {
      const auto& m = t_->memcpys()[r.index];
      return Match(r.kind, m.name, m.collective != model::kNone);
    }
    case model::GpuKind::kMemset: return Match(r.kind, t_->memsets()[r.index].name, false);
  }
  return -1;
}

ActivityClass Classifier::Classify(model::GpuRef r) {
  int32_t rule = RuleOf(r);
  if (rule >= 0) return rules_[rule].cls;
  // No rule matched (a user table without fallbacks): kernels compute, copies/memsets memory.
  return r.kind == model::GpuKind::kKernel ? ActivityClass::kCompute : ActivityClass::kMemory;
}

}  // namespace overlapscope::analyze
