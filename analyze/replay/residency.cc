#include "analyze/replay/residency.h"

#include <algorithm>
#include <cmath>

namespace overlapscope::analyze::replay {
namespace {

constexpr int64_t kRegsPerSm = 65536;
constexpr int64_t kSmemPerSm = 228 * 1024;
constexpr int64_t kThreadsPerSm = 2048;
constexpr int64_t kBlocksPerSm = 32;

// The rate of a kernel wanting `want` SMs while `held` are taken.
double Rate(int32_t want, int32_t sms, int64_t held) {
  const int64_t free = std::max<int64_t>(1, sms - held);
  return free >= want ? 1.0 : static_cast<double>(free) / want;
}

// Walks the piecewise-constant rate from `start`: calls step(t0, t1, rate) for each piece until
// it returns false (the last piece is open-ended: t1 = INT64_MAX).
template <typename F>
void Pieces(int64_t start, int32_t want, int32_t sms, const HoldSteps& holds, F step) {
  int64_t held = 0;
  size_t i = 0;
  for (; i < holds.size() && holds[i].first <= start; ++i) held += holds[i].second;
  int64_t t = start;
  while (true) {
    const int64_t next = i < holds.size() ? holds[i].first : INT64_MAX;
    if (!step(t, next, Rate(want, sms, held))) return;
    t = next;
    for (; i < holds.size() && holds[i].first == t; ++i) held += holds[i].second;
  }
}

}  // namespace

BlockFootprint FootprintOfKernel(const model::Kernel& k) {
  BlockFootprint f;
  const int64_t b = static_cast<int64_t>(std::max(0, k.grid.x)) * std::max(1, k.grid.y) * std::max(1, k.grid.z);
  const int64_t th = static_cast<int64_t>(std::max(0, k.block.x)) * std::max(1, k.block.y) * std::max(1, k.block.z);
  f.blocks = static_cast<int32_t>(std::min<int64_t>(b, INT32_MAX));
  f.threads = static_cast<int32_t>(std::min<int64_t>(th, 1 << 20));
  f.regs = k.registers_per_thread;
  f.smem = k.shared_memory_bytes;
  return f;
}

int32_t BlocksPerSm(const BlockFootprint& k) {
  if (!k.Known()) return 1;
  int64_t n = std::min(kBlocksPerSm, kThreadsPerSm / k.threads);
  if (k.regs > 0) n = std::min(n, kRegsPerSm / (static_cast<int64_t>(k.regs) * k.threads));
  if (k.smem > 0) n = std::min(n, kSmemPerSm / k.smem);
  return static_cast<int32_t>(std::max<int64_t>(1, n));
}

int32_t SmsOccupied(const BlockFootprint& k, int32_t sms) {
  if (k.blocks <= 0) return sms;
  const int64_t per = BlocksPerSm(k);
  return static_cast<int32_t>(std::min<int64_t>(sms, (k.blocks + per - 1) / per));
}

bool FitsBeside(const BlockFootprint& k, const BlockFootprint& c) {
  if (!k.Known() || !c.Known()) return false;
  const int64_t n = BlocksPerSm(k);
  return n < kBlocksPerSm && n * k.threads + c.threads <= kThreadsPerSm &&
         n * k.regs * k.threads + static_cast<int64_t>(c.regs) * c.threads <= kRegsPerSm &&
         n * k.smem + c.smem <= kSmemPerSm;
}

int64_t FluidEnd(int64_t start, int64_t work_ns, int32_t want, int32_t sms, const HoldSteps& holds) {
  double left = static_cast<double>(std::max<int64_t>(0, work_ns));
  int64_t end = start;
  Pieces(start, want, sms, holds, [&](int64_t t0, int64_t t1, double rate) {
    const double can = t1 == INT64_MAX ? left : rate * static_cast<double>(t1 - t0);
    if (can >= left) {
      end = t0 + static_cast<int64_t>(std::llround(left / rate));
      return false;
    }
    left -= can;
    return true;
  });
  return end;
}

int64_t FluidWork(int64_t start, int64_t end, int32_t want, int32_t sms, const HoldSteps& holds) {
  double work = 0;
  Pieces(start, want, sms, holds, [&](int64_t t0, int64_t t1, double rate) {
    const int64_t hi = std::min(t1, end);
    if (hi > t0) work += rate * static_cast<double>(hi - t0);
    return t1 < end;
  });
  return static_cast<int64_t>(std::llround(work));
}

}  // namespace overlapscope::analyze::replay
