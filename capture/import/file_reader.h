// FileReader: streams one Kineto Chrome-JSON file (plain or gzip) through a fixed window
// (never the whole file), parses the top-level object itself (file_reader.cc) and the
// traceEvents array in parallel chunks (file_reader_events.cc). Internal to capture/import.
//
// Parallel chunks: the window's events are split at a guessed event boundary near the middle
// ('}' ws ',' ws '{'). Thread A parses from the known position, thread B from the guess. B's
// output is used only when A, parsing sequentially, arrives at exactly the guessed position as
// the start of an event; otherwise B's work is dropped and A goes on alone. The result (events,
// order, skips, errors and their offsets) is therefore always that of a sequential parse.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "capture/import/file_context.h"
#include "capture/import/import.h"
#include "capture/import/input_stream.h"
#include "capture/import/json_scan.h"

namespace overlapscope::import {

class FileReader {
 public:
  FileReader(const std::string& path, model::TraceBuilder& builder, const ImportOptions& options);
  absl::Status Run();

 private:
  enum class ArrayState : uint8_t { kBeforeFirst, kBeforeElement, kAfterElement };
  enum class ChunkEnd : uint8_t { kNeedMore, kDone, kError, kStopped };
  struct ChunkResult {
    ChunkEnd end = ChunkEnd::kNeedMore;
    const char* pos = nullptr;  // event start on kNeedMore/kStopped, past ']' on kDone
    ArrayState state = ArrayState::kBeforeFirst;
    const char* err_pos = nullptr;
    const char* err = nullptr;
  };

  // "<path>: offset <N>: <reason>" at a pointer into the window.
  absl::Status ErrorAt(const char* p, std::string_view reason) const;
  absl::Status Truncated() const;
  const char* End() const { return buf_.get() + len_; }
  // Drops bytes before `keep`, reads more; grows the window when nothing could be dropped.
  absl::Status Refill(const char* keep);
  // Skips whitespace from pos_, refilling; fails with Truncated() at the end of the data.
  absl::Status SkipWsRefill();
  // Runs step(p, after, err) -> Scan from pos_, refilling and retrying on kNeedMore.
  template <typename Step>
  absl::Status RunStep(Step step, std::string_view what);
  absl::Status ParseTopLevelValue(const std::string& key);
  absl::Status ParseEventArray();
  ChunkResult ParseChunk(const char* p, ArrayState state);
  void ReserveFromFirstChunk(const char* parsed_to);
  ChunkResult ParseEvents(const char* p, ArrayState state, const char* stop_at, ThreadOut& out) const;

  FileContext ctx_;
  const ImportOptions& options_;
  int threads_ = 1;
  std::unique_ptr<InputStream> in_;
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0, len_ = 0;
  int64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false, reserved_ = false;
  const char* pos_ = nullptr;
  ThreadOut outs_[kMaxParserThreads];
};

}  // namespace overlapscope::import
