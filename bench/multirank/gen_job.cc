#include "bench/multirank/gen_job.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace overlapscope::bench {
namespace {

using ojson = nlohmann::ordered_json;

// Slots of an event template: what changes per rank and tile.
enum Slot : int { kTs = 0, kId = 1, kStep = 2, kSeq = 3 };

// One event, dumped with placeholders: pieces[0] value(slot[0]) pieces[1] ... pieces[n].
struct EventTemplate {
  std::vector<std::string> pieces;
  std::vector<Slot> slots;
  std::vector<int64_t> base;  // per slot: ts ns, id, step number, collective index
  bool every_tile = true;     // false: metadata, written once
};

struct Template {
  ojson header;  // every key but traceEvents
  std::vector<EventTemplate> events;
  int64_t start_ns = 0, end_ns = 0, id_stride = 1, step_stride = 1, collectives = 0, carried = 0;
  int64_t copy_id = 0;                   // the pageable copy's correlation id in tile 0 (id_stride - 1)
  std::string runtime_pid, runtime_tid;  // of the first cuda_runtime event (JSON values as dumped)
  std::string kernel_pid, kernel_tid, kernel_device, kernel_stream;  // of the first kernel
};

const char* const kMark[] = {"\"@@0@@\"", "\"@@1@@\"", "@@2@@", "\"@@3@@\""};

int64_t Ns(double us) { return std::llround(us * 1000.0); }

// Splits the dump of `e` at the markers (in order of appearance).
EventTemplate Split(const std::string& dump, const std::map<Slot, int64_t>& values, bool every_tile) {
  EventTemplate t;
  t.every_tile = every_tile;
  size_t pos = 0;
  for (;;) {
    size_t best = std::string::npos;
    int which = -1;
    for (const auto& [slot, v] : values) {
      const size_t p = dump.find(kMark[slot], pos);
      if (p < best) best = p, which = slot;
    }
    if (which < 0) break;
    t.pieces.push_back(dump.substr(pos, best - pos));
    t.slots.push_back(static_cast<Slot>(which));
    t.base.push_back(values.at(static_cast<Slot>(which)));
    pos = best + std::string(kMark[which]).size();
  }
  t.pieces.push_back(dump.substr(pos));
  return t;
}

absl::StatusOr<Template> Load(const std::string& path, int ranks) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  ojson doc = ojson::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a Kineto trace (no traceEvents array)"));
  Template t;
  t.header = doc;
  t.header.erase("traceEvents");
  int64_t max_id = 0, min_step = INT64_MAX, max_step = INT64_MIN;
  std::map<int64_t, int64_t> coll_index;  // External id of a collective -> its index
  std::set<int64_t> carried;              // those a kernel carries
  t.start_ns = INT64_MAX;
  t.end_ns = INT64_MIN;
  auto meta = [](const ojson& e) { return e.contains("ph") && e["ph"] == "M"; };
  for (const ojson& e : doc["traceEvents"]) {
    if (e.contains("ts") && e["ts"].is_number() && !meta(e)) {
      const int64_t ts = Ns(e["ts"].get<double>());
      const int64_t dur = e.contains("dur") && e["dur"].is_number() ? Ns(e["dur"].get<double>()) : 0;
      t.start_ns = std::min(t.start_ns, ts);
      t.end_ns = std::max(t.end_ns, ts + dur);
    }
    if (e.contains("id") && e["id"].is_number_integer()) max_id = std::max(max_id, e["id"].get<int64_t>());
    if (e.contains("args"))
      for (const char* k : {"correlation", "External id"})
        if (e["args"].contains(k) && e["args"][k].is_number_integer())
          max_id = std::max(max_id, e["args"][k].get<int64_t>());
  }
  t.id_stride = max_id + 2;  // one id per tile for the pageable copy (JobSpec::pageable_rank)
  t.copy_id = max_id + 1;
  for (const ojson& e : doc["traceEvents"]) {
    if (!e.contains("cat") || !e.contains("pid") || !e.contains("tid")) continue;
    if (e["cat"] == "cuda_runtime" && t.runtime_pid.empty()) {
      t.runtime_pid = e["pid"].dump();
      t.runtime_tid = e["tid"].dump();
    }
    if (e["cat"] == "kernel" && t.kernel_pid.empty() && e.contains("args") && e["args"].contains("device") &&
        e["args"].contains("stream")) {
      t.kernel_pid = e["pid"].dump();
      t.kernel_tid = e["tid"].dump();
      t.kernel_device = e["args"]["device"].dump();
      t.kernel_stream = e["args"]["stream"].dump();
    }
  }
  for (ojson e : doc["traceEvents"]) {
    std::map<Slot, int64_t> v;
    const bool timed = e.contains("ts") && e["ts"].is_number();
    if (timed) {
      v[kTs] = Ns(e["ts"].get<double>());
      e["ts"] = "@@0@@";
    }
    if (e.contains("id") && e["id"].is_number_integer()) {
      v[kId] = e["id"].get<int64_t>();
      e["id"] = "@@1@@";
    }
    // Several id fields share one stride; each gets its own marker occurrence (same slot kind).
    std::vector<std::pair<std::string, int64_t>> ids;
    if (e.contains("args") && e["args"].is_object()) {
      ojson& a = e["args"];
      if (a.contains("Collective name")) {
        const int64_t ext = a.contains("External id") && a["External id"].is_number_integer()
                                ? a["External id"].get<int64_t>()
                                : static_cast<int64_t>(coll_index.size());
        auto it = coll_index.try_emplace(ext, static_cast<int64_t>(coll_index.size())).first;
        // A collective of the model is one a GPU activity carries (record_param_comms without
        // a kernel, e.g. a barrier's, is no instance).
        if (e.contains("cat") && e["cat"] == "kernel") carried.insert(ext);
        a["Seq"] = "@@3@@";
        v[kSeq] = it->second;
        a["Group size"] = ranks;
        a.erase("Process Group Ranks");
      }
    }
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
    if (name.rfind("ProfilerStep#", 0) == 0) {
      const int64_t n = std::strtoll(name.c_str() + 13, nullptr, 10);
      min_step = std::min(min_step, n);
      max_step = std::max(max_step, n);
      v[kStep] = n;
      e["name"] = "ProfilerStep#@@2@@";
    }
    std::string dump = e.dump();
    // correlation / External id: replace their numbers by an id marker (dumped as plain numbers).
    EventTemplate et = Split(dump, v, timed && !meta(e));
    if (e.contains("args") && e["args"].is_object()) {
      for (const char* k : {"correlation", "External id"}) {
        if (!e["args"].contains(k) || !e["args"][k].is_number_integer()) continue;
        const std::string key = absl::StrCat("\"", k, "\":", e["args"][k].get<int64_t>());
        for (size_t i = 0; i < et.pieces.size(); ++i) {
          const size_t p = et.pieces[i].find(key);
          if (p == std::string::npos) continue;
          const std::string after = et.pieces[i].substr(p + key.size());
          et.pieces[i] = et.pieces[i].substr(0, p) + "\"" + k + "\":";
          et.pieces.insert(et.pieces.begin() + static_cast<long>(i) + 1, after);
          et.slots.insert(et.slots.begin() + static_cast<long>(i), kId);
          et.base.insert(et.base.begin() + static_cast<long>(i), e["args"][k].get<int64_t>());
          break;
        }
      }
    }
    t.events.push_back(std::move(et));
  }
  t.collectives = static_cast<int64_t>(coll_index.size());
  t.carried = static_cast<int64_t>(carried.size());
  t.step_stride = max_step >= min_step ? max_step - min_step + 1 : 1;
  if (t.start_ns > t.end_ns) return absl::InvalidArgumentError(absl::StrCat(path, ": no timed events"));
  return t;
}

