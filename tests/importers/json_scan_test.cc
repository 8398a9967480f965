// The scanner primitives: exact decimal -> ns conversion, integers, strings, skipping.
#include "importers/kineto/json_scan.h"

#include <random>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "importers/kineto/kineto_keys.h"

namespace overlapscope::import::scan {
namespace {

// Holds text with the scanner's '\0' sentinel and padding after it.
struct Buf {
  explicit Buf(std::string t) : text(std::move(t)), data(text + std::string(kPad, '\0')) {}
  const char* begin() const { return data.data(); }
  const char* end() const { return data.data() + text.size(); }
  std::string text, data;
};

struct NsResult {
  Scan scan;
  NumKind kind;
  int64_t ns;
};

// The token followed by ',' (a number at the very end of the window could go on).
NsResult Ns(const std::string& token) {
  Buf b(token + ",");
  const char* after = nullptr;
  const char* err = nullptr;
  NsResult r{Scan::kError, NumKind::kNotNumber, -777};
  r.scan = ParseMicrosAsNs(b.begin(), b.end(), &after, &r.ns, &r.kind, &err);
  if (r.scan == Scan::kOk && r.kind != NumKind::kNotNumber) {
    EXPECT_EQ(*after, ',') << token;
  }
  return r;
}

int64_t NsOk(const std::string& token) {
  NsResult r = Ns(token);
  EXPECT_EQ(r.scan, Scan::kOk) << token;
  EXPECT_EQ(r.kind, NumKind::kOk) << token;
  return r.ns;
}

TEST(JsonScan, MicrosToNanosIsExactDecimal) {
  EXPECT_EQ(NsOk("4430921397268.557"), 4430921397268557);  // 13 int digits, 3 fraction digits
  EXPECT_EQ(NsOk("302.515"), 302515);
  EXPECT_EQ(NsOk("0.696"), 696);
  EXPECT_EQ(NsOk("12"), 12000);
  EXPECT_EQ(NsOk("12.5"), 12500);
  EXPECT_EQ(NsOk("0"), 0);
  EXPECT_EQ(NsOk("4430921397090.330"), 4430921397090330);
  // Beyond the ns digit: round half away from zero on the first dropped digit.
  EXPECT_EQ(NsOk("1.2345"), 1235);     // 1234.5 ns -> 1235
  EXPECT_EQ(NsOk("1.2344999"), 1234);  // 1234.4999 ns -> 1234
  EXPECT_EQ(NsOk("-1.2345"), -1235);   // away from zero
  EXPECT_EQ(NsOk("0.0005"), 1);        // 0.5 ns -> 1
  EXPECT_EQ(NsOk("0.0004999"), 0);
  EXPECT_EQ(NsOk("4430921397268.5575"), 4430921397268558);
  // Exponents shift the decimal point exactly.
  EXPECT_EQ(NsOk("1e3"), 1000000);
  EXPECT_EQ(NsOk("1.5E-3"), 2);  // 1.5 ns -> 2
  EXPECT_EQ(NsOk("4.430921397268557e12"), 4430921397268557);
  EXPECT_EQ(NsOk("0.000001e6"), 1000);  // 1 us
  // int64 limits: INT64_MAX ns = 9223372036854775.807 us.
  EXPECT_EQ(NsOk("9223372036854775.807"), INT64_MAX);
  EXPECT_EQ(Ns("9223372036854775.808").kind, NumKind::kOutOfRange);
  EXPECT_EQ(Ns("1e300").kind, NumKind::kOutOfRange);
  EXPECT_EQ(Ns("99999999999999999999").kind, NumKind::kOutOfRange);
  // Not finite (Python's json writes these) and not numbers.
  EXPECT_EQ(Ns("NaN").kind, NumKind::kNonFinite);
  EXPECT_EQ(Ns("Infinity").kind, NumKind::kNonFinite);
  EXPECT_EQ(Ns("-Infinity").kind, NumKind::kNonFinite);
  EXPECT_EQ(Ns("\"5\"").kind, NumKind::kNotNumber);
  EXPECT_EQ(Ns("null").kind, NumKind::kNotNumber);
  // Malformed numbers are JSON errors.
  EXPECT_EQ(Ns("12.").scan, Scan::kError);
  EXPECT_EQ(Ns("1.2.3").scan, Scan::kError);
  EXPECT_EQ(Ns("-").scan, Scan::kError);
  EXPECT_EQ(Ns("1e").scan, Scan::kError);
}

TEST(JsonScan, NumberAtWindowEndNeedsMore) {
  Buf b("4430921397268.5");  // may continue in the next window
  const char* after;
  const char* err;
  int64_t v;
  NumKind k;
  EXPECT_EQ(ParseMicrosAsNs(b.begin(), b.end(), &after, &v, &k, &err), Scan::kNeedMore);
  Buf c("123");
  EXPECT_EQ(ParseInt(c.begin(), c.end(), &after, &v, &k, &err), Scan::kNeedMore);
}

// The fast paths of ParseInt and ParseMicrosAsNs (8 digits at a time) must give what the
// general ones give: every length of digit runs around the limits (15 and 18 digits, 1-3
// fraction digits), signs, dots, exponents and odd bytes after them, at the window's end too.
TEST(JsonScan, FastNumbersAsTheGeneralPath) {
  std::mt19937 rng(33);
  const std::string tails[] = {",", "}", "]", " ", "\n", "", "x", ".", ".5,", "e3,", "0x1,", "/", ":", "\x80"};
  int ok = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string t;
    if (rng() % 8 == 0) t += '-';
    const int digits = static_cast<int>(rng() % 22);
    for (int k = 0; k < digits; ++k) t += static_cast<char>('0' + rng() % 10);
    if (rng() % 2 == 0) {
      t += '.';
      const int frac = static_cast<int>(rng() % 6);
      for (int k = 0; k < frac; ++k) t += static_cast<char>('0' + rng() % 10);
    }
    t += tails[rng() % std::size(tails)];
    Buf b(t);
    const char *a1 = nullptr, *a2 = nullptr, *e1 = nullptr, *e2 = nullptr;
    int64_t v1 = -1, v2 = -1;
    NumKind k1 = NumKind::kOk, k2 = NumKind::kOk;
    Scan s1 = ParseInt(b.begin(), b.end(), &a1, &v1, &k1, &e1);
    Scan s2 = ParseIntSlow(b.begin(), b.end(), &a2, &v2, &k2, &e2);
    ASSERT_EQ(s1, s2) << t;
    if (s1 == Scan::kOk) {
      ASSERT_EQ(k1, k2) << t;
      if (k1 == NumKind::kOk) ASSERT_EQ(v1, v2) << t;
      if (k1 != NumKind::kNotNumber) ASSERT_EQ(a1, a2) << t;
    }
    v1 = v2 = -1;
    s1 = ParseMicrosAsNs(b.begin(), b.end(), &a1, &v1, &k1, &e1);
    s2 = ParseMicrosAsNsSlow(b.begin(), b.end(), &a2, &v2, &k2, &e2);
    ASSERT_EQ(s1, s2) << t;
    if (s1 == Scan::kOk) {
      ASSERT_EQ(k1, k2) << t;
      if (k1 == NumKind::kOk) ASSERT_EQ(v1, v2) << t;
      if (k1 != NumKind::kNotNumber) ASSERT_EQ(a1, a2) << t;
      ok += k1 == NumKind::kOk;
    }
  }
  EXPECT_GT(ok, 20000);
}

TEST(JsonScan, Integers) {
  auto parse = [](const std::string& t, int64_t* v) {
    Buf b(t + "}");
    const char *after, *err;
    NumKind k = NumKind::kNotNumber;
    EXPECT_EQ(ParseInt(b.begin(), b.end(), &after, v, &k, &err), Scan::kOk) << t;
    return k;
  };
  int64_t v = 0;
  EXPECT_EQ(parse("2990", &v), NumKind::kOk);
  EXPECT_EQ(v, 2990);
  EXPECT_EQ(parse("-1", &v), NumKind::kOk);
  EXPECT_EQ(v, -1);
  EXPECT_EQ(parse("9223372036854775807", &v), NumKind::kOk);
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_EQ(parse("9223372036854775808", &v), NumKind::kOutOfRange);
  EXPECT_EQ(parse("1e30", &v), NumKind::kOutOfRange);
  EXPECT_EQ(parse("7.0", &v), NumKind::kOk);  // integral
  EXPECT_EQ(v, 7);
  EXPECT_EQ(parse("1e3", &v), NumKind::kOk);
  EXPECT_EQ(v, 1000);
  EXPECT_EQ(parse("7.5", &v), NumKind::kNotNumber);
  EXPECT_EQ(parse("\"7\"", &v), NumKind::kNotNumber);
}

struct StrResult {
  Scan scan;
  std::string text;
  int repaired;
};

StrResult Str(const std::string& quoted) {
  Buf b(quoted + ",");
  const char *after = nullptr, *err = nullptr;
  std::string scratch;
  std::string_view out;
  StrResult r{Scan::kError, "", 0};
  r.scan = ParseString(b.begin(), b.end(), &after, &scratch, &out, &r.repaired, &err);
  if (r.scan == Scan::kOk) {
    r.text = std::string(out);
    EXPECT_EQ(*after, ',');
  }
  return r;
}

TEST(JsonScan, Strings) {
  EXPECT_EQ(Str("\"cudaLaunchKernel\"").text, "cudaLaunchKernel");
  EXPECT_EQ(Str("\"\"").text, "");
  EXPECT_EQ(Str("\"a\\\"b\\\\c\\/d\\n\"").text, "a\"b\\c/d\n");
  // \u escapes: U+00E9 is C3 A9; the pair D83D DE00 is U+1F600 = F0 9F 98 80.
  EXPECT_EQ(Str("\"\\u00e9\\ud83d\\ude00\"").text, "\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(Str("\"caf\xC3\xA9\"").text, "caf\xC3\xA9");  // valid UTF-8 passes unchanged
  EXPECT_EQ(Str("\"caf\xC3\xA9\"").repaired, 0);
  // Invalid UTF-8 and lone surrogates become U+FFFD (EF BF BD), counted.
  StrResult bad = Str("\"k\xFFz\xC3\"");
  EXPECT_EQ(bad.text, "k\xEF\xBF\xBDz\xEF\xBF\xBD");
  EXPECT_EQ(bad.repaired, 2);
  StrResult lone = Str("\"\\ud800x\"");
  EXPECT_EQ(lone.text, "\xEF\xBF\xBDx");
  EXPECT_EQ(lone.repaired, 1);
  EXPECT_EQ(Str("\"\\q\"").scan, Scan::kError);
  EXPECT_EQ(Str("\"\\u12G4\"").scan, Scan::kError);
  Buf cut("\"abc");
  const char *after, *err;
  std::string scratch;
  std::string_view out;
  int rep = 0;
  EXPECT_EQ(ParseString(cut.begin(), cut.end(), &after, &scratch, &out, &rep, &err), Scan::kNeedMore);
}

