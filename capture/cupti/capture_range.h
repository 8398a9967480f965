// Capture ranges: when the collector records (`overlapscope profile --capture-range=...`).
//
//   --capture-range=cudaProfilerApi   a window opens at cudaProfilerStart / cuProfilerStart
//                                     (torch.cuda.profiler.start()) and closes at ...Stop
//   --capture-range=nvtx --nvtx-capture=NAME[@DOMAIN]
//                                     a window opens when an NVTX range with message NAME is
//                                     pushed or started (in DOMAIN; no @: the default domain) and
//                                     closes when that range is popped or ended
//   --capture-range-end=repeat|repeat:N|stop
//                                     every range is a window (default), the first N, the first
//   --delay S      nothing is recorded before S seconds after the program was launched; without
//                  a capture range the window opens then
//   --duration S   a window closes at the latest S seconds after it opened; without a capture
//                  range the one window is [delay, delay + S]
//
// Outside a window the collector records nothing: activity kinds and API callbacks are off,
// only the callbacks that open a window stay on. The CLI passes the settings to the injection
// library through the OVERLAPSCOPE_* variables below. Pure C++ (the injection library uses it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace overlapscope::cupti {

enum class RangeTrigger : uint8_t { kNone = 0, kCudaProfilerApi = 1, kNvtx = 2 };

struct RangeConfig {
  RangeTrigger trigger = RangeTrigger::kNone;
  std::string nvtx_name;    // --nvtx-capture NAME
  std::string nvtx_domain;  // @DOMAIN; empty: NVTX's default domain
  int32_t max_windows = 0;  // 0: every range; N: the first N (stop = 1)
  int64_t delay_ns = 0;     // from the launch of the profiled program (t0_ns)
  int64_t duration_ns = 0;  // 0: windows end with their range (or with the program)
  int64_t t0_ns = 0;        // CLOCK_REALTIME when `profile` started the program; 0: unknown

  bool timed() const { return delay_ns > 0 || duration_ns > 0; }
};

// Environment variables the CLI sets for the injection library.
inline constexpr char kEnvCaptureRange[] = "OVERLAPSCOPE_CAPTURE_RANGE";  // cudaProfilerApi | nvtx
inline constexpr char kEnvNvtxCapture[] = "OVERLAPSCOPE_NVTX_CAPTURE";    // NAME[@DOMAIN]
inline constexpr char kEnvRangeEnd[] = "OVERLAPSCOPE_CAPTURE_RANGE_END";  // repeat | repeat:N | stop
inline constexpr char kEnvDelay[] = "OVERLAPSCOPE_DELAY";                 // seconds, decimal
inline constexpr char kEnvDuration[] = "OVERLAPSCOPE_DURATION";           // seconds, decimal
inline constexpr char kEnvT0[] = "OVERLAPSCOPE_T0_NS";                    // CLOCK_REALTIME ns

// Each parser returns "" on success, else a message naming the value and what is accepted.
std::string ParseCaptureRange(std::string_view value, RangeConfig* c);  // none | cudaProfilerApi | nvtx
std::string ParseNvtxCapture(std::string_view value, RangeConfig* c);   // NAME[@DOMAIN]
std::string ParseRangeEnd(std::string_view value, RangeConfig* c);      // repeat | repeat:N | stop
// Non-negative decimal seconds ("2", "0.5", "1e-3" is rejected) to ns.
std::string ParseSeconds(std::string_view value, int64_t* ns);
// Checks that the pieces fit together (nvtx needs a name, a name needs nvtx).
std::string CheckRangeConfig(const RangeConfig& c);

// Reads the OVERLAPSCOPE_* variables above; "" on success (unset variables keep defaults).
std::string RangeConfigFromEnv(RangeConfig* c);

// True when an NVTX range with `message` in domain `domain` ("" = default) opens a window.
bool NvtxMatches(const RangeConfig& c, std::string_view message, std::string_view domain);

std::string_view ToString(RangeTrigger t);

}  // namespace overlapscope::cupti
