// Two pieces of work at once (internal to analyze/replay): the replay's passes over 10 M nodes
// split where their halves write disjoint data, so the result is the same as one after the
// other, on one core or two.
#pragma once

#include <exception>
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

}  // namespace overlapscope::analyze::replay
