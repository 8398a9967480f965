// Parsing of one event object into a RawEvent. Emitting it into model structs is in
// event_emit.cc.
#include "importers/kineto/event_parser.h"

#include <cstring>

namespace overlapscope::import {

using scan::NumKind;
using scan::Scan;

namespace {

constexpr uint32_t Bit(ArgKey k) { return 1u << static_cast<int>(k); }

// A structural mismatch: the window ended (refill and retry) or the JSON is malformed.
Scan Expect(const char* q, const char* end, const char* what, const char** err_pos, const char** err) {
  if (q >= end) return Scan::kNeedMore;
  *err_pos = q;
  *err = what;
  return Scan::kError;
}

// Propagates kNeedMore/kError of a sub-parse, recording where an error happened.
#define OS_SCAN(expr, at)                      \
  do {                                         \
    Scan s_ = (expr);                          \
    if (s_ != Scan::kOk) {                     \
      if (s_ == Scan::kError) *err_pos = (at); \
      return s_;                               \
    }                                          \
  } while (0)

int ScratchSlot(ArgKey k) {
  switch (k) {
    case ArgKey::kCollectiveName: return 4;
    case ArgKey::kDtype: return 5;
    case ArgKey::kPgName: return 6;
    case ArgKey::kName: return 7;
    case ArgKey::kLabels: return 8;
    default: return 9;
  }
}

bool IsStringArg(ArgKey k) {
  return k == ArgKey::kCollectiveName || k == ArgKey::kDtype || k == ArgKey::kPgName || k == ArgKey::kName ||
         k == ArgKey::kLabels;
}

// "[24, 1, 1]" -> Dim3. Anything else is a type problem (the value is skipped by the caller).
Scan ParseDim3(const char* p, const char* end, const char** after, model::Dim3* d, bool* ok, const char** err) {
  *ok = false;
  if (*p != '[') return Scan::kOk;
  const char* q = scan::SkipWs(p + 1);
  int32_t v[3] = {1, 1, 1};
  int n = 0;
  if (*q != ']') {
    for (;;) {
      int64_t x;
      NumKind kind;
      Scan s = scan::ParseInt(q, end, &q, &x, &kind, err);
      if (s != Scan::kOk) return s;
      if (kind != NumKind::kOk || n >= 3 || x < 0 || x > INT32_MAX) return Scan::kOk;
      v[n++] = static_cast<int32_t>(x);
      q = scan::SkipWs(q);
      if (*q == ',') {
        q = scan::SkipWs(q + 1);
        continue;
      }
      if (*q == ']') break;
      if (q >= end) return Scan::kNeedMore;
      return Scan::kOk;  // malformed: the caller's SkipValue reports it
    }
  }
  *after = q + 1;
  *d = model::Dim3{v[0], v[1], v[2]};
  *ok = true;
  return Scan::kOk;
}

// The kind of args memory for an event of category text cat (read before its args in every
// Kineto version; empty when not): a hash, so kinds may share a slot and only match less often.
inline int ArgKind(std::string_view cat) {
  if (cat.empty()) return 0;
  // Chosen so that Kineto's categories with args (kernel, cuda_runtime, cuda_driver, cpu_op,
  // gpu_memcpy, gpu_memset, user_annotation, gpu_user_annotation, python_function, cuda_sync,
  // Trace) each get a kind of their own, none of them 0 (no cat).
  const size_t n = cat.size();
  const auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(cat[i])); };
  return static_cast<int>((n + byte(n - 1) + 6 * byte(0) + 15 * byte(n / 2)) & (RawEvent::kArgKinds - 1));
}

