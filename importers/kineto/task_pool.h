// TaskPool: threads started once that run list after list of independent tasks, for the parallel
// gzip inflate's two phases a batch (base::RunAll starts its threads on every call: at 16 threads
// and a batch every few milliseconds, the launches cost a good part of a batch). Run() returns
// once every task ran; the calling thread takes tasks too. Internal to importers/kineto.
//
// `nice` (measurement aid, 0: none): the pool's own threads run at that nice value (Linux,
// setpriority on each thread; refused or elsewhere: ignored); the calling thread keeps its own.
//
// Failure modes: an exception a task throws (std::bad_alloc) is caught on its thread and the first
// one in task order rethrown by Run() after every task ran or was abandoned; a pool whose threads
// cannot be started runs the tasks on the calling thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <system_error>
#include <thread>
#include <vector>

namespace overlapscope::import {

class TaskPool {
 public:
  explicit TaskPool(int threads, int nice = 0) {
    for (int i = 1; i < threads; ++i) {
      try {
        workers_.emplace_back([this, nice] {
#ifdef __linux__
          if (nice != 0) setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
#endif
          Work();
        });
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

  void Run(const std::vector<std::function<void()>>& tasks) {
    if (tasks.empty()) return;
    errors_.assign(tasks.size(), nullptr);
    {
      std::lock_guard<std::mutex> l(mu_);
      tasks_ = &tasks;
      next_ = 0;
      left_ = tasks.size();
      ++generation_;
    }
    wake_.notify_all();
    Drain();
    std::unique_lock<std::mutex> l(mu_);
    done_.wait(l, [this] { return left_ == 0; });
    tasks_ = nullptr;
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  // Takes tasks of the current list until none is left.
  void Drain() {
    for (;;) {
      size_t i;
      const std::vector<std::function<void()>>* list;
      {
        std::lock_guard<std::mutex> l(mu_);
        if (tasks_ == nullptr || next_ >= tasks_->size()) return;
        i = next_++;
        list = tasks_;
      }
      try {
        (*list)[i]();
      } catch (...) {
        errors_[i] = std::current_exception();
      }
      std::lock_guard<std::mutex> l(mu_);
      if (--left_ == 0) done_.notify_all();
    }
  }
  void Work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        wake_.wait(l, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      Drain();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::vector<std::function<void()>>* tasks_ = nullptr;
  std::vector<std::exception_ptr> errors_;
  size_t next_ = 0, left_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace overlapscope::import
