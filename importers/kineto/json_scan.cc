#include "importers/kineto/json_scan.h"

namespace overlapscope::import::scan {
namespace {

// Checks what follows a scalar token: a delimiter is fine; '\0' at end means the token may go on
// in the next window; anything else is malformed.
Scan EndOfToken(const char* q, const char* end, const char** err, const char* what) {
  if (IsDelimiter(*q)) return Scan::kOk;
  if (q >= end) return Scan::kNeedMore;
  *err = what;
  return Scan::kError;
}

void AppendUtf8(std::string* s, uint32_t cp) {
  if (cp < 0x80) {
    s->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

constexpr uint32_t kReplacement = 0xFFFD;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads 4 hex digits after "\u" at p; -1 when malformed, -2 when the window ends first.
int32_t ReadHex4(const char* p, const char* end) {
  int32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    if (p + i >= end) return -2;
    int h = HexDigit(p[i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

// Decimal digits of a number token, enough for exact integer/ns conversion.
struct Digits {
  bool neg = false;
  char d[64];
  int n = 0;          // digits stored
  bool more = false;  // digits beyond the 64 stored (all after them are below the kept ones)
  int nint = 0;       // digits before the decimal point (including dropped ones)
  int64_t exp = 0;
  bool has_frac_or_exp = false;
};

Scan ReadDigits(const char* p, const char* end, const char** after, Digits* g, const char** err) {
  const char* q = p;
  if (*q == '-') {
    g->neg = true;
    ++q;
  }
  if (*q < '0' || *q > '9') {
    if (q >= end) return Scan::kNeedMore;
    *err = "invalid number";
    return Scan::kError;
  }
  bool leading = true;
  while (*q >= '0' && *q <= '9') {
    if (leading && *q == '0') {  // leading zeros carry no value
      ++q;
      continue;
    }
    leading = false;
    if (g->n < 64)
      g->d[g->n++] = *q;
    else
      g->more = true;
    ++g->nint;
    ++q;
  }
  if (*q == '.') {
    g->has_frac_or_exp = true;
    ++q;
    if (*q < '0' || *q > '9') {
      if (q >= end) return Scan::kNeedMore;
      *err = "invalid number";
      return Scan::kError;
    }
    while (*q >= '0' && *q <= '9') {
      if (leading && *q == '0') {
        --g->nint;  // 0.001: the point sits before implied zeros
      } else {
        leading = false;
        if (g->n < 64)
          g->d[g->n++] = *q;
        else
          g->more = true;
      }
      ++q;
    }
  }
  if (*q == 'e' || *q == 'E') {
    g->has_frac_or_exp = true;
    ++q;
    bool eneg = false;
    if (*q == '+' || *q == '-') eneg = *q++ == '-';
    if (*q < '0' || *q > '9') {
      if (q >= end) return Scan::kNeedMore;
      *err = "invalid number";
      return Scan::kError;
    }
    int64_t e = 0;
    while (*q >= '0' && *q <= '9') {
      if (e < 100000) e = e * 10 + (*q - '0');
      ++q;
    }
    g->exp = eneg ? -e : e;
  }
  *after = q;
  return EndOfToken(q, end, err, "invalid number");
}

// value * 10^shift as an int64, rounded half away from zero (or must be integral).
NumKind ToInt(const Digits& g, int shift, bool require_integral, int64_t* out) {
  int64_t point = g.nint + g.exp + shift;  // digits d[0..point) form the integer part
  if (g.n == 0) {
    *out = 0;
    return NumKind::kOk;
  }
  if (point > 19) return NumKind::kOutOfRange;  // >= 10^19 > INT64_MAX
  if (point > 64 && g.more) return NumKind::kOutOfRange;
  uint64_t v = 0;
  for (int64_t i = 0; i < point; ++i) {
    uint64_t digit = i < g.n ? static_cast<uint64_t>(g.d[i] - '0') : 0;
    if (__builtin_mul_overflow(v, uint64_t{10}, &v) || __builtin_add_overflow(v, digit, &v))
      return NumKind::kOutOfRange;
  }
  if (require_integral) {
    for (int64_t i = point < 0 ? 0 : point; i < g.n; ++i)
      if (g.d[i] != '0') return NumKind::kNotNumber;
    if (g.more) return NumKind::kNotNumber;
  } else if (point >= 0 && point < g.n && g.d[point] >= '5') {
    ++v;  // round half away from zero: the first dropped digit decides
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return NumKind::kOutOfRange;
  *out = g.neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return NumKind::kOk;
}

// Non-finite literals: NaN / Infinity / -Infinity as Python's json module writes them, and what
// old Kineto versions wrote for a bandwidth of a zero-length copy: N/A (PyTorch 1.8.1), inf /
// nan (fmt's spelling of a double, PyTorch 1.8.0). Consumed and reported non-finite.
bool ReadNonFinite(const char* p, const char* end, const char** after, Scan* s, const char** err) {
  static constexpr std::string_view kLits[] = {"NaN", "Infinity", "-Infinity", "N/A", "nan", "-nan", "inf", "-inf"};
  const bool letter =
      *p == 'N' || *p == 'I' || *p == 'n' || *p == 'i' || (*p == '-' && (p[1] == 'I' || p[1] == 'n' || p[1] == 'i'));
  if (!letter) return false;
  for (std::string_view lit : kLits) {
    const size_t avail = static_cast<size_t>(end - p);
    if (avail < lit.size()) {
      if (std::memcmp(p, lit.data(), avail) == 0) {
        *s = Scan::kNeedMore;
        return true;
      }
      continue;
    }
    if (std::memcmp(p, lit.data(), lit.size()) != 0) continue;
    *after = p + lit.size();
    *s = EndOfToken(*after, end, err, "invalid literal");
    if (*s == Scan::kOk || *s == Scan::kNeedMore) return true;
  }
  return false;  // not one of them (null, or malformed: the caller's checks report it)
}

// A "0x..." token (a pointer that roctracer-era Kineto wrote without quotes): its value when it
// fits 60 bits. *n is the token's length.
bool ReadHexToken(const char* p, const char* end, const char** after, uint64_t* v, bool* fits, Scan* s,
                  const char** err) {
  if (!(p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))) return false;
  const char* q = p + 2;
  uint64_t x = 0;
  int digits = 0;
  for (int h; (h = HexDigit(*q)) >= 0; ++q, ++digits) x = digits < 15 ? x * 16 + static_cast<uint64_t>(h) : x;
  *v = x;
  *fits = digits > 0 && digits <= 15;
  *after = q;
  *s = digits == 0 ? (q >= end ? Scan::kNeedMore : (*err = "invalid number", Scan::kError))
                   : EndOfToken(q, end, err, "invalid number");
  return true;
}

Scan ParseScaled(const char* p, const char* end, const char** after, int shift, bool require_integral, int64_t* v,
                 NumKind* kind, const char** err) {
  Scan s;
  if (ReadNonFinite(p, end, after, &s, err)) {
    *kind = NumKind::kNonFinite;
    return s;
  }
  uint64_t hex;
  bool fits;
  if (ReadHexToken(p, end, after, &hex, &fits, &s, err)) {
    // An integer arg (a stream handle) may be hex; a time (shift != 0) may not.
    *kind = shift != 0 ? NumKind::kNotNumber : fits ? NumKind::kOk : NumKind::kOutOfRange;
    if (*kind == NumKind::kOk) *v = static_cast<int64_t>(hex);
    return s;
  }
  if (*p != '-' && (*p < '0' || *p > '9')) {
    if (p >= end) return Scan::kNeedMore;
    *kind = NumKind::kNotNumber;  // another type: the caller skips it
    return Scan::kOk;
  }
  Digits g;
  s = ReadDigits(p, end, after, &g, err);
  if (s != Scan::kOk) return s;
  *kind = ToInt(g, shift, require_integral, v);
  return Scan::kOk;
}

}  // namespace

Scan ParseStringSlow(const char* s, const char* q, const char* end, const char** after, std::string* scratch,
                     std::string_view* out, int* repaired, const char** err) {
  scratch->assign(s, static_cast<size_t>(q - s));
  for (;;) {
    unsigned char c = static_cast<unsigned char>(*q);
    if (c == '"') {
      *out = *scratch;
      *after = q + 1;
      return Scan::kOk;
    }
    if (q >= end) return Scan::kNeedMore;
    if (c == '\\') {
      char e = q[1];
      if (q + 1 >= end) return Scan::kNeedMore;
      q += 2;
      switch (e) {
        case '"': scratch->push_back('"'); break;
        case '\\': scratch->push_back('\\'); break;
        case '/': scratch->push_back('/'); break;
        case 'b': scratch->push_back('\b'); break;
        case 'f': scratch->push_back('\f'); break;
        case 'n': scratch->push_back('\n'); break;
        case 'r': scratch->push_back('\r'); break;
        case 't': scratch->push_back('\t'); break;
        case 'u': {
          int32_t hi = ReadHex4(q, end);
          if (hi == -2) return Scan::kNeedMore;
          if (hi < 0) {
            *err = "invalid \\u escape in string";
            return Scan::kError;
          }
          q += 4;
          uint32_t cp = static_cast<uint32_t>(hi);
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            // A high surrogate needs a following \uDC00..\uDFFF; a lone one becomes U+FFFD.
            if (q + 1 >= end) return Scan::kNeedMore;
            int32_t lo = (q[0] == '\\' && q[1] == 'u') ? ReadHex4(q + 2, end) : -1;
            if (lo == -2) return Scan::kNeedMore;
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(lo) - 0xDC00);
              q += 6;
            } else {
              cp = kReplacement;
              ++*repaired;
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            cp = kReplacement;
            ++*repaired;
          }
          AppendUtf8(scratch, cp);
          break;
        }
        default: *err = "invalid escape in string"; return Scan::kError;
      }
      continue;
    }
    if (c >= 0x80) {
      int n = Utf8SequenceLength(reinterpret_cast<const unsigned char*>(q));
      if (n > 0 && q + n <= end) {
        scratch->append(q, static_cast<size_t>(n));
        q += n;
      } else {
        if (n > 0) return Scan::kNeedMore;  // a valid prefix cut by the window end
        AppendUtf8(scratch, kReplacement);
        ++*repaired;
        ++q;
      }
      continue;
    }
    scratch->push_back(static_cast<char>(c));
    ++q;
  }
}

Scan SkipValue(const char* p, const char* end, const char** after, const char** err) {
  char c = *p;
  if (c == '"') return SkipString(p, end, after);
  if (c == '{' || c == '[') return SkipContainer(p, end, after);
  if (c == '0' && (p[1] == 'x' || p[1] == 'X')) {
    uint64_t hex;
    bool fits;
    Scan s;
    ReadHexToken(p, end, after, &hex, &fits, &s, err);
    return s;
  }
  if (c == 'N' || c == 'I' || c == 'n' || c == 'i' || (c == '-' && (p[1] == 'I' || p[1] == 'n' || p[1] == 'i'))) {
    Scan s;
    if (ReadNonFinite(p, end, after, &s, err)) return s;  // else null, or malformed (below)
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    // A skipped number is not converted: take its characters, then check what follows.
    const char* q = p + 1;
    while ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-') ++q;
    *after = q;
    return EndOfToken(q, end, err, "invalid number");
  }
  static constexpr std::string_view kLits[] = {"true", "false", "null"};
  for (std::string_view lit : kLits) {
    if (c != lit[0]) continue;
    if (p + lit.size() > end) return Scan::kNeedMore;
    if (std::memcmp(p, lit.data(), lit.size()) != 0) break;
    *after = p + lit.size();
    return EndOfToken(*after, end, err, "invalid literal");
  }
  if (p >= end) return Scan::kNeedMore;
  *err = "unexpected character";
  return Scan::kError;
}

Scan ParseIntSlow(const char* p, const char* end, const char** after, int64_t* v, NumKind* kind, const char** err) {
  return ParseScaled(p, end, after, 0, true, v, kind, err);
}

Scan ParseMicrosAsNsSlow(const char* p, const char* end, const char** after, int64_t* ns, NumKind* kind,
                         const char** err) {
  return ParseScaled(p, end, after, 3, false, ns, kind, err);
}

}  // namespace overlapscope::import::scan