// The scan from the '{' (first) or the end of an arg's value to the next value: whitespace,
// ',' (or '}', which ends the args: *closed, *after past it), the key (*k; its text in *key),
// ':', whitespace. kOk with *v at the value.
Scan ScanToArgValue(const char* q, const char* end, bool first, RawEvent* ev, ArgKey* k, std::string_view* key,
                    const char** v, bool* closed, const char** after, const char** err_pos, const char** err) {
  q = scan::SkipWs(q);
  if (*q == '}') {
    *closed = true;
    *after = q + 1;
    return Scan::kOk;
  }
  if (!first) {
    if (*q != ',') return Expect(q, end, "expected ',' or '}' in args", err_pos, err);
    q = scan::SkipWs(q + 1);
  }
  if (*q != '"') return Expect(q, end, "expected a key string in args", err_pos, err);
  if (!QuickArgKey(q, k, &q)) {
    const char* key_at = q;
    OS_SCAN(scan::ParseString(q, end, &q, &ev->scratch[0], key, &ev->repaired, err), key_at);
    *k = ClassifyArgKey(*key);
  }
  q = scan::SkipWs(q);
  if (*q != ':') return Expect(q, end, "expected ':' in args", err_pos, err);
  *v = scan::SkipWs(q + 1);
  return Scan::kOk;
}

// A "stream" arg's value at v (*after past it): an int, "stream 7", or a HIP stream handle
// "0x55d0..." (ROCm 2021-22): a handle is not the stream number of the GPU row, which the tid
// gives (stream_is_handle). *typed_ok false for a value of another type; *consumed where the
// value (a string) was recorded here, has or bad_has included.
Scan ParseStreamArg(const char* v, const char* end, const char** after, RawEvent* ev, bool* typed_ok, bool* consumed,
                    const char** err) {
  constexpr ArgKey k = ArgKey::kStream;
  if (*v == '"') {
    std::string_view sv;
    if (Scan s = scan::ParseString(v, end, after, &ev->scratch[9], &sv, &ev->repaired, err); s != Scan::kOk) return s;
    int64_t x;
    *typed_ok = ParseIdString(sv, &x);
    if (*typed_ok) {
      ev->arg_int[static_cast<size_t>(k)] = x;
      ev->stream_is_handle = sv.size() > 2 && sv[0] == '0' && (sv[1] == 'x' || sv[1] == 'X');
      ev->has |= Bit(k);
    } else {
      ev->bad_has |= Bit(k);
    }
    *consumed = true;  // the string is parsed: nothing to skip
    return Scan::kOk;
  }
  NumKind kind;
  if (Scan s = scan::ParseInt(v, end, after, &ev->arg_int[static_cast<size_t>(k)], &kind, err); s != Scan::kOk)
    return s;
  *typed_ok = kind == NumKind::kOk;
  if (*typed_ok && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) ev->stream_is_handle = true;
  return Scan::kOk;
}

// From q (the '{' when i is 0, else the end of arg i - 1's value) to arg i's value (*v) and its
// key (*k; its text in *key where it was scanned): by the separator kept for position i (seps,
// the event kind's memory) where the bytes match it, else by ScanToArgValue, whose separator is
// then kept. *closed (with *after past the '}') where the args end instead.
inline Scan ToArgValue(const char* q, const char* end, int i,
                       RawEvent::ArgSeparator (&seps)[RawEvent::kArgSlots][RawEvent::kArgWays], RawEvent* ev, ArgKey* k,
                       std::string_view* key, const char** v, bool* closed, const char** after, const char** err_pos,
                       const char** err) {
  RawEvent::ArgSeparator* ways = i < RawEvent::kArgSlots ? seps[i] : nullptr;
  if (ways != nullptr && ways[0].Matches(q)) {
    *k = ways[0].key;
    *v = q + ways[0].len;
    return Scan::kOk;
  }
  if (ways != nullptr && ways[1].Matches(q)) {
    *k = ways[1].key;
    *v = q + ways[1].len;
    return Scan::kOk;
  }
  const Scan s = ScanToArgValue(q, end, i == 0, ev, k, key, v, closed, after, err_pos, err);
  if (s != Scan::kOk || *closed) return s;
  if (ways != nullptr && *k != ArgKey::kUnknown && *v - q <= static_cast<ptrdiff_t>(sizeof ways[0].bytes)) {
    ways[1] = ways[0];  // the newest first, the one before it kept
    ways[0].Keep(q, static_cast<size_t>(*v - q), *k);
  }
  return Scan::kOk;
}

