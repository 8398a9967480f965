// The threads RunTaskGraph and RunAll run their tasks on, shared by the calls nested in them.
//
// A call made on a thread that no such call is running on (the top call) starts up to
// `threads` - 1 threads and serves its tasks on them and on the calling thread. A call made
// inside a task of another (a ParallelFor inside one of the analyses' steps, say) starts no
// threads of its own: it offers its tasks to the threads of the top call, which take them when
// idle (the innermost call's first), and runs them itself while none is free; where the top
// call has fewer threads than the nested call asks for, threads are added up to that number.
// So the threads of one top call never exceed the largest `threads` of the calls inside it:
// before, each nested call started its own, up to `threads` per task running at once (about a
// hundred on sixteen CPUs in the analyses' graph, docs/PERFORMANCE.md, "nested threads").
//
// Each call still runs at most `threads` of its tasks at once, and with threads <= 1 its tasks
// one at a time in list order; a thread waiting for its nested call's tasks to finish runs no
// other call's tasks meanwhile (it would come back late), it sleeps.
//
// Failure modes: as RunTaskGraph's (base/run_task_graph.h); when no thread can be started the
// calling threads take every task.
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

namespace work_share {

// One call's tasks and how far they are; every member but `tasks` under Share::mu.
class Job {
 public:
  Job(const std::vector<GraphTask>& tasks, int threads)
      : tasks_(tasks),
        n_(tasks.size()),
        max_running_(static_cast<size_t>(std::max(threads, 1))),
        waiting_(n_, 0),
        then_(n_),
        failed_(n_, 0),
        started_(n_, 0),
        errors_(n_) {
    // A task that names itself or a later one gets an error and is treated as failed.
    for (size_t i = 0; i < n_; ++i)
      for (size_t a : tasks[i].after) {
        if (a >= i) {
          errors_[i] = std::make_exception_ptr(std::invalid_argument("a task waits for itself or a later task"));
          failed_[i] = 1;
          continue;
        }
        ++waiting_[i];
        then_[a].push_back(i);
      }
    for (size_t i = 0; i < n_; ++i)
      if (failed_[i] && !started_[i]) {
        started_[i] = 1;
        Finish(i, false);
      }
  }

  bool Done() const { return done_ == n_; }

  // The first task in list order not started whose tasks before it have finished, marked
  // started; n when none may start now (or `threads` of them are running).
  size_t Pick() {
    if (running_ >= max_running_) return n_;
    while (first_ < n_ && started_[first_]) ++first_;
    for (size_t i = first_; i < n_; ++i)
      if (!started_[i] && waiting_[i] == 0) {
        started_[i] = 1;
        ++running_;
        return i;
      }
    return n_;
  }

  size_t size() const { return n_; }
  const GraphTask& task(size_t i) const { return tasks_[i]; }

  // Task i ran: ok, or threw `error`.
  void Ran(size_t i, std::exception_ptr error) {
    --running_;
    errors_[i] = error;
    Finish(i, error == nullptr);
  }

  // The first exception in task order, rethrown; after Done().
  void Rethrow() const {
    for (const std::exception_ptr& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  // Marks task i finished (or failed, and then every task after it abandoned).
  void Finish(size_t i, bool ok) {
    ++done_;
    for (size_t j : then_[i]) {
      if (!ok && !failed_[j] && !started_[j]) {
        failed_[j] = started_[j] = 1;
        Finish(j, false);
      } else if (ok) {
        --waiting_[j];
      }
    }
  }

  const std::vector<GraphTask>& tasks_;
  const size_t n_;
  const size_t max_running_;
  std::vector<size_t> waiting_;            // the tasks i still waits for
  std::vector<std::vector<size_t>> then_;  // the tasks that wait for i
  std::vector<char> failed_, started_;
  std::vector<std::exception_ptr> errors_;
  size_t done_ = 0;     // tasks finished or abandoned
  size_t running_ = 0;  // tasks started, not finished
  size_t first_ = 0;    // every task before it started
};

// The threads of one top call and the calls open on them.
struct Share {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Job*> open;  // the calls with tasks left, innermost last
  std::vector<std::thread> threads;
  Job* top = nullptr;
};

// The Share of the call this thread runs a task of; null outside any.
inline Share*& Current() {
  static thread_local Share* share = nullptr;
  return share;
}

// Runs task i of `job` with mu released; under mu before and after.
inline void RunOne(Share& s, Job& job, size_t i, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  std::exception_ptr error;
  try {
    job.task(i).run();
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  job.Ran(i, error);
  s.cv.notify_all();
}

// A shared thread's loop (the top call's caller too): a task of the innermost open call that
// has one ready, until the top call is done; under mu.
inline void Serve(Share& s, std::unique_lock<std::mutex>& lock) {
  while (!s.top->Done()) {
    bool ran = false;
    for (size_t k = s.open.size(); k-- > 0 && !ran;) {
      Job* job = s.open[k];
      const size_t i = job->Pick();
      if (i == job->size()) continue;
      RunOne(s, *job, i, lock);
      ran = true;
    }
    if (!ran) s.cv.wait(lock);
  }
}

// Starts threads until the share has min(threads, have + tasks - 1) of them (the callers' one
// counted); under mu. Fewer when the system refuses one.
inline void Grow(Share& s, int threads, size_t tasks) {
  const size_t have = s.threads.size() + 1;
  const size_t want = std::min(static_cast<size_t>(std::max(threads, 1)), have + tasks - 1);
  for (size_t k = have; k < want; ++k) {
    try {
      s.threads.emplace_back([&s] {
        Current() = &s;
        std::unique_lock<std::mutex> lock(s.mu);
        Serve(s, lock);
      });
    } catch (const std::system_error&) {
      break;  // fewer threads: the others take the rest
    }
  }
}

// RunTaskGraph's and RunAll's body.
inline void Run(int threads, const std::vector<GraphTask>& tasks) {
  if (tasks.empty()) return;
  Job job(tasks, threads);
  Share* outer = Current();
  if (outer != nullptr) {
    // Nested: offer the tasks to the top call's threads, run them here until all are done.
    std::unique_lock<std::mutex> lock(outer->mu);
    outer->open.push_back(&job);
    Grow(*outer, threads, tasks.size());
    outer->cv.notify_all();
    while (!job.Done()) {
      const size_t i = job.Pick();
      if (i < job.size())
        RunOne(*outer, job, i, lock);
      else
        outer->cv.wait(lock);
    }
    outer->open.erase(std::find(outer->open.begin(), outer->open.end(), &job));
    lock.unlock();
    job.Rethrow();
    return;
  }
  Share s;
  s.top = &job;
  s.open.push_back(&job);
  Current() = &s;
  {
    std::unique_lock<std::mutex> lock(s.mu);
    Grow(s, threads, tasks.size());
    Serve(s, lock);
    s.cv.notify_all();  // the threads waiting see the top call done
  }
  Current() = nullptr;
  for (std::thread& t : s.threads) t.join();
  job.Rethrow();
}

}  // namespace work_share
}  // namespace overlapscope::base
