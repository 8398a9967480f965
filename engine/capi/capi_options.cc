#include "engine/capi/capi_options.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/capi/capi_internal.h"

namespace overlapscope::capi {

using nlohmann::json;

OptionReader::OptionReader(const char* text, std::string what) : what_(std::move(what)) {
  if (text == nullptr || *text == '\0') {
    obj_ = json::object();
    return;
  }
  obj_ = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (obj_.is_discarded() || !obj_.is_object()) {
    code_ = OVS_BAD_ARGUMENT;
    error_ = absl::StrCat(what_, ": not a JSON object: ", text);
    obj_ = json::object();
  }
}

bool OptionReader::Bad(const char* key, const std::string& reason) {
  if (code_ == OVS_OK) {
    code_ = OVS_BAD_ARGUMENT;
    error_ = absl::StrCat(what_, ": '", key, "': ", reason);
  }
  return false;
}

const json* OptionReader::Raw(const char* key) {
  known_.insert(key);
  auto it = obj_.find(key);
  return it == obj_.end() || it->is_null() ? nullptr : &*it;
}

bool OptionReader::String(const char* key, std::string* out) {
  const json* v = Raw(key);
  if (v == nullptr) return true;
  if (!v->is_string()) return Bad(key, "expected a string");
  *out = v->get_ref<const std::string&>();
  return true;
}

bool OptionReader::Strings(const char* key, std::vector<std::string>* out) {
  const json* v = Raw(key);
  if (v == nullptr) return true;
  if (v->is_string()) {
    out->push_back(v->get_ref<const std::string&>());
    return true;
  }
  if (!v->is_array()) return Bad(key, "expected a string or a list of strings");
  for (const json& e : *v) {
    if (!e.is_string()) return Bad(key, "expected a string or a list of strings");
    out->push_back(e.get_ref<const std::string&>());
  }
  return true;
}

bool OptionReader::Int(const char* key, int64_t min, int64_t* out) {
  const json* v = Raw(key);
  if (v == nullptr) return true;
  if (!v->is_number_integer()) return Bad(key, "expected an integer");
  const bool too_big = v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
  if (too_big || v->get<int64_t>() < min) return Bad(key, absl::StrCat("expected an integer >= ", min));
  *out = v->get<int64_t>();
  return true;
}

bool OptionReader::Bool(const char* key, bool* out) {
  const json* v = Raw(key);
  if (v == nullptr) return true;
  if (!v->is_boolean()) return Bad(key, "expected true or false");
  *out = v->get<bool>();
  return true;
}

int OptionReader::Finish() {
  if (code_ == OVS_OK)
    for (const auto& [key, value] : obj_.items())
      if (known_.count(key) == 0)
        Bad(key.c_str(), absl::StrCat("unknown option; options: ", absl::StrJoin(known_, ", ")));
  return code_ == OVS_OK ? Ok() : Fail(code_, error_);
}

namespace {

void ReadLoad(OptionReader& r, engine::LoadOptions* load) {
  std::string align;
  if (r.String("align_clocks", &align) && !align.empty()) {
    auto mode = engine::ParseClockAlign(align);
    if (mode.ok())
      load->align_clocks = *mode;
    else
      r.Bad("align_clocks", "expected \"off\", \"auto\" or \"on\"");
  }
  int64_t threads = load->threads;
  if (r.Int("threads", 0, &threads)) load->threads = static_cast<int>(std::min<int64_t>(threads, 256));
}

// The CLI's --comm-kernel/--compute-kernel/--memory-kernel, with the same origins, so that a
// report made here names its rules as the CLI's does.
void ReadClassRules(OptionReader& r, engine::AnalyzeOptions* a) {
  for (const char* cls : {"comm", "compute", "memory"}) {
    const std::string key = absl::StrCat(cls, "_kernel");
    std::vector<std::string> patterns;
    if (!r.Strings(key.c_str(), &patterns)) return;
    for (const std::string& p : patterns) {
      engine::ClassRuleSpec rule{cls, p, absl::StrCat("--", cls, "-kernel")};
      if (absl::Status s = engine::CheckClassRule(rule); !s.ok()) {
        r.Bad(key.c_str(), std::string(s.message()));
        return;
      }
      a->class_rules.push_back(std::move(rule));
    }
  }
}

// Rules files are input: one that cannot be read is OVS_BAD_INPUT, as the CLI exits 2.
int ReadRulesFiles(const std::vector<std::string>& paths, engine::AnalyzeOptions* a) {
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Fail(OVS_BAD_INPUT, absl::StrCat(path, ": cannot read rules file"));
    std::stringstream ss;
    ss << in.rdbuf();
    engine::RulesText rules{ss.str(), path};
    if (absl::Status s = engine::CheckRulesText(rules); !s.ok()) return Fail(OVS_BAD_INPUT, s);
    a->rules_files.push_back(std::move(rules));
  }
  return Ok();
}

void ReadNumbers(OptionReader& r, engine::AnalyzeOptions* a) {
  r.Int("min_gap_ns", 0, &a->min_gap_ns);
  r.Int("runtime_cutoff_ns", 0, &a->runtime_cutoff_ns);
  r.Int("launch_delay_cutoff_ns", 0, &a->launch_delay_cutoff_ns);
  int64_t top = static_cast<int64_t>(a->top_n);
  if (r.Int("top", 1, &top)) a->top_n = static_cast<size_t>(top);
}

}  // namespace

