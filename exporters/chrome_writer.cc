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

namespace {

// One process's document: header, metadata rows, host events, GPU rows, ac2g flows, footer.
class ProcessEncoder {
 public:
  ProcessEncoder(const model::Trace& t, model::ProcessId p, const ByteSink& sink, ChromeStats* st)
      : t_(t), p_(p), st_(st), o_(sink, st), base_(FloorDiv(t.start_ns(), kNsPerSecond) * kNsPerSecond) {
    my_device_.assign(t.devices().size(), 0);
    my_thread_.assign(t.threads().size(), 0);
    absl::flat_hash_set<int64_t> ordinals;
    for (size_t d = 0; d < t.devices().size(); ++d)
      if (t.devices()[d].process == p) my_device_[d] = 1, ordinals.insert(t.devices()[d].ordinal);
    for (size_t i = 0; i < t.threads().size(); ++i) my_thread_[i] = t.threads()[i].process == p;
    // The host pid must not be a device ordinal (GPU rows use pid = ordinal) and must fit uint32.
    pid_ = t.processes()[p].pid;
    if (pid_ < 0 || pid_ > 0x7fffffff || ordinals.contains(pid_)) pid_ = 0x7ffffffe;
    api_linked_.assign(t.api_calls().size(), 0);
  }

  absl::Status Run() {
    Header();
    Metadata();
    RETURN_IF_ERROR(HostEvents());
    RETURN_IF_ERROR(Kernels());
    RETURN_IF_ERROR(CopiesAndMemsets());
    RETURN_IF_ERROR(Syncs());
    RETURN_IF_ERROR(FlowEvents());
    o_.Raw("\n  ],\n  \"traceName\": ");
    o_.Str(t_.str(t_.processes()[p_].source));
    o_.Raw("\n}\n");
    return o_.Flush();
  }

