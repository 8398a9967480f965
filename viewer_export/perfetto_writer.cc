#include "viewer_export/perfetto_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "model/status_macros.h"
#include "viewer_export/perfetto_fields.h"
#include "viewer_export/perfetto_layout.h"
#include "viewer_export/proto_writer.h"

namespace overlapscope::viewer_export {
namespace {

using model::kNone;
using model::kNoCorrelation;

constexpr uint32_t kSequenceId = 1;
constexpr size_t kFlushBytes = 1 << 20;

// Categories, interned once in the first packet (iid = index + 1).
enum Category : uint32_t {
  kCatKernel = 1, kCatMemcpy, kCatMemset, kCatRuntime, kCatDriver, kCatSync, kCatCpuOp,
  kCatUserAnnotation, kCatNvtx, kCatPython, kCatOverhead, kCatGpuAnnotation, kCatCount
};
constexpr const char* kCategoryNames[] = {"",        "kernel",          "gpu_memcpy", "gpu_memset",
                                          "cuda_runtime", "cuda_driver", "cuda_sync",  "cpu_op",
                                          "user_annotation", "nvtx",    "python_function",
                                          "overhead", "gpu_user_annotation"};

// Debug annotation names of model slices, interned once in the first packet (iid = value).
enum Ann : uint32_t {
  kAnnCorrelation = 1, kAnnExternalId, kAnnGrid, kAnnBlock, kAnnRegisters, kAnnSharedMemory,
  kAnnClass, kAnnCollective, kAnnCommunicator, kAnnDtype, kAnnSequence, kAnnInElements,
  kAnnOutElements, kAnnBytes, kAnnRank, kAnnNranks, kAnnCopyKind, kAnnSrcMemory, kAnnDstMemory,
  kAnnAsync, kAnnMemory, kAnnReturnCode, kAnnSyncKind, kAnnEventId, kAnnWaitOnStream,
  kAnnEventRecordCorrelation, kAnnDomain, kAnnDstDevice, kAnnStream, kAnnCount
};
constexpr const char* kAnnNames[] = {
    "", "correlation", "external id", "grid", "block", "registers per thread", "shared memory",
    "class", "collective", "communicator", "dtype", "sequence", "in elements", "out elements",
    "bytes", "rank", "nranks", "copy kind", "src memory", "dst memory", "async", "memory",
    "return code", "sync kind", "event", "wait on stream", "event record correlation", "domain",
    "dst device", "stream"};
static_assert(sizeof(kAnnNames) / sizeof(kAnnNames[0]) == kAnnCount);
static_assert(sizeof(kCategoryNames) / sizeof(kCategoryNames[0]) == kCatCount);

struct FlowRef {
  uint64_t id;
  bool terminating;
};

// Flow endpoints of every slice, as one CSR table per Src.
struct Flows {
  std::array<std::vector<uint32_t>, kSrcCount> offsets;
  std::array<std::vector<FlowRef>, kSrcCount> refs;
  int64_t count = 0;
};

class Encoder {
 public:
  Encoder(const model::Trace& t, Layout& L, const ByteSink& sink) : t_(t), L_(L), sink_(sink) {}

  absl::StatusOr<PerfettoStats> Run() {
    if (t_.start_ns() < 0) stats_.time_shift_ns = -t_.start_ns();
    const size_t n_strings = t_.strings().size();
    name_emitted_.assign(n_strings, false);
    value_emitted_.assign(n_strings, false);
    next_extra_iid_ = n_strings + 1;
    next_extra_value_iid_ = n_strings + 1;
    next_ann_iid_ = kAnnCount;
    buf_.reserve(kFlushBytes + 4096);
    BuildFlows();
    WritePreamble();
    WriteDescriptors();
    RETURN_IF_ERROR(WriteEvents());
    RETURN_IF_ERROR(Flush());
    stats_.tracks = static_cast<int64_t>(L_.tracks.size());
    stats_.lane_tracks = L_.lane_tracks;
    stats_.flows = flows_.count;
    return stats_;
  }

