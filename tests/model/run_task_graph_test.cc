// base::RunTaskGraph (base/run_task_graph.h): every task runs once, never before the tasks it
// names, in list order on one thread; a task that throws keeps the tasks after it from running
// and its exception reaches the caller; a task naming a later task is refused.
#include "base/run_task_graph.h"

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "gtest/gtest.h"

namespace overlapscope::base {
namespace {

// A diamond and a chain beside it: 0 -> {1, 2} -> 3, 4 -> 5 -> 6, 7 after 3 and 6.
std::vector<std::vector<size_t>> Shape() { return {{}, {0}, {0}, {1, 2}, {}, {4}, {5}, {3, 6}}; }

TEST(RunTaskGraph, EachTaskOnceAfterWhatItNamesAtEveryThreadCount) {
  for (int threads : {1, 2, 3, 16}) {
    for (int round = 0; round < 50; ++round) {
      const auto shape = Shape();
      std::vector<std::atomic<int>> runs(shape.size());
      std::vector<std::atomic<int>> order(shape.size());  // when each task ran (a ticket)
      std::atomic<int> ticket{0};
      std::atomic<bool> early{false};
      std::vector<GraphTask> tasks(shape.size());
      for (size_t i = 0; i < shape.size(); ++i) {
        tasks[i].after = shape[i];
        tasks[i].run = [&, i] {
          for (size_t a : shape[i])
            if (runs[a].load() != 1) early = true;  // a task it waits for has not finished
          order[i] = ticket++;
          ++runs[i];
        };
      }
      RunTaskGraph(threads, tasks);
      EXPECT_FALSE(early) << threads << " threads";
      for (size_t i = 0; i < shape.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "task " << i;
      if (threads == 1) {
        for (size_t i = 0; i < shape.size(); ++i) EXPECT_EQ(order[i].load(), static_cast<int>(i)) << "task " << i;
      }
    }
  }
}

TEST(RunTaskGraph, AThrowingTaskStopsWhatWaitsForItOnly) {
  for (int threads : {1, 2, 3, 16}) {
    const auto shape = Shape();
    std::vector<std::atomic<int>> runs(shape.size());
    std::vector<GraphTask> tasks(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) {
      tasks[i].after = shape[i];
      tasks[i].run = [&, i] {
        ++runs[i];
        if (i == 1) throw std::runtime_error("task 1");
      };
    }
    EXPECT_THROW(RunTaskGraph(threads, tasks), std::runtime_error) << threads << " threads";
    // 3 waits for 1, 7 for 3: not run; the rest ran once.
    const std::vector<int> want = {1, 1, 1, 0, 1, 1, 1, 0};
    for (size_t i = 0; i < shape.size(); ++i) EXPECT_EQ(runs[i].load(), want[i]) << "task " << i;
  }
}

TEST(RunTaskGraph, ATaskNamingALaterOneIsRefused) {
  for (int threads : {1, 3}) {
    std::atomic<int> ran0{0}, ran1{0}, ran2{0};
    std::vector<GraphTask> tasks = {{{}, [&] { ++ran0; }}, {{2}, [&] { ++ran1; }}, {{1}, [&] { ++ran2; }}};
    EXPECT_THROW(RunTaskGraph(threads, tasks), std::invalid_argument);
    EXPECT_EQ(ran0.load(), 1);
    EXPECT_EQ(ran1.load(), 0);
    EXPECT_EQ(ran2.load(), 0);  // waits for the refused one
  }
}

TEST(RunTaskGraph, NoTasks) { EXPECT_NO_THROW(RunTaskGraph(4, {})); }

}  // namespace
}  // namespace overlapscope::base
