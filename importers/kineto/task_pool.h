// TaskPool: threads started once that run list after list of independent tasks, for the parallel
// gzip inflate's batches and the parse's windows (base::RunAll starts its threads on every call:
// at 16 threads and a batch every few milliseconds, the launches cost a good part of a batch).
// Run() returns once every task of its list ran; the calling thread takes tasks of its own list
// too. Several threads may Run() lists at once (the parse's windows and the inflate's batches
// sharing one pool's threads): the pool's threads take the lists' tasks in the order the lists
// came, a list Run with `first` before the others; within a list, tasks start in index order (a
// task may wait for an earlier one of its list: that one has started). Internal to
// importers/kineto.
//
// Failure modes: an exception a task throws (std::bad_alloc) is caught on its thread and the first
// one in task order rethrown by Run() after every task of the list ran or was abandoned; a pool
// whose threads cannot be started runs the tasks on the calling threads.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace overlapscope::import {

class TaskPool {
 public:
  explicit TaskPool(int threads) {
    for (int i = 1; i < threads; ++i) {
      try {
        workers_.emplace_back([this] { Work(); });
      } catch (const std::system_error&) {
        break;  // fewer threads
      }
    }
  }
  ~TaskPool() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void Run(const std::vector<std::function<void()>>& tasks, bool first = false) {
    if (tasks.empty()) return;
    Job job;
    job.tasks = &tasks;
    job.left = tasks.size();
    job.errors.assign(tasks.size(), nullptr);
    {
      std::lock_guard<std::mutex> l(mu_);
      if (first) {
        open_.push_front(&job);
      } else {
        open_.push_back(&job);
      }
    }
    wake_.notify_all();
    for (;;) {  // this thread takes its own list's tasks only
      size_t i;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (job.next >= tasks.size()) break;
        i = Take(&job);
      }
      RunTask(&job, i);
    }
    std::unique_lock<std::mutex> l(mu_);
    done_.wait(l, [&job] { return job.left == 0; });
    l.unlock();
    for (auto& e : job.errors)
      if (e) std::rethrow_exception(e);
  }

 private:
  struct Job {
    const std::vector<std::function<void()>>* tasks = nullptr;
    size_t next = 0, left = 0;
    std::vector<std::exception_ptr> errors;
  };

  // Hands out job's next task (mu_ held); a job with none left leaves open_.
  size_t Take(Job* job) {
    const size_t i = job->next++;
    if (job->next == job->tasks->size()) open_.erase(std::find(open_.begin(), open_.end(), job));
    return i;
  }
  void RunTask(Job* job, size_t i) {
    try {
      (*job->tasks)[i]();
    } catch (...) {
      job->errors[i] = std::current_exception();
    }
    std::lock_guard<std::mutex> l(mu_);
    if (--job->left == 0) done_.notify_all();
  }
  void Work() {
    for (;;) {
      Job* job;
      size_t i;
      {
        std::unique_lock<std::mutex> l(mu_);
        wake_.wait(l, [this] { return stop_ || !open_.empty(); });
        if (stop_) return;
        job = open_.front();
        i = Take(job);
      }
      RunTask(job, i);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::deque<Job*> open_;  // lists with tasks not yet handed out, in the order taken
  bool stop_ = false;
};

}  // namespace overlapscope::import