 private:
  // ---- flows -------------------------------------------------------------------------
  struct Endpoint {
    Src src;
    int32_t index;
  };
  int64_t StartOf(Endpoint e) const {
    switch (e.src) {
      case Src::kKernel: return t_.kernels()[e.index].start_ns;
      case Src::kMemcpy: return t_.memcpys()[e.index].start_ns;
      case Src::kMemset: return t_.memsets()[e.index].start_ns;
      case Src::kApi: return t_.api_calls()[e.index].start_ns;
      case Src::kSync: return t_.syncs()[e.index].start_ns;
      default: return 0;
    }
  }
  static Src SrcOf(model::GpuKind k) {
    return k == model::GpuKind::kKernel ? Src::kKernel : k == model::GpuKind::kMemcpy ? Src::kMemcpy : Src::kMemset;
  }

  void BuildFlows() {
    struct Pending {
      Endpoint e;
      FlowRef f;
    };
    std::vector<Pending> pending;
    uint64_t next_id = 1;
    auto link = [&](Endpoint a, Endpoint b) {
      const int32_t ta = L_.track_of[static_cast<int>(a.src)][a.index];
      const int32_t tb = L_.track_of[static_cast<int>(b.src)][b.index];
      if (ta == kNone || tb == kNone) return;
      // The flow starts on the slice trace_processor sees first: events are written in
      // (timestamp, track ordinal) order, so that order decides.
      const bool a_first = std::make_pair(StartOf(a), ta) <= std::make_pair(StartOf(b), tb);
      const uint64_t id = next_id++;
      pending.push_back({a, {id, !a_first}});
      pending.push_back({b, {id, a_first}});
    };
    auto gpu_links = [&](Src src, size_t n, auto get) {
      for (size_t i = 0; i < n; ++i) {
        const auto& g = get(i);
        if (g.correlation_id == kNoCorrelation) continue;
        const int32_t api = t_.ApiCallIndexByCorrelation(t_.ProcessOfDevice(g.device), g.correlation_id);
        if (api != kNone) link({Src::kApi, api}, {src, static_cast<int32_t>(i)});
      }
    };
    gpu_links(Src::kKernel, t_.kernels().size(), [&](size_t i) -> const model::Kernel& { return t_.kernels()[i]; });
    gpu_links(Src::kMemcpy, t_.memcpys().size(), [&](size_t i) -> const model::Memcpy& { return t_.memcpys()[i]; });
    gpu_links(Src::kMemset, t_.memsets().size(), [&](size_t i) -> const model::Memset& { return t_.memsets()[i]; });
    for (size_t i = 0; i < t_.syncs().size(); ++i) {
      const model::Sync& y = t_.syncs()[i];
      const model::ProcessId p = y.device != kNone   ? t_.ProcessOfDevice(y.device)
                                 : y.thread != kNone ? t_.ProcessOfThread(y.thread)
                                                     : kNone;
      if (p == kNone) continue;
      if (y.correlation_id != kNoCorrelation) {
        const int32_t api = t_.ApiCallIndexByCorrelation(p, y.correlation_id);
        if (api != kNone) link({Src::kApi, api}, {Src::kSync, static_cast<int32_t>(i)});
      }
      if (y.kind == model::SyncKind::kStreamWaitEvent && y.stream != kNone) {
        std::optional<model::GpuRef> source = WaitSource(p, y);
        if (source) link({SrcOf(source->kind), source->index}, {Src::kSync, static_cast<int32_t>(i)});
      }
    }
    // Counting sort of the endpoints into per-Src CSR tables.
    for (int s = 0; s < kSrcCount; ++s) {
      flows_.offsets[s].clear();
      flows_.refs[s].clear();
    }
    for (const Pending& p : pending) {
      auto& off = flows_.offsets[static_cast<int>(p.e.src)];
      if (off.empty()) off.assign(L_.track_of[static_cast<int>(p.e.src)].size() + 1, 0);
      ++off[p.e.index + 1];
    }
    for (int s = 0; s < kSrcCount; ++s) {
      auto& off = flows_.offsets[s];
      for (size_t i = 1; i < off.size(); ++i) off[i] += off[i - 1];
      if (!off.empty()) flows_.refs[s].resize(off.back());
    }
    std::array<std::vector<uint32_t>, kSrcCount> fill;
    for (int s = 0; s < kSrcCount; ++s)
      if (!flows_.offsets[s].empty()) fill[s].assign(flows_.offsets[s].begin(), flows_.offsets[s].end() - 1);
    for (const Pending& p : pending) {
      const int s = static_cast<int>(p.e.src);
      flows_.refs[s][fill[s][p.e.index]++] = p.f;
    }
    flows_.count = static_cast<int64_t>(next_id - 1);
  }