int ReadAnalyzeOptions(const char* json_text, engine::LoadOptions* load, engine::AnalyzeOptions* a) {
  OptionReader r(json_text, "analysis options");
  ReadLoad(r, load);
  if (load->threads > 0) a->threads = load->threads;
  ReadClassRules(r, a);
  std::vector<std::string> rules_files;
  r.Strings("classes", &rules_files);
  if (r.String("iteration_marker", &a->iteration_marker) && a->iteration_marker.empty())
    r.Bad("iteration_marker", "needs a non-empty name");
  ReadNumbers(r, a);
  std::vector<std::string> groups;
  r.Strings("groups", &groups);
  for (const std::string& g : groups) {
    if (absl::Status s = engine::CheckGroup(g); !s.ok())
      r.Bad("groups", std::string(s.message()));
    else
      a->groups.push_back(g);
  }
  // A library report may be exported with its analysis drawn (ovs_export): keep what the
  // Perfetto "critical path" track needs, as `analyze --trace` does.
  a->keep_critical_path = true;
  if (int rc = r.Finish(); rc != OVS_OK) return rc;
  return ReadRulesFiles(rules_files, a);
}

int ReadLoadOptions(const char* json_text, engine::LoadOptions* load) {
  OptionReader r(json_text, "load options");
  ReadLoad(r, load);
  return r.Finish();
}

int ReadRenderOptions(const char* json_text, engine::RenderOptions* render) {
  OptionReader r(json_text, "render options");
  if (const json* v = r.Raw("collectives")) {
    if (v->is_string() && v->get_ref<const std::string&>() == "all")
      render->collectives_shown = SIZE_MAX;
    else if (v->is_number_unsigned())
      render->collectives_shown = v->get<size_t>();
    else
      r.Bad("collectives", "expected an integer >= 0 or \"all\"");
  }
  if (const json* v = r.Raw("ranks")) {  // "all", a count, or a list of rank numbers
    std::string text;
    if (v->is_string()) {
      text = v->get<std::string>();
    } else if (v->is_number_unsigned()) {
      text = std::to_string(v->get<uint64_t>());
    } else if (v->is_array()) {
      for (const json& x : *v) text += (text.empty() ? "" : ",") + (x.is_number_unsigned() ? x.dump() : "?");
      if (v->size() == 1) text += ",";  // one rank number, not a count
    }
    auto sel = report::ParseRankSelection(text.empty() ? "?" : text);
    if (sel.ok())
      render->ranks = *sel;
    else
      r.Bad("ranks", "expected \"all\", an integer >= 0 or a list of rank numbers");
  }
  return r.Finish();
}

}  // namespace overlapscope::capi
