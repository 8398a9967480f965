// Capture windows of the collector (collector_state.h, capture_range.h): opening and closing
// them, and what opens them — cudaProfilerStart/Stop, an NVTX range, the --delay/--duration timer.
//
// A window turns the activity kinds and the API recording on, and off again when it closes; its
// start and end go to the spill file as a kWindow record. Outside a window only the trigger
// callbacks (a handful of callback ids) stay enabled.
#include <generated_nvtx_meta.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string_view>

#include "capture/cupti/collector_state.h"

namespace overlapscope::cupti::internal {
namespace {

constexpr CUpti_CallbackId kRtStart = CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000;
constexpr CUpti_CallbackId kRtStop = CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000;
constexpr CUpti_CallbackId kDrvStart = CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
constexpr CUpti_CallbackId kDrvStop = CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;

constexpr CUpti_CallbackId kNvtxCbids[] = {
    CUPTI_CBID_NVTX_nvtxDomainCreateA,      CUPTI_CBID_NVTX_nvtxDomainRegisterStringA,
    CUPTI_CBID_NVTX_nvtxRangePushA,         CUPTI_CBID_NVTX_nvtxRangePushEx,
    CUPTI_CBID_NVTX_nvtxRangePop,           CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
    CUPTI_CBID_NVTX_nvtxDomainRangePop,     CUPTI_CBID_NVTX_nvtxRangeStartA,
    CUPTI_CBID_NVTX_nvtxRangeStartEx,       CUPTI_CBID_NVTX_nvtxRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
};

// Pushes minus pops in the target NVTX domain on this thread (may start below 0 when the
// program pushed before CUDA initialized and we were loaded).
thread_local int32_t t_nvtx_depth = 0;

int64_t ThreadId() { return static_cast<int64_t>(::syscall(SYS_gettid)); }

// Triggers only act after --delay.
bool PastDelay(const Globals& g) {
  const RangeConfig& r = g.config.range;
  return r.delay_ns <= 0 || RealtimeNs() >= r.t0_ns + r.delay_ns;
}

void NotifyTimer(Globals& g) {
  std::lock_guard<std::mutex> lock(g.win.timer_mu);
  g.win.timer_cv.notify_all();
}

// --- NVTX -------------------------------------------------------------------------------------

bool InTarget(Globals& g, const void* domain) {
  if (g.config.range.nvtx_domain.empty()) return domain == nullptr;
  return domain != nullptr && g.win.nvtx_domain_known.load(std::memory_order_acquire) &&
         domain == g.win.nvtx_domain.load(std::memory_order_relaxed);
}

// The message of an NVTX event (ASCII, or a registered string we kept: only the one we look
// for is kept, and map nodes never move); "" otherwise.
std::string_view Message(Globals& g, const nvtxEventAttributes_t* a) {
  if (!a) return "";
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii) return a->message.ascii;
  if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
    std::lock_guard<std::mutex> lock(g.win.domains_mu);
    auto it = g.win.registered_strings.find(a->message.registered);
    if (it != g.win.registered_strings.end()) return it->second;
  }
  return "";
}

void OnPush(Globals& g, const void* domain, std::string_view message) {
  if (!InTarget(g, domain)) return;
  ++t_nvtx_depth;
  if (message != g.config.range.nvtx_name || !PastDelay(g)) return;
  if (OpenWindow(formats::kWindowNvtx, g.config.range.nvtx_name.c_str())) {
    std::lock_guard<std::mutex> lock(g.win.mu);
    g.win.nvtx_owner_tid = ThreadId();
    g.win.nvtx_depth = t_nvtx_depth;
    g.win.nvtx_range_id = 0;
  }
}

void OnPop(Globals& g, const void* domain) {
  if (!InTarget(g, domain)) return;
  const int32_t depth = t_nvtx_depth--;
  if (!g.win.open.load() || g.win.trigger != formats::kWindowNvtx) return;
  bool close = false;
  {
    std::lock_guard<std::mutex> lock(g.win.mu);
    close = g.win.nvtx_range_id == 0 && g.win.nvtx_owner_tid == ThreadId() && depth == g.win.nvtx_depth;
  }
  if (close) CloseWindow(formats::kWindowEndRange);
}

void OnStart(Globals& g, const void* domain, std::string_view message, const void* ret) {
  if (!InTarget(g, domain) || message != g.config.range.nvtx_name || !ret || !PastDelay(g)) return;
  nvtxRangeId_t id = 0;
  std::memcpy(&id, ret, sizeof(id));
  if (OpenWindow(formats::kWindowNvtx, g.config.range.nvtx_name.c_str())) {
    std::lock_guard<std::mutex> lock(g.win.mu);
    g.win.nvtx_range_id = id;
  }
}

