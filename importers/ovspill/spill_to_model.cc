// Joins the decoded spill records of one process into model events (see spill_to_model.h).
#include "importers/ovspill/spill_to_model.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "absl/container/btree_map.h"
#include "absl/strings/str_cat.h"
#include "model/api_names.h"
#include "model/bounds.h"

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
  // The records are packed structs: copy a field before std::max binds a reference to it (a
  // reference to a misaligned int64_t is undefined behaviour; UBSan reports it).
  auto upto = [&](const auto& v) {
    for (const auto& e : v) last = std::max(last, static_cast<int64_t>(e.end));
  };
  upto(r.kernels), upto(r.memcpys), upto(r.memsets), upto(r.apis), upto(r.syncs), upto(r.overheads);
  for (const auto& m : r.markers) last = std::max(last, static_cast<int64_t>(m.timestamp));
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
    cw.end_ns = w.end != 0 ? w.end : std::max(last, static_cast<int64_t>(w.start));
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

// Joins one process's decoded records into model events: one method per record kind, sharing
// the lookups built in the constructor (context -> device, correlation -> API call / external
// id, event sync id -> recording event).
class SpillConverter {
 public:
  SpillConverter(SpillRecords& r, model::TraceBuilder& b) : r_(r), b_(b), d_(b.data()), st_(r.stats) {}

  void Run(SpillNvtxSide* nvtx) {
    AddProcess();
    BuildLookups();
    Apis();
    Kernels();
    Memcpys();
    Memsets();
    Syncs();
    Markers(nvtx);
    Overheads();
    Names();
    AddWindows(r_, p_, b_);
    if (r_.metadata_records) st_.kept_by_category["metadata records"] += r_.metadata_records;
    int64_t kept = 0;
    for (const auto& [k, v] : st_.kept_by_category) kept += v;
    st_.events_kept = kept;
    st_.gpu_activities_kept = gpu_kept_;
  }

 private:
  model::StringId Str(uint32_t sid) {
    if (sid == 0) return 0;
    auto it = r_.strings.find(sid);
    if (it != r_.strings.end()) return it->second;
    st_.Add(model::Stat::kSpillUndefinedString);
    return 0;
  }
  model::DeviceId Dev(uint32_t d) { return b_.GetOrAddDevice(p_, static_cast<int32_t>(d)); }
  model::ThreadId Thread(uint32_t tid) { return b_.GetOrAddThread(p_, tid); }
  int64_t Ext(uint32_t corr) const {
    auto it = external_.find(corr);
    return it == external_.end() ? model::kNoCorrelation : it->second;
  }
  // Records with unknown or reversed timestamps (CUPTI writes 0 when it could not time an
  // activity), or outside model/bounds.h, are counted and skipped: they would corrupt every
  // duration downstream.
  bool BadTime(int64_t start, int64_t end, const char* what) {
    if (start > 0 && end >= start && model::TimeInBounds(start, end - start)) return false;
    if (start > 0 && end >= start) st_.Add(model::Stat::kTimeOutOfBounds);
    st_.Skip(model::Stat::kSpillBadTimestamps, what, absl::StrCat(what, " start ", start, " end ", end));
    return true;
  }
  // A byte count within model/bounds.h, else -1 (counted).
  int64_t Bytes(uint64_t v) {
    if (v <= static_cast<uint64_t>(model::kMaxSize)) return static_cast<int64_t>(v);
    st_.Add(model::Stat::kSizeOutOfBounds);
    return -1;
  }
  // Asynchrony as the program asked for it (the API call's kind), else CUPTI's flag.
  int8_t IsAsync(uint32_t correlation, uint32_t flags) {
    auto it = api_.find(correlation);
    if (it == api_.end() || !it->second->name_sid) return static_cast<int8_t>(flags & 1);
    const int8_t a = model::CopyIsAsync(model::ClassifyApiCall(d_.strings.Get(Str(it->second->name_sid))));
    return a >= 0 ? a : static_cast<int8_t>(flags & 1);
  }

  void AddProcess();
  void BuildLookups();
  void Apis();
  void Kernels();
  void Memcpys();
  void Memsets();
  void Syncs();
  void Markers(SpillNvtxSide* nvtx);
  void Overheads();
  void Names();

