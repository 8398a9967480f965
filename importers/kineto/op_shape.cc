#include "importers/kineto/op_shape.h"

#include <cstdint>

#include "absl/container/inlined_vector.h"

namespace overlapscope::import {
namespace {

constexpr int64_t kDimMax = int64_t{1} << 40;  // far above any tensor's dimension: a guard, not a limit

// Inline room for a matmul's operands and their dims (2-3 operands of rank 2-4 on the usual
// path): no allocation per op, where vectors made ~10 (about two thousand instructions each of
// ~100 K ops of the 500 MB bench trace). Larger ones still fit, on the heap.
using Dim = absl::InlinedVector<int64_t, 6>;
using Dims = absl::InlinedVector<Dim, 4>;

// "[[a, b], [], [c]]" -> {{a, b}, {}, {c}}; false on anything else (strings, nesting deeper).
bool ParseDims(std::string_view s, Dims* out) {
  size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  };
  auto eat = [&](char c) {
    ws();
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  };
  if (!eat('[')) return false;
  if (eat(']')) return true;
  do {
    if (!eat('[')) return false;
    Dim& d = out->emplace_back();
    if (!eat(']')) {
      do {
        ws();
        if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
        int64_t x = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
          x = x * 10 + (s[i++] - '0');
          if (x > kDimMax) return false;
        }
        d.push_back(x);
      } while (eat(','));
      if (!eat(']')) return false;
    }
  } while (eat(','));
  return eat(']');
}

int64_t Product(const Dim& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t j = from; j < to; ++j) {
    if (d[j] != 0 && p > kDimMax / d[j]) return -1;  // before the product: no overflow
    p *= d[j];
  }
  return p;
}

// The factors a (..., m, k) and b (..., k, n) in the batched way of matmul: b 2-D folds a's
// leading dims into m (as torch does), else they are the batch.
bool Batched(const Dim& a, const Dim& b, model::OpShape* s) {
  if (a.size() < 2 || b.size() < 2) return false;
  const int64_t k = a.back(), n = b.back();
  if (b[b.size() - 2] != k) return false;
  int64_t m = a[a.size() - 2], batch = 1;
  if (b.size() == 2) {
    m = Product(a, 0, a.size() - 1);
  } else {
    batch = Product(a, 0, a.size() - 2);
  }
  if (m < 0 || batch < 0) return false;
  s->m = m, s->n = n, s->k = k, s->batch = batch;
  return true;
}

}  // namespace

bool MatmulShapeFromDims(std::string_view name, std::string_view dims, model::OpShape* s) {
  int first = -1;  // the operand that is the left factor
  bool linear = false;
  if (name == "aten::mm" || name == "aten::matmul" || name == "aten::bmm" || name == "aten::_scaled_mm") {
    first = 0;
  } else if (name == "aten::addmm" || name == "aten::baddbmm" || name == "aten::addbmm") {
    first = 1;  // self (the addend) comes first
  } else if (name == "aten::linear") {
    first = 0, linear = true;
  } else {
    return false;
  }
  Dims d;
  if (!ParseDims(dims, &d) || d.size() < static_cast<size_t>(first) + 2) return false;
  const Dim& a = d[first];
  const Dim& b = d[first + 1];
  if (!linear) return Batched(a, b, s);
  // linear: input (..., k), weight (n, k).
  if (a.empty() || b.size() != 2 || b[1] != a.back()) return false;
  const int64_t m = Product(a, 0, a.size() - 1);
  if (m < 0) return false;
  s->m = m, s->n = b[0], s->k = a.back(), s->batch = 1;
  return true;
}

}  // namespace overlapscope::import
