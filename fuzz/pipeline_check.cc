// RunPipeline (fuzz_util.h): everything after import, through the engine's API as the front
// ends call it, with its oracles.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyze/analysis.h"
#include "engine/engine.h"
#include "exporters/chrome_writer.h"
#include "exporters/perfetto_writer.h"
#include "exporters/proto_reader.h"
#include "fuzz/fuzz_util.h"
#include "importers/kineto/import.h"
#include "nlohmann/json.hpp"

namespace overlapscope::fuzz {
namespace {

// No NaN or infinity anywhere in the report: ratios are absent, never NaN.
void CheckFinite(const nlohmann::json& j) {
  if (j.is_number_float() && !std::isfinite(j.get<double>())) Fail("non-finite number in the JSON report", j.dump());
  if (j.is_structured())
    for (const auto& v : j) CheckFinite(v);
}

void CheckPerfetto(const std::string& bytes) {
  exporters::ProtoReader top(bytes);
  exporters::ProtoField f;
  while (top.Next(&f)) {
    if (f.number != 1 || f.wire_type != 2) Fail("Perfetto trace holds a field other than packets", "");
    exporters::ProtoReader packet(f.bytes, top.OffsetOf(f.bytes));
    exporters::ProtoField g;
    while (packet.Next(&g)) {
    }
    if (!packet.ok()) Fail("Perfetto packet does not decode", packet.error());
  }
  if (!top.ok()) Fail("Perfetto trace does not decode", top.error());
}

void Reports(const engine::Analysis& a) {
  engine::RenderOptions ro;
  ro.collectives_shown = 5;
  auto json = engine::RenderReport(a, engine::ReportFormat::kJson, ro);
  if (!json.ok()) Fail("RenderReport(JSON) failed", json.status().message());
  // The renderers write JSON themselves: it must parse, and hold no NaN/inf.
  const nlohmann::json doc = nlohmann::json::parse(*json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) Fail("the JSON report does not parse", json->substr(0, 2000));
  CheckFinite(doc);
  for (engine::ReportFormat f : {engine::ReportFormat::kText, engine::ReportFormat::kMarkdown})
    if (auto r = engine::RenderReport(a, f, ro); !r.ok()) Fail("RenderReport failed", r.status().message());
  if (auto r = engine::ExplainClasses(a); !r.ok()) Fail("ExplainClasses failed", r.status().message());
  std::vector<std::string> gates;
  for (const std::string& m : engine::GateMetricNames()) gates.push_back(m + ">=0");
  if (auto g = engine::EvaluateGates(a, gates); !g.ok()) Fail("gates on listed metrics failed", g.status().message());
}

void Exports(const model::Trace& t, const analyze::AnalysisResult& r) {
  for (const analyze::AnalysisResult* a : {&r, static_cast<const analyze::AnalysisResult*>(nullptr)}) {
    auto pf = exporters::EncodePerfettoToString(t, a);
    if (!pf.ok()) Fail("Perfetto encoding failed", pf.status().message());
    CheckPerfetto(*pf);
  }
  for (size_t p = 0; p < t.processes().size(); ++p) {
    auto doc = exporters::EncodeChromeToString(t, static_cast<model::ProcessId>(p));
    if (!doc.ok()) Fail("Chrome JSON encoding failed", doc.status().message());
    // Our own export must read back: it is the format we promise HTA and Perfetto users.
    MemFile f(*doc);
    import::ImportOptions o;
    o.threads = 1;
    auto back = import::ImportTraces({f.path()}, o);
    if (!back.ok()) Fail("Chrome JSON export does not import back", back.status().message());
    CheckTrace(*back);
  }
}

}  // namespace

void RunPipeline(const engine::Session& session) {
  CheckTrace(session.trace());
  engine::AnalyzeOptions opt;
  opt.threads = 1;
  opt.top_n = 3;
  auto a = engine::Analyze(session, opt);
  if (!a.ok()) Fail("Analyze failed with default rules", a.status().message());
  Reports(*a);
  Exports(session.trace(), a->result());
  // The analyses side by side must give the same report as one after the other.
  opt.threads = 4;
  auto a4 = engine::Analyze(session, opt);
  if (!a4.ok()) Fail("Analyze failed on 4 threads only", a4.status().message());
  auto j1 = engine::RenderReport(*a, engine::ReportFormat::kJson, {});
  auto j4 = engine::RenderReport(*a4, engine::ReportFormat::kJson, {});
  if (!j1.ok() || !j4.ok() || *j1 != *j4) Fail("the JSON report differs between 1 and 4 analysis threads", "");
}

}  // namespace overlapscope::fuzz
