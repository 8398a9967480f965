// Renderers of a report::Report (report/report.h): the JSON document (schema
// overlapscope.report/1, docs/report-schema.md), the text report (the CLI default: a summary per
// rank, then tables in the style of `nsys stats`) and Markdown (pull-request comments). Pure
// functions of the Report: no I/O, no trace, no analysis.
//
// Any Report renders: a field out of its usual range (NaN or infinite ratios, absent optionals,
// negative times, empty lists, counts that disagree with list lengths, invalid UTF-8) is printed
// as what it is ("nan%", "n/a", "-", U+FFFD in JSON), never a crash. Only running out of memory
// throws (std::bad_alloc), which the engine turns into an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "report/overview.h"
#include "report/report.h"

namespace overlapscope::report {

struct TextOptions {
  // Matched collective instances listed (SIZE_MAX: all); JSON always lists all.
  size_t collectives_shown = 20;
  // Ranks with a detail block (--ranks; report/overview.h SelectRanks); JSON always has all.
  RankSelection ranks;
};

// Ends with a newline. `threads`: the long per-iteration arrays are rendered on up to this many
// threads; the bytes are the same at any count.
std::string RenderJson(const Report& r, int threads = 1);
std::string RenderText(const Report& r, const TextOptions& options = {});
std::string RenderMarkdown(const Report& r, const TextOptions& options = {});

// A report whose largest parts are produced one at a time while it is rendered (a many-rank
// job's every rank and every collective instance with a row per rank would not fit in memory:
// engine/reduce.h keeps them serialized and builds them on demand).
//  - head: every section. head->ranks has one entry per rank with at least its label, rank,
//    pid, host, source and summary (what the gates and the summary tables read); the rest of
//    each rank is rank(i). head->collectives_across_ranks.instances is not read.
//  - rank(i, scratch): the whole rank i, either a reference to one held elsewhere or *scratch
//    filled; called in increasing i, possibly in several passes (Markdown: two).
//  - instance(k, scratch): likewise collectives_across_ranks.instances[k], k < instance_count.
//  - instance_rows: the number of rows of every instance together (sum of ranks.size()).
// The renderers below write the same bytes as RenderJson/RenderText/RenderMarkdown of the whole
// report, in pieces (`out` is called many times, with text in order); a source that cannot
// produce a part returns an empty one and reports it its own way (the engine fails the run).
struct ReportView {
  const Report* head = nullptr;
  std::function<const RankReport&(size_t i, RankReport* scratch)> rank;
  size_t instance_count = 0;
  std::function<const Instance&(size_t k, Instance* scratch)> instance;
  int64_t instance_rows = 0;
  // Optional: rank i's element of the JSON "ranks" array, as RankElementJson(rank(i)) writes it
  // (a source may render ranks ahead on other threads); when empty, RenderJson renders rank(i).
  std::function<std::string(size_t i)> rank_json;
  // Likewise collectives_across_ranks.instances[k]'s element (InstanceElementJson), optional.
  std::function<std::string(size_t k)> instance_json;
  // Optional: rank i's elements of stream_concurrency.devices (RankConcurrencyOfDocument); when
  // set, RenderJson writes the devices from it, rank by rank, and does not read
  // head->stream_concurrency.devices (text and Markdown read only their `whole` figures).
  std::function<std::string(size_t i)> rank_concurrency_json;
  // JSON: threads that render the long per-iteration arrays (same bytes at any count).
  int threads = 1;
};
// One element of the JSON report's "ranks" array with its indentation in the document, without
// the separator after it.
std::string RankElementJson(const RankReport& rk);
std::string InstanceElementJson(const Instance& ci);
// The same from a rendered document: the element of the only rank of `document` (RenderJson of
// a Report with one rank), its "summary" replaced by `summary`'s. "" when `document` is not
// such a report. What RankElementJson gives for that rank with that summary, without parsing.
std::string RankElementOfDocument(std::string_view document, const RankSummary& summary);
// The elements of stream_concurrency.devices of such a document, as they are in it (joined by
// ",\n", no separator after the last); "" when it has none.
std::string RankConcurrencyOfDocument(std::string_view document);
ReportView ViewOf(const Report& r);  // the whole report in memory; valid while r is
using RenderSink = std::function<void(std::string_view text)>;
void RenderJson(const ReportView& v, const RenderSink& out);
void RenderText(const ReportView& v, const TextOptions& options, const RenderSink& out);
void RenderMarkdown(const ReportView& v, const TextOptions& options, const RenderSink& out);

// The warnings as every text output starts: "warning: <message>" lines and a closing line, then
// a blank line; "" when there are none. Markdown: a block quote.
std::string WarningsText(const std::vector<ImportWarning>& warnings);
std::string WarningsMarkdown(const std::vector<ImportWarning>& warnings);

// --explain-classes: the rule table, then each distinct activity name with the rule that
// classified it, how often and how long (not part of the JSON report).
struct ExplainedName {
  std::string cls, kind, name;
  int64_t rule = -1;  // index into rules
  int64_t count = 0, total_ns = 0;
};
struct ClassExplanations {
  std::vector<ClassRule> rules;
  std::vector<ExplainedName> names;  // by total time, descending
};
std::string RenderExplainClasses(const ClassExplanations& e);

// a - b, saturated at the int64 limits: a report with absurd times still renders (no overflow).
int64_t Diff(int64_t a, int64_t b);
int64_t Sum(int64_t a, int64_t b);  // a + b, saturated likewise

// Formatting shared by the text renderers.
std::string Ms(int64_t ns);                       // "1.234 ms"
std::string Us(int64_t ns);                       // "12.3 µs"
std::string Dur(int64_t ns);                      // exact ns below 1 µs, µs below 1 ms, ms above
std::string Pct(const std::optional<double>& r);  // "62.3%", or "n/a" when absent
std::string Short(const std::string& name, size_t max = 60);
std::string Bytes(int64_t bytes);  // "512 B", "2.00 MB" (decimal units, as nccl-tests sizes)
// METRICS §2 transfer and waiting of a rank: "12.0 ms of the communication was waiting for the
// last peer (hidden 10.0 ms, exposed 2.0 ms); waited for rank 3 most (11.0 ms)"; empty when the
// rank's arrivals are unknown.
std::string WaitText(const RankReport& rk);
// "also captured: pid 1467 `torchrun` — no GPU work" (every process without GPU activity, comma
// separated), in text and Markdown; empty when there is none. `escape` is applied to each name
// and host (HTML), `code` wraps the name.
std::string ProcessesWithoutGpuLine(const std::vector<ProcessWithoutGpu>& ps,
                                    const std::function<std::string(const std::string&)>& escape = nullptr,
                                    const std::string& code_open = "`", const std::string& code_close = "`");

}  // namespace overlapscope::report