  // The GPU activity a cudaStreamWaitEvent waits for: the activity enqueued by the event
  // record's correlation if there is one; else the last activity on the recording stream
  // enqueued before the record (or, without a record id, before the wait call). Activities of
  // one stream run in enqueue order, so their correlation ids increase along the stream and a
  // binary search finds it. Without any correlation: the last activity started before the wait.
  std::optional<model::GpuRef> WaitSource(model::ProcessId p, const model::Sync& y) const {
    if (y.event_record_correlation_id != kNoCorrelation) {
      auto refs = t_.GpuByCorrelation(p, y.event_record_correlation_id);
      if (!refs.empty()) return refs.back();
    }
    if (y.wait_on_stream == kNone) return std::nullopt;
    auto acts = t_.StreamActivities(y.wait_on_stream);
    const int64_t bound =
        y.event_record_correlation_id != kNoCorrelation ? y.event_record_correlation_id : y.correlation_id;
    const model::GpuRef* it;
    if (bound != kNoCorrelation) {
      it = std::partition_point(acts.begin(), acts.end(), [&](const model::GpuRef& r) {
        const int64_t c = t_.CorrelationOf(r);
        return c == kNoCorrelation || c < bound;
      });
    } else {
      it = std::upper_bound(acts.begin(), acts.end(), y.start_ns,
                            [&](int64_t ts, const model::GpuRef& r) { return ts < t_.StartNs(r); });
    }
    while (it != acts.begin()) {
      --it;
      if (bound == kNoCorrelation || t_.CorrelationOf(*it) != kNoCorrelation) return *it;
    }
    return std::nullopt;
  }

  // ---- low-level packet writing --------------------------------------------------------
  absl::Status Flush() {
    if (buf_.empty()) return absl::OkStatus();
    stats_.bytes += static_cast<int64_t>(buf_.size());
    absl::Status s = sink_(buf_);
    buf_.clear();
    return s;
  }

  void InternEntry(uint32_t field, uint64_t iid, std::string_view name) {
    ProtoWriter w(&interned_);
    const size_t m = w.BeginNested(field);
    w.Varint(pf::interned::kIid, iid);
    w.Bytes(pf::interned::kName, name);
    w.EndNested(m);
  }

  // Writes one packet from ev_ (track event body) and interned_; clears both.
  void EmitEventPacket(uint64_t ts) {
    ProtoWriter w(&buf_);
    const size_t p = w.BeginNested(pf::kTracePacket);
    w.Varint(pf::packet::kTimestamp, static_cast<uint64_t>(ts + stats_.time_shift_ns));
    w.Varint(pf::packet::kTrustedPacketSequenceId, kSequenceId);
    w.Varint(pf::packet::kSequenceFlags, pf::kSeqNeedsIncrementalState);
    if (!interned_.empty()) {
      w.Bytes(pf::packet::kInternedData, interned_);
      interned_.clear();
    }
    w.Bytes(pf::packet::kTrackEvent, ev_);
    ev_.clear();
    w.EndNested(p);
    ++stats_.packets;
  }

  void WritePreamble() {
    for (uint32_t c = 1; c < kCatCount; ++c) InternEntry(pf::interned::kEventCategories, c, kCategoryNames[c]);
    for (uint32_t a = 1; a < kAnnCount; ++a) InternEntry(pf::interned::kDebugAnnotationNames, a, kAnnNames[a]);
    ProtoWriter w(&buf_);
    const size_t p = w.BeginNested(pf::kTracePacket);
    w.Varint(pf::packet::kTrustedPacketSequenceId, kSequenceId);
    w.Varint(pf::packet::kSequenceFlags, pf::kSeqIncrementalStateCleared);
    w.Bytes(pf::packet::kInternedData, interned_);
    interned_.clear();
    w.EndNested(p);
    ++stats_.packets;
  }

