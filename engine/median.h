// The median of a list of figures, for the replay's summaries (engine-internal): the middle value,
// or for an even count the mean of the two middle ones in T (integer division for integers);
// T{} for an empty list. Takes the list by value: it is sorted.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace overlapscope::engine {

template <typename T>
T Median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : static_cast<T>((v[n / 2 - 1] + v[n / 2]) / 2);
}

}  // namespace overlapscope::engine