  SpillRecords& r_;
  model::TraceBuilder& b_;
  model::TraceData& d_;
  model::SourceStats& st_;
  model::ProcessId p_ = model::kNone;
  int64_t pid_ = -1;
  int64_t gpu_kept_ = 0;
  absl::flat_hash_map<uint32_t, uint32_t> ctx_dev_;
  absl::flat_hash_map<uint32_t, int64_t> external_;
  absl::flat_hash_map<uint32_t, const formats::SpillApi*> api_;
  absl::flat_hash_map<uint64_t, const formats::SpillCudaEvent*> event_by_sync_;
  absl::flat_hash_map<uint32_t, model::StringId> kernel_names_;  // spill sid -> demangled
};

void SpillConverter::AddProcess() {
  model::Process proc;
  if (r_.have_process) {
    proc.pid = r_.process.pid;
    proc.rank = r_.process.rank;
    proc.world_size = r_.process.world_size;
    proc.name = Str(r_.process.name_sid);
    proc.host = Str(r_.process.host_sid);
  } else {
    st_.Add(model::Stat::kCaptureNoProcessRecord);
  }
  proc.source = b_.Intern("capture");
  pid_ = proc.pid;
  p_ = b_.AddProcess(proc);
  st_.path = st_.path.empty() ? absl::StrCat("capture:", proc.pid) : st_.path;
  if (!r_.have_end)
    st_.Add(model::Stat::kCaptureNoEndRecord);
  else if (r_.end.reason == 2)
    st_.Add(model::Stat::kCaptureSignalFlush, 1, absl::StrCat("signal ", r_.end.signal_number));
  if (r_.have_stats) {
    if (r_.capture_stats.dropped_records)
      st_.Add(model::Stat::kCuptiDroppedRecords, static_cast<int64_t>(r_.capture_stats.dropped_records));
    if (r_.capture_stats.unknown_records)
      st_.Add(model::Stat::kCuptiUnknownKinds, static_cast<int64_t>(r_.capture_stats.unknown_records));
    if (r_.capture_stats.failed_buffer_requests)
      st_.Add(model::Stat::kCuptiBufferRefused, static_cast<int64_t>(r_.capture_stats.failed_buffer_requests));
  }
}

void SpillConverter::BuildLookups() {
  // Context -> device, from context records and from every GPU record (which carry both).
  for (const auto& c : r_.contexts) ctx_dev_[c.context] = c.device;
  for (const auto& k : r_.kernels) ctx_dev_.try_emplace(k.context, k.device);
  for (const auto& m : r_.memcpys) ctx_dev_.try_emplace(m.context, m.device);
  for (const auto& m : r_.memsets) ctx_dev_.try_emplace(m.context, m.device);
  for (const auto& e : r_.events) ctx_dev_.try_emplace(e.context, e.device);
  for (const auto& dv : r_.devices) d_.devices[Dev(dv.device)].name = Str(dv.name_sid);
  for (const auto& e : r_.externals) external_.try_emplace(e.correlation, static_cast<int64_t>(e.external_id));
  // Correlation -> API call; the runtime call wins over a driver call with the same id.
  for (const auto& a : r_.apis) {
    auto [it, inserted] = api_.try_emplace(a.correlation, &a);
    if (!inserted && it->second->driver && !a.driver) it->second = &a;
  }
  for (const auto& e : r_.events) event_by_sync_[e.event_sync_id] = &e;
}

void SpillConverter::Apis() {
  for (const auto& a : r_.apis) {
    if (BadTime(a.start, a.end, "api")) continue;
    model::ApiCall c;
    c.start_ns = a.start, c.end_ns = a.end, c.thread = Thread(a.tid), c.correlation_id = a.correlation;
    c.external_id = Ext(a.correlation);
    c.name = a.name_sid ? Str(a.name_sid) : b_.Intern(absl::StrCat(a.driver ? "driver" : "runtime", " cbid ", a.cbid));
    c.kind = a.driver ? model::ApiKind::kDriver : model::ApiKind::kRuntime;
    c.return_code = static_cast<int32_t>(a.return_value);
    d_.api_calls.push_back(c);
    ++st_.kept_by_category[a.driver ? "driver api" : "runtime api"];
  }
}

void SpillConverter::Kernels() {
  for (const auto& k : r_.kernels) {
    if (BadTime(k.start, k.end, "kernel")) continue;
    model::Kernel e;
    e.start_ns = k.start, e.end_ns = k.end, e.device = Dev(k.device), e.stream = b_.GetOrAddStream(e.device, k.stream);
    e.correlation_id = k.correlation, e.external_id = Ext(k.correlation);
    auto [it, inserted] = kernel_names_.try_emplace(k.name_sid, 0);
    if (inserted) it->second = b_.Intern(Demangle(d_.strings.Get(Str(k.name_sid))));
    e.name = it->second;
    e.grid = {k.grid[0], k.grid[1], k.grid[2]}, e.block = {k.block[0], k.block[1], k.block[2]};
    e.registers_per_thread = k.registers, e.shared_memory_bytes = int64_t{k.static_smem} + k.dynamic_smem;
    d_.kernels.push_back(e);
    ++st_.kept_by_category["kernel"];
    ++gpu_kept_;
  }
}