  void WriteDescriptors() {
    for (const TrackSpec& tr : L_.tracks) {
      ProtoWriter w(&buf_);
      const size_t p = w.BeginNested(pf::kTracePacket);
      w.Varint(pf::packet::kTrustedPacketSequenceId, kSequenceId);
      const size_t d = w.BeginNested(pf::packet::kTrackDescriptor);
      w.Varint(pf::track::kUuid, tr.uuid);
      if (tr.parent_uuid) w.Varint(pf::track::kParentUuid, tr.parent_uuid);
      switch (tr.kind) {
        case TrackSpec::Kind::kProcess: {
          const size_t m = w.BeginNested(pf::track::kProcess);
          w.Int(pf::process::kPid, tr.pid);
          w.Bytes(pf::process::kProcessName, tr.name);
          w.EndNested(m);
          break;
        }
        case TrackSpec::Kind::kThread: {
          const size_t m = w.BeginNested(pf::track::kThread);
          w.Int(pf::thread::kPid, tr.pid);
          w.Int(pf::thread::kTid, tr.tid);
          w.Bytes(pf::thread::kThreadName, tr.name);
          w.EndNested(m);
          break;
        }
        case TrackSpec::Kind::kCounter: {
          w.Bytes(pf::track::kName, tr.name);
          const size_t m = w.BeginNested(pf::track::kCounter);
          if (!tr.counter_unit.empty()) w.Bytes(pf::counter::kUnitName, tr.counter_unit);
          w.EndNested(m);
          break;
        }
        case TrackSpec::Kind::kPlain:
          w.Bytes(pf::track::kName, tr.name);
          w.Varint(pf::track::kSiblingMergeBehavior, pf::track::kSiblingMergeNone);
          break;
      }
      if (tr.kind != TrackSpec::Kind::kThread && tr.kind != TrackSpec::Kind::kProcess)
        w.Int(pf::track::kSiblingOrderRank, tr.sibling_rank);
      if (!tr.description.empty()) w.Bytes(pf::track::kDescription, tr.description);
      w.EndNested(d);
      w.EndNested(p);
      ++stats_.packets;
    }
  }

  // ---- interning ------------------------------------------------------------------------
  uint64_t ModelNameIid(model::StringId id) {
    if (!name_emitted_[id]) {
      name_emitted_[id] = true;
      InternEntry(pf::interned::kEventNames, static_cast<uint64_t>(id) + 1, t_.str(id));
    }
    return static_cast<uint64_t>(id) + 1;
  }
  uint64_t ExtraNameIid(std::string_view name) {
    auto [it, inserted] = extra_names_.try_emplace(AV(name), next_extra_iid_);
    if (inserted) {
      ++next_extra_iid_;
      InternEntry(pf::interned::kEventNames, it->second, name);
    }
    return it->second;
  }
  uint64_t CategoryIid(std::string_view name) {
    auto [it, inserted] = categories_.try_emplace(AV(name), next_category_iid_);
    if (inserted) {
      ++next_category_iid_;
      InternEntry(pf::interned::kEventCategories, it->second, name);
    }
    return it->second;
  }
  uint64_t ModelValueIid(model::StringId id) {
    if (!value_emitted_[id]) {
      value_emitted_[id] = true;
      InternEntry(pf::interned::kDebugAnnotationStringValues, static_cast<uint64_t>(id) + 1, t_.str(id));
    }
    return static_cast<uint64_t>(id) + 1;
  }
  uint64_t ExtraValueIid(std::string_view v) {
    auto [it, inserted] = extra_values_.try_emplace(AV(v), next_extra_value_iid_);
    if (inserted) {
      ++next_extra_value_iid_;
      InternEntry(pf::interned::kDebugAnnotationStringValues, it->second, v);
    }
    return it->second;
  }
  // For strings with static storage (literals, enum names): cached by address, no hashing of
  // the text per event.
  uint64_t FixedValueIid(std::string_view v) {
    auto [it, inserted] = fixed_values_.try_emplace(v.data(), 0);
    if (inserted) it->second = ExtraValueIid(v);
    return it->second;
  }
  uint64_t AnnIid(std::string_view key) {
    auto [it, inserted] = ann_names_.try_emplace(AV(key), next_ann_iid_);
    if (inserted) {
      ++next_ann_iid_;
      InternEntry(pf::interned::kDebugAnnotationNames, it->second, key);
    }
    return it->second;
  }

