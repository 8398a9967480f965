// One Kineto trace event: parsing a JSON object into a RawEvent (no allocation on the common
// path), and turning it into model structs in a per-thread output buffer (ThreadOut).
//
// Each parser thread owns one ThreadOut. Names are interned into the thread's own StringTable
// and threads/streams get thread-local ids; the importer merges buffers into the TraceBuilder in
// file order and maps local ids to global ones there (kineto_file.cc). Local ids in the model
// structs of a ThreadOut: `name`/`op`/`dtype`/`communicator` are local string ids, `thread` is a
// local thread index, GPU `stream` a local stream index (its device comes with it), Sync.device
// the device ordinal, Kernel.collective a local collective index.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "importers/kineto/json_scan.h"
#include "importers/kineto/kineto_keys.h"
#include "model/events.h"
#include "model/import_stats.h"
#include "model/string_table.h"

namespace overlapscope::import {

// A separator the parser keeps (RawEvent's memories below): up to N bytes (a multiple of 16)
// from the end of a value, or the '{', to the start of the next value (`, "name": `), and the
// key they hold. The bytes kept hold no NUL and are whole (the scan found them), so a match
// never reaches past the window's end; the N bytes read at q stay inside its padding.
template <size_t N, typename Key>
struct KeptSeparator {
  static_assert(N % 16 == 0 && N < 64);
  char bytes[N] = {};
  uint64_t mask = 0;  // (1 << len) - 1; 0: nothing kept
  Key key{};
  uint8_t len = 0;

  // True when the bytes at q begin with the kept ones and no whitespace follows them (which the
  // scan would have skipped too).
  bool Matches(const char* q) const {
    uint64_t eq = 0;
    for (size_t i = 0; i < N / 16; ++i) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * i));
      const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 16 * i));
      eq |= uint64_t{static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, k)))} << (16 * i);
    }
    return (eq & mask) == mask && mask != 0 && !scan::IsWs(q[len]);
  }
  // Keeps the n (<= N) bytes at q, the separator of key k.
  void Keep(const char* q, size_t n, Key k) {
    std::memcpy(bytes, q, N);
    len = static_cast<uint8_t>(n);
    mask = (uint64_t{1} << n) - 1;
    key = k;
  }
};

// A value slot of pid/tid/id: absent, integer, string (e.g. "Spans"), or another type.
enum class Slot : uint8_t { kMissing, kInt, kString, kOther };

struct RawEvent {
  std::string_view ph, cat, name;
  bool has_ts = false, has_dur = false;
  int64_t ts_ns = 0, dur_ns = 0;  // relative to baseTimeNanoseconds
  Slot pid_slot = Slot::kMissing, tid_slot = Slot::kMissing, id_slot = Slot::kMissing;
  int64_t pid = 0, tid = 0, id = 0;
  uint32_t has = 0;      // bit (1 << ArgKey) set when that arg was present and well-typed
  uint32_t bad_has = 0;  // bit set when that arg was present with the wrong type / range
  int64_t arg_int[static_cast<size_t>(ArgKey::kCount)];
  std::string_view arg_str[static_cast<size_t>(ArgKey::kCount)];
  model::Dim3 grid, block;
  const char* bad = nullptr;      // first problem that makes the event unusable (a skip reason)
  int repaired = 0;               // strings with invalid UTF-8 replaced
  int non_json = 0;               // arg values that are not JSON (N/A, inf, nan, 0x...) of old Kineto versions
  bool stream_is_handle = false;  // args.stream was a HIP stream handle (0x...), not a stream number
  std::vector<std::string> unknown_args;
  std::string scratch[10];  // decoded strings that needed unescaping

  // ParseEvent's memory of separators, kept across the events of one parse (Reset leaves it):
  // the bytes from the end of a value to the start of the next one (`, "name": `), as last seen
  // after each key (or the '{') in events of each ph kind, with the key they hold. An event
  // whose bytes there are the same skips scanning them; the match is on the bytes themselves,
  // so the result is always the scan's. Only keys read plainly (QuickEventKey) are kept.
  using Separator = KeptSeparator<16, EventKey>;
  static constexpr int kPhKinds = 4;                                          // other, X, s, f
  static constexpr int kSepSlots = static_cast<int>(EventKey::kIgnored) + 2;  // each key, then '{'
  Separator separators[kPhKinds][kSepSlots];

  // ParseArgs' memory of the same kind: the bytes from the '{' or the end of an arg's value to
  // the start of the next value (`,      "registers per thread": `), the last two different
  // ones seen at each position of the args of events whose cat hashes to the same kind (a
  // kernel's args come in one order, a runtime call's in another), with the key they hold. Only
  // keys that classify to something other than kUnknown are kept (their bytes hold no NUL, so a
  // match never reaches past the window's end); the match is on the bytes, so the result is
  // always the scan's. The stack of a parse holds it (~48 KiB).
  using ArgSeparator = KeptSeparator<48, ArgKey>;
  static constexpr int kArgKinds = 16;  // hashes of cat
  static constexpr int kArgSlots = 24;  // the first args of an event
  static constexpr int kArgWays = 2;    // two per position: cpu_ops of two layouts alternate
  ArgSeparator arg_separators[kArgKinds][kArgSlots][kArgWays];