TEST(JsonScan, SkipValue) {
  auto skip = [](const std::string& v) {
    Buf b(v + ",x");
    const char *after = nullptr, *err = nullptr;
    Scan s = SkipValue(b.begin(), b.end(), &after, &err);
    return s == Scan::kOk ? static_cast<int>(after - b.begin()) : -1 - static_cast<int>(s);
  };
  std::string nested = "[{\"a\": \"]}\\\"\"}, [1, [2, {}]], \"x{\"]";
  EXPECT_EQ(skip(nested), static_cast<int>(nested.size()));
  EXPECT_EQ(skip("{}"), 2);
  EXPECT_EQ(skip("\"s\""), 3);
  EXPECT_EQ(skip("-12.5e3"), 7);
  EXPECT_EQ(skip("true"), 4);
  EXPECT_EQ(skip("null"), 4);
  EXPECT_EQ(skip("NaN"), 3);
  EXPECT_EQ(skip("nope"), -1 - static_cast<int>(Scan::kError));
  Buf open("[1, [2");
  const char *after, *err;
  EXPECT_EQ(SkipValue(open.begin(), open.end(), &after, &err), Scan::kNeedMore);
}

// A container skipped one byte at a time, the plain reading of SkipValue's contract: brackets
// counted outside strings, escapes skip a byte, a NUL before the end is content, the end needs
// more. Returns the status and the offset past the container.
std::pair<Scan, size_t> SkipContainerByBytes(const std::string& t) {
  size_t q = 0;
  int depth = 0;
  for (;;) {
    if (q >= t.size()) return {Scan::kNeedMore, 0};
    const char c = t[q];
    if (c == '"') {
      for (++q;; ++q) {
        if (q >= t.size()) return {Scan::kNeedMore, 0};
        if (t[q] == '"') break;
        if (t[q] == '\\') {
          if (++q >= t.size()) return {Scan::kNeedMore, 0};
        }
      }
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && --depth == 0) {
      return {Scan::kOk, q + 1};
    }
    ++q;
  }
}

