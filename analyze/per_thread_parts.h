// PerThreadParts: per-thread lists of event indexes made in contiguous ranges of an event
// vector on several threads and joined in range order, so that each list is what one pass in
// event order makes (the critical-path index's outermost calls and host ranges, path_index.cc).
// Memory: one list per range and thread while it lives.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "base/run_all.h"

namespace overlapscope::analyze {

// Per-thread lists made in ranges of an event vector: each range fills its own list per thread
// (Fill), then they are joined per thread in range order (Join). `skip(k, list, any_before,
// state)` says how many elements at the head of range k's non-empty list to leave out, given
// whether a range before it had elements on that thread and a per-thread state it may update;
// the lists' sizes are worked out per thread first, then each range copies its part at once.
template <typename T>
class PerThreadParts {
 public:
  PerThreadParts(size_t keys, std::vector<size_t> bounds)
      : keys_(keys), bounds_(std::move(bounds)), parts_(bounds_.size() - 1, std::vector<std::vector<T>>(keys)) {}

  template <typename Fn>
  void Fill(int threads, Fn fn) {
    std::vector<std::function<void()>> tasks;
    for (size_t k = 0; k < parts_.size(); ++k)
      tasks.emplace_back([this, &fn, k] { fn(bounds_[k], bounds_[k + 1], parts_[k]); });
    base::RunAll(threads, tasks);
  }

  template <typename Skip>
  void Join(int threads, std::vector<std::vector<T>>* out, Skip skip) {
    const size_t np = parts_.size();
    std::vector<std::vector<size_t>> from(np, std::vector<size_t>(keys_, 0)), at(np, std::vector<size_t>(keys_, 0));
    out->assign(keys_, {});
    for (size_t key = 0; key < keys_; ++key) {
      bool any = false;
      int64_t state = 0;
      size_t n = 0;
      for (size_t k = 0; k < np; ++k) {
        const std::vector<T>& v = parts_[k][key];
        if (v.empty()) continue;
        from[k][key] = std::min(skip(k, v, any, state), v.size());
        at[k][key] = n;
        n += v.size() - from[k][key];
        any = true;
      }
      (*out)[key].resize(n);
    }
    std::vector<std::function<void()>> tasks;
    for (size_t k = 0; k < np; ++k)
      tasks.emplace_back([&, k] {
        for (size_t key = 0; key < keys_; ++key) {
          const std::vector<T>& v = parts_[k][key];
          std::copy(v.begin() + static_cast<std::ptrdiff_t>(from[k][key]), v.end(),
                    (*out)[key].begin() + static_cast<std::ptrdiff_t>(at[k][key]));
        }
      });
    base::RunAll(threads, tasks);
  }

 private:
  size_t keys_;
  std::vector<size_t> bounds_;
  std::vector<std::vector<std::vector<T>>> parts_;  // per range, per thread
};

}  // namespace overlapscope::analyze
