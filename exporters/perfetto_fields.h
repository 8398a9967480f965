// Field numbers and enum values of the Perfetto trace protos that our .pftrace writer and the
// test decoder use (facts from protos/perfetto/trace/*.proto; no proto files are vendored).
#pragma once

#include <cstdint>

namespace overlapscope::exporters::pf {

// message Trace
inline constexpr uint32_t kTracePacket = 1;

// message TracePacket
namespace packet {
inline constexpr uint32_t kTimestamp = 8;                 // uint64, ns on timestamp_clock_id
inline constexpr uint32_t kTrustedPacketSequenceId = 10;  // uint32
inline constexpr uint32_t kTrackEvent = 11;
inline constexpr uint32_t kInternedData = 12;
inline constexpr uint32_t kSequenceFlags = 13;  // uint32 bit set
inline constexpr uint32_t kTrackDescriptor = 60;
}  // namespace packet

// TracePacket.SequenceFlags
inline constexpr uint32_t kSeqIncrementalStateCleared = 1;
inline constexpr uint32_t kSeqNeedsIncrementalState = 2;

// message TrackEvent
namespace event {
inline constexpr uint32_t kCategoryIids = 3;      // repeated uint64
inline constexpr uint32_t kDebugAnnotations = 4;  // repeated DebugAnnotation
inline constexpr uint32_t kType = 9;
inline constexpr uint32_t kNameIid = 10;
inline constexpr uint32_t kTrackUuid = 11;
inline constexpr uint32_t kName = 23;
inline constexpr uint32_t kCounterValue = 30;        // int64
inline constexpr uint32_t kDoubleCounterValue = 44;  // double
inline constexpr uint32_t kFlowIds = 47;             // repeated fixed64
inline constexpr uint32_t kTerminatingFlowIds = 48;  // repeated fixed64
inline constexpr uint32_t kTypeSliceBegin = 1;
inline constexpr uint32_t kTypeSliceEnd = 2;
inline constexpr uint32_t kTypeInstant = 3;
inline constexpr uint32_t kTypeCounter = 4;
}  // namespace event

// message DebugAnnotation
namespace annotation {
inline constexpr uint32_t kNameIid = 1;
inline constexpr uint32_t kBoolValue = 2;
inline constexpr uint32_t kUintValue = 3;
inline constexpr uint32_t kIntValue = 4;
inline constexpr uint32_t kDoubleValue = 5;
inline constexpr uint32_t kStringValue = 6;
inline constexpr uint32_t kName = 10;
inline constexpr uint32_t kStringValueIid = 17;
}  // namespace annotation

// message InternedData
namespace interned {
inline constexpr uint32_t kEventCategories = 1;               // EventCategory {iid=1, name=2}
inline constexpr uint32_t kEventNames = 2;                    // EventName {iid=1, name=2}
inline constexpr uint32_t kDebugAnnotationNames = 3;          // DebugAnnotationName {iid=1, name=2}
inline constexpr uint32_t kDebugAnnotationStringValues = 29;  // InternedString {iid=1, str=2}
inline constexpr uint32_t kIid = 1;
inline constexpr uint32_t kName = 2;
}  // namespace interned

// message TrackDescriptor
namespace track {
inline constexpr uint32_t kUuid = 1;
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kProcess = 3;  // ProcessDescriptor {pid=1, process_name=6, process_labels=8}
inline constexpr uint32_t kThread = 4;   // ThreadDescriptor {pid=1, tid=2, thread_name=5}
inline constexpr uint32_t kParentUuid = 5;
inline constexpr uint32_t kCounter = 8;            // CounterDescriptor {unit=3, unit_name=6}
inline constexpr uint32_t kChildOrdering = 11;     // 3 = EXPLICIT
inline constexpr uint32_t kSiblingOrderRank = 12;  // int32
inline constexpr uint32_t kDescription = 14;
inline constexpr uint32_t kSiblingMergeBehavior = 15;  // 2 = NONE
inline constexpr uint32_t kChildOrderingExplicit = 3;
inline constexpr uint32_t kSiblingMergeNone = 2;
}  // namespace track
namespace process {
inline constexpr uint32_t kPid = 1;
inline constexpr uint32_t kProcessName = 6;
inline constexpr uint32_t kProcessLabels = 8;
}  // namespace process
namespace thread {
inline constexpr uint32_t kPid = 1;
inline constexpr uint32_t kTid = 2;
inline constexpr uint32_t kThreadName = 5;
}  // namespace thread
namespace counter {
inline constexpr uint32_t kUnit = 3;  // enum Unit: 1 = UNIT_TIME_NS
inline constexpr uint32_t kUnitTimeNs = 1;
inline constexpr uint32_t kUnitName = 6;
}  // namespace counter

}  // namespace overlapscope::exporters::pf
