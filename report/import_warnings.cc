#include "report/import_warnings.h"

#include "absl/strings/str_format.h"
#include "report/render.h"

namespace overlapscope::report {

using nlohmann::json;

std::vector<ImportWarning> ImportWarningsOf(const model::Trace& t) {
  std::vector<ImportWarning> out;
  for (const model::ImportWarning& w : model::ImportWarnings(t.sources())) {
    ImportWarning x;
    x.source = w.source;
    x.stat = w.stat != model::Stat::kCount ? std::string(model::Describe(w.stat).name) : std::string("no_gpu_activity");
    x.count = w.count;
    x.message = w.message;
    out.push_back(std::move(x));
  }
  return out;
}

json StatsJson(const model::SourceStats& src) {
  json out = json::array();
  for (size_t i = 0; i < model::kStatCount; ++i) {
    if (src.counts[i] == 0) continue;
    const auto s = static_cast<model::Stat>(i);
    const model::StatDef& d = model::Describe(s);
    json details = json::object();
    for (const auto& [what, n] : src.Details(s)) details[what] = n;
    const char* effect = d.effect == model::StatEffect::kSkipped   ? "skipped"
                         : d.effect == model::StatEffect::kIgnored ? "ignored"
                                                                   : "note";
    out.push_back({{"name", std::string(d.name)},
                   {"severity", std::string(model::ToString(d.severity))},
                   {"effect", effect},
                   {"count", src.counts[i]},
                   {"description", std::string(d.description)},
                   {"details", details}});
  }
  return out;
}

std::string StatsText(const json& stats) {
  std::string out;
  for (const auto& s : stats) {
    absl::StrAppendFormat(&out, "    %-9s %-36s %d  (%s)\n", s["severity"].get<std::string>(),
                          s["name"].get<std::string>(), s["count"].get<int64_t>(), s["effect"].get<std::string>());
    int shown = 0;
    for (auto& [what, n] : s["details"].items()) {
      if (++shown > 8) {
        absl::StrAppendFormat(&out, "      ... %d more (--json lists them)\n", s["details"].size() - 8);
        break;
      }
      absl::StrAppendFormat(&out, "      %-40s %d\n", what, n.get<int64_t>());
    }
  }
  return out;
}

json WarningsJson(const model::Trace& t) {
  json out = json::array();
  for (const ImportWarning& w : ImportWarningsOf(t))
    out.push_back(
        {{"source", w.source}, {"stat", w.stat}, {"severity", w.severity}, {"count", w.count}, {"message", w.message}});
  return out;
}

std::string WarningsTextOfJson(const json& warnings) {
  std::vector<ImportWarning> ws;
  for (const auto& w : warnings) {
    ImportWarning x;
    x.message = w["message"].get<std::string>();
    ws.push_back(std::move(x));
  }
  return WarningsText(ws);
}

bool HasImportWarnings(const model::Trace& t) { return !model::ImportWarnings(t.sources()).empty(); }

}  // namespace overlapscope::report