TEST(JsonScan, SkipContainerAgreesWithAByteWalk) {
  // Nested arrays and objects of strings that cross 64-byte blocks, escaped quotes and
  // backslashes, raw NULs and bytes >= 0x80, cut at every place for the window's end.
  std::mt19937 rng(26);
  const char kFill[] = {'a', ' ', ',', '1', ':', '\x01', '\x80', '\xC3', '\0'};
  int ok = 0, more = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string t = "[";
    int depth = 1;
    while (depth > 0 && t.size() < 600) {
      switch (rng() % 8) {
        case 0: t += (rng() % 2) ? "[" : "{", ++depth; break;
        case 1: t += (rng() % 2) ? "]" : "}", --depth; break;
        case 2:
        case 3: {
          t += '"';
          for (int n = static_cast<int>(rng() % 90); n > 0; --n) {
            const unsigned r = round % 4 == 1 ? 15 : rng() % 16;  // some rounds without escapes
            if (r == 0)
              t += "\\\"";
            else if (r == 1)
              t += "\\\\";
            else if (r == 2)
              t += (rng() % 2) ? "[" : "}";
            else
              t += kFill[rng() % (round % 3 == 0 ? 9 : 6)];
          }
          t += '"';
          break;
        }
        default: t += kFill[rng() % (round % 5 == 0 ? 9 : 4)];
      }
    }
    const size_t cut = rng() % 4 == 0 ? rng() % (t.size() + 1) : t.size();
    const std::string text = t.substr(0, cut) + (cut == t.size() ? ",x" : "");
    if (text.empty() || text[0] != '[') continue;
    Buf b(text);
    const char *after = nullptr, *err = nullptr;
    const Scan s = SkipValue(b.begin(), b.end(), &after, &err);
    const auto [want, want_at] = SkipContainerByBytes(text);
    ASSERT_EQ(s, want) << round;
    if (s == Scan::kOk) {
      ASSERT_EQ(static_cast<size_t>(after - b.begin()), want_at) << round;
      ++ok;
    } else {
      ++more;
    }
  }
  EXPECT_GT(ok, 1000);
  EXPECT_GT(more, 300);
}

}  // namespace
}  // namespace overlapscope::import::scan

