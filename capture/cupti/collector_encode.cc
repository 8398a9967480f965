// Encoding of CUPTI activity records (CUPTI API 130001 structs) into spill records.
// Called with the writer lock held (collector.cc).
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include "capture/cupti/collector_state.h"

namespace overlapscope::cupti::internal {
namespace {

// Copies n bytes at `addr` of this process into `out`, false when that memory is not readable.
// process_vm_readv on ourselves fails with EFAULT instead of faulting, so a payload pointer
// CUPTI no longer backs cannot crash the profiled program.
bool SafeRead(uint64_t addr, void* out, size_t n) {
  if (addr == 0 || n == 0) return false;
  iovec local{out, n}, remote{reinterpret_cast<void*>(addr), n};
  return ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

// nvtxPayloadData_t of nvToolsExtPayload.h (NVTX 3 extended payloads): schema id, size, data.
struct NvtxPayloadData {
  uint64_t schema_id;
  size_t size;
  uint64_t payload;
};

// NVTX extended payload (NCCL's API ranges carry communicator, message size, root/peer and
// reduction this way): MARKER_DATA's payload is then a pointer to the nvtxPayloadData_t that
// CUPTI keeps for the record; its bytes go to the spill as they are (decoded by
// nccl_nvtx_payload.h). Anything unreadable is left out.
void AppendNvtxPayload(std::string& out, const CUpti_ActivityMarkerData2& m) {
  NvtxPayloadData pd{};
  if (!SafeRead(m.payload.metricValueUint64, &pd, sizeof(pd)) || pd.size == 0 || pd.size > (1u << 20)) return;
  formats::SpillNvtxPayload s{};
  s.marker_id = m.id, s.domain_id = m.cuptiDomainId, s.schema_id = pd.schema_id;
  s.bytes = static_cast<uint32_t>(pd.size < formats::kSpillMaxNvtxPayload ? pd.size : formats::kSpillMaxNvtxPayload);
  s.truncated = pd.size > formats::kSpillMaxNvtxPayload ? 1 : 0;
  unsigned char bytes[formats::kSpillMaxNvtxPayload];
  if (!SafeRead(pd.payload, bytes, s.bytes)) return;
  formats::SpillEncoder::AppendRaw(&out, formats::SpillType::kNvtxPayload, &s, sizeof(s), bytes, s.bytes);
}

}  // namespace

uint32_t WriterState::Intern(std::string_view s) {
  if (s.empty()) return 0;
  auto it = strings.find(std::string(s));
  if (it != strings.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(strings.size() + 1);
  strings.emplace(std::string(s), id);
  formats::SpillEncoder::AppendString(&out, id, s);
  return id;
}

namespace {

// One function per CUPTI record kind: each copies its CUPTI struct's fields into the spill
// record of that kind (formats/spill_format.h) and appends it to w.out. Records that name a
// thread add it to w.tids (named at Stop).

// GPU activities: kernels, copies (MEMCPY2 is a peer-to-peer copy), memsets.
void EncodeKernel(WriterState& w, const CUpti_ActivityKernel10* k) {
  formats::SpillKernel s{};
  s.start = static_cast<int64_t>(k->start), s.end = static_cast<int64_t>(k->end);
  s.device = k->deviceId, s.context = k->contextId, s.stream = k->streamId, s.correlation = k->correlationId;
  s.name_sid = k->name ? w.Intern(k->name) : 0;
  s.grid[0] = k->gridX, s.grid[1] = k->gridY, s.grid[2] = k->gridZ;
  s.block[0] = k->blockX, s.block[1] = k->blockY, s.block[2] = k->blockZ;
  s.static_smem = k->staticSharedMemory, s.dynamic_smem = k->dynamicSharedMemory;
  s.registers = k->registersPerThread, s.launch_type = k->launchType, s.graph_id = k->graphId;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kKernel, s);
}

void EncodeMemcpy(WriterState& w, const CUpti_ActivityMemcpy6* m) {
  formats::SpillMemcpy s{};
  s.start = static_cast<int64_t>(m->start), s.end = static_cast<int64_t>(m->end);
  s.bytes = m->bytes, s.copy_count = m->copyCount;
  s.device = m->deviceId, s.context = m->contextId, s.stream = m->streamId, s.correlation = m->correlationId;
  s.src_device = s.dst_device = formats::kNoId;
  s.copy_kind = m->copyKind, s.src_kind = m->srcKind, s.dst_kind = m->dstKind, s.flags = m->flags;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kMemcpy, s);
}

void EncodePeerMemcpy(WriterState& w, const CUpti_ActivityMemcpyPtoP4* m) {
  formats::SpillMemcpy s{};
  s.start = static_cast<int64_t>(m->start), s.end = static_cast<int64_t>(m->end);
  s.bytes = m->bytes, s.copy_count = 1;
  s.device = m->deviceId, s.context = m->contextId, s.stream = m->streamId, s.correlation = m->correlationId;
  s.src_device = m->srcDeviceId, s.dst_device = m->dstDeviceId;
  s.copy_kind = m->copyKind, s.src_kind = m->srcKind, s.dst_kind = m->dstKind, s.flags = m->flags;
  s.is_peer = 1;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kMemcpy, s);
}

void EncodeMemset(WriterState& w, const CUpti_ActivityMemset4* m) {
  formats::SpillMemset s{};
  s.start = static_cast<int64_t>(m->start), s.end = static_cast<int64_t>(m->end), s.bytes = m->bytes;
  s.device = m->deviceId, s.context = m->contextId, s.stream = m->streamId, s.correlation = m->correlationId;
  s.value = m->value, s.flags = m->flags, s.memory_kind = m->memoryKind;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kMemset, s);
}

