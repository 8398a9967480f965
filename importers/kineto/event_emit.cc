// RawEvent -> model structs in a ThreadOut, or a counted reason why not.
#include <string>

#include "absl/strings/str_cat.h"
#include "importers/kineto/event_parser.h"

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

void Skip(ThreadOut& out, int64_t offset, std::string reason) { out.skips.push_back({offset, std::move(reason)}); }

int64_t IntOr(const RawEvent& ev, ArgKey k, int64_t fallback) { return ev.Has(k) ? ev.Int(k) : fallback; }

// The first wrongly typed arg among `mask`, as a skip reason; empty when none.
std::string BadArg(const RawEvent& ev, uint32_t mask) {
  uint32_t bad = ev.bad_has & mask;
  if (bad == 0) return {};
  return "bad arg value: " + std::string(ArgKeyName(static_cast<ArgKey>(__builtin_ctz(bad))));
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
  if (ev.Has(ArgKey::kStream))
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
    ++out.ignored[ThreadOut::kIgnoredMeta];  // sort indexes and other display hints
    return;
  }
  if (std::string bad = BadArg(ev, kMetaArgs); !bad.empty()) return Skip(out, offset, bad);
  if (!ev.Has(arg)) return Skip(out, offset, "metadata without its arg");
  MetaRecord m{type, ev.pid_slot == Slot::kInt, ev.tid_slot == Slot::kInt, ev.pid, ev.tid, std::string(ev.Str(arg))};
  out.metas.push_back(std::move(m));
  ++out.kept_meta;
}

