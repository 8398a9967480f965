// overlapscope's library API: what every front end calls (the CLI, the C API under the Python
// package). One pipeline:
//
//   #include "engine/engine.h"
//   namespace eng = overlapscope::engine;
//   absl::StatusOr<eng::Session> s = eng::Load({"traces/"});     // any input, ranks merged,
//   if (!s.ok()) return s.status();                              // clocks aligned once
//   absl::StatusOr<eng::Analysis> a = eng::Analyze(*s);          // every analysis + report
//   if (!a.ok()) return a.status();
//   const overlapscope::report::Report& r = a->report();         // the typed report
//   auto json = eng::RenderReport(*a, eng::ReportFormat::kJson);  // overlapscope.report/1
//   eng::ExportOptions draw;
//   draw.analysis = &*a;
//   auto written = eng::ExportPerfetto(*s, "analyzed.pftrace", draw);  // trace + analysis tracks
//
// session.h (Load, Session), analysis.h (Analyze, reports, gates), export.h (Perfetto, Chrome
// JSON), info.h (what a session holds). No function throws; errors are absl::Status with the
// file, byte offset and reason for unreadable input.
#pragma once

#include "engine/analysis.h"
#include "engine/export.h"
#include "engine/info.h"
#include "engine/session.h"
