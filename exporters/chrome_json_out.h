// JsonOut — the Chrome JSON writer's output buffer: appends JSON text (strings escaped, integers,
// ns as µs with exactly three decimals) and hands it to a ByteSink in ~1 MiB chunks between
// events. Not a general JSON writer: callers keep the structure well-formed.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "exporters/chrome_writer.h"
#include "model/events.h"

namespace overlapscope::exporters {

// Appends JSON text for one document; flushes to the sink in ~1 MiB chunks between events.
class JsonOut {
 public:
  static constexpr size_t kFlushBytes = 1 << 20;

  JsonOut(const ByteSink& sink, ChromeStats* st) : sink_(sink), st_(st) { buf_.reserve(kFlushBytes + 4096); }

  void Raw(std::string_view s) { buf_.append(s.data(), s.size()); }
  void Int(int64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v);
    buf_.append(b, r.ptr);
  }
  // ns as µs with exactly three decimals (never rounded).
  void Micros(int64_t ns) {
    if (ns < 0) {
      buf_.push_back('-');
      ns = -ns;  // |ns| of a relative time or duration is far below INT64_MAX
    }
    Int(ns / 1000);
    const int f = static_cast<int>(ns % 1000);
    const char frac[4] = {'.', static_cast<char>('0' + f / 100), static_cast<char>('0' + f / 10 % 10),
                          static_cast<char>('0' + f % 10)};
    buf_.append(frac, 4);
  }
  void Str(std::string_view s) {
    buf_.push_back('"');
    for (char c : s) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        buf_.push_back('\\');
        buf_.push_back(c);
      } else if (u < 0x20) {
        static constexpr char kHex[] = "0123456789abcdef";
        const char esc[6] = {'\\', 'u', '0', '0', kHex[u >> 4], kHex[u & 15]};
        buf_.append(esc, 6);
      } else {
        buf_.push_back(c);
      }
    }
    buf_.push_back('"');
  }
  // `"key": ` preceded by a comma unless first.
  void Key(std::string_view k, bool* first) {
    if (!*first) buf_.append(", ");
    *first = false;
    Str(k);
    buf_.append(": ");
  }
  void KeyInt(std::string_view k, int64_t v, bool* first) {
    Key(k, first);
    Int(v);
  }
  void KeyStr(std::string_view k, std::string_view v, bool* first) {
    Key(k, first);
    Str(v);
  }
  void KeyDim(std::string_view k, const model::Dim3& d, bool* first) {
    Key(k, first);
    buf_.push_back('[');
    Int(d.x);
    buf_.append(", ");
    Int(d.y);
    buf_.append(", ");
    Int(d.z);
    buf_.push_back(']');
  }
  // Starts an event object (with the separator from the previous event).
  void BeginEvent() {
    buf_.append(first_event_ ? "\n  {" : ",\n  {");
    first_event_ = false;
    ++st_->events;
  }
  absl::Status MaybeFlush() { return buf_.size() >= kFlushBytes ? Flush() : absl::OkStatus(); }
  absl::Status Flush() {
    if (buf_.empty()) return absl::OkStatus();
    st_->bytes += static_cast<int64_t>(buf_.size());
    absl::Status s = sink_(buf_);
    buf_.clear();
    return s;
  }

 private:
  const ByteSink& sink_;
  ChromeStats* st_;
  std::string buf_;
  bool first_event_ = true;
};

}  // namespace overlapscope::exporters
