// RawEvent -> model structs in a ThreadOut, or a counted reason why not.
#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "importers/kineto/event_parser.h"
#include "importers/kineto/op_shape.h"
#include "model/bounds.h"

namespace overlapscope::import {
namespace {

using model::kNoCorrelation;
using model::kNone;

constexpr uint32_t Bit(ArgKey k) { return 1u << static_cast<int>(k); }

// Args each kind of event reads; a wrongly typed one of these makes the event unusable.
constexpr uint32_t kGpuArgs =
    Bit(ArgKey::kDevice) | Bit(ArgKey::kStream) | Bit(ArgKey::kCorrelation) | Bit(ArgKey::kExternalId);
constexpr uint32_t kKernelArgs = kGpuArgs | Bit(ArgKey::kGrid) | Bit(ArgKey::kBlock) | Bit(ArgKey::kRegisters) |
                                 Bit(ArgKey::kSharedMemory) | Bit(ArgKey::kCollectiveName) | Bit(ArgKey::kInNelems) |
                                 Bit(ArgKey::kOutNelems) | Bit(ArgKey::kGroupSize) | Bit(ArgKey::kDtype) |
                                 Bit(ArgKey::kPgName) | Bit(ArgKey::kSeq);
constexpr uint32_t kCopyArgs = kGpuArgs | Bit(ArgKey::kBytes);
constexpr uint32_t kSyncArgs =
    kGpuArgs | Bit(ArgKey::kWaitOnStream) | Bit(ArgKey::kWaitEventRecordCorr) | Bit(ArgKey::kWaitEventId);
constexpr uint32_t kApiArgs = Bit(ArgKey::kCorrelation) | Bit(ArgKey::kExternalId);
constexpr uint32_t kRangeArgs = Bit(ArgKey::kExternalId);
constexpr uint32_t kMetaArgs = Bit(ArgKey::kName) | Bit(ArgKey::kLabels);

void Skip(ThreadOut& out, int64_t offset, model::Stat stat, const char* reason) {
  out.skips.push_back({offset, stat, reason});
}

// The statistic a skipped event of category `c` counts in.
model::Stat SkipStat(Category c) {
  if (IsGpuCategory(c)) return model::Stat::kKinetoGpuEventSkipped;
  if (IsRuntimeCategory(c)) return model::Stat::kKinetoRuntimeEventSkipped;
  if (IsHostCategory(c)) return model::Stat::kKinetoHostEventSkipped;
  return model::Stat::kKinetoEventUnreadable;
}

int64_t IntOr(const RawEvent& ev, ArgKey k, int64_t fallback) { return ev.Has(k) ? ev.Int(k) : fallback; }

// A byte or element count: -1 when absent or negative; beyond model::kMaxSize counted and -1.
int64_t BoundedSize(int64_t v, ThreadOut& out) {
  if (v < 0) return -1;
  if (!model::SizeInBounds(v)) {
    out.Count(model::Stat::kSizeOutOfBounds);
    return -1;
  }
  return v;
}

// Names and string args longer than this are cut (at a UTF-8 boundary) and counted: a name of
// 2 GiB in a 2 MB .json.gz must not become 2 GiB of interned strings.
constexpr size_t kMaxStringBytes = size_t{1} << 20;
std::string_view Bounded(std::string_view s, ThreadOut& out) {
  if (s.size() <= kMaxStringBytes) return s;
  size_t n = kMaxStringBytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a character
  out.Count(model::Stat::kStringsTruncated);
  return s.substr(0, n);
}

// The first wrongly typed arg among `mask`, as a skip reason; nullptr when none.
const char* BadArg(const RawEvent& ev, uint32_t mask) {
  uint32_t bad = ev.bad_has & mask;
  if (bad == 0) return nullptr;
  return BadArgReason(static_cast<ArgKey>(__builtin_ctz(bad)));
}

// GPU rows: device from args.device, else pid; stream from args.stream, else tid.
bool GpuPlace(const RawEvent& ev, bool stream_from_tid, int32_t* device, int64_t* stream, const char** why) {
  int64_t d;
  if (ev.Has(ArgKey::kDevice))
    d = ev.Int(ArgKey::kDevice);
  else if (ev.pid_slot == Slot::kInt)
    d = ev.pid;
  else {
    *why = "missing device";
    return false;
  }
  if (d < 0 || d > INT32_MAX) {
    *why = "device out of range";
    return false;
  }
  *device = static_cast<int32_t>(d);
  if (ev.Has(ArgKey::kStream) && !(ev.stream_is_handle && stream_from_tid && ev.tid_slot == Slot::kInt))
    *stream = ev.Int(ArgKey::kStream);
  else if (stream_from_tid && ev.tid_slot == Slot::kInt)
    *stream = ev.tid;
  else if (stream_from_tid) {
    *why = "missing stream";
    return false;
  } else {
    *stream = -1;
  }
  return true;
}

void EmitMeta(const RawEvent& ev, int64_t offset, ThreadOut& out) {
  MetaRecord::Type type;
  ArgKey arg;
  if (ev.name == "process_name")
    type = MetaRecord::kProcessName, arg = ArgKey::kName;
  else if (ev.name == "thread_name")
    type = MetaRecord::kThreadName, arg = ArgKey::kName;
  else if (ev.name == "process_labels")
    type = MetaRecord::kProcessLabels, arg = ArgKey::kLabels;
  else {
    out.Count(model::Stat::kKinetoDisplayMetadata);  // sort indexes and other display hints
    return;
  }
  if (const char* bad = BadArg(ev, kMetaArgs)) return Skip(out, offset, model::Stat::kKinetoMetadataSkipped, bad);
  if (!ev.Has(arg)) return Skip(out, offset, model::Stat::kKinetoMetadataSkipped, "metadata without its arg");
  MetaRecord m{type,
               ev.pid_slot == Slot::kInt,
               ev.tid_slot == Slot::kInt,
               ev.pid,
               ev.tid,
               std::string(Bounded(ev.Str(arg), out))};
  out.metas.push_back(std::move(m));
  ++out.kept_meta;
}

// A kernel event; `name` interned. Its collective (Kineto's "Collective name" args), if any.
void EmitKernel(const RawEvent& ev, int64_t start, int64_t end, int32_t device, int32_t stream, int64_t corr,
                int64_t ext, model::StringId name, ThreadOut& out) {
  model::Kernel k;
  k.start_ns = start, k.end_ns = end, k.device = device, k.stream = stream;
  k.correlation_id = corr, k.external_id = ext, k.name = name;
  k.grid = ev.Has(ArgKey::kGrid) ? ev.grid : model::Dim3{};
  k.block = ev.Has(ArgKey::kBlock) ? ev.block : model::Dim3{};
  int64_t regs = IntOr(ev, ArgKey::kRegisters, kNone);
  k.registers_per_thread = regs >= 0 && regs <= INT32_MAX ? static_cast<int32_t>(regs) : kNone;
  k.shared_memory_bytes = BoundedSize(IntOr(ev, ArgKey::kSharedMemory, -1), out);
  if (ev.Has(ArgKey::kCollectiveName)) {
    model::Collective c;
    c.op = out.strings.Intern(Bounded(ev.Str(ArgKey::kCollectiveName), out));
    c.communicator = ev.Has(ArgKey::kPgName) ? out.strings.Intern(Bounded(ev.Str(ArgKey::kPgName), out)) : 0;
    c.dtype = ev.Has(ArgKey::kDtype) ? out.strings.Intern(Bounded(ev.Str(ArgKey::kDtype), out)) : 0;
    c.in_elements = BoundedSize(IntOr(ev, ArgKey::kInNelems, -1), out);
    c.out_elements = BoundedSize(IntOr(ev, ArgKey::kOutNelems, -1), out);
    int64_t group = IntOr(ev, ArgKey::kGroupSize, kNone);
    c.nranks = group > 0 && group <= INT32_MAX ? static_cast<int32_t>(group) : kNone;
    c.sequence = IntOr(ev, ArgKey::kSeq, -1);
    c.correlation_id = corr;
    c.start_ns = start, c.end_ns = end;
    // nccl-tests "size": the larger of the two buffers (all-gather output, reduce-scatter
    // input, equal for all-reduce / all-to-all), times the element size when known.
    const int bytes = ev.Has(ArgKey::kDtype) ? DtypeBytes(ev.Str(ArgKey::kDtype)) : 0;
    c.bytes = model::BytesOf(std::max(c.in_elements, c.out_elements), bytes);
    if (c.bytes < 0 && std::max(c.in_elements, c.out_elements) >= 0 && bytes > 0)
      out.Count(model::Stat::kSizeOutOfBounds);
    k.collective = static_cast<int32_t>(out.collectives.size());
    out.collectives.push_back(c);
  }
  out.kernels.push_back(k);
}

// GPU rows: kernels, copies, memsets, GPU annotations. False (and a counted skip) when the
// event has no usable device or stream.
bool EmitGpu(const RawEvent& ev, Category cat, int64_t offset, int64_t start, int64_t end, ThreadOut& out) {
  const model::Stat skip = model::Stat::kKinetoGpuEventSkipped;
  const uint32_t mask = cat == Category::kKernel              ? kKernelArgs
                        : cat == Category::kGpuUserAnnotation ? kGpuArgs
                                                              : kCopyArgs;
  if (const char* bad = BadArg(ev, mask)) return Skip(out, offset, skip, bad), false;
  int32_t device;
  int64_t native;
  const char* why;
  if (!GpuPlace(ev, true, &device, &native, &why)) return Skip(out, offset, skip, why), false;
  const int32_t stream = out.LocalStream(device, native);
  const model::StringId name = out.InternName(Bounded(ev.name, out));
  const int64_t corr = IntOr(ev, ArgKey::kCorrelation, kNoCorrelation);
  const int64_t ext = IntOr(ev, ArgKey::kExternalId, kNoCorrelation);
  out.with_correlation += ev.Has(ArgKey::kCorrelation);
  // roctracer-era ROCm traces (2021-2023) write copies and fills with category "kernel".
  model::MemcpyKind rocm_copy = model::MemcpyKind::kUnknown;
  const int rocm = cat == Category::kKernel ? RocmAsyncOpKind(ev.name, &rocm_copy) : 0;
  if (cat == Category::kKernel && rocm == 0) {
    EmitKernel(ev, start, end, device, stream, corr, ext, name, out);
  } else if (cat == Category::kGpuMemcpy || rocm == 1) {
    model::Memcpy m;
    m.start_ns = start, m.end_ns = end, m.device = device, m.stream = stream;
    m.correlation_id = corr, m.external_id = ext, m.name = name;
    m.bytes = BoundedSize(IntOr(ev, ArgKey::kBytes, -1), out);
    ParseMemcpyName(ev.name, &m.kind, &m.src_kind, &m.dst_kind);
    if (rocm == 1) m.kind = rocm_copy;
    out.memcpys.push_back(m);
  } else if (cat == Category::kGpuMemset || rocm == 2) {
    model::Memset m;
    m.start_ns = start, m.end_ns = end, m.device = device, m.stream = stream;
    m.correlation_id = corr, m.external_id = ext, m.name = name;
    m.bytes = BoundedSize(IntOr(ev, ArgKey::kBytes, -1), out);
    m.memory_kind = ParseMemsetName(ev.name);
    out.memsets.push_back(m);
  } else {
    model::GpuRange g;
    g.start_ns = start, g.end_ns = end, g.device = device, g.stream = stream;
    g.correlation_id = corr, g.external_id = ext, g.name = name;
    out.gpu_ranges.push_back(g);
  }
  return true;
}

bool EmitSync(const RawEvent& ev, int64_t offset, int64_t start, int64_t end, ThreadOut& out) {
  const model::Stat skip = model::Stat::kKinetoGpuEventSkipped;
  if (const char* bad = BadArg(ev, kSyncArgs)) return Skip(out, offset, skip, bad), false;
  int32_t device;
  int64_t native;
  const char* why;
  if (!GpuPlace(ev, false, &device, &native, &why)) return Skip(out, offset, skip, why), false;
  model::Sync y;
  y.start_ns = start, y.end_ns = end, y.device = device;
  y.correlation_id = IntOr(ev, ArgKey::kCorrelation, kNoCorrelation);
  y.kind = ParseSyncKind(ev.name);
  y.name = out.InternName(Bounded(ev.name, out));
  y.stream = native >= 0 ? out.LocalStream(device, native) : kNone;  // -1: no stream (event/context sync)
  int64_t wait_on = IntOr(ev, ArgKey::kWaitOnStream, -1);
  y.wait_on_stream = wait_on >= 0 ? out.LocalStream(device, wait_on) : kNone;
  int64_t rec = IntOr(ev, ArgKey::kWaitEventRecordCorr, -1);
  y.event_record_correlation_id = rec >= 0 ? rec : kNoCorrelation;
  y.event_id = IntOr(ev, ArgKey::kWaitEventId, -1);
  out.syncs.push_back(y);
  return true;
}

// The host thread of a host event (runtime call or range); false (counted) without an integer tid.
bool CpuThread(const RawEvent& ev, int64_t offset, model::Stat skip, ThreadOut& out, int32_t* t) {
  if (ev.tid_slot != Slot::kInt) return Skip(out, offset, skip, "tid not an integer"), false;
  if (!out.has_cpu_pid && ev.pid_slot == Slot::kInt) {
    out.first_cpu_pid = ev.pid;
    out.has_cpu_pid = true;
  }
  *t = out.LocalThread(ev.tid);
  return true;
}

bool EmitApi(const RawEvent& ev, Category cat, int64_t offset, int64_t start, int64_t end, ThreadOut& out) {
  const model::Stat skip = model::Stat::kKinetoRuntimeEventSkipped;
  if (const char* bad = BadArg(ev, kApiArgs)) return Skip(out, offset, skip, bad), false;
  model::ApiCall a;
  if (!CpuThread(ev, offset, skip, out, &a.thread)) return false;
  a.start_ns = start, a.end_ns = end;
  a.correlation_id = IntOr(ev, ArgKey::kCorrelation, kNoCorrelation);
  a.external_id = IntOr(ev, ArgKey::kExternalId, kNoCorrelation);
  out.with_correlation += ev.Has(ArgKey::kCorrelation);
  a.name = out.InternName(Bounded(ev.name, out));
  a.kind = cat == Category::kCudaRuntime ? model::ApiKind::kRuntime : model::ApiKind::kDriver;
  out.api_calls.push_back(a);
  out.api_offsets.push_back(offset);
  return true;
}

bool EmitRange(const RawEvent& ev, Category cat, int64_t offset, int64_t start, int64_t end, ThreadOut& out) {
  const model::Stat skip = model::Stat::kKinetoHostEventSkipped;
  if (const char* bad = BadArg(ev, kRangeArgs)) return Skip(out, offset, skip, bad), false;
  model::Range r;
  if (!CpuThread(ev, offset, skip, out, &r.thread)) return false;
  r.start_ns = start, r.end_ns = end, r.external_id = IntOr(ev, ArgKey::kExternalId, kNoCorrelation);
  r.name = out.InternName(Bounded(ev.name, out));
  r.kind = cat == Category::kCpuOp            ? model::RangeKind::kCpuOp
           : cat == Category::kUserAnnotation ? model::RangeKind::kUserAnnotation
           : cat == Category::kPythonFunction ? model::RangeKind::kPythonFunction
                                              : model::RangeKind::kOverhead;
  out.ranges.push_back(r);
  // A matrix product's operand dims (record_shapes): only ops of that kind are kept (every op
  // of such a trace has "Input Dims").
  if (ev.Has(ArgKey::kInputDims) && cat == Category::kCpuOp && ev.name.substr(0, 6) == "aten::") {
    model::OpShape s;
    if (MatmulShapeFromDims(ev.name, ev.Str(ArgKey::kInputDims), &s)) {
      s.thread = r.thread, s.external_id = r.external_id, s.op = r.name;
      out.op_shapes.push_back(s);
    }
  }
  return true;
}

// An event of a category the importer has no use for: counted by what it looks like.
void CountUnused(const RawEvent& ev, Category cat, ThreadOut& out) {
  switch (cat) {
    case Category::kNone: out.Count(model::Stat::kKinetoCategoryUnknown, "<none>"); return;
    case Category::kTrace: out.Count(model::Stat::kKinetoProfilerSpan); return;
    case Category::kLaunchFlow: out.Count(model::Stat::kKinetoLaunchFlow); return;
    case Category::kOtherFlow: out.Count(model::Stat::kKinetoOtherFlow); return;
    case Category::kIgnoredKnown: out.Count(model::Stat::kKinetoIgnoredCategory, ev.cat); return;
    case Category::kOtherAccelerator: out.Count(model::Stat::kKinetoOtherAccelerator, ev.cat); return;
    default: break;
  }
  // Unknown: device-like when it carries device placement or a correlation id, or its name says so.
  const uint32_t device_args = Bit(ArgKey::kDevice) | Bit(ArgKey::kStream) | Bit(ArgKey::kCorrelation);
  const bool device_like = ((ev.has | ev.bad_has) & device_args) != 0 || LooksLikeDeviceCategory(ev.cat);
  out.Count(device_like ? model::Stat::kKinetoDeviceCategoryUnknown : model::Stat::kKinetoCategoryUnknown, ev.cat);
}

void EmitComplete(const RawEvent& ev, Category cat, int64_t offset, ThreadOut& out) {
  const bool used = IsGpuCategory(cat) || IsRuntimeCategory(cat) || IsHostCategory(cat);
  if (!used) return CountUnused(ev, cat, out);
  const model::Stat skip = SkipStat(cat);
  if (!ev.has_ts) return Skip(out, offset, skip, "missing ts");
  if (!ev.has_dur) return Skip(out, offset, skip, "missing dur");
  if (ev.dur_ns < 0) return Skip(out, offset, skip, "negative dur");
  // Bounds once, here: every later difference and sum of times stays inside int64.
  if (!model::TimeInBounds(ev.ts_ns, ev.dur_ns)) {
    out.Count(model::Stat::kTimeOutOfBounds);
    return Skip(out, offset, skip, "ts or dur out of bounds");
  }
  const int64_t start = ev.ts_ns, end = ev.ts_ns + ev.dur_ns;
  bool ok = false;
  switch (cat) {
    case Category::kKernel:
    case Category::kGpuMemcpy:
    case Category::kGpuMemset:
    case Category::kGpuUserAnnotation: ok = EmitGpu(ev, cat, offset, start, end, out); break;
    case Category::kCudaSync: ok = EmitSync(ev, offset, start, end, out); break;
    case Category::kCudaRuntime:
    case Category::kCudaDriver: ok = EmitApi(ev, cat, offset, start, end, out); break;
    default: ok = EmitRange(ev, cat, offset, start, end, out); break;
  }
  if (ok) ++out.kept[static_cast<size_t>(cat)];
}

}  // namespace

int32_t ThreadOut::LocalThread(int64_t tid) {
  auto [it, inserted] = thread_index.try_emplace(tid, static_cast<int32_t>(thread_tids.size()));
  if (inserted) thread_tids.push_back(tid);
  return it->second;
}

int32_t ThreadOut::LocalStream(int32_t device, int64_t stream) {
  auto [it, inserted] = stream_index.try_emplace({device, stream}, static_cast<int32_t>(stream_keys.size()));
  if (inserted) stream_keys.push_back({device, stream});
  return it->second;
}

model::StringId ThreadOut::InternName(std::string_view s) {
  const size_t n = s.size();
  if (n == 0) return strings.Intern(s);
  // The slot from the length and up to 16 bytes at both ends (read only inside s): names of
  // one trace differ there (kernel templates share long middles, not their ends and lengths).
  uint64_t a = 0, b = 0;
  if (n >= 8) {
    std::memcpy(&a, s.data(), 8);
    std::memcpy(&b, s.data() + n - 8, 8);
  } else {
    a = static_cast<unsigned char>(s[0]) | static_cast<uint64_t>(static_cast<unsigned char>(s[n / 2])) << 8;
    b = static_cast<unsigned char>(s[n - 1]);
  }
  const uint64_t h = ((a * 0x9E3779B97F4A7C15ull) ^ (b + n) * 0xC2B2AE3D27D4EB4Full) >> 56;
  NameSlot& slot = name_slots[h % kNameSlots];
  if (slot.text.size() == n && std::memcmp(slot.text.data(), s.data(), n) == 0) return slot.id;
  const model::StringId id = strings.Intern(s);
  slot.text = strings.Get(id);
  slot.id = id;
  return id;
}

void ThreadOut::ClearChunk() {
  kernels.clear();
  memcpys.clear();
  memsets.clear();
  api_calls.clear();
  api_offsets.clear();
  syncs.clear();
  ranges.clear();
  op_shapes.clear();
  gpu_ranges.clear();
  collectives.clear();
  metas.clear();
  skips.clear();
  flow_ids.clear();
  events_read = 0;
  for (auto& k : kept) k = 0;
  kept_meta = 0;
  has_cpu_pid = false;  // a dropped speculative parse must not leave a pid behind
  first_cpu_pid = -1;
  for (auto& n : stats) n = 0;
  stat_details.clear();
  with_correlation = 0;
}

void EmitEvent(const RawEvent& ev, int64_t offset, ThreadOut& out) {
  ++out.events_read;
  for (const std::string& k : ev.unknown_args) out.Count(model::Stat::kKinetoUnknownArg, k);
  if (ev.repaired > 0) out.Count(model::Stat::kStringsRepaired, ev.repaired);
  if (ev.non_json > 0) out.Count(model::Stat::kKinetoNonJsonValue, ev.non_json);
  // The category first: a problem of the event counts under what the event is.
  const bool cat_missing = ev.cat.data() == nullptr && ev.cat.empty();
  const Category cat = cat_missing ? Category::kNone : ClassifyCategory(ev.cat);
  if (ev.bad) return Skip(out, offset, ev.ph == "M" ? model::Stat::kKinetoMetadataSkipped : SkipStat(cat), ev.bad);
  if (ev.ph.size() != 1)
    return Skip(out, offset, model::Stat::kKinetoEventUnreadable, ev.ph.empty() ? "missing ph" : "unsupported ph");
  switch (ev.ph[0]) {
    case 'X': return EmitComplete(ev, cat, offset, out);
    case 'M': return EmitMeta(ev, offset, out);
    case 's':
    case 'f':
    case 't':
      if (cat == Category::kOtherFlow) return out.Count(model::Stat::kKinetoOtherFlow);
      if (cat != Category::kLaunchFlow)
        return out.Count(model::Stat::kKinetoCategoryUnknown, cat_missing ? std::string_view("<none>") : ev.cat);
      out.Count(model::Stat::kKinetoLaunchFlow);
      if (ev.id_slot == Slot::kInt)
        out.flow_ids.push_back(ev.id);
      else
        out.Count(model::Stat::kKinetoFlowWithoutId);
      return;
    case 'i':
    case 'I': return out.Count(model::Stat::kKinetoInstant);
    default: return Skip(out, offset, model::Stat::kKinetoEventUnreadable, "unsupported ph");
  }
}

}  // namespace overlapscope::import
