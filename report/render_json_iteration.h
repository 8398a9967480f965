// Internal to the JSON renderer: a device's per-iteration overlap element (schema
// "ranks[].devices[].iterations[]", docs/report-schema.md) and stream concurrency's, as a tree
// and as text.
//
// The report of a long trace holds one element per iteration of every device (thousands, a
// tenth of the document's bytes): the renderer writes them as text, which gives the bytes that
// Element(IterationJson(io), indent) gives (render_json_deferred.h) without building a tree per
// element. IterationJson stays the definition the text is checked against (tests/report).
#pragma once

#include <cstddef>
#include <string>

#include "nlohmann/json.hpp"
#include "report/report.h"

namespace overlapscope::report {

// The overlap figures of a device or an iteration, as their JSON object.
nlohmann::ordered_json FiguresJson(const OverlapFigures& s);

// One iteration's element as a tree.
nlohmann::ordered_json IterationJson(const IterationOverlap& io);

// Appends what Element(IterationJson(io), indent) returns.
void AppendIterationText(const IterationOverlap& io, size_t indent, std::string* out);

// The same pair for stream concurrency's per-iteration element (schema
// "stream_concurrency.devices[].iterations[]"; the tree: render_json_paths.cc).
nlohmann::ordered_json ConcurrencyIterationJson(const IterationConcurrency& w);
void AppendConcurrencyIterationText(const IterationConcurrency& w, size_t indent, std::string* out);

}  // namespace overlapscope::report
