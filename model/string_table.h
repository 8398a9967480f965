// Interned strings. Ids are dense and stable; id 0 is the empty string.
//
// Storage is an arena of fixed blocks, so string_views handed out stay valid for the table's
// lifetime even as it grows. Not thread-safe: parallel producers intern into their own tables
// and merge with Remap().
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/types.h"

namespace overlapscope::model {

class StringTable {
 public:
  StringTable();
  StringTable(StringTable&&) noexcept;
  StringTable& operator=(StringTable&&) noexcept;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  StringId Intern(std::string_view s);
  // Returns kNone when `s` was never interned.
  StringId Find(std::string_view s) const;
  std::string_view Get(StringId id) const { return views_[static_cast<size_t>(id)]; }
  size_t size() const { return views_.size(); }
  // Bytes held by the arena (for memory accounting in benchmarks).
  size_t arena_bytes() const { return arena_bytes_; }

 private:
  std::string_view Store(std::string_view s);

  std::vector<std::unique_ptr<char[]>> blocks_;
  char* current_ = nullptr;  // block being filled (owned by blocks_)
  size_t block_used_ = 0, arena_bytes_ = 0;
  std::vector<std::string_view> views_;
  absl::flat_hash_map<std::string_view, StringId> index_;
};

}  // namespace overlapscope::model
