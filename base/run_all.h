// RunAll: runs a fixed list of independent tasks on up to `threads` threads (the calling
// thread included), each task exactly once. For the passes that write disjoint results (the
// model's sorts, the analyses, the report's sections), so that the outcome is the same at any
// thread count; with threads <= 1, or when no thread can be started, the tasks run one at a
// time in the given order. Inside a task of another RunAll or RunTaskGraph it starts no threads
// of its own beyond the largest `threads` of the calls around it: the idle threads of the
// outermost call take its tasks (base/work_share.h).
//
// Failure modes: an exception thrown by a task (std::bad_alloc on a trace too large for memory)
// is caught on its thread; once every task has run or been abandoned, the first such exception
// in task order is rethrown on the calling thread, where the module's entry turns it into a
// status. Tasks not yet started when one throws are still run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "base/work_share.h"

namespace overlapscope::base {

inline void RunAll(int threads, const std::vector<std::function<void()>>& tasks) {
  if (tasks.empty()) return;
  if (threads <= 1 && work_share::Current() == nullptr) {
    // One thread and no call around: the tasks in order here, as RunTaskGraph would, without
    // copying them.
    std::exception_ptr first;
    for (const std::function<void()>& t : tasks) {
      try {
        t();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
    return;
  }
  std::vector<GraphTask> graph(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) graph[i].run = [&t = tasks[i]] { t(); };
  work_share::Run(threads, graph);
}

// The bounds of the ranges ParallelFor cuts [0, n) into: at most `threads` contiguous ranges of at
// least `min_chunk` elements (one range when n is smaller); range k is [bounds[k], bounds[k+1]).
inline std::vector<size_t> RangeBounds(int threads, size_t n, size_t min_chunk) {
  const size_t parts = std::max<size_t>(
      1, std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), n / std::max<size_t>(min_chunk, 1)));
  std::vector<size_t> bounds(parts + 1);
  for (size_t k = 0; k <= parts; ++k) bounds[k] = n * k / parts;
  return bounds;
}

// Calls fn(begin, end) over [0, n) cut into at most `threads` contiguous ranges of at least
// `min_chunk` elements, the ranges run by run(tasks) (RunAll's contract: each task once, all
// done when it returns; a pool of threads started once, say): for loops whose iterations write
// disjoint elements.
template <typename Run, typename Fn>
void ParallelForOn(Run&& run, int threads, size_t n, size_t min_chunk, Fn fn) {
  const size_t parts = std::max<size_t>(
      1, std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), n / std::max<size_t>(min_chunk, 1)));
  if (parts <= 1) {
    fn(size_t{0}, n);
    return;
  }
  std::vector<std::function<void()>> tasks;
  tasks.reserve(parts);
  for (size_t k = 0; k < parts; ++k) tasks.emplace_back([&fn, k, n, parts] { fn(n * k / parts, n * (k + 1) / parts); });
  run(tasks);
}

// ParallelForOn through RunAll (threads started for this call).
template <typename Fn>
void ParallelFor(int threads, size_t n, size_t min_chunk, Fn fn) {
  ParallelForOn([threads](const std::vector<std::function<void()>>& t) { RunAll(threads, t); }, threads, n, min_chunk,
                fn);
}

// Calls fn(begin, end, v) over [0, n) cut as ParallelFor cuts it, the first range appending to
// *out, each other range to a vector of its own, which are then appended to *out in range order:
// for loops that emit results element by element in element order, *out ends as after
// fn(0, n, out) on one thread, at any thread count. The ranges run by run(tasks), as above.
template <typename T, typename Run, typename Fn>
void ParallelAppendOn(Run&& run, int threads, size_t n, size_t min_chunk, std::vector<T>* out, Fn fn) {
  const size_t parts = std::max<size_t>(
      1, std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), n / std::max<size_t>(min_chunk, 1)));
  if (parts <= 1) {
    fn(size_t{0}, n, out);
    return;
  }
  std::vector<std::vector<T>> rest(parts - 1);
  std::vector<std::function<void()>> tasks;
  tasks.reserve(parts);
  for (size_t k = 0; k < parts; ++k)
    tasks.emplace_back(
        [&fn, &rest, out, k, n, parts] { fn(n * k / parts, n * (k + 1) / parts, k == 0 ? out : &rest[k - 1]); });
  run(tasks);
  size_t total = out->size();
  for (const std::vector<T>& o : rest) total += o.size();
  out->reserve(total);
  for (std::vector<T>& o : rest)
    for (T& x : o) out->push_back(std::move(x));
}

// ParallelAppendOn through RunAll.
template <typename T, typename Fn>
void ParallelAppend(int threads, size_t n, size_t min_chunk, std::vector<T>* out, Fn fn) {
  ParallelAppendOn([threads](const std::vector<std::function<void()>>& t) { RunAll(threads, t); }, threads, n,
                   min_chunk, out, fn);
}

// The thread count a `threads` option means: itself when positive, else the machine's cores.
inline int ThreadsOrCores(int threads) {
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace overlapscope::base