// Host side: runtime/driver calls, synchronizations, CUDA event records, external correlations.
void EncodeApi(WriterState& w, const CUpti_ActivityAPI* a, bool driver) {
  formats::SpillApi s{};
  s.start = static_cast<int64_t>(a->start), s.end = static_cast<int64_t>(a->end);
  s.pid = a->processId, s.tid = a->threadId, s.correlation = a->correlationId, s.cbid = a->cbid;
  s.return_value = a->returnValue, s.driver = driver;
  s.name_sid = w.ApiName(driver, a->cbid);
  w.tids.insert(a->threadId);
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kApi, s);
}

void EncodeSync(WriterState& w, const CUpti_ActivitySynchronization2* y) {
  formats::SpillSync s{};
  s.start = static_cast<int64_t>(y->start), s.end = static_cast<int64_t>(y->end);
  s.type = y->type, s.correlation = y->correlationId, s.context = y->contextId, s.stream = y->streamId;
  s.event_id = y->cudaEventId, s.return_value = y->returnValue, s.event_sync_id = y->cudaEventSyncId;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kSync, s);
}

void EncodeCudaEvent(WriterState& w, const CUpti_ActivityCudaEvent2* e) {
  formats::SpillCudaEvent s{};
  s.correlation = e->correlationId, s.context = e->contextId, s.stream = e->streamId, s.event_id = e->eventId;
  s.device = e->deviceId, s.event_sync_id = e->cudaEventSyncId;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kCudaEvent, s);
}

void EncodeExternalCorrelation(WriterState& w, const CUpti_ActivityExternalCorrelation* e) {
  formats::SpillExternalCorrelation s{e->externalId, e->correlationId, static_cast<uint32_t>(e->externalKind)};
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kExternalCorrelation, s);
}

// NVTX: markers (range start/end, instantaneous marks) and their data (with NCCL's extended
// payload when the data carries one).
void EncodeMarker(WriterState& w, const CUpti_ActivityMarker2* m) {
  formats::SpillMarker s{};
  s.timestamp = static_cast<int64_t>(m->timestamp), s.flags = m->flags, s.id = m->id;
  s.object_kind = m->objectKind;
  if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
    s.pid = m->objectId.pt.processId, s.tid = m->objectId.pt.threadId, w.tids.insert(s.tid);
  s.name_sid = m->name ? w.Intern(m->name) : 0;
  s.domain_sid = m->domain ? w.Intern(m->domain) : 0;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kMarker, s);
}

void EncodeMarkerData(WriterState& w, const CUpti_ActivityMarkerData2* m) {
  formats::SpillMarkerData s{};
  std::memcpy(&s.payload, &m->payload, sizeof(s.payload) < sizeof(m->payload) ? sizeof(s.payload) : sizeof(m->payload));
  s.flags = m->flags, s.id = m->id, s.payload_kind = m->payloadKind, s.color = m->color;
  s.category = m->category, s.domain_id = m->cuptiDomainId;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kMarkerData, s);
  if (m->payloadKind == CUPTI_METRIC_VALUE_KIND_NVTX_EXTENDED_PAYLOAD) AppendNvtxPayload(w.out, *m);
}

