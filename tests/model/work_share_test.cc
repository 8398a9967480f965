// base/work_share.h: the calls nested in a RunTaskGraph or RunAll run on its threads: every
// task once, never more threads than the largest `threads` asked for (before, each nested
// call started its own), at most `threads` of a call's tasks at once, a nested call's
// exception reaching its caller; at 1, 2, 3 and 16 threads.
#include "base/work_share.h"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/run_all.h"
#include "base/run_task_graph.h"
#include "gtest/gtest.h"

namespace overlapscope::base {
namespace {

// The threads seen and the most tasks running at once.
struct Seen {
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> running{0}, most{0};
  void Enter() {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    }
    const int now = ++running;
    for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // long enough to overlap
  }
  void Leave() { --running; }
};

TEST(WorkShare, NestedRangesUseTheGraphsThreadsOnly) {
  for (int threads : {1, 2, 3, 16}) {
    Seen seen;
    constexpr size_t kTasks = 8, kRange = 1000;
    std::vector<std::vector<int>> visits(kTasks, std::vector<int>(kRange, 0));
    std::vector<GraphTask> tasks(kTasks);
    for (size_t i = 0; i < kTasks; ++i) {
      if (i >= 2) tasks[i].after = {i - 2};
      tasks[i].run = [&, i] {
        ParallelFor(threads, kRange, 10, [&](size_t lo, size_t hi) {
          seen.Enter();
          for (size_t k = lo; k < hi; ++k) ++visits[i][k];
          seen.Leave();
        });
      };
    }
    RunTaskGraph(threads, tasks);
    for (size_t i = 0; i < kTasks; ++i)
      for (size_t k = 0; k < kRange; ++k) ASSERT_EQ(visits[i][k], 1) << threads << " threads, task " << i;
    // The calling thread and at most threads - 1 more, whatever the nesting.
    EXPECT_LE(seen.ids.size(), static_cast<size_t>(threads)) << threads << " threads";
    EXPECT_LE(seen.most.load(), threads) << threads << " threads";
    if (threads == 1) {
      EXPECT_EQ(*seen.ids.begin(), std::this_thread::get_id());
    }
  }
}

TEST(WorkShare, ANestedCallKeepsItsOwnThreadCount) {
  for (int threads : {2, 3, 16}) {
    // A one-thread call inside a graph on many runs its tasks one at a time in order.
    std::vector<std::vector<int>> order(4);
    std::vector<GraphTask> tasks(4);
    for (size_t i = 0; i < tasks.size(); ++i)
      tasks[i].run = [&, i] {
        std::vector<std::function<void()>> inner;
        for (int k = 0; k < 20; ++k) inner.emplace_back([&order, i, k] { order[i].push_back(k); });
        RunAll(1, inner);
      };
    RunTaskGraph(threads, tasks);
    for (size_t i = 0; i < order.size(); ++i) {
      ASSERT_EQ(order[i].size(), 20u);
      for (int k = 0; k < 20; ++k) EXPECT_EQ(order[i][k], k) << threads << " threads, task " << i;
    }
  }
}

TEST(WorkShare, ANestedCallMayAskForMoreThreadsThanTheOuter) {
  for (int threads : {1, 2, 3, 16}) {
    Seen seen;
    std::atomic<int> sum{0};
    // Two outer tasks on at most 2 threads, each with ranges on up to `threads`, three deep.
    RunAll(2, {[&] {
                 ParallelFor(threads, 64, 1, [&](size_t lo, size_t hi) {
                   seen.Enter();
                   for (size_t k = lo; k < hi; ++k) sum += static_cast<int>(k);
                   seen.Leave();
                 });
               },
               [&] {
                 RunAll(threads, {[&] {
                                    ParallelFor(threads, 10, 1, [&](size_t lo, size_t hi) {
                                      for (size_t k = lo; k < hi; ++k) sum += 1000;
                                    });
                                  },
                                  [&] { sum += 7; }});
               }});
    EXPECT_EQ(sum.load(), 64 * 63 / 2 + 10 * 1000 + 7) << threads << " threads";
    EXPECT_LE(seen.ids.size(), static_cast<size_t>(std::max(threads, 2))) << threads << " threads";
    EXPECT_LE(seen.most.load(), threads) << threads << " threads";  // the ranges' call's own limit
  }
}

TEST(WorkShare, ANestedExceptionReachesItsCallerAndTheTop) {
  for (int threads : {1, 2, 3, 16}) {
    std::atomic<int> caught{0}, ran{0};
    std::vector<GraphTask> tasks(3);
    tasks[0].run = [&] {
      try {
        ParallelFor(threads, 100, 1, [&](size_t lo, size_t) {
          ++ran;
          if (lo == 0) throw std::runtime_error("range 0");
        });
      } catch (const std::runtime_error&) {
        ++caught;
      }
    };
    tasks[1].run = [&] { RunAll(threads, {[] { throw std::logic_error("inner"); }, [&] { ++ran; }}); };
    tasks[2].after = {1};
    tasks[2].run = [&] { ++ran; };  // waits for the one that throws: not run
    EXPECT_THROW(RunTaskGraph(threads, tasks), std::logic_error) << threads << " threads";
    EXPECT_EQ(caught.load(), 1);
    // Every range ran (RunAll runs the tasks after one that threw), the inner one after the throw.
    const int ranges = threads <= 1 ? 1 : threads;
    EXPECT_EQ(ran.load(), ranges + 1) << threads << " threads";
  }
}

}  // namespace
}  // namespace overlapscope::base
