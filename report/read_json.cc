// JSON report -> report::Report (report/read_json.h): the document, its global sections and
// collectives_across_ranks (ranks[] in read_json_rank.cc). nlohmann and the reader signal errors
// by exceptions: they are caught here and become a Status (none leaves the module).
#include "report/read_json.h"

#include "report/read_json_internal.h"

namespace overlapscope::report {
namespace read_internal {
namespace {

ParticipantRef Ref(const Node& n) {
  return {n.At("label").Str(), n.At("rank").OptInt(), n.At("gpu").OptInt(), n.At("pid").OptInt()};
}

Instance ReadInstance(const Node& n) {
  Instance ci;
  ci.index = n.At("index").Int();
  ci.op = n.At("op").Str();
  ci.communicator = n.At("communicator").Str();
  ci.sequence = n.At("sequence").OptInt();
  ci.order = n.At("order").OptInt();
  ci.dtype = n.At("dtype").OptStr();
  ci.in_elements = n.At("in_elements").OptInt();
  ci.out_elements = n.At("out_elements").OptInt();
  ci.bytes = n.At("bytes").OptInt();
  ci.size_bytes = n.At("size_bytes").OptInt();
  ci.nranks = n.At("nranks").OptInt();
  ci.algorithm = n.At("algorithm").OptStr();
  ci.protocol = n.At("protocol").OptStr();
  ci.channels = n.At("channels").OptInt();
  ci.root_or_peer = n.At("root_or_peer").OptInt();
  ci.reduce_op = n.At("reduce_op").OptStr();
  ci.first_start_ns = n.At("first_start_ns").Int();
  ci.skew_ns = n.At("skew_ns").Int();
  ci.last = n.At("last").OptStr();
  ci.last_rank = n.At("last_rank").Int();
  ci.bus_time_ns = n.At("bus_time_ns").Int();
  ci.algbw_gbps = n.At("algbw_gbps").OptDouble();
  ci.busbw_gbps = n.At("busbw_gbps").OptDouble();
  n.At("ranks").Each([&](const Node& p) {
    ci.ranks.push_back({Ref(p), p.At("comm_rank").OptInt(), p.At("start_ns").Int(), p.At("arrival_ns").Int(),
                        p.Has("arrival_source") ? p.At("arrival_source").Str() : std::string(), p.At("end_ns").Int(),
                        p.At("wait_ns").Int(), p.At("stream").OptInt(), p.At("channels").OptInt(),
                        p.At("channel_span_ns").OptInt(), p.At("exposed_ns").OptInt()});
  });
  return ci;
}

ClockAlignment Clock(const Node& n) {
  ClockAlignment a;
  if (n.j.is_null()) return a;  // 1.0 reports have none
  a.mode = n.At("mode").Str();
  a.status = n.At("status").Str();
  a.applied = n.At("applied").Bool();
  a.reference_host = n.At("reference_host").OptStr();
  a.min_instances = n.At("min_instances").Int();
  a.matched_instances_used = n.At("matched_instances_used").Int();
  a.residual_spread_ns = n.At("residual_spread_ns").Int();
  a.summary = n.At("summary").Str();
  n.At("hosts").Each([&](const Node& h) {
    HostClock c{h.At("host").Str(),
                {},
                h.At("reference").Bool(),
                h.At("aligned").Bool(),
                h.At("offset_ns").Int(),
                h.At("instances").Int(),
                h.At("residual_spread_ns").Int(),
                h.At("reason").OptStr()};
    h.At("pids").Each([&](const Node& p) { c.pids.push_back(p.Int()); });
    a.hosts.push_back(std::move(c));
  });
  return a;
}

void ReadGlobal(const Node& d, Report* r) {
  d.At("warnings").Each([&](const Node& w) {  // 1.5
    r->warnings.push_back(
        {w.At("source").Str(), w.At("stat").Str(), w.At("severity").Str(), w.At("count").Int(), w.At("message").Str()});
  });
  r->tool = d.At("tool").Str();
  d.At("inputs").Each([&](const Node& n) { r->inputs.push_back(n.Str()); });
  r->time_span = {d.At("time_span").At("start_ns").Int(), d.At("time_span").At("end_ns").Int()};
  const Node o = d.At("options");
  r->options.iteration_marker = o.At("iteration_marker").Str();
  r->options.min_gap_ns = o.At("min_gap_ns").Int();
  r->options.runtime_cutoff_ns = o.At("runtime_cutoff_ns").Int();
  r->options.launch_delay_cutoff_ns = o.At("launch_delay_cutoff_ns").Int();
  r->options.top_n = o.At("top_n").Int();
  if (o.Has("align_clocks")) r->options.align_clocks = o.At("align_clocks").Str();
  if (d.Has("clock_note")) r->clock_note = d.At("clock_note").Str();
  r->clock_alignment = Clock(d.At("clock_alignment"));
  d.At("processes_without_gpu_work").Each([&](const Node& n) {  // 1.9
    ProcessWithoutGpu p;
    p.pid = n.At("pid").Int();
    p.rank = n.At("rank").OptInt();
    p.name = n.At("name").Str();
    p.host = n.At("host").Str();
    r->processes_without_gpu_work.push_back(std::move(p));
  });
  d.At("classes").At("rules").Each([&](const Node& n) {
    r->classes.rules.push_back({n.At("rule").Str(), n.At("origin").Str()});
  });
  d.At("classes").At("totals").Members([&](const std::string& k, const Node& n) {
    r->classes.totals.push_back({k, n.At("count").Int(), n.At("total_ns").Int()});
  });
  const Node it = d.At("iterations");
  r->iterations = {it.At("marker").Str(), it.At("count").Int(), it.At("assigned_by_launch_call").Int(),
                   it.At("assigned_by_own_start").Int(), it.At("outside_iterations").Int()};
  d.At("top_kernels").Each([&](const Node& n) {
    KernelTotal k{n.At("class").Str(),
                  n.At("kind").Str(),
                  n.At("name").Str(),
                  n.At("count").Int(),
                  n.At("total_ns").Int(),
                  n.At("max_ns").Int(),
                  0,
                  {}};
    if (n.Has("median_ns")) k.median_ns = n.At("median_ns").Int();
    n.At("per_iteration").Each([&](const Node& v) {
      k.per_iteration.push_back({v.At("iteration").Int(), v.At("ns").Int()});
    });
    r->top_kernels.push_back(std::move(k));
  });
}

}  // namespace

CrossRank ReadCrossRank(const Node& n) {
  CrossRank x;
  if (n.j.is_null()) return x;
  x.matched_instances = n.At("matched_instances").Int();
  x.matched_by = n.Has("matched_by") ? n.At("matched_by").Str() : std::string();
  if (n.Has("matched_by_order")) x.matched_by_order = n.At("matched_by_order").Int();
  if (n.Has("identified_by")) x.identified_by = n.At("identified_by").Str();
  if (n.Has("identified_note")) x.identified_note = n.At("identified_note").Str();
  x.unmatched = n.At("unmatched").Int();
  x.without_rank = n.At("without_rank").Int();
  if (n.Has("duplicates")) x.duplicates = n.At("duplicates").Int();
  x.max_skew_ns = n.At("max_skew_ns").Int();
  x.total_skew_ns = n.At("total_skew_ns").Int();
  if (n.Has("arrival_fallbacks")) x.arrival_fallbacks = n.At("arrival_fallbacks").Int();
  n.At("participants").Each([&](const Node& p) { x.participants.push_back({Ref(p), p.At("host").OptStr()}); });
  n.At("ranks").Each([&](const Node& p) {
    x.ranks.push_back({Ref(p), p.At("times_last").Int(), p.At("others_wait_ns").Int(), p.At("own_wait_ns").Int()});
  });
  n.At("top_skew").Each([&](const Node& c) {
    x.top_skew.push_back({c.At("op").Str(), c.At("communicator").Str(), c.At("sequence").Int(),
                          c.At("first_start_ns").Int(), c.At("skew_ns").Int(), c.At("last_rank").Int(),
                          c.At("last").OptStr(), c.At("bus_time_ns").Int(), c.At("size_bytes").Int(),
                          c.At("algbw_gbps").OptDouble(), c.At("busbw_gbps").OptDouble()});
  });
  n.At("instances").Each([&](const Node& c) { x.instances.push_back(ReadInstance(c)); });
  return x;
}

}  // namespace read_internal

absl::StatusOr<Report> ReadReportJson(std::string_view text, const std::string& source, std::string* schema_version) {
  using read_internal::Node;
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(text.begin(), text.end());
  } catch (const nlohmann::ordered_json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": offset ", e.byte, ": not JSON (", e.what(), ")"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", e.what()));
  }
  try {
    const Node d{doc, ""};
    if (!doc.is_object() || d.At("schema").j != kSchema)
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": not an overlapscope report (\"schema\" is not \"", kSchema, "\")"));
    if (schema_version) *schema_version = d.Has("schema_version") ? d.At("schema_version").Str() : "1.0";
    Report r;
    read_internal::ReadGlobal(d, &r);
    r.ranks = read_internal::ReadRanks(d.At("ranks"));
    r.collectives_across_ranks = read_internal::ReadCrossRank(d.At("collectives_across_ranks"));
    read_internal::ReadPaths(d, &r);
    return r;
  } catch (const read_internal::ReadError& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", e.what()));
  } catch (const std::exception& e) {  // bad_alloc, or nlohmann on a value out of range
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", e.what()));
  }
}

bool LooksLikeReportJson(std::string_view text) {
  std::string_view head = text.substr(0, 4096);
  size_t i = 0;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (i == head.size() || head[i] != '{') return false;
  return head.find(std::string("\"") + kSchema + "\"") != std::string_view::npos;
}

}  // namespace overlapscope::report
