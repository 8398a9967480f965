#include "workloads/sm_clock.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace overlapscope::workloads {

namespace {

// The few NVML entry points used, declared by their documented C signatures (nvmlReturn_t is an
// int-sized enum, 0 = NVML_SUCCESS; nvmlDevice_t an opaque pointer; NVML_CLOCK_SM = 1).
using NvmlDevice = void*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, NvmlDevice*);
using ClockInfoFn = int (*)(NvmlDevice, int, unsigned int*);
using ReasonsFn = int (*)(NvmlDevice, unsigned long long*);
using PowerFn = int (*)(NvmlDevice, unsigned int*);
constexpr int kNvmlClockSm = 1;
// Clock event ("throttle") reason bits of NVML's documented nvmlClocksEventReasons.
constexpr unsigned long long kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40,
                             kHwPowerBrake = 0x80;

std::atomic<SmClockSampler*> g_active{nullptr};

}  // namespace

struct SmClockSampler::Impl {
  void* lib = nullptr;
  ShutdownFn shutdown = nullptr;
  ClockInfoFn clock = nullptr;
  ReasonsFn reasons = nullptr;                  // null on drivers without it: no reasons printed
  PowerFn power = nullptr;                      // null likewise: no power printed
  std::vector<NvmlDevice> devices;              // by CUDA device index
  std::vector<std::vector<unsigned>> samples;   // per device, MHz
  std::vector<std::vector<unsigned>> power_mw;  // per device, board power in mW
  // Per device: samples whose reasons were read, and of them those with the SW power cap, a
  // thermal slowdown (SW or HW) and a HW slowdown / power brake active.
  std::vector<unsigned> reason_n, power_cap_n, thermal_n, hw_slow_n;
  mutable std::mutex mu;
  std::atomic<bool> running{false}, stop{false};
  std::thread thread;
  int period_ms = 10;

