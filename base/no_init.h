// NoInit: an allocator that leaves elements default-initialized, so that a vector sized up front
// of a trivial type is not zeroed first: for buffers that are written in full in ranges at once,
// where each thread faults in the pages it writes, instead of one thread zeroing them all first.
// Reading an element before it is written reads garbage; vectors of it compare and move as
// std::vector does. Failure modes: std::allocator's (std::bad_alloc).
#pragma once

#include <memory>
#include <new>
#include <utility>

namespace overlapscope::base {

template <typename T>
struct NoInit : std::allocator<T> {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = NoInit<U>;
  };
  NoInit() = default;
  template <typename U>
  NoInit(const NoInit<U>&) {}
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void*>(p)) U;
    else
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace overlapscope::base