void SpillConverter::Memcpys() {
  for (const auto& m : r_.memcpys) {
    if (BadTime(m.start, m.end, "memcpy")) continue;
    model::Memcpy e;
    e.start_ns = m.start, e.end_ns = m.end, e.device = Dev(m.device), e.stream = b_.GetOrAddStream(e.device, m.stream);
    e.correlation_id = m.correlation, e.external_id = Ext(m.correlation), e.bytes = Bytes(m.bytes);
    e.kind = CopyKind(m.copy_kind), e.src_kind = MemKind(m.src_kind), e.dst_kind = MemKind(m.dst_kind);
    if (m.is_peer && m.dst_device != formats::kNoId) e.dst_device = Dev(m.dst_device);
    std::string name = absl::StrCat("Memcpy ", CopyKindName(m.copy_kind), " (", MemKindName(m.src_kind), " -> ",
                                    MemKindName(m.dst_kind), ")");
    if (m.copy_count > 1) absl::StrAppend(&name, " batch of ", m.copy_count);
    e.name = b_.Intern(name);
    e.is_async = IsAsync(m.correlation, m.flags);
    d_.memcpys.push_back(e);
    ++st_.kept_by_category[m.copy_count > 1 ? "memcpy (batch)" : m.is_peer ? "memcpy (peer)" : "memcpy"];
    ++gpu_kept_;
  }
}

void SpillConverter::Memsets() {
  for (const auto& m : r_.memsets) {
    if (BadTime(m.start, m.end, "memset")) continue;
    model::Memset e;
    e.start_ns = m.start, e.end_ns = m.end, e.device = Dev(m.device), e.stream = b_.GetOrAddStream(e.device, m.stream);
    e.correlation_id = m.correlation, e.external_id = Ext(m.correlation), e.bytes = Bytes(m.bytes);
    e.memory_kind = MemKind(m.memory_kind);
    e.name = b_.Intern(absl::StrCat("Memset (", MemKindName(m.memory_kind), ")"));
    e.is_async = IsAsync(m.correlation, m.flags);
    d_.memsets.push_back(e);
    ++st_.kept_by_category["memset"];
    ++gpu_kept_;
  }
}

