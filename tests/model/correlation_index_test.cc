// model::CorrelationIndex built with several threads (its passes over the calls in ranges): the
// same lookups and duplicate count as with one, for one process with sparse ids (the parallel
// path: ids 0, 77, 154, ... in a shuffled order, every 10th repeated, some calls without an id)
// and for two processes (the one-pass path).
#include "model/correlation_index.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace overlapscope::model {
namespace {

std::vector<ApiCall> Calls(size_t n) {
  std::vector<ApiCall> calls(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t k = static_cast<int64_t>((i * 7919) % n);
    calls[i].correlation_id = i % 97 == 5 ? kNoCorrelation : (i % 10 == 3 ? k / 10 * 10 : k) * 77;
  }
  return calls;
}

void ExpectSame(const std::vector<ApiCall>& calls, const std::vector<ProcessId>& process_of, size_t processes) {
  const CorrelationIndex one(calls, process_of, processes, 1);
  for (int threads : {2, 3, 7, 16}) {
    const CorrelationIndex many(calls, process_of, processes, threads);
    EXPECT_EQ(many.duplicates(), one.duplicates()) << threads;
    for (size_t p = 0; p < processes; ++p)
      for (int64_t id = -77; id < static_cast<int64_t>(calls.size()) * 77 + 154; id += 11)
        ASSERT_EQ(many.Find(static_cast<ProcessId>(p), id), one.Find(static_cast<ProcessId>(p), id))
            << "threads " << threads << " process " << p << " id " << id;
  }
}

TEST(CorrelationIndexThreads, OneSparseProcessSameAtEveryCount) {
  const std::vector<ApiCall> calls = Calls(200000);
  const std::vector<ProcessId> process_of(calls.size(), 0);
  const CorrelationIndex one(calls, process_of, 1, 1);
  EXPECT_GT(one.duplicates(), 0);
  EXPECT_NE(one.Find(0, 77), kNone);
  ExpectSame(calls, process_of, 1);
}

TEST(CorrelationIndexThreads, TwoProcessesSameAtEveryCount) {
  const std::vector<ApiCall> calls = Calls(100000);
  std::vector<ProcessId> process_of(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) process_of[i] = static_cast<ProcessId>(i % 2);
  ExpectSame(calls, process_of, 2);
}

}  // namespace
}  // namespace overlapscope::model