  // ---- annotations ----------------------------------------------------------------------
  void AnnInt(uint64_t name_iid, int64_t v) {
    ProtoWriter w(&ev_);
    const size_t m = w.BeginNested(pf::event::kDebugAnnotations);
    w.Varint(pf::annotation::kNameIid, name_iid);
    w.Int(pf::annotation::kIntValue, v);
    w.EndNested(m);
  }
  void AnnDouble(uint64_t name_iid, double v) {
    ProtoWriter w(&ev_);
    const size_t m = w.BeginNested(pf::event::kDebugAnnotations);
    w.Varint(pf::annotation::kNameIid, name_iid);
    w.Double(pf::annotation::kDoubleValue, v);
    w.EndNested(m);
  }
  void AnnStrIid(uint64_t name_iid, uint64_t value_iid) {
    ProtoWriter w(&ev_);
    const size_t m = w.BeginNested(pf::event::kDebugAnnotations);
    w.Varint(pf::annotation::kNameIid, name_iid);
    w.Varint(pf::annotation::kStringValueIid, value_iid);
    w.EndNested(m);
  }
  void AnnStr(uint64_t name_iid, std::string_view v) {  // not interned: free text
    ProtoWriter w(&ev_);
    const size_t m = w.BeginNested(pf::event::kDebugAnnotations);
    w.Varint(pf::annotation::kNameIid, name_iid);
    w.Bytes(pf::annotation::kStringValue, v);
    w.EndNested(m);
  }
  void AnnDim(uint64_t name_iid, const model::Dim3& d) {
    if (d.x == 0 && d.y == 0 && d.z == 0) return;
    auto [it, inserted] = dims_.try_emplace(std::make_tuple(d.x, d.y, d.z), 0);
    if (inserted) it->second = ExtraValueIid(absl::StrCat("[", d.x, ", ", d.y, ", ", d.z, "]"));
    AnnStrIid(name_iid, it->second);
  }
  void AnnCorrelation(int64_t corr, int64_t ext) {
    if (corr != kNoCorrelation) AnnInt(kAnnCorrelation, corr);
    if (ext != kNoCorrelation) AnnInt(kAnnExternalId, ext);
  }

  static std::string_view ClassOfKernel(const model::Trace& t, const model::Kernel& k) {
    return k.collective != kNone || ContainsNccl(t.str(k.name)) ? "comm" : "compute";
  }

  void CollectiveArgs(model::CollectiveId c) {
    if (c == kNone) return;
    const model::Collective& col = t_.collectives()[c];
    if (col.op) AnnStrIid(kAnnCollective, ModelValueIid(col.op));
    if (col.communicator) AnnStrIid(kAnnCommunicator, ModelValueIid(col.communicator));
    if (col.dtype) AnnStrIid(kAnnDtype, ModelValueIid(col.dtype));
    if (col.sequence >= 0) AnnInt(kAnnSequence, col.sequence);
    if (col.in_elements >= 0) AnnInt(kAnnInElements, col.in_elements);
    if (col.out_elements >= 0) AnnInt(kAnnOutElements, col.out_elements);
    if (col.bytes >= 0) AnnInt(kAnnBytes, col.bytes);
    if (col.rank >= 0) AnnInt(kAnnRank, col.rank);
    if (col.nranks >= 0) AnnInt(kAnnNranks, col.nranks);
  }

