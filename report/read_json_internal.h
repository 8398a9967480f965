// Internal to the JSON report reader (report/read_json.h): a node of the parsed document with its
// path for error messages. A wrong type throws ReadError (caught in ReadReportJson, never leaves
// the module).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "report/report.h"

namespace overlapscope::report::read_internal {

using json = nlohmann::ordered_json;

struct ReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A node of the document and its path ("ranks[0].summary").
struct Node {
  const json& j;
  std::string path;

  Node At(const char* key) const {
    static const json kNull;
    std::string p = path.empty() ? key : absl::StrCat(path, ".", key);
    if (!j.is_object()) throw ReadError(absl::StrCat(path.empty() ? "document" : path, ": expected an object"));
    auto it = j.find(key);
    return Node{it == j.end() ? kNull : *it, std::move(p)};
  }
  bool Has(const char* key) const { return j.is_object() && j.contains(key); }
  [[noreturn]] void Fail(const char* what) const { throw ReadError(absl::StrCat(path, ": expected ", what)); }
  int64_t Int() const {
    if (j.is_number_integer()) return j.get<int64_t>();
    if (j.is_number_float() && j.get<double>() == static_cast<double>(static_cast<int64_t>(j.get<double>())))
      return static_cast<int64_t>(j.get<double>());
    Fail("an integer");
  }
  double Double() const {
    if (!j.is_number()) Fail("a number");
    return j.get<double>();
  }
  std::string Str() const {
    if (!j.is_string()) Fail("a string");
    return j.get<std::string>();
  }
  bool Bool() const {
    if (!j.is_boolean()) Fail("true or false");
    return j.get<bool>();
  }
  std::optional<int64_t> OptInt() const { return j.is_null() ? std::nullopt : std::optional<int64_t>(Int()); }
  std::optional<double> OptDouble() const { return j.is_null() ? std::nullopt : std::optional<double>(Double()); }
  std::optional<std::string> OptStr() const { return j.is_null() ? std::nullopt : std::optional<std::string>(Str()); }
  // Elements of an array (absent: none).
  template <typename F>
  void Each(F f) const {
    if (j.is_null()) return;
    if (!j.is_array()) Fail("an array");
    for (size_t i = 0; i < j.size(); ++i) f(Node{j[i], absl::StrCat(path, "[", i, "]")});
  }
  // Members of an object in document order (absent: none).
  template <typename F>
  void Members(F f) const {
    if (j.is_null()) return;
    if (!j.is_object()) Fail("an object");
    for (auto it = j.begin(); it != j.end(); ++it) f(it.key(), Node{it.value(), absl::StrCat(path, ".", it.key())});
  }
};

std::vector<RankReport> ReadRanks(const Node& ranks);
CrossRank ReadCrossRank(const Node& n);
// critical_path, straggler_causes, stream_concurrency (read_json_paths.cc); absent: empty.
void ReadPaths(const Node& doc, Report* r);

}  // namespace overlapscope::report::read_internal
