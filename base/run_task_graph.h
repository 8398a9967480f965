// RunTaskGraph: runs a fixed list of tasks, each after the tasks it names, on up to `threads`
// threads (the calling thread included), each task exactly once. For passes whose steps write
// disjoint results and read only what the steps they wait for wrote (the analyses after the
// model is built), so that the outcome is the same at any thread count while no step waits
// for more than it reads (RunAll's rounds wait for a round's longest step).
//
// A task may name only tasks before it in the list (`after` indexes smaller than its own), so
// the list order is always an order the tasks can run in: with threads <= 1, or when no thread
// can be started, the tasks run one at a time in list order. With more, a free thread takes
// the first task in list order whose tasks before it have all finished. The threads are shared
// with the RunTaskGraph, RunAll and ParallelFor calls made inside the tasks (base/work_share.h):
// a nested call starts no threads of its own beyond `threads` in all.
//
// Failure modes: a task that names itself or a later task is never started and its result is
// abandoned, as are the tasks after it (in `after`); std::invalid_argument is then rethrown
// as any other. An exception thrown by a task is caught on its thread; the tasks that wait
// for it (directly or not) are not run; once every other task has run, the first exception in
// task order is rethrown on the calling thread, where the module's entry turns it into a
// status.
#pragma once

#include <vector>

#include "base/work_share.h"

namespace overlapscope::base {

inline void RunTaskGraph(int threads, const std::vector<GraphTask>& tasks) { work_share::Run(threads, tasks); }

}  // namespace overlapscope::base