  // Name iid, category and args of one slice's BEGIN (or instant) event, appended to ev_.
  void SliceBody(const Item& it) {
    uint64_t name_iid = 0;
    uint32_t cat = 0;
    switch (it.src) {
      case Src::kKernel: {
        const model::Kernel& k = t_.kernels()[it.index];
        name_iid = k.name ? ModelNameIid(k.name) : ExtraNameIid("kernel");
        cat = kCatKernel;
        StartBody(name_iid, cat);
        AnnCorrelation(k.correlation_id, k.external_id);
        AnnDim(kAnnGrid, k.grid);
        AnnDim(kAnnBlock, k.block);
        if (k.registers_per_thread >= 0) AnnInt(kAnnRegisters, k.registers_per_thread);
        if (k.shared_memory_bytes >= 0) AnnInt(kAnnSharedMemory, k.shared_memory_bytes);
        AnnStrIid(kAnnClass, FixedValueIid(ClassOfKernel(t_, k)));
        CollectiveArgs(k.collective);
        return;
      }
      case Src::kMemcpy: {
        const model::Memcpy& m = t_.memcpys()[it.index];
        name_iid = m.name ? ModelNameIid(m.name) : ExtraNameIid(absl::StrCat("Memcpy ", AV(model::ToString(m.kind))));
        StartBody(name_iid, kCatMemcpy);
        AnnCorrelation(m.correlation_id, m.external_id);
        if (m.bytes >= 0) AnnInt(kAnnBytes, m.bytes);
        AnnStrIid(kAnnCopyKind, FixedValueIid(model::ToString(m.kind)));
        if (m.src_kind != model::MemoryKind::kUnknown) AnnStrIid(kAnnSrcMemory, FixedValueIid(model::ToString(m.src_kind)));
        if (m.dst_kind != model::MemoryKind::kUnknown) AnnStrIid(kAnnDstMemory, FixedValueIid(model::ToString(m.dst_kind)));
        if (m.dst_device != kNone) AnnInt(kAnnDstDevice, t_.devices()[m.dst_device].ordinal);
        if (m.is_async >= 0) AnnInt(kAnnAsync, m.is_async);
        AnnStrIid(kAnnClass, FixedValueIid(m.collective != kNone ? "comm" : "memory"));
        CollectiveArgs(m.collective);
        return;
      }
      case Src::kMemset: {
        const model::Memset& m = t_.memsets()[it.index];
        name_iid = m.name ? ModelNameIid(m.name) : ExtraNameIid("Memset");
        StartBody(name_iid, kCatMemset);
        AnnCorrelation(m.correlation_id, m.external_id);
        if (m.bytes >= 0) AnnInt(kAnnBytes, m.bytes);
        if (m.memory_kind != model::MemoryKind::kUnknown) AnnStrIid(kAnnMemory, FixedValueIid(model::ToString(m.memory_kind)));
        if (m.is_async >= 0) AnnInt(kAnnAsync, m.is_async);
        AnnStrIid(kAnnClass, FixedValueIid("memory"));
        return;
      }
      case Src::kApi: {
        const model::ApiCall& a = t_.api_calls()[it.index];
        name_iid = a.name ? ModelNameIid(a.name) : ExtraNameIid("API call");
        StartBody(name_iid, a.kind == model::ApiKind::kDriver ? kCatDriver : kCatRuntime);
        AnnCorrelation(a.correlation_id, a.external_id);
        if (a.return_code != 0) AnnInt(kAnnReturnCode, a.return_code);
        return;
      }
      case Src::kSync: {
        const model::Sync& y = t_.syncs()[it.index];
        name_iid = y.name ? ModelNameIid(y.name) : ExtraNameIid(model::ToString(y.kind));
        StartBody(name_iid, kCatSync);
        AnnCorrelation(y.correlation_id, kNoCorrelation);
        AnnStrIid(kAnnSyncKind, FixedValueIid(model::ToString(y.kind)));
        if (y.stream != kNone) AnnInt(kAnnStream, t_.streams()[y.stream].native_id);
        if (y.wait_on_stream != kNone) AnnInt(kAnnWaitOnStream, t_.streams()[y.wait_on_stream].native_id);
        if (y.event_id >= 0) AnnInt(kAnnEventId, y.event_id);
        if (y.event_record_correlation_id != kNoCorrelation)
          AnnInt(kAnnEventRecordCorrelation, y.event_record_correlation_id);
        return;
      }
      case Src::kRange: {
        const model::Range& r = t_.ranges()[it.index];
        static constexpr uint32_t kRangeCat[] = {kCatCpuOp, kCatUserAnnotation, kCatNvtx, kCatPython, kCatOverhead};
        name_iid = r.name ? ModelNameIid(r.name) : ExtraNameIid(model::ToString(r.kind));
        StartBody(name_iid, kRangeCat[static_cast<int>(r.kind)]);
        if (r.external_id != kNoCorrelation) AnnInt(kAnnExternalId, r.external_id);
        if (r.domain) AnnStrIid(kAnnDomain, ModelValueIid(r.domain));
        return;
      }
      case Src::kGpuRange: {
        const model::GpuRange& g = t_.gpu_ranges()[it.index];
        name_iid = g.name ? ModelNameIid(g.name) : ExtraNameIid("gpu annotation");
        StartBody(name_iid, kCatGpuAnnotation);
        AnnCorrelation(g.correlation_id, g.external_id);
        return;
      }
      case Src::kExtra: {
        const ExtraEvent& e = L_.extras[it.index];
        ProtoWriter w(&ev_);
        w.Varint(pf::event::kNameIid, ExtraNameIid(e.name));
        w.Varint(pf::event::kCategoryIids, CategoryIid(e.category));
        for (const ExtraArg& a : e.args) {
          const uint64_t key = AnnIid(a.key);
          if (const auto* i = std::get_if<int64_t>(&a.value)) AnnInt(key, *i);
          else if (const auto* d = std::get_if<double>(&a.value)) AnnDouble(key, *d);
          else AnnStr(key, std::get<std::string>(a.value));
        }
        return;
      }
    }
  }
  void StartBody(uint64_t name_iid, uint32_t cat) {
    ProtoWriter w(&ev_);
    w.Varint(pf::event::kNameIid, name_iid);
    w.Varint(pf::event::kCategoryIids, cat);
  }