void SpillConverter::Syncs() {
  static const model::SyncKind kKinds[] = {model::SyncKind::kUnknown, model::SyncKind::kEventSync,
                                           model::SyncKind::kStreamWaitEvent, model::SyncKind::kStreamSync,
                                           model::SyncKind::kContextSync};
  static const char* kNames[] = {"Sync", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync"};
  for (const auto& s : r_.syncs) {
    if (BadTime(s.start, s.end, "sync")) continue;
    model::Sync e;
    e.start_ns = s.start, e.end_ns = s.end, e.correlation_id = s.correlation;
    e.kind = s.type <= 4 ? kKinds[s.type] : model::SyncKind::kUnknown;
    e.name = b_.Intern(kNames[s.type <= 4 ? s.type : 0]);
    if (auto it = api_.find(s.correlation); it != api_.end()) e.thread = Thread(it->second->tid);
    if (auto cd = ctx_dev_.find(s.context); cd != ctx_dev_.end()) e.device = Dev(cd->second);
    if (s.event_id != formats::kNoId) e.event_id = s.event_id;
    const formats::SpillCudaEvent* rec = nullptr;
    if (s.event_sync_id != formats::kNoId && s.event_sync_id != ~uint64_t{0}) {
      auto it = event_by_sync_.find(s.event_sync_id);
      if (it != event_by_sync_.end()) rec = it->second;
    }
    if (rec) e.event_record_correlation_id = rec->correlation;
    // Stream sync / wait-event: the record's stream; event sync: the stream that recorded the
    // event (what the host effectively waits for); wait-event also names the recording stream.
    if (e.device != model::kNone) {
      if (s.stream != formats::kNoId) e.stream = b_.GetOrAddStream(e.device, s.stream);
      if (rec && rec->stream != formats::kNoId) {
        const model::StreamId rs = b_.GetOrAddStream(Dev(rec->device), rec->stream);
        if (e.kind == model::SyncKind::kStreamWaitEvent)
          e.wait_on_stream = rs;
        else if (e.kind == model::SyncKind::kEventSync && e.stream == model::kNone)
          e.stream = rs;
      }
    }
    d_.syncs.push_back(e);
    ++st_.kept_by_category["sync"];
  }
  st_.kept_by_category["cuda event record (joined into syncs)"] += static_cast<int64_t>(r_.events.size());
  if (!r_.externals.empty()) st_.kept_by_category["external correlation"] += static_cast<int64_t>(r_.externals.size());
}

void SpillConverter::Markers(SpillNvtxSide* nvtx) {
  // NVTX: start/end records pair by id; instantaneous markers become zero-length ranges.
  absl::flat_hash_map<uint32_t, const formats::SpillMarker*> open;
  auto marker_thread = [&](const formats::SpillMarker& m) {
    return Thread(m.object_kind == 2 ? m.tid : static_cast<uint32_t>(pid_));
  };
  for (const auto& m : r_.markers) {
    if (m.flags & 2) {
      open[m.id] = &m;
    } else if (m.flags & 4) {
      auto it = open.find(m.id);
      if (it == open.end()) {
        st_.Skip(model::Stat::kSpillNvtxEndWithoutStart, {}, absl::StrCat("marker id ", m.id));
        continue;
      }
      const formats::SpillMarker& s = *it->second;
      open.erase(it);
      if (BadTime(s.timestamp, m.timestamp, "nvtx range")) continue;
      if (nvtx) nvtx->marker_of_range[static_cast<int32_t>(d_.ranges.size())] = s.id;
      d_.ranges.push_back({s.timestamp, m.timestamp, model::RangeKind::kNvtx, marker_thread(s), model::kNoCorrelation,
                           Str(s.name_sid), Str(s.domain_sid ? s.domain_sid : m.domain_sid)});
      st_.kept_by_category["nvtx range (start and end records)"] += 2;
    } else if (m.flags & 1) {
      if (BadTime(m.timestamp, m.timestamp, "nvtx mark")) continue;
      d_.ranges.push_back({m.timestamp, m.timestamp, model::RangeKind::kNvtx, marker_thread(m), model::kNoCorrelation,
                           Str(m.name_sid), Str(m.domain_sid)});
      ++st_.kept_by_category["nvtx mark records"];
    }
  }
  if (!open.empty()) st_.Add(model::Stat::kSpillNvtxOpen, static_cast<int64_t>(open.size()));
  if (!r_.marker_data.empty()) st_.kept_by_category["nvtx marker data"] += static_cast<int64_t>(r_.marker_data.size());
  if (!r_.nvtx_payloads.empty()) {
    st_.kept_by_category["nvtx extended payload (decoded for NCCL ranges)"] +=
        static_cast<int64_t>(r_.nvtx_payloads.size());
    if (nvtx) nvtx->payloads = std::move(r_.nvtx_payloads);
  }
}

void SpillConverter::Overheads() {
  for (const auto& o : r_.overheads) {
    if (BadTime(o.start, o.end, "overhead")) continue;
    d_.ranges.push_back({o.start, o.end, model::RangeKind::kOverhead,
                         Thread(o.object_kind == 2 ? o.tid : static_cast<uint32_t>(pid_)), model::kNoCorrelation,
                         b_.Intern(OverheadName(o.overhead_kind)), 0});
    ++st_.kept_by_category["cupti overhead"];
  }
}

void SpillConverter::Names() {
  // Names last: they apply to threads/streams created above (or create them, harmlessly).
  for (const auto& n : r_.names) {
    if (n.object_kind == 2) {
      d_.threads[Thread(n.b)].name = Str(n.name_sid);
    } else if (n.object_kind == 5) {
      auto cd = ctx_dev_.find(n.a);
      if (cd != ctx_dev_.end()) d_.streams[b_.GetOrAddStream(Dev(cd->second), n.b)].name = Str(n.name_sid);
    } else if (n.object_kind == 3) {
      d_.devices[Dev(n.a)].name = Str(n.name_sid);
    }
  }
}

}  // namespace

absl::Status SpillRecordsToModel(SpillRecords r, model::TraceBuilder& b, SpillNvtxSide* nvtx) {
  SpillConverter(r, b).Run(nvtx);
  b.data().sources.push_back(std::move(r.stats));
  return absl::OkStatus();
}

}  // namespace overlapscope::import
