// Two pieces of work at once (internal to analyze/replay): the replay's passes over 10 M nodes
// split where their halves write disjoint data, so the result is the same as one after the
// other, on one core or two.
#pragma once

#include <atomic>
#include <exception>
#include <future>
#include <optional>
#include <thread>
#include <utility>

namespace overlapscope::analyze::replay {

// Runs `a` on a second thread and `b` on this one and returns when both are done. An exception
// of either is rethrown here (a's first).
template <typename A, typename B>
void BothAtOnce(A&& a, B&& b) {
  std::exception_ptr failed_a, failed_b;
  std::thread side([&] {
    try {
      a();
    } catch (...) {
      failed_a = std::current_exception();
    }
  });
  try {
    b();
  } catch (...) {
    failed_b = std::current_exception();
  }
  side.join();
  if (failed_a) std::rethrow_exception(failed_a);
  if (failed_b) std::rethrow_exception(failed_b);
}

// Buffers one thread makes for another, without making either wait long: whichever comes first
// claims the hand-off. The maker fills it only where the taker has not yet come for it (the taker
// then waits at most for the fill underway); a taker that comes first makes its own.
template <typename T>
class Handoff {
 public:
  template <typename Make>
  void Offer(Make make) {
    if (!claimed_.exchange(true)) made_.set_value(make());
  }
  // The taker's thread only. A second call gives nullopt (what the first took is not there
  // any more).
  std::optional<T> Take() {
    if (taken_) return std::nullopt;
    taken_ = true;
    if (claimed_.exchange(true)) return done_.get();
    return std::nullopt;
  }

 private:
  std::atomic<bool> claimed_{false};
  bool taken_ = false;  // by the taker's thread
  std::promise<T> made_;
  std::future<T> done_ = made_.get_future();
};

}  // namespace overlapscope::analyze::replay
