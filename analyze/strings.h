// std::string_view helpers. Debian's Abseil 20220623 has its own absl::string_view, distinct from
// std::string_view (which model::Trace hands out), so absl's string functions do not take ours.
#pragma once

#include <string>
#include <string_view>

namespace overlapscope::analyze {

inline bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
inline bool Contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
inline std::string S(std::string_view s) { return std::string(s); }
inline std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace overlapscope::analyze
