// JSON text written straight into a string (render_json_text.h).
#include "report/render_json_text.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/json_bytes.h"
#include "nlohmann/json.hpp"

namespace overlapscope::report {

namespace {

// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong form, no surrogate,
// nothing above U+10FFFF) that starts at s[i] with a byte >= 0x80; 0 when it is not one.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto at = [&s](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const auto cont = [](unsigned c, unsigned lo = 0x80, unsigned hi = 0xbf) { return c >= lo && c <= hi; };
  const unsigned c = at(i);
  if (c >= 0xc2 && c <= 0xdf) return cont(at(i + 1)) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return cont(at(i + 1), lo, hi) && cont(at(i + 2)) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return cont(at(i + 1), lo, hi) && cont(at(i + 2)) && cont(at(i + 3)) ? 4 : 0;
  }
  return 0;
}

// Whether the 8 bytes at p are all printable ASCII other than '"' and '\\' (what most of a
// message is), tested at once: a byte below 0x20, at or above 0x80, or equal to either sets its
// high bit in the mask.
bool PlainAscii8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  const auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t low = (w - kOnes * 0x20) & ~w;  // high bit where a byte < 0x20 (bytes < 0x80)
  return ((low | w | zero_byte(w ^ (kOnes * '"')) | zero_byte(w ^ (kOnes * '\\'))) & kHigh) == 0;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  // dump() copies printable ASCII but '"' and '\\' (0x7f included) and well-formed UTF-8
  // unchanged; anything else (escapes, invalid bytes) is left to it.
  bool plain = true;
  for (size_t i = 0; i < s.size() && plain;) {
    if (i + 16 <= s.size() && base::JsonStringSpecialMask16(s.data() + i) == 0) {  // 16 at once
      i += 16;
      continue;
    }
    if (i + 8 <= s.size() && PlainAscii8(s.data() + i)) {
      i += 8;
      continue;
    }
    const auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x80) {
      const size_t n = Utf8Length(s, i);
      plain = n > 0;
      i += n;
    } else {
      plain = u >= 0x20 && u != '"' && u != '\\';
      ++i;
    }
  }
  if (plain) {
    out->push_back('"');
    out->append(s);
    out->push_back('"');
    return;
  }
  out->append(
      nlohmann::ordered_json(std::string(s)).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

ObjectText::ObjectText(size_t indent, std::string* out) : out_(out), pad_(indent + 2) {
  out_->append(pad_, ' ');
  out_->push_back('{');
}

void ObjectText::Key(std::string_view key) {
  out_->append(first_ ? "\n" : ",\n");
  first_ = false;
  out_->append(pad_ + 2, ' ');
  AppendJsonString(key, out_);
  out_->append(": ");
}

ObjectText& ObjectText::Str(std::string_view key, std::string_view v) {
  Key(key);
  AppendJsonString(v, out_);
  return *this;
}

ObjectText& ObjectText::Int(std::string_view key, int64_t v) {
  Key(key);
  absl::StrAppend(out_, v);
  return *this;
}

ObjectText& ObjectText::OptInt(std::string_view key, const std::optional<int64_t>& v) {
  Key(key);
  if (v) {
    absl::StrAppend(out_, *v);
  } else {
    out_->append("null");
  }
  return *this;
}

ObjectText::ObjectText(Nested, size_t pad, std::string* out) : out_(out), pad_(pad) { out_->push_back('{'); }

ObjectText& ObjectText::Bool(std::string_view key, bool v) {
  Key(key);
  out_->append(v ? "true" : "false");
  return *this;
}

ObjectText& ObjectText::OptDouble(std::string_view key, const std::optional<double>& v) {
  Key(key);
  if (v) {
    out_->append(nlohmann::ordered_json(*v).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  } else {
    out_->append("null");
  }
  return *this;
}

ObjectText ObjectText::Object(std::string_view key) {
  Key(key);
  return ObjectText(Nested{}, pad_ + 2, out_);
}

ArrayText ObjectText::Array(std::string_view key) {
  Key(key);
  return ArrayText(pad_ + 2, out_);
}

ArrayText::ArrayText(size_t indent, std::string* out) : out_(out), indent_(indent) { out_->push_back('['); }

ObjectText ArrayText::Object() {
  out_->append(first_ ? "\n" : ",\n");
  first_ = false;
  return ObjectText(indent_, out_);
}

void ArrayText::Close() {
  if (first_) {
    out_->push_back(']');
    return;
  }
  out_->push_back('\n');
  out_->append(indent_, ' ');
  out_->push_back(']');
}

void ObjectText::Close() {
  if (first_) {
    out_->push_back('}');
    return;
  }
  out_->push_back('\n');
  out_->append(pad_, ' ');
  out_->push_back('}');
}

}  // namespace overlapscope::report
