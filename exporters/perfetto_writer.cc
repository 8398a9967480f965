#include "exporters/perfetto_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "exporters/perfetto_fields.h"
#include "exporters/perfetto_flows.h"
#include "exporters/perfetto_interner.h"
#include "exporters/perfetto_layout.h"
#include "exporters/proto_buf.h"
#include "exporters/proto_writer.h"

namespace overlapscope::exporters {
namespace {

using model::kNoCorrelation;
using model::kNone;

constexpr uint32_t kSequenceId = 1;
constexpr size_t kFlushBytes = 1 << 20;

constexpr uint32_t Tag(uint32_t field, uint32_t wire_type) { return field << 3 | wire_type; }
constexpr uint32_t kVarint = 0, kFixed64 = 1, kBytes = 2;

// Categories, interned once in the first packet (iid = enum value).
enum Category : uint32_t {
  kCatKernel = 1,
  kCatMemcpy,
  kCatMemset,
  kCatRuntime,
  kCatDriver,
  kCatSync,
  kCatCpuOp,
  kCatUserAnnotation,
  kCatNvtx,
  kCatPython,
  kCatOverhead,
  kCatGpuAnnotation,
  kCatCount
};
constexpr const char* kCategoryNames[] = {
    "",       "kernel",          "gpu_memcpy", "gpu_memset",      "cuda_runtime", "cuda_driver",        "cuda_sync",
    "cpu_op", "user_annotation", "nvtx",       "python_function", "overhead",     "gpu_user_annotation"};

// Debug annotation names of model slices, interned once in the first packet (iid = value).
enum Ann : uint32_t {
  kAnnCorrelation = 1,
  kAnnExternalId,
  kAnnGrid,
  kAnnBlock,
  kAnnRegisters,
  kAnnSharedMemory,
  kAnnClass,
  kAnnCollective,
  kAnnCommunicator,
  kAnnDtype,
  kAnnSequence,
  kAnnInElements,
  kAnnOutElements,
  kAnnBytes,
  kAnnRank,
  kAnnNranks,
  kAnnCopyKind,
  kAnnSrcMemory,
  kAnnDstMemory,
  kAnnAsync,
  kAnnMemory,
  kAnnReturnCode,
  kAnnSyncKind,
  kAnnEventId,
  kAnnWaitOnStream,
  kAnnEventRecordCorrelation,
  kAnnDomain,
  kAnnDstDevice,
  kAnnStream,
  kAnnAlgorithm,
  kAnnProtocol,
  kAnnChannels,
  kAnnChannelSpan,
  kAnnRootOrPeer,
  kAnnReduceOp,
  kAnnCount
};
constexpr const char* kAnnNames[] = {"",
                                     "correlation",
                                     "external id",
                                     "grid",
                                     "block",
                                     "registers per thread",
                                     "shared memory",
                                     "class",
                                     "collective",
                                     "communicator",
                                     "dtype",
                                     "sequence",
                                     "in elements",
                                     "out elements",
                                     "bytes",
                                     "rank",
                                     "nranks",
                                     "copy kind",
                                     "src memory",
                                     "dst memory",
                                     "async",
                                     "memory",
                                     "return code",
                                     "sync kind",
                                     "event",
                                     "wait on stream",
                                     "event record correlation",
                                     "domain",
                                     "dst device",
                                     "stream",
                                     "nccl algorithm",
                                     "nccl protocol",
                                     "nccl channels",
                                     "channel span ns",
                                     "root or peer",
                                     "reduce op"};
static_assert(sizeof(kAnnNames) / sizeof(kAnnNames[0]) == kAnnCount);
static_assert(sizeof(kCategoryNames) / sizeof(kCategoryNames[0]) == kCatCount);

enum ClassValue { kCompute, kComm, kMemory, kClassCount };
constexpr const char* kClassNames[] = {"compute", "comm", "memory"};

class Encoder {
 public:
  Encoder(const model::Trace& t, const Layout& L, const ByteSink& sink) : t_(t), L_(L), sink_(sink) {}