  bool Has(ArgKey k) const { return (has >> static_cast<int>(k)) & 1u; }
  int64_t Int(ArgKey k) const { return arg_int[static_cast<size_t>(k)]; }
  std::string_view Str(ArgKey k) const { return arg_str[static_cast<size_t>(k)]; }
  void Reset() {
    // One assignment each: a chained one stored the empty view, then loaded it back as one
    // 16-byte value before the two halves were written (a store-forwarding stall per event).
    ph = {};
    cat = {};
    name = {};
    has_ts = has_dur = false;
    pid_slot = tid_slot = id_slot = Slot::kMissing;
    has = bad_has = 0;
    bad = nullptr;
    repaired = 0;
    non_json = 0;
    stream_is_handle = false;
    unknown_args.clear();
  }
};

// Metadata ("ph":"M") the importer applies after the file is read.
struct MetaRecord {
  enum Type : uint8_t { kProcessName, kThreadName, kProcessLabels } type;
  bool pid_is_int = false, tid_is_int = false;
  int64_t pid = 0, tid = 0;
  std::string value;
};

struct SkipRecord {
  int64_t offset;
  model::Stat stat;
  const char* reason;  // a string literal: the detail and the example's text
};

struct ThreadOut {
  // Kept across chunks of one file.
  model::StringTable strings;
  absl::flat_hash_map<int64_t, int32_t> thread_index;
  std::vector<int64_t> thread_tids;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int32_t> stream_index;
  std::vector<std::pair<int32_t, int64_t>> stream_keys;  // (device ordinal, native stream)

  // Per chunk (cleared after each merge).
  std::vector<model::Kernel> kernels;
  std::vector<model::Memcpy> memcpys;
  std::vector<model::Memset> memsets;
  std::vector<model::ApiCall> api_calls;
  std::vector<int64_t> api_offsets;  // byte offset of each api call, for duplicate reports
  std::vector<model::Sync> syncs;
  std::vector<model::Range> ranges;
  std::vector<model::OpShape> op_shapes;  // record_shapes' matrix products (thread and op: local ids)
  std::vector<model::GpuRange> gpu_ranges;
  std::vector<model::Collective> collectives;
  std::vector<MetaRecord> metas;
  std::vector<SkipRecord> skips;
  std::vector<int64_t> flow_ids;
  int64_t events_read = 0;
  int64_t kept[static_cast<size_t>(Category::kCount)] = {};
  int64_t kept_meta = 0;
  int64_t first_cpu_pid = -1;
  bool has_cpu_pid = false;
  // Import statistics without detail (fixed slots: flows are ~40% of all events, so no
  // string-keyed map on that path), and those with a detail (a category, an arg key).
  int64_t stats[model::kStatCount] = {};
  absl::flat_hash_map<std::pair<model::Stat, std::string>, int64_t> stat_details;
  int64_t with_correlation = 0;  // runtime calls and GPU activities that carried "correlation"
  struct NameSlot {
    std::string_view text;  // inside `strings`; empty: unused
    model::StringId id = 0;
  };
  static constexpr size_t kNameSlots = 256;
  NameSlot name_slots[kNameSlots];

  void Count(model::Stat s, int64_t n = 1) { stats[static_cast<size_t>(s)] += n; }
  void Count(model::Stat s, std::string_view detail) {
    ++stats[static_cast<size_t>(s)];
    ++stat_details[{s, std::string(detail)}];
  }
  int32_t LocalThread(int64_t tid);
  int32_t LocalStream(int32_t device, int64_t stream);
  // strings.Intern(s) through a small direct-mapped memory of names already interned (kept
  // across chunks with `strings`; a slot views the table's own copy, which lives as long as the
  // table). A name is interned once, so a slot's id is what Intern would give: the ids, and the
  // order in which names first enter the table, are the same with or without the memory.
  model::StringId InternName(std::string_view s);
  void ClearChunk();
};

// Parses one event object; p points at its '{'. On kOk *after is just past the '}'. Type
// problems inside the event do not fail the parse: they set ev->bad (the event is skipped);
// only malformed JSON is kError (*err_pos, *err).
scan::Scan ParseEvent(const char* p, const char* end, const char** after, RawEvent* ev, const char** err_pos,
                      const char** err);

// Turns a parsed event into model structs in `out`, or counts why it is not kept.
void EmitEvent(const RawEvent& ev, int64_t offset, ThreadOut& out);

}  // namespace overlapscope::import
