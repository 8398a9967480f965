// Vectors of per-node values that are mostly zero (internal to analyze/replay): their elements
// start as the zero pages the system hands out, so the pages never written are never touched.
// At 10 M nodes every 8 bytes a node is 80 MB of first touches (page faults) otherwise.
// Only a freshly sized vector is all zero: ZeroedVector<T>(n), or assign(n, value) (which
// writes every element); resize() within the capacity after a shrink keeps the old values.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace overlapscope::analyze::replay {

template <typename T>
struct ZeroedAllocator {
  static_assert(std::is_trivial_v<T>, "zero bytes must be a value-initialized T");
  using value_type = T;
  ZeroedAllocator() = default;
  template <typename U>
  ZeroedAllocator(const ZeroedAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    void* p = std::calloc(n, sizeof(T));  // large blocks come zeroed from the system, unwritten
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) noexcept { std::free(p); }
  // Value-initialization writes nothing: calloc's zeros are the value.
  template <typename U>
  void construct(U*) noexcept {}
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  friend bool operator==(const ZeroedAllocator&, const ZeroedAllocator&) { return true; }
};

template <typename T>
using ZeroedVector = std::vector<T, ZeroedAllocator<T>>;

}  // namespace overlapscope::analyze::replay
