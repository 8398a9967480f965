// Internal to the JSON renderer: the report's long arrays (one element per iteration of every
// device, of the overlap and of stream concurrency: most of the document's bytes) are left out
// of the document's tree and rendered apart, their elements on several threads, then written in
// their place with the bytes nlohmann's dump(2) writes there.
//
// Add() returns a placeholder string value that names the array; the renderer dumps the tree as
// before, and passes every piece of text on to Write(), which copies it to the sink with each
// placeholder replaced by the array's text. The placeholder holds a number drawn when the
// DeferredArrays is made, so no string of the trace (a kernel name) can pass for one.
//
// Element functions are called from several threads at once: they must only read. The data
// they read must live until Write() has written their placeholder. An array's elements are
// rendered a few runs per thread at a time and written before the next runs, so its whole
// text is never held at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "report/render.h"

namespace overlapscope::report {

// One element dumped as it stands in an array whose member line is indented by `indent`
// spaces (every line padded by indent + 2), without the separator after it.
std::string Element(const nlohmann::ordered_json& e, size_t indent);

class DeferredArrays {
 public:
  explicit DeferredArrays(int threads);
  // The placeholder of an array of n elements, element(i) each.
  nlohmann::ordered_json Add(size_t n, std::function<nlohmann::ordered_json(size_t i)> element);
  // The same for elements written as text: text(i, indent, out) appends what Element(element(i),
  // indent) would return (render_json_text.h writes such text).
  using ElementText = std::function<void(size_t i, size_t indent, std::string* out)>;
  nlohmann::ordered_json AddText(size_t n, ElementText text);
  // Writes `text` to out, placeholders replaced by their arrays.
  void Write(std::string_view text, const RenderSink& out);

 private:
  struct Entry {
    size_t n = 0;
    std::function<nlohmann::ordered_json(size_t)> element;
    ElementText text;  // set instead of element
  };
  void WriteArray(const Entry& e, size_t indent, const RenderSink& out) const;

  int threads_ = 1;
  std::string prefix_;  // "\"@@overlapscope:deferred:<number>:" as dumped
  std::vector<Entry> entries_;
};

}  // namespace overlapscope::report
