// PhaseLog: with OVERLAPSCOPE_PHASES set in the environment, prints one line to stderr per
// named phase of a run (load, parse, finalize, analyses, render): seconds since the first call
// of wall clock, of the whole process's CPU (every thread) and of the calling thread's CPU.
// Where the time goes on a machine without a profiler (docs/PERFORMANCE.md); without the
// variable it costs one cached getenv test per call and prints nothing.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace overlapscope::base {

inline double ClockSeconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// `what` names the phase that has just ended.
inline void PhaseLog(const char* what) {
  static const bool on = std::getenv("OVERLAPSCOPE_PHASES") != nullptr;
  if (!on) return;
  static const double wall0 = ClockSeconds(CLOCK_MONOTONIC), cpu0 = ClockSeconds(CLOCK_PROCESS_CPUTIME_ID),
                      thread0 = ClockSeconds(CLOCK_THREAD_CPUTIME_ID);
  std::fprintf(stderr, "phase %-24s wall %.3f s  cpu %.3f s  this thread %.3f s\n", what,
               ClockSeconds(CLOCK_MONOTONIC) - wall0, ClockSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0,
               ClockSeconds(CLOCK_THREAD_CPUTIME_ID) - thread0);
}

}  // namespace overlapscope::base