Scan ParseArgs(const char* p, const char* end, const char** after, RawEvent* ev, const char** err_pos,
               const char** err) {
  auto& seps = ev->arg_separators[ArgKind(ev->cat)];
  const char* q = p + 1;
  for (int i = 0;; ++i) {
    // From the '{' or the end of the previous value: the separator, the key, ':', to the value.
    std::string_view key;
    ArgKey k;
    const char* v;
    bool closed = false;
    const Scan s = ToArgValue(q, end, i, seps, ev, &k, &key, &v, &closed, after, err_pos, err);
    if (s != Scan::kOk || closed) return s;
    q = v;
    bool typed_ok = true, consumed = false;
    if (scan::IsNonJsonToken(v)) ++ev->non_json;  // N/A, inf, nan, 0x... of old Kineto versions
    switch (k) {
      case ArgKey::kIgnored: break;
      case ArgKey::kStream: OS_SCAN(ParseStreamArg(v, end, &q, ev, &typed_ok, &consumed, err), v); break;
      case ArgKey::kUnknown: ev->unknown_args.emplace_back(key.substr(0, 256)); break;
      case ArgKey::kInputDims:
        // The value's JSON text (nested arrays of ints), read by EmitEvent only for a matrix
        // product op: skipped here as any value, its bytes kept in view (the window holds them
        // until the event is emitted).
        OS_SCAN(scan::SkipValue(v, end, &q, err), v);
        ev->arg_str[static_cast<size_t>(k)] = std::string_view(v, static_cast<size_t>(q - v));
        break;
      case ArgKey::kGrid:
      case ArgKey::kBlock: {
        OS_SCAN(ParseDim3(v, end, &q, k == ArgKey::kGrid ? &ev->grid : &ev->block, &typed_ok, err), v);
        break;
      }
      default:
        if (IsStringArg(k)) {
          if (*v == '"') {
            OS_SCAN(scan::ParseString(v, end, &q, &ev->scratch[ScratchSlot(k)], &ev->arg_str[static_cast<size_t>(k)],
                                      &ev->repaired, err),
                    v);
          } else {
            typed_ok = false;
          }
        } else {
          NumKind kind;
          OS_SCAN(scan::ParseInt(v, end, &q, &ev->arg_int[static_cast<size_t>(k)], &kind, err), v);
          typed_ok = kind == NumKind::kOk;
        }
    }
    if (consumed) {
      // stream string, handled above
    } else if (k == ArgKey::kIgnored || k == ArgKey::kUnknown || !typed_ok) {
      // Most skipped args are plain numbers ("queued", "registers per thread", "cbid", ...).
      if (!scan::SkipPlainNumber(v, &q)) OS_SCAN(scan::SkipValue(v, end, &q, err), v);
      if (!typed_ok) ev->bad_has |= Bit(k);
    } else {
      ev->has |= Bit(k);
    }
  }
}

// pid / tid / id: an integer or a string (Kineto writes "Spans", "Traces", "" for its own rows).
[[gnu::always_inline]] inline Scan ParseSlot(const char* v, const char* end, const char** after, Slot* slot, int64_t* x,
                                             RawEvent* ev, const char** err_pos, const char** err) {
  if (*v == '"') {
    std::string_view s;
    OS_SCAN(scan::ParseString(v, end, after, &ev->scratch[9], &s, &ev->repaired, err), v);
    // Old Kineto versions quote ids: "4242", "stream 7", "stream 7 user" (ParseIdString).
    *slot = ParseIdString(s, x) ? Slot::kInt : Slot::kString;
    return Scan::kOk;
  }
  NumKind kind;
  OS_SCAN(scan::ParseInt(v, end, after, x, &kind, err), v);
  if (kind == NumKind::kOk) {
    *slot = Slot::kInt;
    return Scan::kOk;
  }
  *slot = Slot::kOther;
  if (kind == NumKind::kNotNumber) OS_SCAN(scan::SkipValue(v, end, after, err), v);
  return Scan::kOk;
}

