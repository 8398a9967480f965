#include "exporters/chrome_writer.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "exporters/chrome_json_out.h"
#include "exporters/perfetto_flows.h"

namespace overlapscope::exporters {
namespace {

using model::kNoCorrelation;
using model::kNone;

constexpr int64_t kNsPerSecond = 1'000'000'000;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Kineto's spelling of memory kinds in memcpy/memset names ("Memcpy DtoH (Device -> Pinned)").
std::string_view KinetoMemory(model::MemoryKind k) {
  switch (k) {
    case model::MemoryKind::kPageable: return "Pageable";
    case model::MemoryKind::kPinned: return "Pinned";
    case model::MemoryKind::kDevice: return "Device";
    case model::MemoryKind::kManaged: return "Managed";
    case model::MemoryKind::kArray: return "Array";
    case model::MemoryKind::kUnknown: break;
  }
  return "";
}

std::string_view KinetoSyncName(model::SyncKind k) {
  switch (k) {
    case model::SyncKind::kStreamWaitEvent: return "Stream Wait Event";
    case model::SyncKind::kEventSync: return "Event Sync";
    case model::SyncKind::kStreamSync: return "Stream Sync";
    case model::SyncKind::kContextSync: return "Context Sync";
    case model::SyncKind::kUnknown: break;
  }
  return "";
}

// uint32 pid/tid values: as recorded when they fit, else a synthetic id from the top of the
// range (real pids/tids stay far below it).
class IdMap {
 public:
  int64_t Map(int64_t id) {
    if (id >= 0 && id <= 0x7fffffff) return id;
    auto [it, inserted] = synth_.try_emplace(id, next_);
    if (inserted) --next_;
    return it->second;
  }

