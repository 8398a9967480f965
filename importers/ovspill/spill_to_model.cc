// Joins the decoded spill records of one process into model events (see spill_to_model.h).
#include "importers/ovspill/spill_to_model.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"

namespace overlapscope::import {
namespace {

using model::MemcpyKind;
using model::MemoryKind;

// CUPTI memcpy kinds (CUpti_ActivityMemcpyKind); array copies count as the side they touch.
MemcpyKind CopyKind(uint8_t k) {
  switch (k) {
    case 1:
    case 3: return MemcpyKind::kHtoD;  // HTOD, HTOA
    case 2:
    case 4: return MemcpyKind::kDtoH;  // DTOH, ATOH
    case 5:
    case 6:
    case 7:
    case 8: return MemcpyKind::kDtoD;  // ATOA, ATOD, DTOA, DTOD
    case 9: return MemcpyKind::kHtoH;
    case 10: return MemcpyKind::kPtoP;
    default: return MemcpyKind::kUnknown;
  }
}

// CUPTI memory kinds (CUpti_ActivityMemoryKind).
MemoryKind MemKind(uint32_t k) {
  switch (k) {
    case 1: return MemoryKind::kPageable;
    case 2: return MemoryKind::kPinned;
    case 3:
    case 6: return MemoryKind::kDevice;  // DEVICE, DEVICE_STATIC
    case 4: return MemoryKind::kArray;
    case 5:
    case 7: return MemoryKind::kManaged;  // MANAGED, MANAGED_STATIC
    default: return MemoryKind::kUnknown;
  }
}

// Names as CUPTI/Kineto spell them, so traces from either source group the same way.
const char* CopyKindName(uint8_t k) {
  static const char* kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                 "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return k <= 10 ? kNames[k] : "Unknown";
}
const char* MemKindName(uint32_t k) {
  static const char* kNames[] = {"Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device", "Managed"};
  return k <= 7 ? kNames[k] : "Unknown";
}
const char* OverheadName(uint32_t k) {
  switch (k) {
    case 1: return "CUPTI overhead: driver compiler";
    case 1u << 16: return "CUPTI overhead: buffer flush";
    case 2u << 16: return "CUPTI overhead: instrumentation";
    case 3u << 16: return "CUPTI overhead: resource";
    case 4u << 16: return "CUPTI overhead: module loading";
    case 5u << 16: return "CUPTI overhead: lazy function loading";
    case 6u << 16: return "CUPTI overhead: command buffer full";
    case 7u << 16: return "CUPTI overhead: activity buffer request";
    default: return "CUPTI overhead";
  }
}

// CUPTI reports mangled kernel names; users, Kineto and Nsight show demangled ones.
std::string Demangle(std::string_view mangled) {
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(mangled);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> d(
      abi::__cxa_demangle(std::string(mangled).c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(mangled);
}

// Capture windows: the closing record of each window replaces its opening one; a window that
// never closed (the process died inside it) ends at the process's last record.
void AddWindows(SpillRecords& r, model::ProcessId p, model::TraceBuilder& b) {
  if (r.windows.empty()) return;
  int64_t last = r.have_end ? r.end.time : 0;
  auto upto = [&](const auto& v) {
    for (const auto& e : v) last = std::max<int64_t>(last, e.end);
  };
  upto(r.kernels), upto(r.memcpys), upto(r.memsets), upto(r.apis), upto(r.syncs), upto(r.overheads);
  for (const auto& m : r.markers) last = std::max<int64_t>(last, m.timestamp);
  absl::btree_map<uint32_t, formats::SpillWindow> by_index;
  for (const formats::SpillWindow& w : r.windows) {
    auto [it, inserted] = by_index.try_emplace(w.index, w);
    if (!inserted && w.end != 0) it->second = w;
  }
  static const model::WindowTrigger kTriggers[] = {model::WindowTrigger::kProcess, model::WindowTrigger::kSession,
                                                   model::WindowTrigger::kCudaProfilerApi, model::WindowTrigger::kNvtx,
                                                   model::WindowTrigger::kDelay};
  for (const auto& [index, w] : by_index) {
    model::CaptureWindow cw;
    cw.process = p;
    cw.index = static_cast<int32_t>(index);
    cw.start_ns = w.start;
    cw.end_ns = w.end != 0 ? w.end : std::max(last, w.start);
    cw.trigger = w.trigger <= 4 ? kTriggers[w.trigger] : model::WindowTrigger::kProcess;
    if (w.name_sid) {
      auto it = r.strings.find(w.name_sid);
      if (it != r.strings.end()) cw.name = it->second;
    }
    if (w.end == 0)
      r.stats.examples.push_back(absl::StrCat("capture window ", index,
                                              " was never closed (the process ended inside it): it ends at the last "
                                              "record"));
    if (cw.end_ns < cw.start_ns) cw.end_ns = cw.start_ns;
    b.data().windows.push_back(cw);
  }
}

}  // namespace

absl::Status SpillRecordsToModel(SpillRecords r, model::TraceBuilder& b, SpillNvtxSide* nvtx) {
  model::SourceStats& st = r.stats;
  auto str = [&](uint32_t sid) -> model::StringId {
    if (sid == 0) return 0;
    auto it = r.strings.find(sid);
    if (it != r.strings.end()) return it->second;
    ++st.skipped_by_reason["undefined string id (name left empty)"];
    return 0;
  };

  model::Process proc;
  if (r.have_process) {
    proc.pid = r.process.pid;
    proc.rank = r.process.rank;
    proc.world_size = r.process.world_size;
    proc.name = str(r.process.name_sid);
    proc.host = str(r.process.host_sid);
  } else {
    st.examples.push_back("no process record: the process died before its first flush");
  }
  proc.source = b.Intern("capture");
  const model::ProcessId p = b.AddProcess(proc);
  st.path = st.path.empty() ? absl::StrCat("capture:", proc.pid) : st.path;
  if (!r.have_end)
    st.examples.push_back(
        "no end record: the process ended without a clean flush (crash or kill); "
        "activity still in CUPTI buffers at that moment is lost");
  else if (r.end.reason == 2)
    st.examples.push_back(absl::StrCat("flushed from a handler of signal ", r.end.signal_number));
  if (r.have_stats) {
    st.dropped_records = static_cast<int64_t>(r.capture_stats.dropped_records);
    if (r.capture_stats.unknown_records)
      st.unknown_categories["CUPTI records of kinds not encoded"] =
          static_cast<int64_t>(r.capture_stats.unknown_records);
    if (r.capture_stats.failed_buffer_requests)
      st.skipped_by_reason["CUPTI buffer requests refused (pool full)"] =
          static_cast<int64_t>(r.capture_stats.failed_buffer_requests);
  }

  auto dev = [&](uint32_t d) { return b.GetOrAddDevice(p, static_cast<int32_t>(d)); };
  auto thread = [&](uint32_t tid) { return b.GetOrAddThread(p, tid); };
  // Context -> device, from context records and from every GPU record (which carry both).
  absl::flat_hash_map<uint32_t, uint32_t> ctx_dev;
  for (const auto& c : r.contexts) ctx_dev[c.context] = c.device;
  for (const auto& k : r.kernels) ctx_dev.try_emplace(k.context, k.device);
  for (const auto& m : r.memcpys) ctx_dev.try_emplace(m.context, m.device);
  for (const auto& m : r.memsets) ctx_dev.try_emplace(m.context, m.device);
  for (const auto& e : r.events) ctx_dev.try_emplace(e.context, e.device);
  for (const auto& d : r.devices) b.data().devices[dev(d.device)].name = str(d.name_sid);

  absl::flat_hash_map<uint32_t, int64_t> external;
  for (const auto& e : r.externals) external.try_emplace(e.correlation, static_cast<int64_t>(e.external_id));
  auto ext = [&](uint32_t corr) {
    auto it = external.find(corr);
    return it == external.end() ? model::kNoCorrelation : it->second;
  };
  // Correlation -> API call; the runtime call wins over a driver call with the same id.
  absl::flat_hash_map<uint32_t, const formats::SpillApi*> api;
  for (const auto& a : r.apis) {
    auto [it, inserted] = api.try_emplace(a.correlation, &a);
    if (!inserted && it->second->driver && !a.driver) it->second = &a;
  }
  absl::flat_hash_map<uint64_t, const formats::SpillCudaEvent*> event_by_sync;
  for (const auto& e : r.events) event_by_sync[e.event_sync_id] = &e;

  // Records with unknown or reversed timestamps (CUPTI writes 0 when it could not time an
  // activity) are counted and skipped: they would corrupt every duration downstream.
  auto bad_time = [&](int64_t start, int64_t end, const char* what) {
    if (start > 0 && end >= start) return false;
    st.Skip(absl::StrCat(what, ": unknown or reversed timestamps"), absl::StrCat(what, " start ", start, " end ", end));
    return true;
  };
  auto& d = b.data();
  absl::flat_hash_map<uint32_t, model::StringId> kernel_names;  // spill sid -> demangled
  auto kernel_name = [&](uint32_t sid) {
    auto [it, inserted] = kernel_names.try_emplace(sid, 0);
    if (inserted) it->second = b.Intern(Demangle(d.strings.Get(str(sid))));
    return it->second;
  };
  for (const auto& a : r.apis) {
    if (bad_time(a.start, a.end, "api")) continue;
    model::ApiCall c;
    c.start_ns = a.start, c.end_ns = a.end, c.thread = thread(a.tid), c.correlation_id = a.correlation;
    c.external_id = ext(a.correlation);
    c.name = a.name_sid ? str(a.name_sid) : b.Intern(absl::StrCat(a.driver ? "driver" : "runtime", " cbid ", a.cbid));
    c.kind = a.driver ? model::ApiKind::kDriver : model::ApiKind::kRuntime;
    c.return_code = static_cast<int32_t>(a.return_value);
    d.api_calls.push_back(c);
    ++st.kept_by_category[a.driver ? "driver api" : "runtime api"];
  }
  for (const auto& k : r.kernels) {
    if (bad_time(k.start, k.end, "kernel")) continue;
    model::Kernel e;
    e.start_ns = k.start, e.end_ns = k.end, e.device = dev(k.device), e.stream = b.GetOrAddStream(e.device, k.stream);
    e.correlation_id = k.correlation, e.external_id = ext(k.correlation), e.name = kernel_name(k.name_sid);
    e.grid = {k.grid[0], k.grid[1], k.grid[2]}, e.block = {k.block[0], k.block[1], k.block[2]};
    e.registers_per_thread = k.registers, e.shared_memory_bytes = int64_t{k.static_smem} + k.dynamic_smem;
    d.kernels.push_back(e);
    ++st.kept_by_category["kernel"];
  }
  for (const auto& m : r.memcpys) {
    if (bad_time(m.start, m.end, "memcpy")) continue;
    model::Memcpy e;
    e.start_ns = m.start, e.end_ns = m.end, e.device = dev(m.device), e.stream = b.GetOrAddStream(e.device, m.stream);
    e.correlation_id = m.correlation, e.external_id = ext(m.correlation), e.bytes = static_cast<int64_t>(m.bytes);
    e.kind = CopyKind(m.copy_kind), e.src_kind = MemKind(m.src_kind), e.dst_kind = MemKind(m.dst_kind);
    if (m.is_peer && m.dst_device != formats::kNoId) e.dst_device = dev(m.dst_device);
    std::string name = absl::StrCat("Memcpy ", CopyKindName(m.copy_kind), " (", MemKindName(m.src_kind), " -> ",
                                    MemKindName(m.dst_kind), ")");
    if (m.copy_count > 1) absl::StrAppend(&name, " batch of ", m.copy_count);
    e.name = b.Intern(name);
    // Asynchrony as the program asked for it (the API name), else CUPTI's flag.
    auto it = api.find(m.correlation);
    e.is_async = it != api.end() && it->second->name_sid
                     ? d.strings.Get(str(it->second->name_sid)).find("Async") != std::string_view::npos
                     : (m.flags & 1);
    d.memcpys.push_back(e);
    ++st.kept_by_category[m.copy_count > 1 ? "memcpy (batch)" : m.is_peer ? "memcpy (peer)" : "memcpy"];
  }
  for (const auto& m : r.memsets) {
    if (bad_time(m.start, m.end, "memset")) continue;
    model::Memset e;
    e.start_ns = m.start, e.end_ns = m.end, e.device = dev(m.device), e.stream = b.GetOrAddStream(e.device, m.stream);
    e.correlation_id = m.correlation, e.external_id = ext(m.correlation), e.bytes = static_cast<int64_t>(m.bytes);
    e.memory_kind = MemKind(m.memory_kind);
    e.name = b.Intern(absl::StrCat("Memset (", MemKindName(m.memory_kind), ")"));
    auto it = api.find(m.correlation);
    e.is_async = it != api.end() && it->second->name_sid
                     ? d.strings.Get(str(it->second->name_sid)).find("Async") != std::string_view::npos
                     : (m.flags & 1);
    d.memsets.push_back(e);
    ++st.kept_by_category["memset"];
  }
  for (const auto& s : r.syncs) {
    if (bad_time(s.start, s.end, "sync")) continue;
    model::Sync e;
    e.start_ns = s.start, e.end_ns = s.end, e.correlation_id = s.correlation;
    static const model::SyncKind kKinds[] = {model::SyncKind::kUnknown, model::SyncKind::kEventSync,
                                             model::SyncKind::kStreamWaitEvent, model::SyncKind::kStreamSync,
                                             model::SyncKind::kContextSync};
    static const char* kNames[] = {"Sync", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"};
    e.kind = s.type <= 4 ? kKinds[s.type] : model::SyncKind::kUnknown;
    e.name = b.Intern(kNames[s.type <= 4 ? s.type : 0]);
    if (auto it = api.find(s.correlation); it != api.end()) e.thread = thread(it->second->tid);
    auto cd = ctx_dev.find(s.context);
    if (cd != ctx_dev.end()) e.device = dev(cd->second);
    if (s.event_id != formats::kNoId) e.event_id = s.event_id;
    const formats::SpillCudaEvent* rec = nullptr;
    if (s.event_sync_id != formats::kNoId && s.event_sync_id != ~uint64_t{0}) {
      auto it = event_by_sync.find(s.event_sync_id);
      if (it != event_by_sync.end()) rec = it->second;
    }
    if (rec) e.event_record_correlation_id = rec->correlation;
    // Stream sync / wait-event: the record's stream; event sync: the stream that recorded the
    // event (what the host effectively waits for); wait-event also names the recording stream.
    if (e.device != model::kNone) {
      if (s.stream != formats::kNoId) e.stream = b.GetOrAddStream(e.device, s.stream);
      if (rec && rec->stream != formats::kNoId) {
        const model::StreamId rs = b.GetOrAddStream(dev(rec->device), rec->stream);
        if (e.kind == model::SyncKind::kStreamWaitEvent)
          e.wait_on_stream = rs;
        else if (e.kind == model::SyncKind::kEventSync && e.stream == model::kNone)
          e.stream = rs;
      }
    }
    d.syncs.push_back(e);
    ++st.kept_by_category["sync"];
  }
  st.kept_by_category["cuda event record (joined into syncs)"] += static_cast<int64_t>(r.events.size());
  if (!r.externals.empty()) st.kept_by_category["external correlation"] += static_cast<int64_t>(r.externals.size());

  // NVTX: start/end records pair by id; instantaneous markers become zero-length ranges.
  absl::flat_hash_map<uint32_t, const formats::SpillMarker*> open;
  auto marker_thread = [&](const formats::SpillMarker& m) {
    return thread(m.object_kind == 2 ? m.tid : static_cast<uint32_t>(proc.pid));
  };
  for (const auto& m : r.markers) {
    if (m.flags & 2) {
      open[m.id] = &m;
    } else if (m.flags & 4) {
      auto it = open.find(m.id);
      if (it == open.end()) {
        st.Skip("nvtx end without start", absl::StrCat("marker id ", m.id));
        continue;
      }
      const formats::SpillMarker& s = *it->second;
      open.erase(it);
      if (bad_time(s.timestamp, m.timestamp, "nvtx range")) continue;
      if (nvtx) nvtx->marker_of_range[static_cast<int32_t>(d.ranges.size())] = s.id;
      d.ranges.push_back({s.timestamp, m.timestamp, model::RangeKind::kNvtx, marker_thread(s), model::kNoCorrelation,
                          str(s.name_sid), str(s.domain_sid ? s.domain_sid : m.domain_sid)});
      st.kept_by_category["nvtx range (start and end records)"] += 2;
    } else if (m.flags & 1) {
      if (bad_time(m.timestamp, m.timestamp, "nvtx mark")) continue;
      d.ranges.push_back({m.timestamp, m.timestamp, model::RangeKind::kNvtx, marker_thread(m), model::kNoCorrelation,
                          str(m.name_sid), str(m.domain_sid)});
      ++st.kept_by_category["nvtx mark records"];
    }
  }
  if (!open.empty()) st.skipped_by_reason["nvtx range without end (still open at flush)"] += open.size();
  if (!r.marker_data.empty()) st.kept_by_category["nvtx marker data"] += static_cast<int64_t>(r.marker_data.size());
  if (!r.nvtx_payloads.empty()) {
    st.kept_by_category["nvtx extended payload (decoded for NCCL ranges)"] +=
        static_cast<int64_t>(r.nvtx_payloads.size());
    if (nvtx) nvtx->payloads = std::move(r.nvtx_payloads);
  }
  for (const auto& o : r.overheads) {
    if (bad_time(o.start, o.end, "overhead")) continue;
    d.ranges.push_back({o.start, o.end, model::RangeKind::kOverhead,
                        thread(o.object_kind == 2 ? o.tid : static_cast<uint32_t>(proc.pid)), model::kNoCorrelation,
                        b.Intern(OverheadName(o.overhead_kind)), 0});
    ++st.kept_by_category["cupti overhead"];
  }
  // Names last: they apply to threads/streams created above (or create them, harmlessly).
  for (const auto& n : r.names) {
    if (n.object_kind == 2) {
      d.threads[thread(n.b)].name = str(n.name_sid);
    } else if (n.object_kind == 5) {
      auto cd = ctx_dev.find(n.a);
      if (cd != ctx_dev.end()) d.streams[b.GetOrAddStream(dev(cd->second), n.b)].name = str(n.name_sid);
    } else if (n.object_kind == 3) {
      d.devices[dev(n.a)].name = str(n.name_sid);
    }
  }
  AddWindows(r, p, b);
  if (r.metadata_records) st.kept_by_category["metadata records"] += r.metadata_records;
  int64_t kept = 0;
  for (const auto& [k, v] : st.kept_by_category) kept += v;
  st.events_kept = kept;
  d.sources.push_back(std::move(st));
  return absl::OkStatus();
}

}  // namespace overlapscope::import