void EmitComplete(const RawEvent& ev, int64_t offset, ThreadOut& out) {
  Category cat = ev.cat.data() == nullptr && ev.cat.empty() ? Category::kNone : ClassifyCategory(ev.cat);
  switch (cat) {
    case Category::kNone: ++out.unknown_categories["<none>"]; return;
    case Category::kUnknown: ++out.unknown_categories[std::string(ev.cat)]; return;
    case Category::kTrace: ++out.ignored[ThreadOut::kIgnoredTrace]; return;
    case Category::kAc2g: ++out.ignored[ThreadOut::kIgnoredFlow]; return;
    default: break;
  }
  if (!ev.has_ts) return Skip(out, offset, "missing ts");
  if (!ev.has_dur) return Skip(out, offset, "missing dur");
  if (ev.dur_ns < 0) return Skip(out, offset, "negative dur");
  int64_t start = ev.ts_ns, end;
  if (__builtin_add_overflow(start, ev.dur_ns, &end)) return Skip(out, offset, "ts + dur beyond int64 ns");
  const size_t ci = static_cast<size_t>(cat);
  auto cpu_thread = [&](int32_t* t) {
    if (ev.tid_slot != Slot::kInt) {
      Skip(out, offset, "tid not an integer");
      return false;
    }
    if (!out.has_cpu_pid && ev.pid_slot == Slot::kInt) {
      out.first_cpu_pid = ev.pid;
      out.has_cpu_pid = true;
    }
    *t = out.LocalThread(ev.tid);
    return true;
  };
  const int64_t corr = IntOr(ev, ArgKey::kCorrelation, kNoCorrelation);
  const int64_t ext = IntOr(ev, ArgKey::kExternalId, kNoCorrelation);
  switch (cat) {
    case Category::kKernel:
    case Category::kGpuMemcpy:
    case Category::kGpuMemset:
    case Category::kGpuUserAnnotation: {
      uint32_t mask = cat == Category::kKernel              ? kKernelArgs
                      : cat == Category::kGpuUserAnnotation ? kGpuArgs
                                                            : kCopyArgs;
      if (std::string bad = BadArg(ev, mask); !bad.empty()) return Skip(out, offset, bad);
      int32_t device;
      int64_t native;
      const char* why;
      if (!GpuPlace(ev, true, &device, &native, &why)) return Skip(out, offset, why);
      int32_t stream = out.LocalStream(device, native);
      model::StringId name = out.strings.Intern(ev.name);
      if (cat == Category::kKernel) {
        model::Kernel k;
        k.start_ns = start, k.end_ns = end, k.device = device, k.stream = stream;
        k.correlation_id = corr, k.external_id = ext, k.name = name;
        k.grid = ev.Has(ArgKey::kGrid) ? ev.grid : model::Dim3{};
        k.block = ev.Has(ArgKey::kBlock) ? ev.block : model::Dim3{};
        int64_t regs = IntOr(ev, ArgKey::kRegisters, kNone);
        k.registers_per_thread = regs >= 0 && regs <= INT32_MAX ? static_cast<int32_t>(regs) : kNone;
        k.shared_memory_bytes = IntOr(ev, ArgKey::kSharedMemory, -1);
        if (ev.Has(ArgKey::kCollectiveName)) {
          model::Collective c;
          c.op = out.strings.Intern(ev.Str(ArgKey::kCollectiveName));
          c.communicator = ev.Has(ArgKey::kPgName) ? out.strings.Intern(ev.Str(ArgKey::kPgName)) : 0;
          c.dtype = ev.Has(ArgKey::kDtype) ? out.strings.Intern(ev.Str(ArgKey::kDtype)) : 0;
          c.in_elements = IntOr(ev, ArgKey::kInNelems, -1);
          c.out_elements = IntOr(ev, ArgKey::kOutNelems, -1);
          int64_t group = IntOr(ev, ArgKey::kGroupSize, kNone);
          c.nranks = group > 0 && group <= INT32_MAX ? static_cast<int32_t>(group) : kNone;
          c.sequence = IntOr(ev, ArgKey::kSeq, -1);
          c.correlation_id = corr;
          c.start_ns = start, c.end_ns = end;
          // nccl-tests "size": the larger of the two buffers (all-gather output, reduce-scatter
          // input, equal for all-reduce / all-to-all), times the element size when known.
          int64_t elems = std::max(c.in_elements, c.out_elements);
          int bytes = ev.Has(ArgKey::kDtype) ? DtypeBytes(ev.Str(ArgKey::kDtype)) : 0;
          if (elems >= 0 && bytes > 0 && elems <= INT64_MAX / bytes) c.bytes = elems * bytes;
          k.collective = static_cast<int32_t>(out.collectives.size());
          out.collectives.push_back(c);
        }
        out.kernels.push_back(k);
      } else if (cat == Category::kGpuMemcpy) {
        model::Memcpy m;
        m.start_ns = start, m.end_ns = end, m.device = device, m.stream = stream;
        m.correlation_id = corr, m.external_id = ext, m.name = name;
        m.bytes = IntOr(ev, ArgKey::kBytes, -1);
        ParseMemcpyName(ev.name, &m.kind, &m.src_kind, &m.dst_kind);
        out.memcpys.push_back(m);
      } else if (cat == Category::kGpuMemset) {
        model::Memset m;
        m.start_ns = start, m.end_ns = end, m.device = device, m.stream = stream;
        m.correlation_id = corr, m.external_id = ext, m.name = name;
        m.bytes = IntOr(ev, ArgKey::kBytes, -1);
        m.memory_kind = ParseMemsetName(ev.name);
        out.memsets.push_back(m);
      } else {
        model::GpuRange g;
        g.start_ns = start, g.end_ns = end, g.device = device, g.stream = stream;
        g.correlation_id = corr, g.external_id = ext, g.name = name;
        out.gpu_ranges.push_back(g);
      }
      break;
    }
    case Category::kCudaSync: {
      if (std::string bad = BadArg(ev, kSyncArgs); !bad.empty()) return Skip(out, offset, bad);
      int32_t device;
      int64_t native;
      const char* why;
      if (!GpuPlace(ev, false, &device, &native, &why)) return Skip(out, offset, why);
      model::Sync y;
      y.start_ns = start, y.end_ns = end, y.device = device, y.correlation_id = corr;
      y.kind = ParseSyncKind(ev.name);
      y.name = out.strings.Intern(ev.name);
      y.stream = native >= 0 ? out.LocalStream(device, native) : kNone;  // -1: no stream (event/context sync)
      int64_t wait_on = IntOr(ev, ArgKey::kWaitOnStream, -1);
      y.wait_on_stream = wait_on >= 0 ? out.LocalStream(device, wait_on) : kNone;
      int64_t rec = IntOr(ev, ArgKey::kWaitEventRecordCorr, -1);
      y.event_record_correlation_id = rec >= 0 ? rec : kNoCorrelation;
      y.event_id = IntOr(ev, ArgKey::kWaitEventId, -1);
      out.syncs.push_back(y);
      break;
    }
    case Category::kCudaRuntime:
    case Category::kCudaDriver: {
      if (std::string bad = BadArg(ev, kApiArgs); !bad.empty()) return Skip(out, offset, bad);
      model::ApiCall a;
      if (!cpu_thread(&a.thread)) return;
      a.start_ns = start, a.end_ns = end, a.correlation_id = corr, a.external_id = ext;
      a.name = out.strings.Intern(ev.name);
      a.kind = cat == Category::kCudaRuntime ? model::ApiKind::kRuntime : model::ApiKind::kDriver;
      out.api_calls.push_back(a);
      out.api_offsets.push_back(offset);
      break;
    }
    default: {  // host ranges
      if (std::string bad = BadArg(ev, kRangeArgs); !bad.empty()) return Skip(out, offset, bad);
      model::Range r;
      if (!cpu_thread(&r.thread)) return;
      r.start_ns = start, r.end_ns = end, r.external_id = ext;
      r.name = out.strings.Intern(ev.name);
      r.kind = cat == Category::kCpuOp            ? model::RangeKind::kCpuOp
               : cat == Category::kUserAnnotation ? model::RangeKind::kUserAnnotation
               : cat == Category::kPythonFunction ? model::RangeKind::kPythonFunction
                                                  : model::RangeKind::kOverhead;
      out.ranges.push_back(r);
      break;
    }
  }
  ++out.kept[ci];
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

void ThreadOut::ClearChunk() {
  kernels.clear();
  memcpys.clear();
  memsets.clear();
  api_calls.clear();
  api_offsets.clear();
  syncs.clear();
  ranges.clear();
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
  for (auto& n : ignored) n = 0;
  unknown_categories.clear();
  unknown_args.clear();
  notes.clear();
}

void EmitEvent(const RawEvent& ev, int64_t offset, ThreadOut& out) {
  ++out.events_read;
  for (const std::string& k : ev.unknown_args) ++out.unknown_args[k];
  if (ev.repaired > 0) out.notes["strings with invalid UTF-8 (replaced by U+FFFD)"] += ev.repaired;
  if (ev.bad) return Skip(out, offset, ev.bad);
  if (ev.ph.size() != 1) return Skip(out, offset, ev.ph.empty() ? "missing ph" : "unsupported ph");
  switch (ev.ph[0]) {
    case 'X': return EmitComplete(ev, offset, out);
    case 'M': return EmitMeta(ev, offset, out);
    case 's':
    case 'f':
    case 't':
      if (ev.cat != "ac2g") {
        ++out.unknown_categories[ev.cat.empty() ? std::string("<none>") : std::string(ev.cat)];
        return;
      }
      ++out.ignored[ThreadOut::kIgnoredFlow];
      if (ev.id_slot == Slot::kInt)
        out.flow_ids.push_back(ev.id);
      else
        ++out.notes["ac2g flow without integer id"];
      return;
    case 'i':
    case 'I': ++out.ignored[ThreadOut::kIgnoredInstant]; return;
    default: return Skip(out, offset, "unsupported ph");
  }
}

}  // namespace overlapscope::import
