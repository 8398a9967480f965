// Timing and memory figures the bench commands print (wall and process CPU seconds, peak RSS).
#pragma once

#include <sys/resource.h>
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

// This process's user and system CPU seconds and minor page faults (getrusage, all threads): on a
// VM where a fresh page costs microseconds, the faults and the system time say where a run went.
struct Usage {
  double user_s = 0, sys_s = 0;
  long minflt = 0;
};
inline Usage UsageNow() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return {static_cast<double>(r.ru_utime.tv_sec) + static_cast<double>(r.ru_utime.tv_usec) / 1e6,
          static_cast<double>(r.ru_stime.tv_sec) + static_cast<double>(r.ru_stime.tv_usec) / 1e6, r.ru_minflt};
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