[[gnu::always_inline]] inline Scan ParseTime(const char* v, const char* end, const char** after, int64_t* ns, bool* has,
                                             const char* name, RawEvent* ev, const char** err_pos, const char** err) {
  NumKind kind;
  OS_SCAN(scan::ParseMicrosAsNs(v, end, after, ns, &kind, err), v);
  switch (kind) {
    case NumKind::kOk: *has = true; return Scan::kOk;
    case NumKind::kNotNumber:
      OS_SCAN(scan::SkipValue(v, end, after, err), v);
      if (!ev->bad) ev->bad = name[0] == 't' ? "ts not a number" : "dur not a number";
      return Scan::kOk;
    case NumKind::kNonFinite:
      if (!ev->bad) ev->bad = name[0] == 't' ? "ts not finite" : "dur not finite";
      return Scan::kOk;
    case NumKind::kOutOfRange:
      if (!ev->bad) ev->bad = name[0] == 't' ? "ts beyond int64 ns" : "dur beyond int64 ns";
      return Scan::kOk;
  }
  return Scan::kOk;
}

// A one-character string written plainly ("X", "e"): what ph always is and bp usually. Tested
// by a branch, which predicts, where ParseString's vector search would put its result on the
// chain of loads from one key to the next.
inline bool OneCharString(const char* v) {
  const unsigned char c = static_cast<unsigned char>(v[1]);
  return v[0] == '"' && v[2] == '"' && c >= 0x20 && c < 0x80 && c != '\\' && c != '"';
}

Scan ParseStringField(const char* v, const char* end, const char** after, std::string_view* out, std::string* scratch,
                      const char* bad_reason, RawEvent* ev, const char** err_pos, const char** err) {
  if (*v == '"') {
    OS_SCAN(scan::ParseString(v, end, after, scratch, out, &ev->repaired, err), v);
    return Scan::kOk;
  }
  OS_SCAN(scan::SkipValue(v, end, after, err), v);
  if (!ev->bad) ev->bad = bad_reason;
  return Scan::kOk;
}

// The ph kinds whose events share a layout: the separators' memory is kept per kind.
int PhKind(std::string_view ph) {
  if (ph.size() != 1) return 0;
  return ph[0] == 'X' ? 1 : ph[0] == 's' ? 2 : ph[0] == 'f' ? 3 : 0;
}

// The scan from the end of a value (or from the '{' when first) to the next value: whitespace,
// ',' (or '}', which ends the event: *closed, *after past it), the key (*ek; its text in *key
// when not one of the keys every event has; *plain when read by QuickEventKey), ':', whitespace.
// kOk with *v at the value.
Scan ScanToValue(const char* q, const char* end, bool first, RawEvent* ev, EventKey* ek, std::string_view* key,
                 bool* plain, const char** v, bool* closed, const char** after, const char** err_pos,
                 const char** err) {
  q = scan::SkipWs(q);
  if (*q == '}') {
    *closed = true;
    *after = q + 1;
    return Scan::kOk;
  }
  if (!first) {
    if (*q != ',') return Expect(q, end, "expected ',' or '}' in event", err_pos, err);
    q = scan::SkipWs(q + 1);
  }
  if (*q != '"') return Expect(q, end, "expected a key string in event", err_pos, err);
  *plain = QuickEventKey(q, ek, &q);
  if (!*plain) {
    const char* key_at = q;
    OS_SCAN(scan::ParseString(q, end, &q, &ev->scratch[0], key, &ev->repaired, err), key_at);
    *ek = ClassifyEventKey(*key);
  }
  q = scan::SkipWs(q);
  if (*q != ':') return Expect(q, end, "expected ':' in event", err_pos, err);
  *v = scan::SkipWs(q + 1);
  return Scan::kOk;
}

}  // namespace

