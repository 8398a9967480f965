// base/share_threads.h: the calls made one after another inside ShareThreads run on the threads
// the first one started (before, each started and joined its own); with one thread, in place.
#include "base/share_threads.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace overlapscope::base {
namespace {

thread_local int g_marked = 0;  // set on each thread that ran a range of the first call

TEST(ShareThreads, LaterCallsRunOnTheFirstCallsThreads) {
  constexpr int kThreads = 8;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool all_arrived = true;
  std::vector<int> on_marked(kThreads, 0);
  ShareThreads(kThreads, [&] {
    // First call: each range waits until every range has started, so each runs on its own thread.
    ParallelFor(kThreads, kThreads, 1, [&](size_t, size_t) {
      g_marked = 1;
      std::unique_lock<std::mutex> lock(mu);
      ++arrived;
      cv.notify_all();
      if (!cv.wait_for(lock, std::chrono::seconds(5), [&] { return arrived == kThreads; })) all_arrived = false;
    });
    // Second call: its ranges run on those threads (new threads would not be marked).
    ParallelFor(kThreads, kThreads, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) on_marked[i] = g_marked;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
  });
  if (!all_arrived) GTEST_SKIP() << "the system did not start " << kThreads << " threads";
  EXPECT_EQ(on_marked, std::vector<int>(kThreads, 1));
}

TEST(ShareThreads, OneThreadRunsInPlaceAndExceptionsReachTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> ran(4);
  ShareThreads(1, [&] {
    ParallelFor(4, 4, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) ran[i] = std::this_thread::get_id();
    });
  });
  // ParallelFor(4) inside ShareThreads(1) still runs its ranges, on up to 4 threads.
  for (const std::thread::id& id : ran) EXPECT_NE(id, std::thread::id());
  bool ran_in_place = false;
  ShareThreads(1, [&] { ran_in_place = std::this_thread::get_id() == caller; });
  EXPECT_TRUE(ran_in_place);
  for (int threads : {1, 4})
    EXPECT_THROW(
        ShareThreads(threads,
                     [&] { ParallelFor(threads, 4, 1, [](size_t, size_t) { throw std::runtime_error("x"); }); }),
        std::runtime_error);
}

}  // namespace
}  // namespace overlapscope::base
