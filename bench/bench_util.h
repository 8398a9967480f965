// Timing and memory figures the bench commands print (wall and process CPU seconds, peak RSS).
#pragma once

#include <time.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

namespace overlapscope::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// CPU time of this process, all threads: on a shared, oversubscribed machine it tracks what the
// analysis costs better than wall time does.
inline double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Peak resident memory of this process (VmHWM) in MB; -1 when /proc cannot say.
inline long RssMb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6) / 1024;
  return -1;
}

// The 1-, 5- and 15-minute load averages (/proc/loadavg), "?" when unreadable: on a shared
// machine a wall time means little without them.
inline std::string LoadAverages() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  if (!(f >> a >> b >> c)) return "?";
  return a + " " + b + " " + c;
}

}  // namespace overlapscope::bench