void OnEnd(Globals& g, const void* domain, nvtxRangeId_t id) {
  if (!InTarget(g, domain) || !g.win.open.load()) return;
  bool close = false;
  {
    std::lock_guard<std::mutex> lock(g.win.mu);
    close = g.win.trigger == formats::kWindowNvtx && g.win.nvtx_range_id != 0 && g.win.nvtx_range_id == id;
  }
  if (close) CloseWindow(formats::kWindowEndRange);
}

void OnNvtx(Globals& g, CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  const void* p = d->functionParams;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const auto* a = static_cast<const nvtxDomainCreateA_params*>(p);
      if (a->name && g.config.range.nvtx_domain == a->name && d->functionReturnValue) {
        nvtxDomainHandle_t h = nullptr;
        std::memcpy(&h, d->functionReturnValue, sizeof(h));
        g.win.nvtx_domain.store(h, std::memory_order_relaxed);
        g.win.nvtx_domain_known.store(true, std::memory_order_release);
      }
      return;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      const auto* a = static_cast<const nvtxDomainRegisterStringA_params*>(p);
      if (!a->string || !d->functionReturnValue) return;
      nvtxStringHandle_t h = nullptr;
      std::memcpy(&h, d->functionReturnValue, sizeof(h));
      if (!h || g.config.range.nvtx_name != a->string) return;  // only the name we look for
      std::lock_guard<std::mutex> lock(g.win.domains_mu);
      g.win.registered_strings[h] = a->string;
      return;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushA: {
      const char* m = static_cast<const nvtxRangePushA_params*>(p)->message;
      return OnPush(g, nullptr, m ? std::string_view(m) : std::string_view());
    }
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      return OnPush(g, nullptr, Message(g, static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib));
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* a = static_cast<const nvtxDomainRangePushEx_params*>(p);
      return OnPush(g, a->domain, Message(g, a->core.eventAttrib));
    }
    case CUPTI_CBID_NVTX_nvtxRangePop: return OnPop(g, nullptr);
    case CUPTI_CBID_NVTX_nvtxDomainRangePop: return OnPop(g, static_cast<const nvtxDomainRangePop_params*>(p)->domain);
    case CUPTI_CBID_NVTX_nvtxRangeStartA: {
      const char* m = static_cast<const nvtxRangeStartA_params*>(p)->message;
      return OnStart(g, nullptr, m ? std::string_view(m) : std::string_view(), d->functionReturnValue);
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      return OnStart(g, nullptr, Message(g, static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib),
                     d->functionReturnValue);
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto* a = static_cast<const nvtxDomainRangeStartEx_params*>(p);
      return OnStart(g, a->domain, Message(g, a->core.eventAttrib), d->functionReturnValue);
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd: return OnEnd(g, nullptr, static_cast<const nvtxRangeEnd_params*>(p)->id);
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
      const auto* a = static_cast<const nvtxDomainRangeEnd_params*>(p);
      return OnEnd(g, a->domain, a->core.id);
    }
    default: return;
  }
}

// --- timer (--delay, --duration) ---------------------------------------------------------------

void TimerMain() {
  Globals& g = G();
  const RangeConfig& r = g.config.range;
  std::unique_lock<std::mutex> lock(g.win.timer_mu);
  while (!g.win.timer_stop) {
    const int64_t now = RealtimeNs();
    int64_t next = now + 50000000;  // re-check at least every 50 ms (the clock may step)
    if (r.trigger == RangeTrigger::kNone && !g.win.delay_done) {
      const int64_t at = r.t0_ns + r.delay_ns;
      if (now >= at) {
        g.win.delay_done = true;
        lock.unlock();
        OpenWindow(formats::kWindowDelay, nullptr);
        lock.lock();
        continue;
      }
      next = std::min(next, at);
    }
    if (r.duration_ns > 0 && g.win.open.load()) {
      const int64_t at = g.win.start_ns + r.duration_ns;  // start_ns is stable while open
      if (now >= at) {
        lock.unlock();
        CloseWindow(formats::kWindowEndDuration);
        lock.lock();
        continue;
      }
      next = std::min(next, at);
    }
    g.win.timer_cv.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(next - now, 100000)));
  }
}