// CUPTI's own overhead, and the objects other records refer to: devices, contexts, streams,
// and their names.
void EncodeOverhead(WriterState& w, const CUpti_ActivityOverhead3* o) {
  formats::SpillOverhead s{};
  s.start = static_cast<int64_t>(o->start), s.end = static_cast<int64_t>(o->end);
  s.overhead_kind = o->overheadKind, s.object_kind = o->objectKind;
  if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
    s.pid = o->objectId.pt.processId, s.tid = o->objectId.pt.threadId, w.tids.insert(s.tid);
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kOverhead, s);
}

void EncodeDevice(WriterState& w, const CUpti_ActivityDevice5* d) {
  formats::SpillDevice s{d->id, d->name ? w.Intern(d->name) : 0, d->computeCapabilityMajor, d->computeCapabilityMinor};
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kDevice, s);
}

void EncodeContext(WriterState& w, const CUpti_ActivityContext3* c) {
  formats::SpillContext s{c->contextId, c->deviceId, c->nullStreamId, 0};
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kContext, s);
}

void EncodeStream(WriterState& w, const CUpti_ActivityStream* c) {
  formats::SpillStream s{c->contextId, c->streamId, c->priority, static_cast<uint32_t>(c->flag), c->correlationId, 0};
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kStream, s);
}

void EncodeName(WriterState& w, const CUpti_ActivityName* n) {
  formats::SpillName s{static_cast<uint32_t>(n->objectKind), 0, 0, n->name ? w.Intern(n->name) : 0};
  if (n->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || n->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
    s.a = n->objectId.pt.processId, s.b = n->objectId.pt.threadId;
  else if (n->objectKind == CUPTI_ACTIVITY_OBJECT_STREAM)
    s.a = n->objectId.dcs.contextId, s.b = n->objectId.dcs.streamId;
  else
    s.a = n->objectId.dcs.deviceId, s.b = n->objectId.dcs.contextId;
  formats::SpillEncoder::Append(&w.out, formats::SpillType::kName, s);
}

// The record as the struct of its kind (CUPTI API 130001).
template <typename T>
const T* As(const CUpti_Activity* rec) {
  return reinterpret_cast<const T*>(rec);
}

}  // namespace

void WriterState::Encode(const CUpti_Activity* rec) {
  ++stats.records;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return EncodeKernel(*this, As<CUpti_ActivityKernel10>(rec));
    case CUPTI_ACTIVITY_KIND_MEMCPY: return EncodeMemcpy(*this, As<CUpti_ActivityMemcpy6>(rec));
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return EncodePeerMemcpy(*this, As<CUpti_ActivityMemcpyPtoP4>(rec));
    case CUPTI_ACTIVITY_KIND_MEMSET: return EncodeMemset(*this, As<CUpti_ActivityMemset4>(rec));
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return EncodeApi(*this, As<CUpti_ActivityAPI>(rec), rec->kind == CUPTI_ACTIVITY_KIND_DRIVER);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return EncodeSync(*this, As<CUpti_ActivitySynchronization2>(rec));
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return EncodeCudaEvent(*this, As<CUpti_ActivityCudaEvent2>(rec));
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return EncodeExternalCorrelation(*this, As<CUpti_ActivityExternalCorrelation>(rec));
    case CUPTI_ACTIVITY_KIND_MARKER: return EncodeMarker(*this, As<CUpti_ActivityMarker2>(rec));
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return EncodeMarkerData(*this, As<CUpti_ActivityMarkerData2>(rec));
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return EncodeOverhead(*this, As<CUpti_ActivityOverhead3>(rec));
    case CUPTI_ACTIVITY_KIND_DEVICE: return EncodeDevice(*this, As<CUpti_ActivityDevice5>(rec));
    case CUPTI_ACTIVITY_KIND_CONTEXT: return EncodeContext(*this, As<CUpti_ActivityContext3>(rec));
    case CUPTI_ACTIVITY_KIND_STREAM: return EncodeStream(*this, As<CUpti_ActivityStream>(rec));
    case CUPTI_ACTIVITY_KIND_NAME: return EncodeName(*this, As<CUpti_ActivityName>(rec));
    default: ++stats.unknown_records; return;
  }
}

}  // namespace overlapscope::cupti::internal
