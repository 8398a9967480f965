// Internal to analyze/: time per (name, category) summed over path segments in O(1) per segment
// (a dense slot per interned name, allocated on first use), cleared in O(names touched).
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/critical_path.h"
#include "model/types.h"

namespace overlapscope::analyze {

class NameSums {
 public:
  struct Entry {
    model::StringId name = 0;
    int64_t ns[kPathCategories] = {};
    int64_t segments[kPathCategories] = {};
  };
  explicit NameSums(size_t strings) : slot_(strings, -1) {}
  void Add(model::StringId name, PathCategory c, int64_t ns, int64_t segments = 1) {
    int32_t& s = slot_[name];
    if (s < 0) {
      s = static_cast<int32_t>(used_.size());
      used_.push_back(Entry{});
      used_.back().name = name;
    }
    used_[s].ns[static_cast<int>(c)] += ns;
    used_[s].segments[static_cast<int>(c)] += segments;
  }
  const std::vector<Entry>& entries() const { return used_; }
  const Entry* Find(model::StringId name) const { return slot_[name] < 0 ? nullptr : &used_[slot_[name]]; }
  void Clear() {
    for (const Entry& e : used_) slot_[e.name] = -1;
    used_.clear();
  }

 private:
  std::vector<int32_t> slot_;  // per StringId: index into used_, -1 when unused
  std::vector<Entry> used_;
};

}  // namespace overlapscope::analyze
