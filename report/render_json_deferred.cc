// The JSON report's long arrays, rendered apart and on several threads (render_json_deferred.h).
#include "report/render_json_deferred.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "base/run_all.h"

namespace overlapscope::report {
namespace {

using ojson = nlohmann::ordered_json;

constexpr size_t kElementsPerTask = 256;
constexpr size_t kRunsPerThread = 4;

}  // namespace

std::string Element(const ojson& e, size_t indent) {
  const std::string pad(indent + 2, ' ');
  const std::string d = e.dump(2, ' ', false, ojson::error_handler_t::replace);
  std::string text = pad;
  text.reserve(d.size() + d.size() / 4 + pad.size());
  // Raw newlines only separate lines (in strings they are escaped): pad after each.
  size_t from = 0;
  for (;;) {
    const void* nl = std::memchr(d.data() + from, '\n', d.size() - from);
    if (nl == nullptr) break;
    const size_t at = static_cast<size_t>(static_cast<const char*>(nl) - d.data());
    text.append(d, from, at + 1 - from);
    text.append(pad);
    from = at + 1;
  }
  text.append(d, from, std::string::npos);
  return text;
}

DeferredArrays::DeferredArrays(int threads) : threads_(threads) {
  uint64_t tag = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                 reinterpret_cast<uintptr_t>(this);
  try {  // a source of entropy may be missing (a sandbox): the clock's tag is still unguessable enough
    std::random_device rd;
    tag ^= (static_cast<uint64_t>(rd()) << 32) ^ rd();
  } catch (...) {
  }
  prefix_ = absl::StrCat("\"@@overlapscope:deferred:", tag, ":");
}

ojson DeferredArrays::Add(size_t n, std::function<ojson(size_t i)> element) {
  entries_.push_back(Entry{n, std::move(element), nullptr});
  // The value without its opening quote, which prefix_ includes.
  return absl::StrCat(prefix_.substr(1), entries_.size() - 1, "@@");
}

ojson DeferredArrays::AddText(size_t n, ElementText text) {
  entries_.push_back(Entry{n, nullptr, std::move(text)});
  // The value without its opening quote, which prefix_ includes.
  return absl::StrCat(prefix_.substr(1), entries_.size() - 1, "@@");
}

void DeferredArrays::WriteArray(const Entry& e, size_t indent, const RenderSink& out) const {
  if (e.n == 0) {
    out("[]");
    return;
  }
  // Elements in contiguous runs, one text per run, runs on up to threads_ threads, a few per
  // thread at a time (kRunsPerThread), written in order after each wave: the bytes are those of
  // one dump of the whole array, and at most one wave's text is held.
  const size_t runs = (e.n + kElementsPerTask - 1) / kElementsPerTask;
  const size_t wave = static_cast<size_t>(std::max(threads_, 1)) * kRunsPerThread;
  std::vector<std::string> texts(std::min(runs, wave));
  out("[\n");
  for (size_t first = 0; first < runs; first += wave) {
    const size_t count = std::min(wave, runs - first);
    base::ParallelFor(threads_, count, 1, [&](size_t lo, size_t hi) {
      for (size_t k = lo; k < hi; ++k) {
        const size_t r = first + k;
        const size_t end = std::min(e.n, (r + 1) * kElementsPerTask);
        std::string& t = texts[k];
        t.clear();
        for (size_t i = r * kElementsPerTask; i < end; ++i) {
          if (e.text) {
            e.text(i, indent, &t);
          } else {
            t += Element(e.element(i), indent);
          }
          t += i + 1 < e.n ? ",\n" : "\n";
        }
      }
    });
    for (size_t k = 0; k < count; ++k) out(texts[k]);
  }
  out(std::string(indent, ' ') + "]");
}

void DeferredArrays::Write(std::string_view text, const RenderSink& out) {
  size_t from = 0;
  while (!entries_.empty()) {
    const size_t at = text.find(prefix_, from);
    if (at == std::string_view::npos) break;
    // "<prefix><index>@@" then the closing quote.
    const size_t num = at + prefix_.size();
    const size_t close = text.find("@@\"", num);
    size_t index = 0;
    const bool parsed = close != std::string_view::npos &&
                        std::from_chars(text.data() + num, text.data() + close, index).ptr == text.data() + close;
    if (!parsed || index >= entries_.size()) {
      out(text.substr(from, num - from));  // not one of ours (cannot happen): left as it is
      from = num;
      continue;
    }
    // The member's line is indented by the spaces before its key.
    const size_t line = text.rfind('\n', at) == std::string_view::npos ? 0 : text.rfind('\n', at) + 1;
    size_t indent = 0;
    while (line + indent < at && text[line + indent] == ' ') ++indent;
    out(text.substr(from, at - from));
    WriteArray(entries_[index], indent, out);
    entries_[index] = Entry{};  // written once; what it read may go now
    from = close + 3;
  }
  out(text.substr(from));
}

}  // namespace overlapscope::report