  void WriteFlows(const Item& it) {
    const int s = static_cast<int>(it.src);
    const auto& off = flows_.offsets[s];
    if (off.empty()) return;
    ProtoWriter w(&ev_);
    for (uint32_t k = off[it.index]; k < off[it.index + 1]; ++k) {
      const FlowRef& f = flows_.refs[s][k];
      w.Fixed64(f.terminating ? pf::event::kTerminatingFlowIds : pf::event::kFlowIds, f.id);
    }
  }

  // ---- event emission ---------------------------------------------------------------------
  // One cursor per (track, stream of events): slices (BEGIN/END), instants or counter samples.
  struct Cursor {
    int32_t track;
    uint8_t type;  // 0 slices, 1 instants, 2 counters
    size_t pos = 0;
    std::vector<int64_t> open;  // end times of open slices, innermost last
    int64_t next_ts = 0;
    bool done = false;
  };

  void Advance(Cursor& c) {
    const TrackSpec& tr = L_.tracks[c.track];
    switch (c.type) {
      case 0:
        if (!c.open.empty() && (c.pos == tr.slices.size() || c.open.back() <= tr.slices[c.pos].start_ns))
          c.next_ts = c.open.back();
        else if (c.pos < tr.slices.size())
          c.next_ts = tr.slices[c.pos].start_ns;
        else
          c.done = true;
        return;
      case 1:
        if (c.pos < tr.instants.size()) c.next_ts = tr.instants[c.pos].start_ns;
        else c.done = true;
        return;
      default:
        if (c.pos < tr.counter_values.size()) c.next_ts = tr.counter_values[c.pos].first;
        else c.done = true;
        return;
    }
  }

  // Emits the cursor's next event (Advance() must have been called and not set done).
  void EmitOne(Cursor& c) {
    const TrackSpec& tr = L_.tracks[c.track];
    ProtoWriter w(&ev_);
    if (c.type == 0) {
      // END first when the innermost open slice ends at or before the next BEGIN: this is
      // the rule AssignLanes() used to decide nesting, so both agree.
      if (!c.open.empty() && (c.pos == tr.slices.size() || c.open.back() <= tr.slices[c.pos].start_ns)) {
        w.Varint(pf::event::kType, pf::event::kTypeSliceEnd);
        w.Varint(pf::event::kTrackUuid, tr.uuid);
        c.open.pop_back();
      } else {
        const Item& it = tr.slices[c.pos++];
        w.Varint(pf::event::kType, pf::event::kTypeSliceBegin);
        w.Varint(pf::event::kTrackUuid, tr.uuid);
        SliceBody(it);
        WriteFlows(it);
        c.open.push_back(it.end_ns);
        ++stats_.slices;
      }
    } else if (c.type == 1) {
      const Item& it = tr.instants[c.pos++];
      w.Varint(pf::event::kType, pf::event::kTypeInstant);
      w.Varint(pf::event::kTrackUuid, tr.uuid);
      SliceBody(it);
      ++stats_.instants;
    } else {
      const double v = tr.counter_values[c.pos++].second;
      w.Varint(pf::event::kType, pf::event::kTypeCounter);
      w.Varint(pf::event::kTrackUuid, tr.uuid);
      w.Double(pf::event::kDoubleCounterValue, v);
      ++stats_.counter_samples;
    }
    EmitEventPacket(c.next_ts);
  }