 private:
  absl::flat_hash_map<int64_t, int64_t> synth_;
  int64_t next_ = 0xffffffffLL;
};

}  // namespace

absl::Status EncodeChromeProcess(const model::Trace& t, model::ProcessId p, const ByteSink& sink, ChromeStats* stats) {
  ChromeStats local;
  ChromeStats* st = stats ? stats : &local;
  JsonOut o(sink, st);
  const model::Process& pr = t.processes()[p];
  const int64_t base = FloorDiv(t.start_ns(), kNsPerSecond) * kNsPerSecond;
  IdMap tids;

  std::vector<char> my_device(t.devices().size(), 0), my_thread(t.threads().size(), 0);
  absl::flat_hash_set<int64_t> ordinals;
  for (size_t d = 0; d < t.devices().size(); ++d)
    if (t.devices()[d].process == p) my_device[d] = 1, ordinals.insert(t.devices()[d].ordinal);
  for (size_t i = 0; i < t.threads().size(); ++i) my_thread[i] = t.threads()[i].process == p;
  // The host pid must not be a device ordinal (GPU rows use pid = ordinal) and must fit uint32.
  int64_t pid = pr.pid;
  if (pid < 0 || pid > 0x7fffffff || ordinals.contains(pid)) pid = 0x7ffffffe;

  o.Raw("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
  bool first_dev = true;
  for (size_t d = 0; d < t.devices().size(); ++d) {
    if (!my_device[d]) continue;
    o.Raw(first_dev ? "\n    {" : ",\n    {");
    first_dev = false;
    bool f = true;
    o.KeyInt("id", t.devices()[d].ordinal, &f);
    o.KeyStr("name", t.str(t.devices()[d].name), &f);
    o.Raw("}");
  }
  o.Raw("\n  ],\n");
  if (pr.rank >= 0) {
    o.Raw("  \"distributedInfo\": {");
    bool f = true;
    o.KeyInt("rank", pr.rank, &f);
    if (pr.world_size > 0) o.KeyInt("world_size", pr.world_size, &f);
    o.Raw("},\n");
  }
  o.Raw("  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
  o.Int(base);
  o.Raw(",\n  \"traceEvents\": [");

  auto complete = [&](std::string_view cat, std::string_view name, int64_t epid, int64_t etid, int64_t s, int64_t e,
                      bool* first) {
    o.BeginEvent();
    *first = true;
    o.KeyStr("ph", "X", first);
    o.KeyStr("cat", cat, first);
    o.KeyStr("name", name, first);
    o.KeyInt("pid", epid, first);
    o.KeyInt("tid", etid, first);
    o.Key("ts", first);
    o.Micros(s - base);
    o.Key("dur", first);
    o.Micros(e - s);
    o.Raw(", \"args\": {");
    *first = true;
  };
  auto meta = [&](std::string_view what, int64_t mpid, int64_t mtid, std::string_view key, auto value) {
    o.BeginEvent();
    bool f = true;
    o.KeyStr("name", what, &f);
    o.KeyStr("ph", "M", &f);
    o.Key("ts", &f);
    o.Micros(t.start_ns() - base);
    o.KeyInt("pid", mpid, &f);
    o.KeyInt("tid", mtid, &f);
    o.Raw(", \"args\": {");
    bool g = true;
    if constexpr (std::is_integral_v<decltype(value)>)
      o.KeyInt(key, value, &g);
    else
      o.KeyStr(key, value, &g);
    o.Raw("}}");
  };

  // Metadata rows, as Kineto writes them.
  // No invented names: a process without one gets no process_name row (viewers show the pid).
  const std::string_view pname = t.str(pr.name);
  if (!pname.empty()) meta("process_name", pid, 0, "name", pname);
  meta("process_labels", pid, 0, "labels", std::string_view("CPU"));
  meta("process_sort_index", pid, 0, "sort_index", pid);
  for (size_t d = 0; d < t.devices().size(); ++d) {
    if (!my_device[d]) continue;
    const int64_t ord = t.devices()[d].ordinal;
    if (!pname.empty()) meta("process_name", ord, 0, "name", pname);
    meta("process_labels", ord, 0, "labels", std::string_view(absl::StrCat("GPU ", ord)));
    meta("process_sort_index", ord, 0, "sort_index", int64_t{5000000} + ord);
  }
  for (size_t s = 0; s < t.streams().size(); ++s) {
    const model::Stream& sm = t.streams()[s];
    if (!my_device[sm.device]) continue;
    const std::string name =
        t.str(sm.name).empty() ? absl::StrCat("stream ", sm.native_id) : std::string(t.str(sm.name));
    meta("thread_name", t.devices()[sm.device].ordinal, tids.Map(sm.native_id), "name", std::string_view(name));
  }
  for (size_t i = 0; i < t.threads().size(); ++i) {
    if (!my_thread[i]) continue;
    const model::Thread& th = t.threads()[i];
    const std::string name = t.str(th.name).empty() ? absl::StrCat("thread ", th.tid) : std::string(t.str(th.name));
    meta("thread_name", pid, tids.Map(th.tid), "name", std::string_view(name));
  }

  bool f = true;
  // Host ranges and API calls.
  for (const model::Range& r : t.ranges()) {
    if (!my_thread[r.thread]) continue;
    static constexpr std::string_view kCat[] = {"cpu_op", "user_annotation", "user_annotation", "python_function",
                                                "overhead"};
    if (r.kind == model::RangeKind::kNvtx) ++st->nvtx_as_user_annotation;
    complete(kCat[static_cast<int>(r.kind)], t.str(r.name), pid, tids.Map(t.threads()[r.thread].tid), r.start_ns,
             r.end_ns, &f);
    if (r.external_id != kNoCorrelation) o.KeyInt("External id", r.external_id, &f);
    if (r.domain) o.KeyStr("domain", t.str(r.domain), &f);
    o.Raw("}}");
    RETURN_IF_ERROR(o.MaybeFlush());
  }
  for (const model::ApiCall& a : t.api_calls()) {
    if (!my_thread[a.thread]) continue;
    const int64_t tid = tids.Map(t.threads()[a.thread].tid);
    complete(a.kind == model::ApiKind::kDriver ? "cuda_driver" : "cuda_runtime", t.str(a.name), pid, tid, a.start_ns,
             a.end_ns, &f);
    if (a.external_id != kNoCorrelation) o.KeyInt("External id", a.external_id, &f);
    if (a.correlation_id != kNoCorrelation) o.KeyInt("correlation", a.correlation_id, &f);
    o.Raw("}}");
    RETURN_IF_ERROR(o.MaybeFlush());
  }

  // GPU rows: pid = device ordinal, tid = stream id.
  auto gpu_common = [&](model::DeviceId d, model::StreamId s, int64_t corr, int64_t ext) {
    if (ext != kNoCorrelation) o.KeyInt("External id", ext, &f);
    o.KeyInt("device", t.devices()[d].ordinal, &f);
    o.KeyInt("stream", t.streams()[s].native_id, &f);
    if (corr != kNoCorrelation) o.KeyInt("correlation", corr, &f);
  };
  // ac2g: one s/f pair per API call with GPU work or a sync record (its first one).
  struct FlowEnd {
    int64_t corr, ts, pid, tid;
    int32_t api;
  };
  std::vector<FlowEnd> flow_ends;
  std::vector<char> api_linked(t.api_calls().size(), 0);
  auto flow_to = [&](int64_t corr, int64_t ts, int64_t fpid, int64_t ftid) {
    const int32_t a = corr == kNoCorrelation ? kNone : t.ApiCallIndexByCorrelation(p, corr);
    if (a == kNone || api_linked[a]) return;
    api_linked[a] = 1;
    flow_ends.push_back({corr, ts, fpid, ftid, a});
  };
  for (const model::Kernel& k : t.kernels()) {
    if (!my_device[k.device]) continue;
    const int64_t ord = t.devices()[k.device].ordinal, tid = tids.Map(t.streams()[k.stream].native_id);
    complete("kernel", t.str(k.name), ord, tid, k.start_ns, k.end_ns, &f);
    gpu_common(k.device, k.stream, k.correlation_id, k.external_id);
    if (k.registers_per_thread >= 0) o.KeyInt("registers per thread", k.registers_per_thread, &f);
    if (k.shared_memory_bytes >= 0) o.KeyInt("shared memory", k.shared_memory_bytes, &f);
    if (k.grid.x || k.grid.y || k.grid.z) o.KeyDim("grid", k.grid, &f);
    if (k.block.x || k.block.y || k.block.z) o.KeyDim("block", k.block, &f);
    if (k.collective != kNone) {
      const model::Collective& c = t.collectives()[k.collective];
      o.KeyStr("Collective name", t.str(c.op), &f);
      if (c.in_elements >= 0) o.KeyInt("In msg nelems", c.in_elements, &f);
      if (c.out_elements >= 0) o.KeyInt("Out msg nelems", c.out_elements, &f);
      if (c.nranks > 0) o.KeyInt("Group size", c.nranks, &f);
      if (c.dtype) o.KeyStr("dtype", t.str(c.dtype), &f);
      if (c.communicator) o.KeyStr("Process Group Name", t.str(c.communicator), &f);
      if (c.sequence >= 0) o.KeyInt("Seq", c.sequence, &f);
    }
    o.Raw("}}");
    flow_to(k.correlation_id, k.start_ns, ord, tid);
    RETURN_IF_ERROR(o.MaybeFlush());
  }
  std::string scratch;
  for (const model::Memcpy& m : t.memcpys()) {
    if (!my_device[m.device]) continue;
    const int64_t ord = t.devices()[m.device].ordinal, tid = tids.Map(t.streams()[m.stream].native_id);
    std::string_view name = t.str(m.name);
    // The importer (and HTA) read the copy kind from the name: keep Kineto's form.
    if (name.substr(0, 7) != "Memcpy ") {
      scratch = absl::StrCat("Memcpy ", std::string(model::ToString(m.kind)));
      if (!KinetoMemory(m.src_kind).empty() && !KinetoMemory(m.dst_kind).empty())
        absl::StrAppend(&scratch, " (", std::string(KinetoMemory(m.src_kind)), " -> ",
                        std::string(KinetoMemory(m.dst_kind)), ")");
      name = scratch;
    }
    complete("gpu_memcpy", name, ord, tid, m.start_ns, m.end_ns, &f);
    gpu_common(m.device, m.stream, m.correlation_id, m.external_id);
    if (m.bytes >= 0) o.KeyInt("bytes", m.bytes, &f);
    if (m.collective != kNone) o.KeyStr("Collective name", t.str(t.collectives()[m.collective].op), &f);
    o.Raw("}}");
    flow_to(m.correlation_id, m.start_ns, ord, tid);
    RETURN_IF_ERROR(o.MaybeFlush());
  }
  for (const model::Memset& m : t.memsets()) {
    if (!my_device[m.device]) continue;
    const int64_t ord = t.devices()[m.device].ordinal, tid = tids.Map(t.streams()[m.stream].native_id);
    std::string_view name = t.str(m.name);
    if (name.empty()) {
      scratch = KinetoMemory(m.memory_kind).empty()
                    ? std::string("Memset")
                    : absl::StrCat("Memset (", std::string(KinetoMemory(m.memory_kind)), ")");
      name = scratch;
    }
    complete("gpu_memset", name, ord, tid, m.start_ns, m.end_ns, &f);
    gpu_common(m.device, m.stream, m.correlation_id, m.external_id);
    if (m.bytes >= 0) o.KeyInt("bytes", m.bytes, &f);
    o.Raw("}}");
    flow_to(m.correlation_id, m.start_ns, ord, tid);
    RETURN_IF_ERROR(o.MaybeFlush());
  }
  for (const model::GpuRange& g : t.gpu_ranges()) {
    if (!my_device[g.device]) continue;
    complete("gpu_user_annotation", t.str(g.name), t.devices()[g.device].ordinal,
             tids.Map(t.streams()[g.stream].native_id), g.start_ns, g.end_ns, &f);
    if (g.external_id != kNoCorrelation) o.KeyInt("External id", g.external_id, &f);
    if (g.correlation_id != kNoCorrelation) o.KeyInt("correlation", g.correlation_id, &f);
    o.Raw("}}");
  }
  for (const model::Sync& y : t.syncs()) {
    const bool mine = y.device != kNone ? my_device[y.device] : (y.thread != kNone && my_thread[y.thread]);
    if (!mine) continue;
    if (y.device == kNone) {  // Kineto keeps cuda_sync on the GPU rows: no row to put it on
      ++st->not_written;
      continue;
    }
    const int64_t ord = t.devices()[y.device].ordinal;
    // Kineto puts syncs without a stream (event/context syncs) on tid 1 of the GPU row.
    const int64_t tid = y.stream != kNone ? tids.Map(t.streams()[y.stream].native_id) : 1;
    std::string_view name = KinetoSyncName(y.kind);
    if (name.empty()) name = t.str(y.name);
    complete("cuda_sync", name, ord, tid, y.start_ns, y.end_ns, &f);
    o.KeyStr("cuda_sync_kind", name, &f);
    if (y.kind == model::SyncKind::kStreamWaitEvent || y.kind == model::SyncKind::kEventSync) {
      o.KeyInt("wait_on_stream", y.wait_on_stream != kNone ? t.streams()[y.wait_on_stream].native_id : -1, &f);
      o.KeyInt("wait_on_cuda_event_record_corr_id",
               y.event_record_correlation_id != kNoCorrelation ? y.event_record_correlation_id : -1, &f);
      o.KeyInt("wait_on_cuda_event_id", y.event_id, &f);
    }
    o.KeyInt("stream", y.stream != kNone ? t.streams()[y.stream].native_id : -1, &f);
    if (y.correlation_id != kNoCorrelation) o.KeyInt("correlation", y.correlation_id, &f);
    o.KeyInt("device", ord, &f);
    o.Raw("}}");
    flow_to(y.correlation_id, y.start_ns, ord, tid);
    RETURN_IF_ERROR(o.MaybeFlush());
  }
  // ac2g flows: "s" on the API call, "f" (binding to the enclosing slice) on its first GPU
  // activity or sync record; id = correlation, as Kineto writes them.
  for (const FlowEnd& fe : flow_ends) {
    const model::ApiCall* a = &t.api_calls()[fe.api];
    o.BeginEvent();
    bool g = true;
    o.KeyStr("ph", "s", &g);
    o.KeyInt("id", fe.corr, &g);
    o.KeyInt("pid", pid, &g);
    o.KeyInt("tid", tids.Map(t.threads()[a->thread].tid), &g);
    o.Key("ts", &g);
    o.Micros(a->start_ns - base);
    o.KeyStr("cat", "ac2g", &g);
    o.KeyStr("name", "ac2g", &g);
    o.Raw("}");
    o.BeginEvent();
    g = true;
    o.KeyStr("ph", "f", &g);
    o.KeyInt("id", fe.corr, &g);
    o.KeyInt("pid", fe.pid, &g);
    o.KeyInt("tid", fe.tid, &g);
    o.Key("ts", &g);
    o.Micros(fe.ts - base);
    o.KeyStr("cat", "ac2g", &g);
    o.KeyStr("name", "ac2g", &g);
    o.KeyStr("bp", "e", &g);
    o.Raw("}");
    RETURN_IF_ERROR(o.MaybeFlush());
  }
  o.Raw("\n  ],\n  \"traceName\": ");
  o.Str(t.str(pr.source));
  o.Raw("\n}\n");
  return o.Flush();
}

absl::StatusOr<std::string> EncodeChromeToString(const model::Trace& trace, model::ProcessId process,
                                                 ChromeStats* stats) {
  std::string out;
  RETURN_IF_ERROR(EncodeChromeProcess(
      trace, process,
      [&](std::string_view b) {
        out.append(b);
        return absl::OkStatus();
      },
      stats));
  return out;
}

std::vector<std::string> ChromeOutputPaths(const model::Trace& trace, const std::string& path) {
  const size_t n = trace.processes().size();
  if (n <= 1) return {path};
  std::string_view stem = path, ext;
  for (std::string_view e : {std::string_view(".json.gz"), std::string_view(".json")}) {
    if (stem.size() > e.size() && stem.substr(stem.size() - e.size()) == e) {
      ext = e;
      stem.remove_suffix(e.size());
      break;
    }
  }
  std::vector<std::string> out;
  for (size_t p = 0; p < n; ++p) {
    const int32_t rank = trace.processes()[p].rank;
    out.push_back(rank >= 0 ? absl::StrCat(AV(stem), ".rank", rank, AV(ext))
                            : absl::StrCat(AV(stem), ".process", p, AV(ext)));
  }
  // Two processes with the same rank (merged traces of separate runs): fall back to indexes.
  absl::flat_hash_set<std::string> seen(out.begin(), out.end());
  if (seen.size() != out.size())
    for (size_t p = 0; p < n; ++p) out[p] = absl::StrCat(AV(stem), ".process", p, AV(ext));
  return out;
}

absl::StatusOr<ChromeStats> WriteChrome(const model::Trace& trace, const std::string& path) {
  ChromeStats st;
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  const std::vector<std::string> paths = ChromeOutputPaths(trace, path);
  for (size_t p = 0; p < paths.size() && p < std::max<size_t>(trace.processes().size(), 1); ++p) {
    const std::string& file = paths[p];
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(file.c_str(), "wb"), &std::fclose);
    if (!f) return absl::UnavailableError(absl::StrCat(file, ": cannot create: ", std::strerror(errno)));
    auto write_raw = [&](const char* data, size_t n) -> absl::Status {
      if (std::fwrite(data, 1, n, f.get()) != n)
        return absl::UnavailableError(absl::StrCat(file, ": write failed: ", std::strerror(errno)));
      st.file_bytes += static_cast<int64_t>(n);
      return absl::OkStatus();
    };
    z_stream z{};
    std::string zbuf(1 << 16, '\0');
    if (gz && deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      return absl::InternalError(absl::StrCat(file, ": zlib deflateInit2 failed"));
    auto deflate_some = [&](std::string_view in, int flush) -> absl::Status {
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      z.avail_in = static_cast<uInt>(in.size());
      do {
        z.next_out = reinterpret_cast<Bytef*>(zbuf.data());
        z.avail_out = static_cast<uInt>(zbuf.size());
        const int rc = deflate(&z, flush);
        if (rc == Z_STREAM_ERROR) return absl::InternalError(absl::StrCat(file, ": zlib deflate failed"));
        RETURN_IF_ERROR(write_raw(zbuf.data(), zbuf.size() - z.avail_out));
      } while (z.avail_out == 0 || (flush == Z_FINISH && z.avail_in > 0));
      return absl::OkStatus();
    };
    absl::Status s;
    if (trace.processes().empty()) {
      static constexpr std::string_view kEmpty =
          "{\n  \"schemaVersion\": 1,\n  \"baseTimeNanoseconds\": 0,\n  \"traceEvents\": []\n}\n";
      s = gz ? deflate_some(kEmpty, Z_NO_FLUSH) : write_raw(kEmpty.data(), kEmpty.size());
      st.bytes += static_cast<int64_t>(kEmpty.size());
    } else {
      s = EncodeChromeProcess(
          trace, static_cast<model::ProcessId>(p),
          [&](std::string_view b) { return gz ? deflate_some(b, Z_NO_FLUSH) : write_raw(b.data(), b.size()); }, &st);
    }
    if (gz) {
      if (s.ok()) s = deflate_some({}, Z_FINISH);
      deflateEnd(&z);
    }
    RETURN_IF_ERROR(s);
    if (std::fclose(f.release()) != 0)
      return absl::UnavailableError(absl::StrCat(file, ": close failed: ", std::strerror(errno)));
    st.files.push_back(file);
  }
  return st;
}

}  // namespace overlapscope::exporters