  absl::StatusOr<PerfettoStats> Run() {
    if (t_.start_ns() < 0) stats_.time_shift_ns = -t_.start_ns();
    nccl_name_.assign(t_.strings().size(), -1);
    out_.Reserve(kFlushBytes + 4096);
    flows_ = BuildFlows(t_, L_);
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
  absl::Status Flush() {
    if (out_.size() == 0) return absl::OkStatus();
    stats_.bytes += static_cast<int64_t>(out_.size());
    absl::Status s = sink_(out_.view());
    out_.clear();
    return s;
  }

  // ---- preamble and descriptors (cold: written with ProtoWriter) ----------------------------
  // Setup packets carry the trace's first timestamp (as the Perfetto SDK's do), so they sort
  // before every event. Analysis events never start before the model's first event.
  uint64_t FirstTs() const { return static_cast<uint64_t>(t_.start_ns() + stats_.time_shift_ns); }
  void WritePreamble() {
    for (uint32_t c = 1; c < kCatCount; ++c) in_.DefineFixed(pf::interned::kEventCategories, c, kCategoryNames[c]);
    for (uint32_t a = 1; a < kAnnCount; ++a) in_.DefineFixed(pf::interned::kDebugAnnotationNames, a, kAnnNames[a]);
    // Fixed string values, so the per-event code never looks them up.
    for (int c = 0; c < kClassCount; ++c) class_iid_[c] = in_.ExtraValue(kClassNames[c]);
    for (int k = 0; k < 6; ++k) copy_kind_iid_[k] = in_.ExtraValue(model::ToString(static_cast<model::MemcpyKind>(k)));
    for (int k = 0; k < 6; ++k) memory_iid_[k] = in_.ExtraValue(model::ToString(static_cast<model::MemoryKind>(k)));
    for (int k = 0; k < 5; ++k) sync_kind_iid_[k] = in_.ExtraValue(model::ToString(static_cast<model::SyncKind>(k)));
    std::string pkt;
    ProtoWriter w(&pkt);
    const size_t p = w.BeginNested(pf::kTracePacket);
    w.Varint(pf::packet::kTimestamp, FirstTs());
    w.Varint(pf::packet::kTrustedPacketSequenceId, kSequenceId);
    w.Varint(pf::packet::kSequenceFlags, pf::kSeqIncrementalStateCleared);
    w.Bytes(pf::packet::kInternedData, in_.pending());
    in_.pending().clear();
    w.EndNested(p);
    out_.Append(pkt);
    ++stats_.packets;
  }

  void WriteDescriptors() {
    std::string pkts;
    stats_.packets += AppendTrackDescriptors(L_, FirstTs(), kSequenceId, &pkts);
    out_.Append(pkts);
  }

  // ---- hot path: one packet per event, written straight into out_ --------------------------
  // Annotation bodies are short, so their length is computed up front (no back-patching).
  void AnnInt(uint64_t name_iid, int64_t v) {
    const uint64_t u = static_cast<uint64_t>(v);
    out_.Byte(Tag(pf::event::kDebugAnnotations, kBytes));
    out_.Byte(static_cast<uint8_t>(2 + ProtoBuf::VarintSize(name_iid) + ProtoBuf::VarintSize(u)));
    out_.Byte(Tag(pf::annotation::kNameIid, kVarint));
    out_.Varint(name_iid);
    out_.Byte(Tag(pf::annotation::kIntValue, kVarint));
    out_.Varint(u);
  }
  void AnnStrIid(uint64_t name_iid, uint64_t value_iid) {
    constexpr uint32_t kValueTag = Tag(pf::annotation::kStringValueIid, kVarint);  // two bytes
    out_.Byte(Tag(pf::event::kDebugAnnotations, kBytes));
    out_.Byte(static_cast<uint8_t>(1 + ProtoBuf::VarintSize(name_iid) + 2 + ProtoBuf::VarintSize(value_iid)));
    out_.Byte(Tag(pf::annotation::kNameIid, kVarint));
    out_.Varint(name_iid);
    out_.Varint(kValueTag);
    out_.Varint(value_iid);
  }
  void AnnDouble(uint64_t name_iid, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    out_.Byte(Tag(pf::event::kDebugAnnotations, kBytes));
    out_.Byte(static_cast<uint8_t>(2 + ProtoBuf::VarintSize(name_iid) + 8));
    out_.Byte(Tag(pf::annotation::kNameIid, kVarint));
    out_.Varint(name_iid);
    out_.Byte(Tag(pf::annotation::kDoubleValue, kFixed64));
    out_.Fixed64(bits);
  }
  void AnnStr(uint64_t name_iid, std::string_view v) {  // free text, not interned
    out_.Reserve(v.size() + 32);
    out_.Byte(Tag(pf::event::kDebugAnnotations, kBytes));
    const size_t m = out_.OpenLen();
    out_.Byte(Tag(pf::annotation::kNameIid, kVarint));
    out_.Varint(name_iid);
    out_.Byte(Tag(pf::annotation::kStringValue, kBytes));
    out_.Varint(v.size());
    out_.Append(v);
    out_.CloseLen(m);
  }
  void AnnCorrelation(int64_t corr, int64_t ext) {
    if (corr != kNoCorrelation) AnnInt(kAnnCorrelation, corr);
    if (ext != kNoCorrelation) AnnInt(kAnnExternalId, ext);
  }
  void NameAndCategory(uint64_t name_iid, uint64_t cat) {
    out_.Byte(Tag(pf::event::kNameIid, kVarint));
    out_.Varint(name_iid);
    out_.Byte(Tag(pf::event::kCategoryIids, kVarint));
    out_.Varint(cat);
  }

  void CollectiveArgs(model::CollectiveId c) {
    if (c == kNone) return;
    const model::Collective& col = t_.collectives()[c];
    if (col.op) AnnStrIid(kAnnCollective, in_.ModelValue(col.op));
    if (col.communicator) AnnStrIid(kAnnCommunicator, in_.ModelValue(col.communicator));
    if (col.dtype) AnnStrIid(kAnnDtype, in_.ModelValue(col.dtype));
    if (col.sequence >= 0) AnnInt(kAnnSequence, col.sequence);
    if (col.in_elements >= 0) AnnInt(kAnnInElements, col.in_elements);
    if (col.out_elements >= 0) AnnInt(kAnnOutElements, col.out_elements);
    if (col.bytes >= 0) AnnInt(kAnnBytes, col.bytes);
    if (col.rank >= 0) AnnInt(kAnnRank, col.rank);
    if (col.nranks >= 0) AnnInt(kAnnNranks, col.nranks);
    if (col.algorithm) AnnStrIid(kAnnAlgorithm, in_.ModelValue(col.algorithm));
    if (col.protocol) AnnStrIid(kAnnProtocol, in_.ModelValue(col.protocol));
    if (col.channels >= 0) AnnInt(kAnnChannels, col.channels);
    if (col.channel_span_ns >= 0) AnnInt(kAnnChannelSpan, col.channel_span_ns);
    if (col.root_or_peer >= 0) AnnInt(kAnnRootOrPeer, col.root_or_peer);
    if (col.reduce_op) AnnStrIid(kAnnReduceOp, in_.ModelValue(col.reduce_op));
  }

  // Name, category and args of a BEGIN or INSTANT event. Each case writes at most ~20 small
  // annotations: the 1024 bytes reserved by EmitOne cover them; free text reserves its own.
  void SliceBody(const Item& it) {
    switch (it.src) {
      case Src::kKernel: {
        const model::Kernel& k = t_.kernels()[it.index];
        NameAndCategory(k.name ? in_.ModelName(k.name) : in_.ExtraName("kernel"), kCatKernel);
        AnnCorrelation(k.correlation_id, k.external_id);
        if (k.grid.x || k.grid.y || k.grid.z) AnnStrIid(kAnnGrid, in_.Dim(k.grid));
        if (k.block.x || k.block.y || k.block.z) AnnStrIid(kAnnBlock, in_.Dim(k.block));
        if (k.registers_per_thread >= 0) AnnInt(kAnnRegisters, k.registers_per_thread);
        if (k.shared_memory_bytes >= 0) AnnInt(kAnnSharedMemory, k.shared_memory_bytes);
        if (nccl_name_[k.name] < 0) nccl_name_[k.name] = ContainsNccl(t_.str(k.name)) ? 1 : 0;
        AnnStrIid(kAnnClass, class_iid_[k.collective != kNone || nccl_name_[k.name] == 1 ? kComm : kCompute]);
        CollectiveArgs(k.collective);
        return;
      }
      case Src::kMemcpy: {
        const model::Memcpy& m = t_.memcpys()[it.index];
        NameAndCategory(
            m.name ? in_.ModelName(m.name) : in_.ExtraName(absl::StrCat("Memcpy ", AV(model::ToString(m.kind)))),
            kCatMemcpy);
        AnnCorrelation(m.correlation_id, m.external_id);
        if (m.bytes >= 0) AnnInt(kAnnBytes, m.bytes);
        AnnStrIid(kAnnCopyKind, copy_kind_iid_[static_cast<int>(m.kind)]);
        if (m.src_kind != model::MemoryKind::kUnknown)
          AnnStrIid(kAnnSrcMemory, memory_iid_[static_cast<int>(m.src_kind)]);
        if (m.dst_kind != model::MemoryKind::kUnknown)
          AnnStrIid(kAnnDstMemory, memory_iid_[static_cast<int>(m.dst_kind)]);
        if (m.dst_device != kNone) AnnInt(kAnnDstDevice, t_.devices()[m.dst_device].ordinal);
        if (m.is_async >= 0) AnnInt(kAnnAsync, m.is_async);
        AnnStrIid(kAnnClass, class_iid_[m.collective != kNone ? kComm : kMemory]);
        CollectiveArgs(m.collective);
        return;
      }
      case Src::kMemset: {
        const model::Memset& m = t_.memsets()[it.index];
        NameAndCategory(m.name ? in_.ModelName(m.name) : in_.ExtraName("Memset"), kCatMemset);
        AnnCorrelation(m.correlation_id, m.external_id);
        if (m.bytes >= 0) AnnInt(kAnnBytes, m.bytes);
        if (m.memory_kind != model::MemoryKind::kUnknown)
          AnnStrIid(kAnnMemory, memory_iid_[static_cast<int>(m.memory_kind)]);
        if (m.is_async >= 0) AnnInt(kAnnAsync, m.is_async);
        AnnStrIid(kAnnClass, class_iid_[kMemory]);
        return;
      }
      case Src::kApi: {
        const model::ApiCall& a = t_.api_calls()[it.index];
        NameAndCategory(a.name ? in_.ModelName(a.name) : in_.ExtraName("API call"),
                        a.kind == model::ApiKind::kDriver ? kCatDriver : kCatRuntime);
        AnnCorrelation(a.correlation_id, a.external_id);
        if (a.return_code != 0) AnnInt(kAnnReturnCode, a.return_code);
        return;
      }
      case Src::kSync: {
        const model::Sync& y = t_.syncs()[it.index];
        NameAndCategory(y.name ? in_.ModelName(y.name) : in_.ExtraName(model::ToString(y.kind)), kCatSync);
        AnnCorrelation(y.correlation_id, kNoCorrelation);
        AnnStrIid(kAnnSyncKind, sync_kind_iid_[static_cast<int>(y.kind)]);
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
        NameAndCategory(r.name ? in_.ModelName(r.name) : in_.ExtraName(model::ToString(r.kind)),
                        kRangeCat[static_cast<int>(r.kind)]);
        if (r.external_id != kNoCorrelation) AnnInt(kAnnExternalId, r.external_id);
        if (r.domain) AnnStrIid(kAnnDomain, in_.ModelValue(r.domain));
        return;
      }
      case Src::kGpuRange: {
        const model::GpuRange& g = t_.gpu_ranges()[it.index];
        NameAndCategory(g.name ? in_.ModelName(g.name) : in_.ExtraName("gpu annotation"), kCatGpuAnnotation);
        AnnCorrelation(g.correlation_id, g.external_id);
        return;
      }
      case Src::kExtra: {
        const ExtraEvent& e = L_.extras[it.index];
        NameAndCategory(in_.ExtraName(e.name), in_.Category(e.category));
        for (const ExtraArg& a : e.args) {
          const uint64_t key = in_.AnnotationName(a.key);
          out_.Reserve(64);
          if (const auto* i = std::get_if<int64_t>(&a.value))
            AnnInt(key, *i);
          else if (const auto* d = std::get_if<double>(&a.value))
            AnnDouble(key, *d);
          else
            AnnStr(key, std::get<std::string>(a.value));
        }
        return;
      }
    }
  }

  // Packet = {timestamp, sequence id, [flags], track_event{...}, [interned_data]}.
  size_t BeginPacket(int64_t ts, bool needs_state, size_t* event_slot) {
    out_.Reserve(1024);
    out_.Byte(Tag(pf::kTracePacket, kBytes));
    const size_t pkt = out_.OpenLen();
    out_.Byte(Tag(pf::packet::kTimestamp, kVarint));
    out_.Varint(static_cast<uint64_t>(ts + stats_.time_shift_ns));
    out_.Byte(Tag(pf::packet::kTrustedPacketSequenceId, kVarint));
    out_.Byte(kSequenceId);
    // Only packets that reference interned data need the sequence's incremental state; an END
    // or a counter sample is valid on its own.
    if (needs_state) {
      out_.Byte(Tag(pf::packet::kSequenceFlags, kVarint));
      out_.Byte(pf::kSeqNeedsIncrementalState);
    }
    out_.Byte(Tag(pf::packet::kTrackEvent, kBytes));
    *event_slot = out_.OpenLen();
    return pkt;
  }
  void EndPacket(size_t pkt, size_t event_slot) {
    out_.CloseLen(event_slot);
    if (std::string& interned = in_.pending(); !interned.empty()) {
      out_.Reserve(interned.size() + 16);
      out_.Byte(Tag(pf::packet::kInternedData, kBytes));
      out_.Varint(interned.size());
      out_.Append(interned);
      interned.clear();
    }
    out_.CloseLen(pkt);
    ++stats_.packets;
  }
  void TypeAndTrack(uint32_t type, uint64_t uuid) {
    out_.Byte(Tag(pf::event::kType, kVarint));
    out_.Byte(static_cast<uint8_t>(type));
    out_.Byte(Tag(pf::event::kTrackUuid, kVarint));
    out_.Varint(uuid);
  }

  // One cursor per (track, kind of events): slices (BEGIN/END), instants or counter samples.
  struct Cursor {
    int32_t track = 0;
    uint8_t type = 0;  // 0 slices, 1 instants, 2 counters
    size_t pos = 0;
    std::vector<int64_t> open;  // end times of the open slices, innermost last
    int64_t next_ts = 0;
    bool done = false;
  };

  // END first when the innermost open slice ends at or before the next BEGIN: the rule
  // AssignLanes() used to decide nesting, so both agree.
  static bool NextIsEnd(const Cursor& c, const TrackSpec& tr) {
    return !c.open.empty() && (c.pos == tr.slices.size() || c.open.back() <= tr.slices[c.pos].start_ns);
  }

  void Advance(Cursor& c) const {
    const TrackSpec& tr = L_.tracks[c.track];
    switch (c.type) {
      case 0:
        if (NextIsEnd(c, tr))
          c.next_ts = c.open.back();
        else if (c.pos < tr.slices.size())
          c.next_ts = tr.slices[c.pos].start_ns;
        else
          c.done = true;
        return;
      case 1:
        if (c.pos < tr.instants.size())
          c.next_ts = tr.instants[c.pos].start_ns;
        else
          c.done = true;
        return;
      default:
        if (c.pos < tr.counter_values.size())
          c.next_ts = tr.counter_values[c.pos].first;
        else
          c.done = true;
        return;
    }
  }

  void EmitOne(Cursor& c) {
    const TrackSpec& tr = L_.tracks[c.track];
    size_t ev;
    if (c.type == 0 && NextIsEnd(c, tr)) {
      const size_t pkt = BeginPacket(c.next_ts, false, &ev);
      TypeAndTrack(pf::event::kTypeSliceEnd, tr.uuid);
      c.open.pop_back();
      EndPacket(pkt, ev);
      return;
    }
    if (c.type == 2) {
      const double v = tr.counter_values[c.pos++].second;
      const size_t pkt = BeginPacket(c.next_ts, false, &ev);
      TypeAndTrack(pf::event::kTypeCounter, tr.uuid);
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      out_.Varint(Tag(pf::event::kDoubleCounterValue, kFixed64));
      out_.Fixed64(bits);
      ++stats_.counter_samples;
      EndPacket(pkt, ev);
      return;
    }
    const Item& it = c.type == 0 ? tr.slices[c.pos++] : tr.instants[c.pos++];
    const size_t pkt = BeginPacket(c.next_ts, true, &ev);
    TypeAndTrack(c.type == 0 ? pf::event::kTypeSliceBegin : pf::event::kTypeInstant, tr.uuid);
    SliceBody(it);
    if (c.type == 0) {
      const auto flows = flows_.Of(it.src, it.index);
      out_.Reserve(flows.size() * 10);
      for (const FlowRef& f : flows) {
        out_.Varint(Tag(f.terminating ? pf::event::kTerminatingFlowIds : pf::event::kFlowIds, kFixed64));
        out_.Fixed64(f.id);
      }
      c.open.push_back(it.end_ns);
      ++stats_.slices;
    } else {
      ++stats_.instants;
    }
    EndPacket(pkt, ev);
  }

  absl::Status WriteEvents() {
    std::vector<Cursor> cursors;
    for (size_t t = 0; t < L_.tracks.size(); ++t) {
      const TrackSpec& tr = L_.tracks[t];
      for (uint8_t type = 0; type < 3; ++type) {
        const bool any = type == 0 ? !tr.slices.empty() : type == 1 ? !tr.instants.empty() : !tr.counter_values.empty();
        if (!any) continue;
        Cursor c;
        c.track = static_cast<int32_t>(t);
        c.type = type;
        cursors.push_back(std::move(c));
      }
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
        if (out_.size() >= kFlushBytes) RETURN_IF_ERROR(Flush());
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
  const Layout& L_;
  const ByteSink& sink_;
  PerfettoStats stats_;
  Flows flows_;
  ProtoBuf out_;
  PerfettoInterner in_{t_, kAnnCount, kCatCount};
  std::vector<int8_t> nccl_name_;  // per StringId: -1 not yet known, else ContainsNccl()
  uint64_t class_iid_[kClassCount] = {}, copy_kind_iid_[6] = {}, memory_iid_[6] = {}, sync_kind_iid_[5] = {};
};

}  // namespace

absl::StatusOr<PerfettoStats> EncodeLayout(const model::Trace& trace, const Layout& layout, const ByteSink& sink) {
  Encoder enc(trace, layout, sink);
  return enc.Run();
}

absl::Status WriteFile(const std::string& path,
                       const std::function<absl::StatusOr<PerfettoStats>(const ByteSink&)>& encode,
                       PerfettoStats* stats) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return absl::UnavailableError(absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  const ByteSink write = [&](std::string_view b) {
    if (std::fwrite(b.data(), 1, b.size(), f.get()) != b.size())
      return absl::UnavailableError(absl::StrCat(path, ": write failed: ", std::strerror(errno)));
    return absl::OkStatus();
  };
  ASSIGN_OR_RETURN(PerfettoStats s, encode(write));
  if (std::fclose(f.release()) != 0)
    return absl::UnavailableError(absl::StrCat(path, ": close failed: ", std::strerror(errno)));
  if (stats) *stats = s;
  return absl::OkStatus();
}

absl::StatusOr<PerfettoStats> EncodePerfetto(const model::Trace& trace, const analyze::AnalysisResult* analysis_or_null,
                                             const ByteSink& sink, const PerfettoOptions& options) {
  Layout layout = BuildModelLayout(trace, options.only_process);
  if (analysis_or_null) AddAnalysisTracks(trace, DrawnAnalysis::Of(*analysis_or_null), &layout);
  layout.Finish(trace);
  return EncodeLayout(trace, layout, sink);
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
                           const std::string& path, PerfettoStats* stats, const PerfettoOptions& options) {
  return WriteFile(
      path, [&](const ByteSink& sink) { return EncodePerfetto(trace, analysis_or_null, sink, options); }, stats);
}

}  // namespace overlapscope::exporters
