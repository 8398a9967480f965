// The SM clock of the GPUs while the workloads' timed phases run, so every timing table says at
// which clock it was measured (random data draws more power than structured data, and the GPU
// then clocks lower: the same kernel takes longer).
//
// Source: NVML's current SM clock (nvmlDeviceGetClockInfo, NVML_CLOCK_SM), read every
// `period_ms` by a background thread for every GPU visible to CUDA in this process (matched by
// PCI bus id). NVML is loaded at run time from the driver's libnvidia-ml.so.1 (no build-time
// dependency: the CUDA toolkit here ships no nvml.h); without it Start() returns null and no
// clock is printed.
//
// Samples are taken only while resumed: RunPhase (mode_runner.h) resumes the active sampler
// (SetActiveSmClock) around the timed part of each phase, not around set-up or capture.
#pragma once

#include <map>
#include <memory>
#include <string>

namespace overlapscope::workloads {

class SmClockSampler {
 public:
  // Null when NVML cannot be loaded or no visible GPU is found in it. Starts paused.
  static std::unique_ptr<SmClockSampler> Start(int period_ms = 10);
  ~SmClockSampler();
  SmClockSampler(const SmClockSampler&) = delete;
  SmClockSampler& operator=(const SmClockSampler&) = delete;

  void Resume();
  void Pause();
  // "SM clock during the timed phases (NVML, every 10 ms): GPU 0 median 1755 MHz (min 1650, max
  // 1980, 412 samples); GPU 1 ..." or "" when nothing was sampled.
  std::string Summary() const;
  // sm_clock_mhz_gpu<i>_{median,min,max} per CUDA device index i.
  void AddFigures(std::map<std::string, double>& fig) const;

  struct Impl;

 private:
  explicit SmClockSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The sampler RunPhase resumes and pauses (may be null; not owned).
void SetActiveSmClock(SmClockSampler* s);
SmClockSampler* ActiveSmClock();

}  // namespace overlapscope::workloads