int64_t CopySlotNs(const JobSpec& s) {
  return s.pageable_rank >= 0 ? std::max<int64_t>(0, s.pageable_copy_ns) + 50000 : 0;
}

int64_t Period(const Template& t, const JobSpec& s) {
  return (t.end_ns - t.start_ns) + s.jitter_ns + std::max<int64_t>(0, s.straggler_delay_ns) + 100000 + CopySlotNs(s);
}

void AppendTs(std::string& o, int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  o += buf;
}

std::string Header(const Template& t, const JobSpec& s, int rank) {
  ojson h = t.header;
  if (h.contains("distributedInfo") && h["distributedInfo"].is_object()) {
    ojson& d = h["distributedInfo"];
    d["rank"] = rank;
    d["world_size"] = s.ranks;
    if (d.contains("pg_config") && d["pg_config"].is_array())
      for (ojson& pg : d["pg_config"]) {
        pg["pg_size"] = s.ranks;
        pg["ranks"] = ojson::array();
        for (int r = 0; r < s.ranks; ++r) pg["ranks"].push_back(r);
      }
  } else {
    h["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", s.ranks}};
  }
  if (s.ranks_per_host > 0) h["host_name"] = absl::StrCat("node", rank / s.ranks_per_host);
  std::string d = h.dump();
  d.pop_back();  // the closing brace: traceEvents follow
  return d + (d.size() > 1 ? "," : "") + "\"traceEvents\":[\n";
}

