// Moving a rank's report parts in time: what clock alignment does to a rank's timestamps, done on
// the finished parts instead of the rank's events.
//
// The per-rank reduction (engine/reduce.h) analyzes every rank as recorded; when clock alignment
// then shifts a host by offset_ns, its ranks' parts are shifted here instead of being imported
// and analyzed again. Exact: every field that is a point in time (starts, ends, the window and
// iteration bounds, gaps, findings, blocked intervals, the partial's time span) moves by
// offset_ns and nothing else changes, because every per-rank analysis is shift-invariant but for
// HTA's whole-µs rounding, which works on the timestamps as recorded anyway
// (model::Process::clock_offset_ns). tests/report/shift_times_test.cc checks the claim on real
// traces: a rank reduced with an offset applied at import equals its parts reduced without and
// shifted here, field for field.
//
// Units: ns. Never fails; a point in time of 0 that means "none" (an empty TimeSpan, a partial
// without events) stays 0.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "report/build.h"
#include "report/report.h"

namespace overlapscope::report {

void ShiftRankTimes(RankReport* r, int64_t offset_ns);
// The same on a rank's element as the JSON report writes it (members one per line, as
// RenderJson's indented dump lays them out), without parsing it: the members that are points in
// time (start_ns, end_ns, time_ns, gpu_/cpu_/capture_start_ns and _end_ns: the fields
// ShiftRankTimes moves) get offset_ns added; findings' marked times are left to the caller.
std::string ShiftRankTimesJson(std::string_view element, int64_t offset_ns);
void ShiftPartialTimes(GlobalPartial* p, int64_t offset_ns);

}  // namespace overlapscope::report
