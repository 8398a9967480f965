#include "analyze/replay/last_round.h"

#include <algorithm>
#include <cmath>

namespace overlapscope::analyze::replay {
namespace {

// Digits at s[i...] as a number (at most 6 digits: a tile side), advancing i; -1 when none.
int64_t Number(std::string_view s, size_t& i) {
  int64_t x = 0;
  size_t n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && n < 7) x = x * 10 + (s[i++] - '0'), ++n;
  return n == 0 || n > 6 ? -1 : x;
}

// "AxB" or "AxBxC" at s[i...] followed by '_' or the end; (A, B).
bool Dims(std::string_view s, size_t i, int64_t* a, int64_t* b, bool need_underscore) {
  const int64_t x = Number(s, i);
  if (x < 0 || i >= s.size() || s[i] != 'x') return false;
  ++i;
  const int64_t y = Number(s, i);
  if (y < 0) return false;
  if (i < s.size() && s[i] == 'x') {
    ++i;
    if (Number(s, i) < 0) return false;
  }
  if (need_underscore && i < s.size() && s[i] != '_') return false;
  *a = x, *b = y;
  return true;
}

}  // namespace

bool TileOfKernelName(std::string_view name, int64_t* a, int64_t* b) {
  constexpr std::string_view kTilesize = "tilesize";
  if (const size_t at = name.find(kTilesize); at != std::string_view::npos) {
    if (Dims(name, at + kTilesize.size(), a, b, false) && *a > 0 && *b > 0) return true;
  }
  for (size_t i = name.find('_'); i != std::string_view::npos; i = name.find('_', i + 1)) {
    int64_t x, y;
    if (Dims(name, i + 1, &x, &y, true) && x >= 16 && y >= 16) {
      *a = x, *b = y;
      return true;
    }
  }
  return false;
}

OpShapeIndex::OpShapeIndex(const model::Trace& t) {
  by_op_.reserve(t.op_shapes().size());
  const size_t threads = t.threads().size();
  for (const model::OpShape& s : t.op_shapes()) {
    if (s.thread < 0 || static_cast<size_t>(s.thread) >= threads || s.external_id == model::kNoCorrelation) continue;
    by_op_.try_emplace({t.ProcessOfThread(s.thread), s.external_id}, &s);
  }
}

const model::OpShape* OpShapeIndex::Of(const model::Trace& t, const model::Kernel& k) const {
  if (by_op_.empty() || k.external_id == model::kNoCorrelation || k.device < 0) return nullptr;
  auto it = by_op_.find({t.ProcessOfDevice(k.device), k.external_id});
  return it == by_op_.end() ? nullptr : it->second;
}

LastRound LastRoundOf(const model::Trace& t, const OpShapeIndex& shapes, const model::Kernel& k, int32_t blocks,
                      int32_t sms) {
  LastRound r;
  const model::OpShape* s = shapes.Of(t, k);
  int64_t a, b;
  if (!s || blocks <= 0 || blocks > sms || !TileOfKernelName(t.str(k.name), &a, &b)) return r;
  constexpr int64_t kMaxDim = int64_t{1} << 50;  // OpShape is a plain struct: any value may come
  if (s->m <= 0 || s->n <= 0 || s->batch <= 0 || s->m > kMaxDim || s->n > kMaxDim) return r;
  // cuBLAS is column-major: PyTorch's row-major C (m x n) is its n x m, the tile's first side
  // along n. (Both orders give the same count where each side divides its dimension, as in every
  // capture of tests/data.)
  const int64_t cols = (s->n + a - 1) / a, rows = (s->m + b - 1) / b;
  constexpr int64_t kMaxTiles = int64_t{1} << 40;  // a guard against overflow, far above any GEMM
  if (cols > kMaxTiles / rows || cols * rows > kMaxTiles / s->batch) return r;
  const int64_t per = cols * rows;
  r.tiles = per * s->batch;
  const int64_t rounds = (r.tiles + blocks - 1) / blocks;
  if (rounds > (int64_t{1} << 30)) return r;
  r.rounds = static_cast<int32_t>(rounds);
  r.free_sms = static_cast<int32_t>(sms - blocks + (rounds * blocks - r.tiles));
  return r;
}

int64_t StartInLastRound(const model::Trace& t, const OpShapeIndex& shapes, const model::Kernel& k, int32_t blocks,
                         int32_t sms, int64_t k_start, int64_t k_end, double rate, int32_t held, int64_t ready,
                         LastRoundWait* kind) {
  *kind = LastRoundWait::kNoShape;
  if (shapes.empty()) return k_end;
  const LastRound lr = LastRoundOf(t, shapes, k, blocks, sms);
  if (lr.rounds == 0) return k_end;
  *kind = LastRoundWait::kOutside;
  if (held > lr.free_sms || !(rate > 0)) return k_end;
  *kind = LastRoundWait::kInRound;
  const double round = static_cast<double>(k_end - k_start) / lr.rounds;
  return std::max(ready, k_end - static_cast<int64_t>(std::llround(rate * round)));
}

double LastRoundRate(std::string_view kernel_name) {
  if (kernel_name.find("AllGather") != std::string_view::npos) return kAllGatherLastRoundRate;
  return 0;
}

}  // namespace overlapscope::analyze::replay
