// ShareThreads: runs fn on the calling thread as the one task of a RunAll, so that the RunAll,
// ParallelFor and RunTaskGraph calls made inside it share one set of threads
// (base/work_share.h): started as the first of them asks for them (up to the largest `threads`
// among them) and kept until fn returns, instead of each call's starting and joining its own
// (the analyses, the report and its rendering: a dozen calls one after another).
// Inside another such call, or with threads <= 1, fn simply runs.
//
// Failure modes: RunAll's (an exception of fn is rethrown on the calling thread).
#pragma once

#include <functional>

#include "base/run_all.h"

namespace overlapscope::base {

inline void ShareThreads(int threads, const std::function<void()>& fn) { RunAll(threads, {fn}); }

}  // namespace overlapscope::base