Scan ParseEvent(const char* p, const char* end, const char** after, RawEvent* ev, const char** err_pos,
                const char** err) {
  ev->Reset();
  constexpr int kOpen = RawEvent::kSepSlots - 1;  // the separator after '{'
  int kind = 0, slot = kOpen;
  const char* q = p + 1;
  for (;;) {
    // From the end of the previous value (or the '{'): the separator, the key, ':', to the value.
    std::string_view key;
    EventKey ek;
    const char* v;
    RawEvent::Separator& sep = ev->separators[kind][slot];
    if (sep.Matches(q)) {
      ek = sep.key;
      v = q + sep.len;
    } else {
      bool plain = false, closed = false;
      const Scan s = ScanToValue(q, end, slot == kOpen, ev, &ek, &key, &plain, &v, &closed, after, err_pos, err);
      if (s != Scan::kOk || closed) return s;
      if (plain &&
          v - q <= static_cast<ptrdiff_t>(sizeof sep.bytes)) {  // keep this separator for the next event of the kind
        sep.Keep(q, static_cast<size_t>(v - q), ek);
      }
    }
    switch (ek) {
      case EventKey::kPh:
        if (OneCharString(v)) {
          ev->ph = std::string_view(v + 1, 1);
          q = v + 3;
          break;
        }
        OS_SCAN(ParseStringField(v, end, &q, &ev->ph, &ev->scratch[1], "ph not a string", ev, err_pos, err), v);
        break;
      case EventKey::kCat:
        OS_SCAN(ParseStringField(v, end, &q, &ev->cat, &ev->scratch[2], "cat not a string", ev, err_pos, err), v);
        break;
      case EventKey::kName:
        OS_SCAN(ParseStringField(v, end, &q, &ev->name, &ev->scratch[3], "name not a string", ev, err_pos, err), v);
        break;
      case EventKey::kPid: OS_SCAN(ParseSlot(v, end, &q, &ev->pid_slot, &ev->pid, ev, err_pos, err), v); break;
      case EventKey::kTid: OS_SCAN(ParseSlot(v, end, &q, &ev->tid_slot, &ev->tid, ev, err_pos, err), v); break;
      case EventKey::kId: OS_SCAN(ParseSlot(v, end, &q, &ev->id_slot, &ev->id, ev, err_pos, err), v); break;
      case EventKey::kTs: OS_SCAN(ParseTime(v, end, &q, &ev->ts_ns, &ev->has_ts, "ts", ev, err_pos, err), v); break;
      case EventKey::kDur: OS_SCAN(ParseTime(v, end, &q, &ev->dur_ns, &ev->has_dur, "dur", ev, err_pos, err), v); break;
      case EventKey::kArgs:
        if (*v == '{') {
          OS_SCAN(ParseArgs(v, end, &q, ev, err_pos, err), v);
        } else {
          OS_SCAN(scan::SkipValue(v, end, &q, err), v);
          if (!ev->bad) ev->bad = "args not an object";
        }
        break;
      case EventKey::kIgnored:
        if (OneCharString(v)) {
          q = v + 3;
          break;
        }
        OS_SCAN(scan::SkipValue(v, end, &q, err), v);
        break;
      case EventKey::kOther:
        ev->unknown_args.push_back("(event key) " + std::string(key.substr(0, 256)));
        OS_SCAN(scan::SkipValue(v, end, &q, err), v);
        break;
    }
    if (ek == EventKey::kPh) kind = PhKind(ev->ph);
    slot = static_cast<int>(ek);
  }
}

}  // namespace overlapscope::import
