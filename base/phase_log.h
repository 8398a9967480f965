// PhaseLog: with OVERLAPSCOPE_PHASES set in the environment, prints one line to stderr per
// named phase of a run (load, parse, finalize, analyses, render): seconds since the first call
// of wall clock, of the whole process's CPU (every thread) and of the calling thread's CPU, and
// the peak resident memory so far.
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

// The process's peak resident memory so far (VmHWM), in MiB; -1 where /proc cannot say.
inline long PeakRssMib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
  std::fclose(f);
  return kib < 0 ? -1 : kib / 1024;
}

inline bool PhasesOn() {
  static const bool on = std::getenv("OVERLAPSCOPE_PHASES") != nullptr;
  return on;
}

// The wall clock at the first call: the origin of every phase and span line.
inline double PhaseWall0() {
  static const double wall0 = ClockSeconds(CLOCK_MONOTONIC);
  return wall0;
}

// `what` names the phase that has just ended.
inline void PhaseLog(const char* what) {
  if (!PhasesOn()) return;
  static const double wall0 = PhaseWall0(), cpu0 = ClockSeconds(CLOCK_PROCESS_CPUTIME_ID),
                      thread0 = ClockSeconds(CLOCK_THREAD_CPUTIME_ID);
  std::fprintf(stderr, "phase %-24s wall %.3f s  cpu %.3f s  this thread %.3f s  peak %ld MiB\n", what,
               ClockSeconds(CLOCK_MONOTONIC) - wall0, ClockSeconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0,
               ClockSeconds(CLOCK_THREAD_CPUTIME_ID) - thread0, PeakRssMib());
}

// PhaseSpan: with OVERLAPSCOPE_PHASES set, prints on destruction one line for a named step
// inside a phase (a task of RunAll, say): its start and length in wall seconds since PhaseLog's
// first call, and the calling thread's CPU seconds in it. Nothing without the variable.
class PhaseSpan {
 public:
  explicit PhaseSpan(const char* what) : what_(what) {
    if (!PhasesOn()) return;
    wall_ = ClockSeconds(CLOCK_MONOTONIC);
    cpu_ = ClockSeconds(CLOCK_THREAD_CPUTIME_ID);
  }
  ~PhaseSpan() {
    if (!PhasesOn()) return;
    const double wall = ClockSeconds(CLOCK_MONOTONIC), cpu = ClockSeconds(CLOCK_THREAD_CPUTIME_ID);
    std::fprintf(stderr, "span  %-32s from %.3f s  wall %.4f s  thread cpu %.4f s\n", what_, wall_ - PhaseWall0(),
                 wall - wall_, cpu - cpu_);
  }
  PhaseSpan(const PhaseSpan&) = delete;
  PhaseSpan& operator=(const PhaseSpan&) = delete;

 private:
  const char* what_;
  double wall_ = 0, cpu_ = 0;
};

}  // namespace overlapscope::base
