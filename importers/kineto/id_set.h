// IdSet: a set of int64 ids (the correlation ids of one file's API calls: duplicate detection
// while merging, then the GPU activities' launch check). Internal to importers/kineto.
//
// Kineto numbers its correlation ids upwards from one start, with gaps (ids of activities not
// written): a bit per id from the first id inserted answers most lookups with one load, where a
// hash set costs a cache miss per id. The bit range grows upwards while it stays within
// kBitsPerId bits per id inserted (plus a fixed allowance); ids below the first one or too far
// above it go to a hash set. The set's contents are the same either way.
//
// Memory: at most kBitsPerId / 8 bytes per id plus kMinBits / 8 bytes, or the hash set's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace overlapscope::import {

class IdSet {
 public:
  // true when id was not in the set (and is now).
  bool Insert(int64_t id) {
    if (!started_) {
      started_ = true;
      lo_ = id;
    }
    const uint64_t off = static_cast<uint64_t>(id) - static_cast<uint64_t>(lo_);  // id >= lo_: no wrap
    if (id >= lo_ && (off < Bits() || Grow(off))) {
      uint64_t& word = bits_[off >> 6];
      const uint64_t mask = uint64_t{1} << (off & 63);
      // An id the bits did not cover when it came may be in the hash set.
      if ((word & mask) != 0 || (!others_.empty() && others_.contains(id))) return false;
      word |= mask;
      ++count_;
      return true;
    }
    const bool inserted = others_.insert(id).second;
    count_ += inserted;
    return inserted;
  }
  bool Contains(int64_t id) const {
    const uint64_t off = static_cast<uint64_t>(id) - static_cast<uint64_t>(lo_);
    if (started_ && id >= lo_ && off < Bits() && ((bits_[off >> 6] >> (off & 63)) & 1) != 0) return true;
    return !others_.empty() && others_.contains(id);
  }
  size_t size() const { return count_; }
  // Makes room for the bits of `factor` times the ids seen so far (their span from the first
  // id; no more than the budget of that many ids allows): capacity only, so the growth that
  // follows copies nothing and untouched pages cost no memory. Contents and answers unchanged.
  void ReserveFor(double factor) {
    if (!started_ || factor <= 1.0) return;
    size_t top = bits_.size();
    while (top > 0 && bits_[top - 1] == 0) --top;  // words up to the highest id inserted
    const double ids = static_cast<double>(count_) * factor;
    const double budget = static_cast<double>(kMinBits) + static_cast<double>(kBitsPerId) * (ids + 1);
    const double words = std::min(static_cast<double>(top) * factor, budget / 64);
    if (words > static_cast<double>(bits_.capacity()) && words < 1e10) bits_.reserve(static_cast<size_t>(words));
  }
  void Clear() { *this = IdSet(); }

 private:
  static constexpr uint64_t kBitsPerId = 256;
  static constexpr uint64_t kMinBits = uint64_t{1} << 23;  // 1 MiB of bits
  uint64_t Bits() const { return static_cast<uint64_t>(bits_.size()) * 64; }
  // Extends the bits to cover `off` when that keeps within the budget.
  bool Grow(uint64_t off) {
    const uint64_t budget = kMinBits + kBitsPerId * (count_ + 1);
    if (off >= budget) return false;
    uint64_t words = std::max<uint64_t>(off / 64 + 1, std::min<uint64_t>(budget / 64, bits_.size() * 2));
    // Within the room ReserveFor made, no further: doubling past it would copy the bits to a new
    // allocation twice their size (7 MB and 14 MB on the 500 MB trace, in its last window's merge).
    if (words > bits_.capacity() && off / 64 + 1 <= bits_.capacity()) words = bits_.capacity();
    bits_.resize(static_cast<size_t>(words), 0);
    return true;
  }

  bool started_ = false;
  int64_t lo_ = 0;
  size_t count_ = 0;
  std::vector<uint64_t> bits_;
  absl::flat_hash_set<int64_t> others_;
};

}  // namespace overlapscope::import
