// TrackDescriptor packets of the .pftrace: process, thread, plain and counter tracks.
#include "exporters/perfetto_fields.h"
#include "exporters/perfetto_layout.h"
#include "exporters/proto_writer.h"

namespace overlapscope::exporters {

int64_t AppendTrackDescriptors(const Layout& layout, uint64_t ts, uint32_t sequence_id, std::string* out) {
  std::string pkt;
  int64_t packets = 0;
  for (const TrackSpec& tr : layout.tracks) {
    pkt.clear();
    ProtoWriter w(&pkt);
    const size_t p = w.BeginNested(pf::kTracePacket);
    w.Varint(pf::packet::kTimestamp, ts);
    w.Varint(pf::packet::kTrustedPacketSequenceId, sequence_id);
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
        if (tr.counter_time_ns) w.Varint(pf::counter::kUnit, pf::counter::kUnitTimeNs);
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
    if (tr.explicit_child_order) w.Varint(pf::track::kChildOrdering, pf::track::kChildOrderingExplicit);
    if (!tr.description.empty()) w.Bytes(pf::track::kDescription, tr.description);
    w.EndNested(d);
    w.EndNested(p);
    out->append(pkt);
    ++packets;
  }
  return packets;
}

}  // namespace overlapscope::exporters
