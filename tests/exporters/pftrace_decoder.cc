#include "pftrace_decoder.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "exporters/perfetto_fields.h"
#include "exporters/proto_reader.h"

namespace overlapscope::testing {
namespace {

using exporters::ProtoField;
using exporters::ProtoReader;
namespace pf = exporters::pf;

struct Interned {
  absl::flat_hash_map<uint64_t, std::string> names, categories, ann_names, values;
};

absl::Status Err(size_t offset, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("offset ", offset, ": ", what));
}

absl::Status Define(absl::flat_hash_map<uint64_t, std::string>& table, std::string_view entry, size_t off) {
  ProtoReader r(entry, off);
  ProtoField f;
  uint64_t iid = 0;
  std::string name;
  while (r.Next(&f)) {
    if (f.number == 1) iid = f.int_value;
    if (f.number == 2) name = std::string(f.bytes);
  }
  if (!r.ok()) return absl::InvalidArgumentError(r.error());
  if (iid == 0) return Err(off, "interned entry without iid");
  auto [it, inserted] = table.try_emplace(iid, name);
  if (!inserted && it->second != name)
    return Err(off, absl::StrCat("iid ", iid, " redefined: '", it->second, "' then '", name, "'"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> Lookup(const absl::flat_hash_map<uint64_t, std::string>& table, uint64_t iid, size_t off,
                                   const char* what) {
  auto it = table.find(iid);
  if (it == table.end()) return Err(off, absl::StrCat(what, " iid ", iid, " used before it was interned"));
  return it->second;
}

absl::Status DecodeAnnotation(std::string_view data, size_t off, const Interned& in, PfEvent* ev) {
  ProtoReader r(data, off);
  ProtoField f;
  std::string key, value;
  while (r.Next(&f)) {
    switch (f.number) {
      case pf::annotation::kNameIid: {
        ev->uses_interning = true;
        auto s = Lookup(in.ann_names, f.int_value, f.offset, "annotation name");
        if (!s.ok()) return s.status();
        key = *s;
        break;
      }
      case pf::annotation::kName: key = std::string(f.bytes); break;
      case pf::annotation::kIntValue: value = absl::StrCat(f.as_int64()); break;
      case pf::annotation::kUintValue: value = absl::StrCat(f.int_value); break;
      case pf::annotation::kBoolValue: value = f.int_value ? "true" : "false"; break;
      case pf::annotation::kDoubleValue: value = absl::StrCat(f.as_double()); break;
      case pf::annotation::kStringValue: value = std::string(f.bytes); break;
      case pf::annotation::kStringValueIid: {
        ev->uses_interning = true;
        auto s = Lookup(in.values, f.int_value, f.offset, "annotation string value");
        if (!s.ok()) return s.status();
        value = *s;
        break;
      }
      default: return Err(f.offset, absl::StrCat("unexpected DebugAnnotation field ", f.number));
    }
  }
  if (!r.ok()) return absl::InvalidArgumentError(r.error());
  ev->args[key] = value;
  return absl::OkStatus();
}

absl::Status DecodeTrackEvent(std::string_view data, size_t off, const Interned& in, PfEvent* ev) {
  ProtoReader r(data, off);
  ProtoField f;
  while (r.Next(&f)) {
    switch (f.number) {
      case pf::event::kType: ev->type = static_cast<uint32_t>(f.int_value); break;
      case pf::event::kTrackUuid: ev->track = f.int_value; break;
      case pf::event::kNameIid: {
        ev->uses_interning = true;
        auto s = Lookup(in.names, f.int_value, f.offset, "event name");
        if (!s.ok()) return s.status();
        ev->name = *s;
        break;
      }
      case pf::event::kName: ev->name = std::string(f.bytes); break;
      case pf::event::kCategoryIids: {
        ev->uses_interning = true;
        auto s = Lookup(in.categories, f.int_value, f.offset, "category");
        if (!s.ok()) return s.status();
        ev->category = *s;
        break;
      }
      case pf::event::kDebugAnnotations: {
        absl::Status s = DecodeAnnotation(f.bytes, r.OffsetOf(f.bytes), in, ev);
        if (!s.ok()) return s;
        break;
      }
      case pf::event::kFlowIds:
        if (f.wire_type != 1) return Err(f.offset, "flow_ids not fixed64");
        ev->flows.push_back(f.int_value);
        break;
      case pf::event::kTerminatingFlowIds:
        if (f.wire_type != 1) return Err(f.offset, "terminating_flow_ids not fixed64");
        ev->terminating_flows.push_back(f.int_value);
        break;
      case pf::event::kDoubleCounterValue: ev->counter = f.as_double(); break;
      case pf::event::kCounterValue: ev->counter = static_cast<double>(f.as_int64()); break;
      default: return Err(f.offset, absl::StrCat("unexpected TrackEvent field ", f.number));
    }
  }
  if (!r.ok()) return absl::InvalidArgumentError(r.error());
  return absl::OkStatus();
}

absl::Status DecodeDescriptor(std::string_view data, size_t off, PfTrace* out) {
  ProtoReader r(data, off);
  ProtoField f;
  PfTrack t;
  while (r.Next(&f)) {
    if (f.number == pf::track::kUuid)
      t.uuid = f.int_value;
    else if (f.number == pf::track::kParentUuid)
      t.parent = f.int_value;
    else if (f.number == pf::track::kName)
      t.name = std::string(f.bytes);
    else if (f.number == pf::track::kCounter)
      t.kind = PfTrack::kCounter;
    else if (f.number == pf::track::kProcess || f.number == pf::track::kThread) {
      t.kind = f.number == pf::track::kProcess ? PfTrack::kProcess : PfTrack::kThread;
      ProtoReader sub(f.bytes, r.OffsetOf(f.bytes));
      ProtoField g;
      while (sub.Next(&g)) {
        if (g.number == 1) t.pid = g.as_int64();
        if (t.kind == PfTrack::kThread && g.number == pf::thread::kTid) t.tid = g.as_int64();
        if (t.kind == PfTrack::kThread && g.number == pf::thread::kThreadName) t.name = std::string(g.bytes);
        if (t.kind == PfTrack::kProcess && g.number == pf::process::kProcessName) t.name = std::string(g.bytes);
      }
      if (!sub.ok()) return absl::InvalidArgumentError(sub.error());
    }
  }
  if (!r.ok()) return absl::InvalidArgumentError(r.error());
  if (t.uuid == 0) return Err(off, "track descriptor without uuid");
  if (out->tracks.count(t.uuid)) return Err(off, absl::StrCat("track uuid ", t.uuid, " defined twice"));
  if (t.parent && !out->tracks.count(t.parent))
    return Err(off, absl::StrCat("track ", t.uuid, " names parent ", t.parent, " before it is defined"));
  out->tracks[t.uuid] = t;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PfTrace> DecodePftrace(std::string_view data) {
  PfTrace out;
  Interned in;
  bool cleared = false;
  uint64_t last_ts = 0;
  // Per track: indexes into out.slices of the open slices, innermost last.
  absl::flat_hash_map<uint64_t, std::vector<size_t>> open;
  ProtoReader top(data);
  ProtoField pkt;
  while (top.Next(&pkt)) {
    if (pkt.number != pf::kTracePacket) return Err(pkt.offset, "not a TracePacket");
    ++out.packets;
    ProtoReader r(pkt.bytes, top.OffsetOf(pkt.bytes));
    ProtoField f;
    bool has_seq = false, has_ts = false;
    uint64_t ts = 0, flags = 0;
    std::string_view event, descriptor;
    size_t event_off = 0, desc_off = 0;
    std::vector<std::pair<std::string_view, size_t>> interned;
    while (r.Next(&f)) {
      switch (f.number) {
        case pf::packet::kTimestamp:
          ts = f.int_value;
          has_ts = true;
          break;
        case pf::packet::kTrustedPacketSequenceId: has_seq = f.int_value != 0; break;
        case pf::packet::kSequenceFlags: flags = f.int_value; break;
        case pf::packet::kTrackEvent:
          event = f.bytes;
          event_off = r.OffsetOf(f.bytes);
          break;
        case pf::packet::kTrackDescriptor:
          descriptor = f.bytes;
          desc_off = r.OffsetOf(f.bytes);
          break;
        case pf::packet::kInternedData: interned.push_back({f.bytes, r.OffsetOf(f.bytes)}); break;
        default: return Err(f.offset, absl::StrCat("unexpected TracePacket field ", f.number));
      }
    }
    if (!r.ok()) return absl::InvalidArgumentError(r.error());
    if (!has_seq) return Err(pkt.offset, "packet without trusted_packet_sequence_id (trace_processor drops it)");
    if (flags & pf::kSeqIncrementalStateCleared) {
      cleared = true;
      in = Interned();
    }
    if (!interned.empty() && !cleared) return Err(pkt.offset, "interned data before incremental state was cleared");
    for (auto [bytes, off] : interned) {
      ProtoReader ir(bytes, off);
      ProtoField g;
      while (ir.Next(&g)) {
        absl::flat_hash_map<uint64_t, std::string>* table = nullptr;
        if (g.number == pf::interned::kEventNames)
          table = &in.names;
        else if (g.number == pf::interned::kEventCategories)
          table = &in.categories;
        else if (g.number == pf::interned::kDebugAnnotationNames)
          table = &in.ann_names;
        else if (g.number == pf::interned::kDebugAnnotationStringValues)
          table = &in.values;
        else
          return Err(g.offset, absl::StrCat("unexpected InternedData field ", g.number));
        absl::Status s = Define(*table, g.bytes, ir.OffsetOf(g.bytes));
        if (!s.ok()) return s;
      }
      if (!ir.ok()) return absl::InvalidArgumentError(ir.error());
    }
    if (!descriptor.empty()) {
      absl::Status s = DecodeDescriptor(descriptor, desc_off, &out);
      if (!s.ok()) return s;
    }
    if (event.data() == nullptr) continue;
    if (!has_ts) return Err(pkt.offset, "track event without timestamp");
    if (ts < last_ts) return Err(pkt.offset, absl::StrCat("timestamp ", ts, " after ", last_ts));
    last_ts = ts;
    PfEvent ev;
    ev.ts = ts;
    absl::Status s = DecodeTrackEvent(event, event_off, in, &ev);
    if (!s.ok()) return s;
    // trace_processor only trusts interned ids on packets that say they need the state, and
    // only after the state was cleared.
    if (ev.uses_interning && (!cleared || !(flags & pf::kSeqNeedsIncrementalState)))
      return Err(pkt.offset, "interned ids on a packet without SEQ_NEEDS_INCREMENTAL_STATE or before a clear");
    if (!out.tracks.count(ev.track)) return Err(pkt.offset, absl::StrCat("event on undefined track ", ev.track));
    auto& stack = open[ev.track];
    if (ev.type == 1 || ev.type == 3) {
      PfSlice sl{ev.track,
                 ts,
                 0,
                 static_cast<int>(stack.size()),
                 ev.name,
                 ev.category,
                 ev.args,
                 ev.flows,
                 ev.terminating_flows};
      out.slices.push_back(sl);
      if (ev.type == 1) stack.push_back(out.slices.size() - 1);
    } else if (ev.type == 2) {
      if (stack.empty()) return Err(pkt.offset, absl::StrCat("END on track ", ev.track, " with no open slice"));
      out.slices[stack.back()].dur = ts - out.slices[stack.back()].ts;
      stack.pop_back();
    }
    out.events.push_back(std::move(ev));
  }
  if (!top.ok()) return absl::InvalidArgumentError(top.error());
  for (const auto& [track, stack] : open)
    if (!stack.empty()) return absl::InvalidArgumentError(absl::StrCat("slice left open on track ", track));
  return out;
}

}  // namespace overlapscope::testing