  void Loop() {
    while (!stop.load()) {
      if (running.load()) {
        std::lock_guard<std::mutex> l(mu);
        for (size_t d = 0; d < devices.size(); ++d) {
          unsigned mhz = 0;
          if (!devices[d]) continue;
          if (clock(devices[d], kNvmlClockSm, &mhz) == 0 && mhz > 0) samples[d].push_back(mhz);
          unsigned long long why = 0;
          if (reasons && reasons(devices[d], &why) == 0) {
            ++reason_n[d];
            power_cap_n[d] += (why & kSwPowerCap) != 0;
            thermal_n[d] += (why & (kSwThermal | kHwThermal)) != 0;
            hw_slow_n[d] += (why & (kHwSlowdown | kHwPowerBrake)) != 0;
          }
          unsigned mw = 0;
          if (power && power(devices[d], &mw) == 0 && mw > 0) power_mw[d].push_back(mw);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
    }
  }
};

SmClockSampler::SmClockSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::unique_ptr<SmClockSampler> SmClockSampler::Start(int period_ms) {
  auto impl = std::make_unique<Impl>();
  impl->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!impl->lib) return nullptr;
  auto init = reinterpret_cast<InitFn>(dlsym(impl->lib, "nvmlInit_v2"));
  impl->shutdown = reinterpret_cast<ShutdownFn>(dlsym(impl->lib, "nvmlShutdown"));
  auto by_bus = reinterpret_cast<HandleByBusIdFn>(dlsym(impl->lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  impl->clock = reinterpret_cast<ClockInfoFn>(dlsym(impl->lib, "nvmlDeviceGetClockInfo"));
  // The reasons' entry point was renamed from "Throttle" to "Event" (same signature and bits).
  impl->reasons = reinterpret_cast<ReasonsFn>(dlsym(impl->lib, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (!impl->reasons)
    impl->reasons = reinterpret_cast<ReasonsFn>(dlsym(impl->lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  impl->power = reinterpret_cast<PowerFn>(dlsym(impl->lib, "nvmlDeviceGetPowerUsage"));
  if (!init || !impl->shutdown || !by_bus || !impl->clock || init() != 0) {
    dlclose(impl->lib);
    return nullptr;
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  bool any = false;
  for (int d = 0; d < n; ++d) {
    char bus[64] = {};
    NvmlDevice h = nullptr;
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), d) != cudaSuccess || by_bus(bus, &h) != 0) h = nullptr;
    any = any || h != nullptr;
    impl->devices.push_back(h);
  }
  if (!any) {
    impl->shutdown();
    dlclose(impl->lib);
    return nullptr;
  }
  const size_t nd = impl->devices.size();
  impl->samples.resize(nd);
  impl->power_mw.resize(nd);
  impl->reason_n.assign(nd, 0);
  impl->power_cap_n.assign(nd, 0);
  impl->thermal_n.assign(nd, 0);
  impl->hw_slow_n.assign(nd, 0);
  impl->period_ms = period_ms < 1 ? 1 : period_ms;
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->Loop(); });
  return std::unique_ptr<SmClockSampler>(new SmClockSampler(std::move(impl)));
}

SmClockSampler::~SmClockSampler() {
  if (ActiveSmClock() == this) SetActiveSmClock(nullptr);
  impl_->stop = true;
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->shutdown();
  dlclose(impl_->lib);
}

void SmClockSampler::Resume() { impl_->running = true; }
void SmClockSampler::Pause() { impl_->running = false; }

namespace {
struct Stat {
  double median = 0, min = 0, max = 0;
  size_t n = 0;
};
Stat Of(std::vector<unsigned> v) {
  Stat s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.n = v.size();
  s.min = v.front();
  s.max = v.back();
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  return s;
}
}  // namespace

std::string SmClockSampler::Summary() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::string out;
  for (size_t d = 0; d < impl_->samples.size(); ++d) {
    const Stat s = Of(impl_->samples[d]);
    if (s.n == 0) continue;
    absl::StrAppend(&out, out.empty() ? "" : "; ",
                    absl::StrFormat("GPU %d median %.0f MHz (min %.0f, max %.0f, %d samples", static_cast<int>(d),
                                    s.median, s.min, s.max, static_cast<int>(s.n)));
    const Stat w = Of(impl_->power_mw[d]);
    if (w.n > 0) absl::StrAppend(&out, absl::StrFormat(", power median %.0f W", w.median / 1000));
    const unsigned rn = impl_->reason_n[d];
    if (rn > 0)
      absl::StrAppend(&out, absl::StrFormat(", power cap %.0f%% / thermal %.0f%% / HW slowdown %.0f%% of samples",
                                            100.0 * impl_->power_cap_n[d] / rn, 100.0 * impl_->thermal_n[d] / rn,
                                            100.0 * impl_->hw_slow_n[d] / rn));
    absl::StrAppend(&out, ")");
  }
  if (out.empty()) return out;
  return absl::StrCat("SM clock during the timed phases (NVML, every ", impl_->period_ms, " ms): ", out);
}

void SmClockSampler::AddFigures(std::map<std::string, double>& fig) const {
  std::lock_guard<std::mutex> l(impl_->mu);
  for (size_t d = 0; d < impl_->samples.size(); ++d) {
    const Stat s = Of(impl_->samples[d]);
    if (s.n == 0) continue;
    const std::string p = absl::StrCat("sm_clock_mhz_gpu", d, "_");
    fig[p + "median"] = s.median;
    fig[p + "min"] = s.min;
    fig[p + "max"] = s.max;
    const std::string gi = absl::StrCat("gpu", d);
    const Stat w = Of(impl_->power_mw[d]);
    if (w.n > 0) fig[absl::StrCat("power_w_", gi, "_median")] = w.median / 1000;
    const unsigned rn = impl_->reason_n[d];
    if (rn > 0) {
      fig[absl::StrCat("clock_power_cap_pct_", gi)] = 100.0 * impl_->power_cap_n[d] / rn;
      fig[absl::StrCat("clock_thermal_pct_", gi)] = 100.0 * impl_->thermal_n[d] / rn;
      fig[absl::StrCat("clock_hw_slowdown_pct_", gi)] = 100.0 * impl_->hw_slow_n[d] / rn;
    }
  }
}

void SetActiveSmClock(SmClockSampler* s) { g_active.store(s); }
SmClockSampler* ActiveSmClock() { return g_active.load(); }

}  // namespace overlapscope::workloads