namespace overlapscope::import {
namespace {

TEST(QuickArgKey, GivesWhatClassifyArgKeyGives) {
  // The keys it reads by words, and near misses it must leave to ParseString + ClassifyArgKey.
  const std::string quick[] = {"External id", "correlation",       "cbid", "stream", "device", "context", "queued",
                               "Ev Idx",      "Record function id"};
  const std::string other[] = {"External ids",
                               "External i",
                               "correlation id",
                               "cbi",
                               "cbidx",
                               "streams",
                               "Device",
                               "contexts",
                               "Ev Id",
                               "Record function",
                               "Record function ids",
                               "external id",
                               "External\\u0020id",
                               ""};
  auto run = [](const std::string& key, bool want_quick) {
    const std::string text = "\"" + key + "\": 1," + std::string(scan::kPad, '\0');
    ArgKey k = ArgKey::kCount;
    const char* after = nullptr;
    const bool got = QuickArgKey(text.data(), &k, &after);
    EXPECT_EQ(got, want_quick) << key;
    if (got) {
      EXPECT_EQ(k, ClassifyArgKey(key)) << key;
      EXPECT_EQ(after, text.data() + key.size() + 2) << key;
    }
  };
  for (const std::string& key : quick) run(key, true);
  for (const std::string& key : other) run(key, false);
  // Cut by the window's end (the NUL sentinel) anywhere inside the key: never a match.
  const std::string key = "\"Record function id\"";
  for (size_t n = 1; n < key.size(); ++n) {
    const std::string text = key.substr(0, n) + std::string(scan::kPad, '\0');
    ArgKey k;
    const char* after;
    EXPECT_FALSE(QuickArgKey(text.data(), &k, &after)) << n;
  }
}

}  // namespace
}  // namespace overlapscope::import
