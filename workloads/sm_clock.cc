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
constexpr int kNvmlClockSm = 1;

std::atomic<SmClockSampler*> g_active{nullptr};

}  // namespace

struct SmClockSampler::Impl {
  void* lib = nullptr;
  ShutdownFn shutdown = nullptr;
  ClockInfoFn clock = nullptr;
  std::vector<NvmlDevice> devices;             // by CUDA device index
  std::vector<std::vector<unsigned>> samples;  // per device, MHz
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
          if (devices[d] && clock(devices[d], kNvmlClockSm, &mhz) == 0 && mhz > 0) samples[d].push_back(mhz);
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
  impl->samples.resize(impl->devices.size());
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
                    absl::StrFormat("GPU %d median %.0f MHz (min %.0f, max %.0f, %d samples)", static_cast<int>(d),
                                    s.median, s.min, s.max, static_cast<int>(s.n)));
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
  }
}

void SetActiveSmClock(SmClockSampler* s) { g_active.store(s); }
SmClockSampler* ActiveSmClock() { return g_active.load(); }

}  // namespace overlapscope::workloads