// Appends tile k of `rank` (its events, each preceded by ",\n" unless *first).
void AppendTile(const Template& t, const JobSpec& s, int64_t period, int rank, int64_t k, bool* first, std::string& o) {
  const int64_t off = OffsetNs(s, period, rank, k) + HostClockNs(s, rank);
  for (const EventTemplate& e : t.events) {
    if (!e.every_tile && k > 0) continue;
    if (!*first) o += ",\n";
    *first = false;
    for (size_t i = 0; i < e.slots.size(); ++i) {
      o += e.pieces[i];
      const int64_t b = e.base[i];
      switch (e.slots[i]) {
        case kTs: AppendTs(o, b + off); break;
        case kId: o += std::to_string(b + k * t.id_stride); break;
        case kStep: o += std::to_string(b + k * t.step_stride); break;
        case kSeq: o += std::to_string(b + k * t.collectives); break;
      }
    }
    o += e.pieces.back();
  }
  if (rank != s.pageable_rank || t.runtime_pid.empty() || t.kernel_pid.empty()) return;
  // The pageable copy, 20 µs after the tile's last event: the call blocks the host while the
  // copy runs (it starts 2 µs into the call and ends 2 µs before it returns).
  const int64_t at = t.end_ns + off + 20000, id = t.copy_id + k * t.id_stride,
                dur = std::max<int64_t>(8000, s.pageable_copy_ns);
  if (!*first) o += ",\n";
  *first = false;
  o += absl::StrCat("{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaMemcpyAsync\",\"pid\":", t.runtime_pid,
                    ",\"tid\":", t.runtime_tid, ",\"ts\":");
  AppendTs(o, at);
  o += ",\"dur\":";
  AppendTs(o, dur);
  absl::StrAppend(&o, ",\"args\":{\"cbid\":41,\"correlation\":", id, "}},\n");
  absl::StrAppend(&o, "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\",\"pid\":",
                  t.kernel_pid, ",\"tid\":", t.kernel_tid, ",\"ts\":");
  AppendTs(o, at + 2000);
  o += ",\"dur\":";
  AppendTs(o, dur - 4000);
  absl::StrAppend(&o, ",\"args\":{\"device\":", t.kernel_device, ",\"stream\":", t.kernel_stream,
                  ",\"correlation\":", id, ",\"bytes\":4194304}}");
}

absl::StatusOr<int64_t> WriteRank(const Template& t, const JobSpec& s, int64_t period, int rank) {
  const std::string path = absl::StrCat(s.out_dir, "/rank", rank, ".json");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return absl::InternalError(absl::StrCat(path, ": cannot write"));
  std::string o = Header(t, s, rank);
  int64_t bytes = 0;
  bool first = true;
  for (int64_t k = 0; k < s.tiles; ++k) {
    AppendTile(t, s, period, rank, k, &first, o);
    if (o.size() > (1 << 20)) {
      bytes += static_cast<int64_t>(std::fwrite(o.data(), 1, o.size(), f));
      o.clear();
    }
  }
  o += "\n]}\n";
  bytes += static_cast<int64_t>(std::fwrite(o.data(), 1, o.size(), f));
  if (std::fclose(f) != 0) return absl::InternalError(absl::StrCat(path, ": cannot write"));
  return bytes;
}

}  // namespace

int64_t OffsetNs(const JobSpec& s, int64_t period_ns, int rank, int64_t tile) {
  uint64_t h = s.seed * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(rank) << 32) ^ static_cast<uint64_t>(tile);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  const int64_t jitter = s.jitter_ns > 0 ? static_cast<int64_t>(h % static_cast<uint64_t>(s.jitter_ns)) : 0;
  return tile * period_ns + jitter + (rank == s.straggler ? s.straggler_delay_ns : 0);
}

int64_t HostClockNs(const JobSpec& s, int rank) {
  return s.ranks_per_host > 0 ? static_cast<int64_t>(rank / s.ranks_per_host) * s.host_clock_step_ns : 0;
}

absl::StatusOr<int64_t> TilesForBytes(const JobSpec& spec, int64_t bytes_per_rank) {
  absl::StatusOr<Template> t = Load(spec.template_path, spec.ranks);
  if (!t.ok()) return t.status();
  // A second tile's bytes (the first carries the metadata written once).
  std::string o;
  bool first = true;
  AppendTile(*t, spec, Period(*t, spec), 0, 0, &first, o);
  const size_t one = o.size();
  AppendTile(*t, spec, Period(*t, spec), 0, 1, &first, o);
  const auto tile = static_cast<int64_t>(o.size() - one);
  return std::max<int64_t>(1, (bytes_per_rank - static_cast<int64_t>(one)) / std::max<int64_t>(1, tile) + 1);
}

absl::StatusOr<JobInfo> WriteJob(const JobSpec& s) {
  if (s.ranks < 1 || s.tiles < 1) return absl::InvalidArgumentError("ranks and tiles must be >= 1");
  absl::StatusOr<Template> t = Load(s.template_path, s.ranks);
  if (!t.ok()) return t.status();
  std::error_code ec;
  std::filesystem::create_directories(s.out_dir, ec);
  JobInfo info;
  info.period_ns = Period(*t, s);
  info.collectives_per_tile = t->carried;
  for (int r = 0; r < s.ranks; ++r) {
    absl::StatusOr<int64_t> b = WriteRank(*t, s, info.period_ns, r);
    if (!b.ok()) return b.status();
    if (r == 0) info.bytes_per_rank = *b;
    info.bytes_total += *b;
  }
  return info;
}

}  // namespace overlapscope::bench
