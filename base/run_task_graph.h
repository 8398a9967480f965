// RunTaskGraph: runs a fixed list of tasks, each after the tasks it names, on up to `threads`
// threads (the calling thread included), each task exactly once. For passes whose steps write
// disjoint results and read only what the steps they wait for wrote (the analyses after the
// model is built), so that the outcome is the same at any thread count while no step waits
// for more than it reads (RunAll's rounds wait for a round's longest step).
//
// A task may name only tasks before it in the list (`after` indexes smaller than its own), so
// the list order is always an order the tasks can run in: with threads <= 1, or when no thread
// can be started, the tasks run in list order on the calling thread. With more, a free thread
// takes the first task in list order whose tasks before it have all finished.
//
// Failure modes: a task that names itself or a later task is never started and its result is
// abandoned, as are the tasks after it (in `after`); std::invalid_argument is then rethrown
// as any other. An exception thrown by a task is caught on its thread; the tasks that wait
// for it (directly or not) are not run; once every other task has run, the first exception in
// task order is rethrown on the calling thread, where the module's entry turns it into a
// status.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace overlapscope::base {

struct GraphTask {
  std::vector<size_t> after;  // indexes of the tasks this one waits for (each < its own index)
  std::function<void()> run;
};

inline void RunTaskGraph(int threads, const std::vector<GraphTask>& tasks) {
  const size_t n = tasks.size();
  if (n == 0) return;
  std::vector<std::exception_ptr> errors(n);
  // waiting[i]: the tasks i still waits for; then[i]: the tasks that wait for i. A task that
  // names itself or a later one gets an error and is treated as failed.
  std::vector<size_t> waiting(n, 0);
  std::vector<std::vector<size_t>> then(n);
  std::vector<char> failed(n, 0), started(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t a : tasks[i].after) {
      if (a >= i) {
        errors[i] = std::make_exception_ptr(std::invalid_argument("a task waits for itself or a later task"));
        failed[i] = 1;
        continue;
      }
      ++waiting[i];
      then[a].push_back(i);
    }
  std::mutex mu;
  std::condition_variable cv;
  size_t done = 0;  // tasks finished or abandoned
  // Marks task i finished (or failed, and then every task after it abandoned); under mu.
  std::function<void(size_t, bool)> finish = [&](size_t i, bool ok) {
    ++done;
    for (size_t j : then[i]) {
      if (!ok && !failed[j] && !started[j]) {
        failed[j] = started[j] = 1;
        finish(j, false);
      } else if (ok) {
        --waiting[j];
      }
    }
  };
  {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t i = 0; i < n; ++i)
      if (failed[i] && !started[i]) {
        started[i] = 1;
        finish(i, false);
      }
  }
  auto work = [&] {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      size_t pick = n;
      for (size_t i = 0; i < n && pick == n; ++i)
        if (!started[i] && waiting[i] == 0) pick = i;
      if (pick == n) {
        if (done == n) break;
        cv.wait(lock);
        continue;
      }
      started[pick] = 1;
      lock.unlock();
      bool ok = true;
      try {
        tasks[pick].run();
      } catch (...) {
        errors[pick] = std::current_exception();
        ok = false;
      }
      lock.lock();
      finish(pick, ok);
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  const size_t extra = std::min(static_cast<size_t>(std::max(threads, 1) - 1), n - 1);
  pool.reserve(extra);
  for (size_t k = 0; k < extra; ++k) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads: the others take the rest
    }
  }
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace overlapscope::base