void EnableTriggerCallbacks(Globals& g, uint32_t enable) {
  if (!g.subscriber) return;
  if (g.config.range.trigger == RangeTrigger::kCudaProfilerApi) {
    cuptiEnableCallback(enable, g.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, kRtStart);
    cuptiEnableCallback(enable, g.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, kRtStop);
    cuptiEnableCallback(enable, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kDrvStart);
    cuptiEnableCallback(enable, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kDrvStop);
  } else if (g.config.range.trigger == RangeTrigger::kNvtx) {
    for (CUpti_CallbackId cbid : kNvtxCbids) cuptiEnableCallback(enable, g.subscriber, CUPTI_CB_DOMAIN_NVTX, cbid);
  }
}

}  // namespace

bool OpenWindow(uint32_t trigger, const char* name, std::string* err) {
  Globals& g = G();
  std::lock_guard<std::mutex> lock(g.win.mu);
  if (g.win.open.load() || g.win.finished || !g.active.load()) return false;
  const int64_t start = RealtimeNs();
  std::string failed = EnableKinds(g);
  if (!failed.empty()) {
    if (err) *err = failed;
    return false;
  }
  StartApiRecording(g);
  g.win.start_ns = start;
  g.win.trigger = trigger;
  ++g.win.opened;
  {
    std::lock_guard<std::mutex> w(g.mu);
    g.win.name_sid = name ? g.w.Intern(name) : 0;
    formats::SpillWindow win{start, 0, g.win.opened, trigger, g.win.name_sid, formats::kWindowEndStop};
    formats::SpillEncoder::Append(&g.w.out, formats::SpillType::kWindow, win);
    WriteOut(g.w);
  }
  g.win.open.store(true);
  if (g.config.range.duration_ns > 0) NotifyTimer(g);
  return true;
}

void CloseWindow(uint32_t end_reason) {
  Globals& g = G();
  std::lock_guard<std::mutex> lock(g.win.mu);
  if (!g.win.open.load()) return;
  StopApiRecording(g);
  DisableKinds(g);
  const int64_t end = RealtimeNs();
  g.win.open.store(false);
  ++g.win.closed;
  const int32_t max = g.config.range.max_windows;
  if (g.config.range.trigger == RangeTrigger::kNone || (max > 0 && g.win.closed >= static_cast<uint32_t>(max))) {
    g.win.finished = true;  // nothing will open again: stop paying for the triggers too
    EnableTriggerCallbacks(g, 0);
  }
  std::lock_guard<std::mutex> w(g.mu);
  DrainApiRings(g);
  formats::SpillWindow win{g.win.start_ns, end, g.win.opened, g.win.trigger, g.win.name_sid, end_reason};
  formats::SpillEncoder::Append(&g.w.out, formats::SpillType::kWindow, win);
  WriteOut(g.w);
}

bool IsTriggerCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return cbid == kRtStart || cbid == kRtStop;
  return domain == CUPTI_CB_DOMAIN_DRIVER_API && (cbid == kDrvStart || cbid == kDrvStop);
}

void OnTriggerCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Globals& g = G();
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    if (g.config.range.trigger == RangeTrigger::kNvtx) OnNvtx(g, cbid, static_cast<const CUpti_NvtxData*>(data));
    return;
  }
  if (g.config.range.trigger != RangeTrigger::kCudaProfilerApi) return;
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  const bool start = cbid == kRtStart || cbid == kDrvStart;
  // Open after cudaProfilerStart returned, close before cudaProfilerStop runs: neither call is
  // part of the window. cudaProfilerStart calls cuProfilerStart: the second one finds it open.
  if (start && d->callbackSite == CUPTI_API_EXIT && PastDelay(g)) OpenWindow(formats::kWindowCudaProfilerApi, nullptr);
  if (!start && d->callbackSite == CUPTI_API_ENTER) CloseWindow(formats::kWindowEndRange);
}

void ArmTriggers(Globals& g) {
  RangeConfig& r = g.config.range;
  if (r.t0_ns <= 0) r.t0_ns = RealtimeNs();  // in-process: the delay counts from Start()
  g.win.nvtx_domain_known.store(false);
  EnableTriggerCallbacks(g, 1);
  g.win.timer_stop = false;
  g.win.delay_done = r.trigger != RangeTrigger::kNone || r.delay_ns <= 0;
  if (r.timed()) g.win.timer = std::thread(TimerMain);
}

void DisarmTriggers(Globals& g) {
  EnableTriggerCallbacks(g, 0);
  {
    std::lock_guard<std::mutex> lock(g.win.timer_mu);
    g.win.timer_stop = true;
    g.win.timer_cv.notify_all();
  }
  if (g.win.timer.joinable()) {
    if (g.win.timer.get_id() == std::this_thread::get_id())
      g.win.timer.detach();
    else
      g.win.timer.join();
  }
  std::lock_guard<std::mutex> lock(g.win.mu);
  g.win.finished = true;
}

}  // namespace overlapscope::cupti::internal
