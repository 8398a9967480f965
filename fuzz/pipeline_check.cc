// RunPipeline (fuzz_util.h): everything after import, with its oracles.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyze/analysis.h"
#include "analyze/clock_align.h"
#include "exporters/chrome_writer.h"
#include "exporters/perfetto_writer.h"
#include "exporters/proto_reader.h"
#include "fuzz/fuzz_util.h"
#include "importers/kineto/import.h"
#include "nlohmann/json.hpp"
#include "report/report_render.h"

namespace overlapscope::fuzz {
namespace {

// No NaN or infinity anywhere in the report (nlohmann writes them as null; the renderers must
// never produce them: ratios are absent, not NaN).
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

void Reports(const model::Trace& t, const analyze::AnalysisResult& r, const analyze::ClockAlignment& a) {
  report::ReportInfo info;
  info.inputs = {"fuzz"};
  info.collectives_shown = 5;
  info.clock_alignment = a;
  const std::string json = report::RenderReportJson(t, r, info);
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) Fail("the JSON report does not parse", json.substr(0, 2000));
  CheckFinite(doc);
  report::RenderReportText(t, r, info);
  report::RenderReportMarkdown(t, r, info);
  report::RenderExplainClasses(t, r);
  std::vector<report::Gate> gates;
  for (const std::string& m : report::GateMetricNames()) {
    auto g = report::ParseGate(m + ">=0");
    if (!g.ok()) Fail("a listed gate metric does not parse", m);
    gates.push_back(*g);
  }
  if (auto g = report::EvaluateGates(t, r, gates); !g.ok())
    Fail("gates on listed metrics failed", g.status().message());
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

void RunPipeline(const model::Trace& t) {
  analyze::AnalyzeOptions opt;
  opt.threads = 1;
  opt.top_n = 3;
  for (analyze::ClockAlignMode mode : {analyze::ClockAlignMode::kAuto, analyze::ClockAlignMode::kOn}) {
    const analyze::ClockAlignment a = analyze::EstimateClockAlignment(t, mode);
    if (!a.applied()) {
      if (mode == analyze::ClockAlignMode::kOn) break;  // auto ran the same unshifted trace
      auto r = analyze::AnalyzeAll(t, opt);
      if (!r.ok()) Fail("AnalyzeAll failed with default rules", r.status().message());
      Reports(t, *r, a);
      Exports(t, *r);
      continue;
    }
    auto shifted = analyze::ApplyClockAlignment(t, a);
    if (!shifted.ok()) Fail("ApplyClockAlignment failed on a finalized trace", shifted.status().message());
    CheckTrace(*shifted);
    auto r = analyze::AnalyzeAll(*shifted, opt);
    if (!r.ok()) Fail("AnalyzeAll failed with default rules", r.status().message());
    Reports(*shifted, *r, a);
    Exports(*shifted, *r);
  }
}

}  // namespace overlapscope::fuzz
