// A reduced rank (engine/reduce_internal.h RankPart) as bytes, kept in ReducedRanks until the
// report is rendered and sent by the MPI gather: the lengths of the first two parts on a line,
// a small JSON of the global partial, the compact collective record in binary, then the rank's
// report part (its RankReport, import warnings and stream-concurrency devices) as the report's
// own JSON (report/render.h; report/read_json.h reads it back, RenderJson(ReadReportJson(x)) ==
// x), which the JSON report splices from as it is.
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
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
constexpr int kVersion = 5;  // 2: collectives' exposed_ns; 3: the report unescaped after the rest; 4: binary
                             // record; 5: HTA's other step-filter variant and the rank's step names

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

// The collective record in binary (reading it back as JSON cost ~50 ms per 4000-collective
// rank): every number as 8 bytes in the machine's byte order (the hosts of one MPI job share
// it), every string as its length then its bytes.
class Writer {
 public:
  void Int(int64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Str(const std::string& v) {
    Int(static_cast<int64_t>(v.size()));
    out_ += v;
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  int64_t Int() {
    int64_t v = 0;
    if (in_.size() - at_ < sizeof v || at_ > in_.size()) throw std::out_of_range("collective record cut short");
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string Str() {
    const int64_t n = Int();
    if (n < 0 || static_cast<uint64_t>(n) > in_.size() - at_) throw std::out_of_range("collective record cut short");
    std::string v(in_.substr(at_, static_cast<size_t>(n)));
    at_ += static_cast<size_t>(n);
    return v;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

std::string CompactBinary(const CompactRank& r) {
  Writer w;
  w.Int(r.process.pid), w.Int(r.process.rank), w.Int(r.process.world_size);
  w.Str(r.name), w.Str(r.host), w.Str(r.source);
  w.Int(static_cast<int64_t>(r.devices.size()));
  for (const auto& [ordinal, name] : r.devices) w.Int(ordinal), w.Str(name);
  w.Int(static_cast<int64_t>(r.streams.size()));
  for (const CompactRank::Stream& st : r.streams) w.Int(st.device), w.Int(st.native_id), w.Str(st.name);
  w.Int(static_cast<int64_t>(r.collectives.size()));
  for (const CompactCollective& x : r.collectives) {
    const model::Collective& c = x.c;
    for (int64_t v : {c.start_ns, c.end_ns, int64_t{c.process}, int64_t{c.device}, int64_t{c.stream}, c.sequence,
                      c.in_elements, c.out_elements, c.bytes, int64_t{c.rank}, int64_t{c.nranks}, c.correlation_id,
                      int64_t{c.channels}, c.channel_span_ns, int64_t{c.root_or_peer}})
      w.Int(v);
    for (const std::string* v : {&x.op, &x.communicator, &x.dtype, &x.algorithm, &x.protocol, &x.reduce_op}) w.Str(*v);
    w.Int(x.arrival.arrival_ns), w.Int(static_cast<int64_t>(x.arrival.source)), w.Int(x.exposed_ns);
  }
  return std::move(w.out());
}

template <typename T>
T Narrow(int64_t v) {  // ids and counts of the record: in range of their type, or the record is damaged
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
    throw std::out_of_range("collective record: value out of range");
  return static_cast<T>(v);
}

CompactRank CompactOfBinary(std::string_view in) {
  Reader rd(in);
  CompactRank r;
  r.process.pid = rd.Int();
  r.process.rank = Narrow<int32_t>(rd.Int());
  r.process.world_size = Narrow<int32_t>(rd.Int());
  r.name = rd.Str(), r.host = rd.Str(), r.source = rd.Str();
  for (int64_t k = 0, n = rd.Int(); k < n; ++k) {
    const int32_t ordinal = Narrow<int32_t>(rd.Int());
    r.devices.push_back({ordinal, rd.Str()});
  }
  for (int64_t k = 0, n = rd.Int(); k < n; ++k) {
    CompactRank::Stream st;
    st.device = Narrow<int32_t>(rd.Int());
    st.native_id = rd.Int();
    st.name = rd.Str();
    r.streams.push_back(std::move(st));
  }
  const int64_t n = rd.Int();
  if (n < 0 || static_cast<uint64_t>(n) > in.size() / 8) throw std::out_of_range("collective record: bad count");
  r.collectives.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    CompactCollective x;
    model::Collective& c = x.c;
    c.start_ns = rd.Int(), c.end_ns = rd.Int();
    c.process = Narrow<int32_t>(rd.Int()), c.device = Narrow<int32_t>(rd.Int()), c.stream = Narrow<int32_t>(rd.Int());
    c.sequence = rd.Int(), c.in_elements = rd.Int(), c.out_elements = rd.Int(), c.bytes = rd.Int();
    c.rank = Narrow<int32_t>(rd.Int()), c.nranks = Narrow<int32_t>(rd.Int());
    c.correlation_id = rd.Int(), c.channels = Narrow<int32_t>(rd.Int()), c.channel_span_ns = rd.Int();
    c.root_or_peer = Narrow<int32_t>(rd.Int());
    x.op = rd.Str(), x.communicator = rd.Str(), x.dtype = rd.Str();
    x.algorithm = rd.Str(), x.protocol = rd.Str(), x.reduce_op = rd.Str();
    x.arrival.arrival_ns = rd.Int();
    x.arrival.source = static_cast<analyze::ArrivalSource>(Narrow<int32_t>(rd.Int()));
    x.exposed_ns = rd.Int();
    r.collectives.push_back(std::move(x));
  }
  if (!rd.done()) throw std::out_of_range("collective record: bytes after its end");
  return r;
}

json OptJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
std::optional<double> OptOf(const json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}

json HtaJson(const report::HtaCompat& h) {
  return {OptJson(h.overlap_pct),
          h.comm_us,
          h.overlap_us,
          h.step_filter,
          h.last_step_start_us ? json(*h.last_step_start_us) : json(nullptr),
          h.filtered_out,
          OptJson(h.wholetrace_overlap_pct),
          h.wholetrace_comm_us,
          h.wholetrace_overlap_us,
          h.dropped_sub_us,
          h.note};
}

report::HtaCompat HtaOf(const json& j) {
  report::HtaCompat h;
  h.overlap_pct = OptOf(j[0]);
  h.comm_us = j[1], h.overlap_us = j[2], h.step_filter = j[3];
  if (!j[4].is_null()) h.last_step_start_us = j[4].get<int64_t>();
  h.filtered_out = j[5];
  h.wholetrace_overlap_pct = OptOf(j[6]);
  h.wholetrace_comm_us = j[7], h.wholetrace_overlap_us = j[8], h.dropped_sub_us = j[9], h.note = j[10];
  return h;
}

// "<json bytes> <record bytes>\n": where the meta JSON, the binary record and the report start.
struct Frame {
  size_t json = 0, record = 0, report = 0;
};
std::optional<Frame> FrameOf(const std::string& bytes) {
  const size_t nl = bytes.find('\n');
  if (nl == std::string::npos || nl > 41) return std::nullopt;
  char* end = nullptr;
  const unsigned long long a = std::strtoull(bytes.c_str(), &end, 10);
  if (end == nullptr || *end != ' ') return std::nullopt;
  const unsigned long long b = std::strtoull(end + 1, &end, 10);
  if (end != bytes.c_str() + nl || a > bytes.size() || b > bytes.size() || a + b > bytes.size() - nl - 1)
    return std::nullopt;
  return Frame{nl + 1, nl + 1 + a, nl + 1 + a + b};
}

}  // namespace

std::string SerializePart(const RankPart& p) {
  report::Report r = p.header;
  r.ranks = {p.rank};
  r.stream_concurrency = p.concurrency;
  json j;
  j["version"] = kVersion;
  j["partial"] = PartialJson(p.partial);
  j["file_bytes"] = p.file_bytes;
  j["hta_other"] = p.hta_other ? HtaJson(*p.hta_other) : json(nullptr);
  j["hta_step_names"] = p.hta_step_names;
  const std::string meta = j.dump();
  const std::string record = CompactBinary(p.compact);
  // The report's JSON last, as it is: not escaped inside another string.
  return absl::StrCat(meta.size(), " ", record.size(), "\n", meta, record, report::RenderJson(r));
}

// The meta JSON (version checked) and the frame.
absl::StatusOr<std::pair<json, Frame>> Meta(const std::string& bytes, const std::string& source) {
  const std::optional<Frame> f = FrameOf(bytes);
  if (!f) return absl::InvalidArgumentError(absl::StrCat(source, ": bad reduced rank: no length prefix"));
  json j = json::parse(std::string_view(bytes).substr(f->json, f->record - f->json));
  if (j.at("version").get<int>() != kVersion)
    return absl::InvalidArgumentError(absl::StrCat(source, ": reduced rank of another version"));
  return std::make_pair(std::move(j), *f);
}

size_t ReportOffset(const std::string& bytes) {
  const std::optional<Frame> f = FrameOf(bytes);
  return f ? f->report : std::string::npos;
}

absl::StatusOr<CompactRank> DeserializeCompact(const std::string& bytes, const std::string& source) {
  try {
    const std::optional<Frame> f = FrameOf(bytes);
    if (!f) return absl::InvalidArgumentError(absl::StrCat(source, ": bad reduced rank: no length prefix"));
    return CompactOfBinary(std::string_view(bytes).substr(f->record, f->report - f->record));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": bad reduced rank: ", e.what()));
  }
}

absl::StatusOr<RankPart> DeserializePart(const std::string& bytes, const std::string& source) {
  try {
    ASSIGN_OR_RETURN(auto m, Meta(bytes, source));
    const json& j = m.first;
    const Frame frame = m.second;
    ASSIGN_OR_RETURN(report::Report r,
                     report::ReadReportJson(std::string_view(bytes).substr(frame.report), source, nullptr));
    if (r.ranks.size() != 1) return absl::InvalidArgumentError(absl::StrCat(source, ": expected one rank"));
    RankPart p;
    p.rank = std::move(r.ranks.front());
    p.concurrency = std::move(r.stream_concurrency);
    r.ranks.clear();
    p.header = std::move(r);
    p.partial = PartialOf(j.at("partial"));
    p.compact = CompactOfBinary(std::string_view(bytes).substr(frame.record, frame.report - frame.record));
    p.file_bytes = j.at("file_bytes");
    if (!j.at("hta_other").is_null()) p.hta_other = HtaOf(j.at("hta_other"));
    p.hta_step_names = j.at("hta_step_names").get<std::vector<std::string>>();
    return p;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": bad reduced rank: ", e.what()));
  }
}

}  // namespace overlapscope::engine::reduce