 private:
  void Header() {
    const model::Process& pr = t_.processes()[p_];
    o_.Raw("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
    bool first_dev = true;
    for (size_t d = 0; d < t_.devices().size(); ++d) {
      if (!my_device_[d]) continue;
      o_.Raw(first_dev ? "\n    {" : ",\n    {");
      first_dev = false;
      bool f = true;
      o_.KeyInt("id", t_.devices()[d].ordinal, &f);
      o_.KeyStr("name", t_.str(t_.devices()[d].name), &f);
      o_.Raw("}");
    }
    o_.Raw("\n  ],\n");
    if (pr.rank >= 0) {
      o_.Raw("  \"distributedInfo\": {");
      bool f = true;
      o_.KeyInt("rank", pr.rank, &f);
      if (pr.world_size > 0) o_.KeyInt("world_size", pr.world_size, &f);
      o_.Raw("},\n");
    }
    o_.Raw("  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ");
    o_.Int(base_);
    o_.Raw(",\n  \"traceEvents\": [");
  }

  // An "X" event up to its open "args" object; the caller adds args and closes with "}}".
  void Complete(std::string_view cat, std::string_view name, int64_t epid, int64_t etid, int64_t s, int64_t e) {
    o_.BeginEvent();
    f_ = true;
    o_.KeyStr("ph", "X", &f_);
    o_.KeyStr("cat", cat, &f_);
    o_.KeyStr("name", name, &f_);
    o_.KeyInt("pid", epid, &f_);
    o_.KeyInt("tid", etid, &f_);
    o_.Key("ts", &f_);
    o_.Micros(s - base_);
    o_.Key("dur", &f_);
    o_.Micros(e - s);
    o_.Raw(", \"args\": {");
    f_ = true;
  }

  template <typename V>
  void Meta(std::string_view what, int64_t mpid, int64_t mtid, std::string_view key, V value) {
    o_.BeginEvent();
    bool f = true;
    o_.KeyStr("name", what, &f);
    o_.KeyStr("ph", "M", &f);
    o_.Key("ts", &f);
    o_.Micros(t_.start_ns() - base_);
    o_.KeyInt("pid", mpid, &f);
    o_.KeyInt("tid", mtid, &f);
    o_.Raw(", \"args\": {");
    bool g = true;
    if constexpr (std::is_integral_v<V>)
      o_.KeyInt(key, value, &g);
    else
      o_.KeyStr(key, value, &g);
    o_.Raw("}}");
  }

  // Metadata rows, as Kineto writes them. No invented names: a process without one gets no
  // process_name row (viewers show the pid).
  void Metadata() {
    const std::string_view pname = t_.str(t_.processes()[p_].name);
    if (!pname.empty()) Meta("process_name", pid_, 0, "name", pname);
    Meta("process_labels", pid_, 0, "labels", std::string_view("CPU"));
    Meta("process_sort_index", pid_, 0, "sort_index", pid_);
    for (size_t d = 0; d < t_.devices().size(); ++d) {
      if (!my_device_[d]) continue;
      const int64_t ord = t_.devices()[d].ordinal;
      if (!pname.empty()) Meta("process_name", ord, 0, "name", pname);
      Meta("process_labels", ord, 0, "labels", std::string_view(absl::StrCat("GPU ", ord)));
      Meta("process_sort_index", ord, 0, "sort_index", int64_t{5000000} + ord);
    }
    for (size_t s = 0; s < t_.streams().size(); ++s) {
      const model::Stream& sm = t_.streams()[s];
      if (!my_device_[sm.device]) continue;
      const std::string name =
          t_.str(sm.name).empty() ? absl::StrCat("stream ", sm.native_id) : std::string(t_.str(sm.name));
      Meta("thread_name", t_.devices()[sm.device].ordinal, tids_.Map(sm.native_id), "name", std::string_view(name));
    }
    for (size_t i = 0; i < t_.threads().size(); ++i) {
      if (!my_thread_[i]) continue;
      const model::Thread& th = t_.threads()[i];
      const std::string name = t_.str(th.name).empty() ? absl::StrCat("thread ", th.tid) : std::string(t_.str(th.name));
      Meta("thread_name", pid_, tids_.Map(th.tid), "name", std::string_view(name));
    }
  }

  // Host ranges and API calls.
  absl::Status HostEvents() {
    for (const model::Range& r : t_.ranges()) {
      if (!my_thread_[r.thread]) continue;
      static constexpr std::string_view kCat[] = {"cpu_op", "user_annotation", "user_annotation", "python_function",
                                                  "overhead"};
      if (r.kind == model::RangeKind::kNvtx) ++st_->nvtx_as_user_annotation;
      Complete(kCat[static_cast<int>(r.kind)], t_.str(r.name), pid_, tids_.Map(t_.threads()[r.thread].tid), r.start_ns,
               r.end_ns);
      if (r.external_id != kNoCorrelation) o_.KeyInt("External id", r.external_id, &f_);
      if (r.domain) o_.KeyStr("domain", t_.str(r.domain), &f_);
      o_.Raw("}}");
      RETURN_IF_ERROR(o_.MaybeFlush());
    }
    for (const model::ApiCall& a : t_.api_calls()) {
      if (!my_thread_[a.thread]) continue;
      const int64_t tid = tids_.Map(t_.threads()[a.thread].tid);
      Complete(a.kind == model::ApiKind::kDriver ? "cuda_driver" : "cuda_runtime", t_.str(a.name), pid_, tid,
               a.start_ns, a.end_ns);
      if (a.external_id != kNoCorrelation) o_.KeyInt("External id", a.external_id, &f_);
      if (a.correlation_id != kNoCorrelation) o_.KeyInt("correlation", a.correlation_id, &f_);
      o_.Raw("}}");
      RETURN_IF_ERROR(o_.MaybeFlush());
    }
    return absl::OkStatus();
  }

  // Args every GPU row has: pid = device ordinal, tid = stream id.
  void GpuCommon(model::DeviceId d, model::StreamId s, int64_t corr, int64_t ext) {
    if (ext != kNoCorrelation) o_.KeyInt("External id", ext, &f_);
    o_.KeyInt("device", t_.devices()[d].ordinal, &f_);
    o_.KeyInt("stream", t_.streams()[s].native_id, &f_);
    if (corr != kNoCorrelation) o_.KeyInt("correlation", corr, &f_);
  }

  // ac2g: one s/f pair per API call with GPU work or a sync record (its first one).
  void FlowTo(int64_t corr, int64_t ts, int64_t fpid, int64_t ftid) {
    const int32_t a = corr == kNoCorrelation ? kNone : t_.ApiCallIndexByCorrelation(p_, corr);
    if (a == kNone || api_linked_[a]) return;
    api_linked_[a] = 1;
    flow_ends_.push_back({corr, ts, fpid, ftid, a});
  }

  absl::Status Kernels() {
    for (const model::Kernel& k : t_.kernels()) {
      if (!my_device_[k.device]) continue;
      const int64_t ord = t_.devices()[k.device].ordinal, tid = tids_.Map(t_.streams()[k.stream].native_id);
      Complete("kernel", t_.str(k.name), ord, tid, k.start_ns, k.end_ns);
      GpuCommon(k.device, k.stream, k.correlation_id, k.external_id);
      if (k.registers_per_thread >= 0) o_.KeyInt("registers per thread", k.registers_per_thread, &f_);
      if (k.shared_memory_bytes >= 0) o_.KeyInt("shared memory", k.shared_memory_bytes, &f_);
      if (k.grid.x || k.grid.y || k.grid.z) o_.KeyDim("grid", k.grid, &f_);
      if (k.block.x || k.block.y || k.block.z) o_.KeyDim("block", k.block, &f_);
      if (k.collective != kNone) {
        const model::Collective& c = t_.collectives()[k.collective];
        o_.KeyStr("Collective name", t_.str(c.op), &f_);
        if (c.in_elements >= 0) o_.KeyInt("In msg nelems", c.in_elements, &f_);
        if (c.out_elements >= 0) o_.KeyInt("Out msg nelems", c.out_elements, &f_);
        if (c.nranks > 0) o_.KeyInt("Group size", c.nranks, &f_);
        if (c.dtype) o_.KeyStr("dtype", t_.str(c.dtype), &f_);
        if (c.communicator) o_.KeyStr("Process Group Name", t_.str(c.communicator), &f_);
        if (c.sequence >= 0) o_.KeyInt("Seq", c.sequence, &f_);
      }
      o_.Raw("}}");
      FlowTo(k.correlation_id, k.start_ns, ord, tid);
      RETURN_IF_ERROR(o_.MaybeFlush());
    }
    return absl::OkStatus();
  }

  absl::Status CopiesAndMemsets() {
    std::string scratch;
    for (const model::Memcpy& m : t_.memcpys()) {
      if (!my_device_[m.device]) continue;
      const int64_t ord = t_.devices()[m.device].ordinal, tid = tids_.Map(t_.streams()[m.stream].native_id);
      std::string_view name = t_.str(m.name);
      // The importer (and HTA) read the copy kind from the name: keep Kineto's form.
      if (name.substr(0, 7) != "Memcpy ") {
        scratch = absl::StrCat("Memcpy ", std::string(model::ToString(m.kind)));
        if (!KinetoMemory(m.src_kind).empty() && !KinetoMemory(m.dst_kind).empty())
          absl::StrAppend(&scratch, " (", std::string(KinetoMemory(m.src_kind)), " -> ",
                          std::string(KinetoMemory(m.dst_kind)), ")");
        name = scratch;
      }
      Complete("gpu_memcpy", name, ord, tid, m.start_ns, m.end_ns);
      GpuCommon(m.device, m.stream, m.correlation_id, m.external_id);
      if (m.bytes >= 0) o_.KeyInt("bytes", m.bytes, &f_);
      if (m.collective != kNone) o_.KeyStr("Collective name", t_.str(t_.collectives()[m.collective].op), &f_);
      o_.Raw("}}");
      FlowTo(m.correlation_id, m.start_ns, ord, tid);
      RETURN_IF_ERROR(o_.MaybeFlush());
    }
    for (const model::Memset& m : t_.memsets()) {
      if (!my_device_[m.device]) continue;
      const int64_t ord = t_.devices()[m.device].ordinal, tid = tids_.Map(t_.streams()[m.stream].native_id);
      std::string_view name = t_.str(m.name);
      if (name.empty()) {
        scratch = KinetoMemory(m.memory_kind).empty()
                      ? std::string("Memset")
                      : absl::StrCat("Memset (", std::string(KinetoMemory(m.memory_kind)), ")");
        name = scratch;
      }
      Complete("gpu_memset", name, ord, tid, m.start_ns, m.end_ns);
      GpuCommon(m.device, m.stream, m.correlation_id, m.external_id);
      if (m.bytes >= 0) o_.KeyInt("bytes", m.bytes, &f_);
      o_.Raw("}}");
      FlowTo(m.correlation_id, m.start_ns, ord, tid);
      RETURN_IF_ERROR(o_.MaybeFlush());
    }
    for (const model::GpuRange& g : t_.gpu_ranges()) {
      if (!my_device_[g.device]) continue;
      Complete("gpu_user_annotation", t_.str(g.name), t_.devices()[g.device].ordinal,
               tids_.Map(t_.streams()[g.stream].native_id), g.start_ns, g.end_ns);
      if (g.external_id != kNoCorrelation) o_.KeyInt("External id", g.external_id, &f_);
      if (g.correlation_id != kNoCorrelation) o_.KeyInt("correlation", g.correlation_id, &f_);
      o_.Raw("}}");
    }
    return absl::OkStatus();
  }

  absl::Status Syncs() {
    for (const model::Sync& y : t_.syncs()) {
      const bool mine = y.device != kNone ? my_device_[y.device] : (y.thread != kNone && my_thread_[y.thread]);
      if (!mine) continue;
      if (y.device == kNone) {  // Kineto keeps cuda_sync on the GPU rows: no row to put it on
        ++st_->not_written;
        continue;
      }
      const int64_t ord = t_.devices()[y.device].ordinal;
      // Kineto puts syncs without a stream (event/context syncs) on tid 1 of the GPU row.
      const int64_t tid = y.stream != kNone ? tids_.Map(t_.streams()[y.stream].native_id) : 1;
      std::string_view name = KinetoSyncName(y.kind);
      if (name.empty()) name = t_.str(y.name);
      Complete("cuda_sync", name, ord, tid, y.start_ns, y.end_ns);
      o_.KeyStr("cuda_sync_kind", name, &f_);
      if (y.kind == model::SyncKind::kStreamWaitEvent || y.kind == model::SyncKind::kEventSync) {
        o_.KeyInt("wait_on_stream", y.wait_on_stream != kNone ? t_.streams()[y.wait_on_stream].native_id : -1, &f_);
        o_.KeyInt("wait_on_cuda_event_record_corr_id",
                  y.event_record_correlation_id != kNoCorrelation ? y.event_record_correlation_id : -1, &f_);
        o_.KeyInt("wait_on_cuda_event_id", y.event_id, &f_);
      }
      o_.KeyInt("stream", y.stream != kNone ? t_.streams()[y.stream].native_id : -1, &f_);
      if (y.correlation_id != kNoCorrelation) o_.KeyInt("correlation", y.correlation_id, &f_);
      o_.KeyInt("device", ord, &f_);
      o_.Raw("}}");
      FlowTo(y.correlation_id, y.start_ns, ord, tid);
      RETURN_IF_ERROR(o_.MaybeFlush());
    }
    return absl::OkStatus();
  }

  // ac2g flows: "s" on the API call, "f" (binding to the enclosing slice) on its first GPU
  // activity or sync record; id = correlation, as Kineto writes them.
  absl::Status FlowEvents() {
    for (const FlowEnd& fe : flow_ends_) {
      const model::ApiCall* a = &t_.api_calls()[fe.api];
      FlowEvent("s", fe.corr, pid_, tids_.Map(t_.threads()[a->thread].tid), a->start_ns, false);
      FlowEvent("f", fe.corr, fe.pid, fe.tid, fe.ts, true);
      RETURN_IF_ERROR(o_.MaybeFlush());
    }
    return absl::OkStatus();
  }
  void FlowEvent(std::string_view ph, int64_t id, int64_t fpid, int64_t ftid, int64_t ts, bool bind_enclosing) {
    o_.BeginEvent();
    bool g = true;
    o_.KeyStr("ph", ph, &g);
    o_.KeyInt("id", id, &g);
    o_.KeyInt("pid", fpid, &g);
    o_.KeyInt("tid", ftid, &g);
    o_.Key("ts", &g);
    o_.Micros(ts - base_);
    o_.KeyStr("cat", "ac2g", &g);
    o_.KeyStr("name", "ac2g", &g);
    if (bind_enclosing) o_.KeyStr("bp", "e", &g);
    o_.Raw("}");
  }

  struct FlowEnd {
    int64_t corr, ts, pid, tid;
    int32_t api;
  };
  const model::Trace& t_;
  const model::ProcessId p_;
  ChromeStats* st_;
  JsonOut o_;
  const int64_t base_;
  int64_t pid_ = 0;
  IdMap tids_;
  std::vector<char> my_device_, my_thread_, api_linked_;
  std::vector<FlowEnd> flow_ends_;
  bool f_ = true;  // "first key" state of the event being written
};

}  // namespace

absl::Status EncodeChromeProcess(const model::Trace& t, model::ProcessId p, const ByteSink& sink, ChromeStats* stats) {
  ChromeStats local;
  return ProcessEncoder(t, p, sink, stats ? stats : &local).Run();
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

namespace {

// One document (process p; an empty trace when the trace has no process) into `file`.
absl::Status WriteChromeFile(const model::Trace& trace, model::ProcessId p, const std::string& file, bool gz,
                             ChromeStats& st) {
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
        trace, p, [&](std::string_view b) { return gz ? deflate_some(b, Z_NO_FLUSH) : write_raw(b.data(), b.size()); },
        &st);
  }
  if (gz) {
    if (s.ok()) s = deflate_some({}, Z_FINISH);
    deflateEnd(&z);
  }
  RETURN_IF_ERROR(s);
  if (std::fclose(f.release()) != 0)
    return absl::UnavailableError(absl::StrCat(file, ": close failed: ", std::strerror(errno)));
  st.files.push_back(file);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ChromeStats> WriteChrome(const model::Trace& trace, const std::string& path,
                                        model::ProcessId only_process) {
  ChromeStats st;
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (only_process != model::kNone) {
    if (only_process < 0 || static_cast<size_t>(only_process) >= trace.processes().size())
      return absl::InvalidArgumentError(absl::StrCat(path, ": no process ", only_process, " in the trace"));
    RETURN_IF_ERROR(WriteChromeFile(trace, only_process, path, gz, st));
    return st;
  }
  const std::vector<std::string> paths = ChromeOutputPaths(trace, path);
  for (size_t p = 0; p < paths.size() && p < std::max<size_t>(trace.processes().size(), 1); ++p)
    RETURN_IF_ERROR(WriteChromeFile(trace, static_cast<model::ProcessId>(p), paths[p], gz, st));
  return st;
}

}  // namespace overlapscope::exporters
