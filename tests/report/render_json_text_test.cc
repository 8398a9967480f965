// JSON written as text (render_json_text.h) is byte for byte what nlohmann's dump(2) writes for
// the same tree: escapes, UTF-8 kept, invalid UTF-8 replaced, integers at their limits, nulls,
// an empty object; and a report whose findings span several waves of rendered runs is the same
// document at 1 and 3 threads, and the same as its own dump(2) once parsed back.
#include "report/render_json_text.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "report/render.h"
#include "report/render_json_deferred.h"

namespace overlapscope::report {
namespace {

using ojson = nlohmann::ordered_json;

const std::vector<std::string> kStrings = {
    "",
    "plain ascii 0123 ~ { } [ ] : ,",
    "quote \" and backslash \\",
    "newline\n tab\t return\r backspace\b formfeed\f",
    std::string("nul \0 and \x01 \x1f", 17),
    "delete \x7f stays",
    "micro \xc2\xb5s, arrow \xe2\x86\x92, emoji \xf0\x9f\x98\x80",
    "invalid \xff\xfe and cut \xe2\x86",
    "overlong \xc0\x80 \xe0\x80\x80 \xf0\x80\x80\x80",
    "surrogate \xed\xa0\x80, last of the BMP \xed\x9f\xbf \xef\xbf\xbf",
    "above U+10FFFF \xf4\x90\x80\x80 \xf5\x80\x80\x80, U+10FFFF \xf4\x8f\xbf\xbf",
    "lone continuation \x80 and lead \xc3",
    "cut at the end \xf0\x9f\x98",
    "\xc3\xa9 first and last \xc3\xa9",
};

std::string Dumped(const std::string& s) { return ojson(s).dump(-1, ' ', false, ojson::error_handler_t::replace); }

TEST(RenderJsonText, StringsAsDumpWritesThem) {
  for (const std::string& s : kStrings) {
    std::string out;
    AppendJsonString(s, &out);
    EXPECT_EQ(out, Dumped(s)) << s;
  }
}

// Strings are tested 16, then 8 bytes at a time: a byte to escape or to check at any place of
// either.
TEST(RenderJsonText, EveryPlaceOfAWord) {
  const std::vector<std::string> odd = {
      "\"",   "\\",   "\n",       "\x1f",         std::string(1, '\0'), "\x7f", " ", "~",
      "\x80", "\xff", "\xc2\xb5", "\xe2\x86\x92", "\xf0\x9f\x98\x80",   "\xc3"};
  for (const std::string& c : odd)
    for (size_t at = 0; at <= 40; ++at) {
      const std::string s = std::string(at, 'a') + c + std::string(40 - at, 'z');
      std::string out;
      AppendJsonString(s, &out);
      EXPECT_EQ(out, Dumped(s)) << at;
    }
}

TEST(RenderJsonText, ObjectAsElementWritesIt) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (size_t indent : {0, 2, 4, 6}) {
    for (const std::string& s : kStrings) {
      std::string text;
      ObjectText(indent, &text)
          .Str("kind", s)
          .Int("min", kMin)
          .Int("max", kMax)
          .Int("zero", 0)
          .OptInt("absent", std::nullopt)
          .OptInt("negative", -42)
          .Str("key \"quoted\"", "v")
          .Close();
      ojson e;
      e["kind"] = s;
      e["min"] = kMin;
      e["max"] = kMax;
      e["zero"] = 0;
      e["absent"] = nullptr;
      e["negative"] = -42;
      e["key \"quoted\""] = "v";
      EXPECT_EQ(text, Element(e, indent)) << indent << " " << s;
    }
    std::string empty;
    ObjectText(indent, &empty).Close();
    EXPECT_EQ(empty, Element(ojson::object(), indent));
  }
}

TEST(RenderJsonText, ManyFindingsSameDocumentAtEveryThreadCount) {
  Report r;
  RankReport rk;
  rk.label = "rank0";
  // 256 elements a run, 4 runs a thread a wave: 5,000 findings are several waves at 1 and 3.
  for (int64_t i = 0; i < 5000; ++i) {
    Finding f;
    f.kind = "collective-starved-of-sms";
    f.time_ns = i * 1000 - 7;
    f.end_ns = i * 1000 + 500;
    if (i % 3 == 0) f.thread = i;
    if (i % 2 == 0) f.stream = 7;
    f.call = kStrings[static_cast<size_t>(i) % kStrings.size()];
    if (i % 5 != 0) f.iteration = i / 100;
    f.cost_ns = i;
    f.message = "waited " + std::to_string(i) + " \xc2\xb5s \"for SMs\"";
    f.advice = i % 7 == 0 ? std::string("bad \xff byte") : std::string("advice");
    rk.findings.items.push_back(f);
  }
  r.ranks.push_back(rk);
  r.ranks.push_back(RankReport{});  // no findings: "items": []
  const std::string one = RenderJson(r, 1);
  EXPECT_EQ(RenderJson(r, 3), one);
  const ojson doc = ojson::parse(one);
  EXPECT_EQ(doc.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n", one);
  ASSERT_EQ(doc["ranks"][0]["findings"]["items"].size(), 5000u);
  EXPECT_EQ(doc["ranks"][0]["findings"]["items"][4999]["cost_ns"].get<int64_t>(), 4999);
  EXPECT_TRUE(doc["ranks"][0]["findings"]["items"][1]["thread"].is_null());
  EXPECT_EQ(doc["ranks"][0]["findings"]["items"][7]["advice"].get<std::string>(), "bad \xef\xbf\xbd byte");
  EXPECT_TRUE(doc["ranks"][1]["findings"]["items"].empty());
  // One rank's element alone (the per-rank reduction's path) is the same text as in the document.
  const std::string element = RankElementJson(r.ranks[0]);
  EXPECT_NE(one.find(element), std::string::npos);
}

}  // namespace
}  // namespace overlapscope::report
