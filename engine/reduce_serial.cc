// A reduced rank (engine/reduce_internal.h RankPart) as bytes, kept in ReducedRanks until the
// report is rendered and sent by the MPI gather: a small JSON of the global partial and the
// compact collective record (its length first), then the rank's report part (its RankReport,
// import warnings and stream-concurrency devices) as the report's own JSON (report/render.h;
// report/read_json.h reads it back, RenderJson(ReadReportJson(x)) == x).
#include <cstdlib>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/reduce_internal.h"
#include "nlohmann/json.hpp"
#include "report/read_json.h"
#include "report/render.h"

namespace overlapscope::engine::reduce {
namespace {

using json = nlohmann::json;
constexpr int kVersion = 3;  // 2: collectives' exposed_ns; 3: the report unescaped after the rest

json PartialJson(const report::GlobalPartial& p) {
  json j;
  j["has_events"] = p.has_events;
  j["span"] = {p.time_span.start_ns, p.time_span.end_ns};
  for (const report::ClassTotal& c : p.class_totals) j["classes"].push_back({c.cls, c.count, c.total_ns});
  const report::Iterations& it = p.iterations;
  j["iterations"] = {it.marker, it.count, it.assigned_by_launch_call, it.assigned_by_own_start, it.outside_iterations};
  j["activities"] = json::array();
  for (const report::ActivityTotal& a : p.activities)
    j["activities"].push_back({a.kind, a.name, a.cls, a.rule, a.count, a.total_ns, a.max_ns});
  j["samples"] = json::array();
  for (const report::NameSamples& s : p.samples) {
    json per = json::array();
    for (const report::IterationNs& x : s.per_iteration) per.push_back({x.iteration, x.ns});
    j["samples"].push_back({s.kind, s.name, s.durations_ns, per});
  }
  return j;
}

report::GlobalPartial PartialOf(const json& j) {
  report::GlobalPartial p;
  p.has_events = j.at("has_events").get<bool>();
  p.time_span = {j.at("span")[0].get<int64_t>(), j.at("span")[1].get<int64_t>()};
  if (j.contains("classes"))
    for (const json& c : j["classes"]) p.class_totals.push_back({c[0], c[1], c[2]});
  const json& it = j.at("iterations");
  p.iterations = {it[0], it[1], it[2], it[3], it[4]};
  for (const json& a : j.at("activities")) p.activities.push_back({a[0], a[1], a[2], a[3], a[4], a[5], a[6]});
  for (const json& s : j.at("samples")) {
    report::NameSamples x{s[0], s[1], s[2].get<std::vector<int64_t>>(), {}};
    for (const json& i : s[3]) x.per_iteration.push_back({i[0], i[1]});
    p.samples.push_back(std::move(x));
  }
  return p;
}

json CollectiveJson(const CompactCollective& x) {
  const model::Collective& c = x.c;
  return {c.start_ns,
          c.end_ns,
          c.process,
          c.device,
          c.stream,
          c.sequence,
          c.in_elements,
          c.out_elements,
          c.bytes,
          c.rank,
          c.nranks,
          c.correlation_id,
          c.channels,
          c.channel_span_ns,
          c.root_or_peer,
          {x.op, x.communicator, x.dtype, x.algorithm, x.protocol, x.reduce_op},
          x.arrival.arrival_ns,
          static_cast<int>(x.arrival.source),
          x.exposed_ns};
}

CompactCollective CollectiveOf(const json& j) {
  CompactCollective x;
  model::Collective& c = x.c;
  c.start_ns = j[0], c.end_ns = j[1], c.process = j[2], c.device = j[3], c.stream = j[4], c.sequence = j[5];
  c.in_elements = j[6], c.out_elements = j[7], c.bytes = j[8], c.rank = j[9], c.nranks = j[10];
  c.correlation_id = j[11], c.channels = j[12], c.channel_span_ns = j[13], c.root_or_peer = j[14];
  const json& s = j[15];
  x.op = s[0], x.communicator = s[1], x.dtype = s[2], x.algorithm = s[3], x.protocol = s[4], x.reduce_op = s[5];
  x.arrival.arrival_ns = j[16];
  x.arrival.source = static_cast<analyze::ArrivalSource>(j[17].get<int>());
  x.exposed_ns = j[18];
  return x;
}

json CompactJson(const CompactRank& r) {
  json j;
  j["process"] = {r.process.pid, r.process.rank, r.process.world_size, r.name, r.host, r.source};
  j["devices"] = json::array();
  for (const auto& [ordinal, name] : r.devices) j["devices"].push_back({ordinal, name});
  j["streams"] = json::array();
  for (const CompactRank::Stream& s : r.streams) j["streams"].push_back({s.device, s.native_id, s.name});
  j["collectives"] = json::array();
  for (const CompactCollective& c : r.collectives) j["collectives"].push_back(CollectiveJson(c));
  return j;
}

CompactRank CompactOf(const json& j) {
  CompactRank r;
  const json& p = j.at("process");
  r.process.pid = p[0], r.process.rank = p[1], r.process.world_size = p[2];
  r.name = p[3], r.host = p[4], r.source = p[5];
  for (const json& d : j.at("devices")) r.devices.push_back({d[0], d[1]});
  for (const json& s : j.at("streams")) r.streams.push_back({s[0], s[1], s[2]});
  for (const json& c : j.at("collectives")) r.collectives.push_back(CollectiveOf(c));
  return r;
}

}  // namespace

std::string SerializePart(const RankPart& p) {
  report::Report r = p.header;
  r.ranks = {p.rank};
  r.stream_concurrency = p.concurrency;
  json j;
  j["version"] = kVersion;
  j["partial"] = PartialJson(p.partial);
  j["compact"] = CompactJson(p.compact);
  j["file_bytes"] = p.file_bytes;
  const std::string meta = j.dump();
  // "<meta bytes>\n<meta><report>": the report's JSON as it is, not escaped inside another string.
  return absl::StrCat(meta.size(), "\n", meta, report::RenderJson(r));
}

// The meta JSON (version checked) and where the report starts.
absl::StatusOr<std::pair<json, size_t>> Meta(const std::string& bytes, const std::string& source) {
  const size_t nl = bytes.find('\n');
  const size_t meta =
      nl == std::string::npos || nl > 20 ? std::string::npos : std::strtoull(bytes.c_str(), nullptr, 10);
  if (meta == std::string::npos || meta > bytes.size() - nl - 1)
    return absl::InvalidArgumentError(absl::StrCat(source, ": bad reduced rank: no length prefix"));
  json j = json::parse(std::string_view(bytes).substr(nl + 1, meta));
  if (j.at("version").get<int>() != kVersion)
    return absl::InvalidArgumentError(absl::StrCat(source, ": reduced rank of another version"));
  return std::make_pair(std::move(j), nl + 1 + meta);
}

size_t ReportOffset(const std::string& bytes) {
  const size_t nl = bytes.find('\n');
  if (nl == std::string::npos || nl > 20) return std::string::npos;
  const size_t meta = std::strtoull(bytes.c_str(), nullptr, 10);
  return meta > bytes.size() - nl - 1 ? std::string::npos : nl + 1 + meta;
}

absl::StatusOr<CompactRank> DeserializeCompact(const std::string& bytes, const std::string& source) {
  try {
    ASSIGN_OR_RETURN(auto m, Meta(bytes, source));
    return CompactOf(m.first.at("compact"));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": bad reduced rank: ", e.what()));
  }
}

absl::StatusOr<RankPart> DeserializePart(const std::string& bytes, const std::string& source) {
  try {
    ASSIGN_OR_RETURN(auto m, Meta(bytes, source));
    const json& j = m.first;
    const size_t meta = m.second;
    ASSIGN_OR_RETURN(report::Report r, report::ReadReportJson(std::string_view(bytes).substr(meta), source, nullptr));
    if (r.ranks.size() != 1) return absl::InvalidArgumentError(absl::StrCat(source, ": expected one rank"));
    RankPart p;
    p.rank = std::move(r.ranks.front());
    p.concurrency = std::move(r.stream_concurrency);
    r.ranks.clear();
    p.header = std::move(r);
    p.partial = PartialOf(j.at("partial"));
    p.compact = CompactOf(j.at("compact"));
    p.file_bytes = j.at("file_bytes");
    return p;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": bad reduced rank: ", e.what()));
  }
}

}  // namespace overlapscope::engine::reduce