  absl::Status WriteEvents() {
    std::vector<Cursor> cursors;
    for (size_t t = 0; t < L_.tracks.size(); ++t) {
      const TrackSpec& tr = L_.tracks[t];
      if (!tr.slices.empty()) cursors.push_back(Cursor{static_cast<int32_t>(t), 0});
      if (!tr.instants.empty()) cursors.push_back(Cursor{static_cast<int32_t>(t), 1});
      if (!tr.counter_values.empty()) cursors.push_back(Cursor{static_cast<int32_t>(t), 2});
    }
    // Min-heap on (next_ts, cursor index): events are written in global time order, ties in
    // track order, so the file order is also trace_processor's order.
    using Key = std::pair<int64_t, int32_t>;
    std::vector<Key> heap;
    for (size_t i = 0; i < cursors.size(); ++i) {
      Advance(cursors[i]);
      if (!cursors[i].done) heap.push_back({cursors[i].next_ts, static_cast<int32_t>(i)});
    }
    auto greater = [](const Key& a, const Key& b) { return a > b; };
    std::make_heap(heap.begin(), heap.end(), greater);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), greater);
      const int32_t ci = heap.back().second;
      heap.pop_back();
      Cursor& c = cursors[ci];
      // Drain this cursor while it stays ahead of every other one.
      do {
        EmitOne(c);
        if (buf_.size() >= kFlushBytes) RETURN_IF_ERROR(Flush());
        Advance(c);
      } while (!c.done && (heap.empty() || Key{c.next_ts, ci} < heap.front()));
      if (!c.done) {
        heap.push_back({c.next_ts, ci});
        std::push_heap(heap.begin(), heap.end(), greater);
      }
    }
    return absl::OkStatus();
  }

  const model::Trace& t_;
  Layout& L_;
  const ByteSink& sink_;
  PerfettoStats stats_;
  Flows flows_;
  std::string buf_, ev_, interned_;
  absl::flat_hash_map<std::tuple<int32_t, int32_t, int32_t>, uint64_t> dims_;
  // Interned value iids of the fixed strings ("comm", enum names), 0 until first use.
  absl::flat_hash_map<const char*, uint64_t> fixed_values_;
  std::vector<bool> name_emitted_, value_emitted_;
  absl::flat_hash_map<std::string, uint64_t> extra_names_, extra_values_, ann_names_, categories_;
  uint64_t next_extra_iid_ = 0, next_extra_value_iid_ = 0, next_ann_iid_ = 0, next_category_iid_ = kCatCount;
};

}  // namespace

absl::StatusOr<PerfettoStats> EncodePerfetto(const model::Trace& trace,
                                             const analyze::AnalysisResult* analysis_or_null,
                                             const ByteSink& sink) {
  Layout layout = BuildModelLayout(trace);
  if (analysis_or_null) AddAnalysisTracks(trace, *analysis_or_null, &layout);
  layout.Finish(trace);
  Encoder enc(trace, layout, sink);
  return enc.Run();
}

absl::StatusOr<std::string> EncodePerfettoToString(const model::Trace& trace,
                                                   const analyze::AnalysisResult* analysis_or_null,
                                                   PerfettoStats* stats) {
  std::string out;
  ASSIGN_OR_RETURN(PerfettoStats s, EncodePerfetto(trace, analysis_or_null, [&](std::string_view b) {
                     out.append(b);
                     return absl::OkStatus();
                   }));
  if (stats) *stats = s;
  return out;
}

absl::Status WritePerfetto(const model::Trace& trace, const analyze::AnalysisResult* analysis_or_null,
                           const std::string& path, PerfettoStats* stats) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return absl::UnavailableError(absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  ASSIGN_OR_RETURN(PerfettoStats s, EncodePerfetto(trace, analysis_or_null, [&](std::string_view b) {
                     if (std::fwrite(b.data(), 1, b.size(), f.get()) != b.size())
                       return absl::UnavailableError(absl::StrCat(path, ": write failed: ", std::strerror(errno)));
                     return absl::OkStatus();
                   }));
  if (std::fclose(f.release()) != 0)
    return absl::UnavailableError(absl::StrCat(path, ": close failed: ", std::strerror(errno)));
  if (stats) *stats = s;
  return absl::OkStatus();
}

}  // namespace overlapscope::viewer_export
