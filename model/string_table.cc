#include "model/string_table.h"

#include <cstring>

namespace overlapscope::model {

namespace {
constexpr size_t kBlockBytes = 1 << 16;
}

StringTable::StringTable() {
  views_.push_back(std::string_view());
  index_.emplace(std::string_view(), 0);
}

StringTable::StringTable(StringTable&&) noexcept = default;
StringTable& StringTable::operator=(StringTable&&) noexcept = default;

std::string_view StringTable::Store(std::string_view s) {
  if (s.empty()) return std::string_view();
  if (s.size() > kBlockBytes / 4) {
    // Long strings get a block of their own so regular blocks never waste a big tail.
    blocks_.push_back(std::make_unique<char[]>(s.size()));
    arena_bytes_ += s.size();
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    return std::string_view(blocks_.back().get(), s.size());
  }
  if (current_ == nullptr || block_used_ + s.size() > kBlockBytes) {
    blocks_.push_back(std::make_unique<char[]>(kBlockBytes));
    arena_bytes_ += kBlockBytes;
    current_ = blocks_.back().get();
    block_used_ = 0;
  }
  char* dst = current_ + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(dst, s.size());
}

StringId StringTable::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  std::string_view stored = Store(s);
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

StringId StringTable::Find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kNone : it->second;
}

}  // namespace overlapscope::model
