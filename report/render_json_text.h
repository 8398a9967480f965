// Internal to the JSON renderer: JSON text written straight into a string, the same bytes as
// nlohmann's dump(2, ' ', false, replace) of the equivalent tree, for the report's long arrays
// (a finding per starved collective: tens of thousands on a long trace), where building a tree
// per element and dumping it cost more than the rest of the render.
//
// Only what those elements hold: objects (nested too, and arrays of objects) of strings, 64-bit
// integers, booleans, optional integers and optional doubles (a double is written by nlohmann's
// own dump).
// Strings of printable ASCII without '"' or '\\' and well-formed UTF-8 are copied as they are;
// any other string is escaped by nlohmann's own dump, so escapes and invalid UTF-8 (replaced by
// U+FFFD) come out as in a dumped tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace overlapscope::report {

// Appends `s` as a JSON string (quoted, escaped as dump() escapes it).
void AppendJsonString(std::string_view s, std::string* out);

// One object as Element() (render_json_deferred.h) writes an element of an array whose member
// line is indented by `indent` spaces: "{" after the pad, one member per line, "}" on its own
// line. Members in call order; Close() once at the end (an object with no member is "{}").
class ArrayText;

class ObjectText {
 public:
  ObjectText(size_t indent, std::string* out);
  ObjectText& Str(std::string_view key, std::string_view v);
  ObjectText& Int(std::string_view key, int64_t v);
  ObjectText& OptInt(std::string_view key, const std::optional<int64_t>& v);
  ObjectText& Bool(std::string_view key, bool v);
  // The double as dump() writes it (NaN and infinities as null), or null when absent.
  ObjectText& OptDouble(std::string_view key, const std::optional<double>& v);
  // A member whose value is an object: members go to the returned one, which the caller
  // closes before adding anything more to this one.
  ObjectText Object(std::string_view key);
  // A member whose value is an array of objects (ArrayText below), closed the same way.
  ArrayText Array(std::string_view key);
  void Close();

 private:
  struct Nested {};
  ObjectText(Nested, size_t pad, std::string* out);  // "{" only: the key is on the line already
  void Key(std::string_view key);

  std::string* out_;
  size_t pad_;  // spaces before the braces; members have two more
  bool first_ = true;
};

// An array of objects, the value of a member whose line is indented by `indent`: "[]" when it
// has no element, else one element per line at indent + 2 and "]" at indent.
class ArrayText {
 public:
  ArrayText(size_t indent, std::string* out);
  // The next element: fill it, and close it before the next one.
  ObjectText Object();
  void Close();

 private:
  std::string* out_;
  size_t indent_;
  bool first_ = true;
};

}  // namespace overlapscope::report
