// Reading a saved JSON report (`analyze --json`, schema overlapscope.report/1) back into the typed
// report::Report, so that a report can be compared (`diff`) or rendered again without its trace.
// RenderJson(ReadReportJson(RenderJson(r))) == RenderJson(r) for every report of this schema major
// (tests/report/read_json_test.cc checks it on every golden report).
//
// Accepts any 1.x minor: fields added after 1.0 that a document lacks keep their defaults (an
// older report reads as what it says). Derived keys (duration_ns, exposed_ns, no_communication,
// the summary) are not read: they are recomputed from the fields they derive from.
// Failure modes: InvalidArgument "SOURCE: offset N: reason" for malformed JSON, and
// "SOURCE: PATH: reason" (e.g. "ranks[0].devices[1].overlap.comm_ns: expected an integer") for a
// document that is not a report of this schema.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "report/report.h"

namespace overlapscope::report {

// *schema_version (when given) receives the document's "schema_version" ("1.0" when it has none).
absl::StatusOr<Report> ReadReportJson(std::string_view text, const std::string& source,
                                      std::string* schema_version = nullptr);

// Whether `text` starts like a JSON report of this schema (looks at the first 4 KiB for
// "schema": "overlapscope.report/1"); the CLI uses it to tell a saved report from a trace.
bool LooksLikeReportJson(std::string_view text);

}  // namespace overlapscope::report
