// FileReader: streams one Kineto Chrome-JSON file (plain or gzip) through a fixed window
// (never the whole file), parses the top-level object itself (file_reader.cc) and the
// traceEvents array in parallel chunks (file_reader_events.cc). Internal to importers/kineto.
//
// Window (file_reader_window.cc): two buffers. While the parser works on one, a reader thread
// reads (or inflates) the next block into the other, kGap bytes in; at the switch the unparsed
// tail of the current window (usually part of one event) is copied just before the new block.
//
// Parallel chunks: the window's events are split into one part per parser thread at guessed
// event boundaries ('}' ws ',' ws '{', searched from the first newline past each 1/N of the
// window). Part 0 is parsed from the known position, part i from its guess, each up to the next
// guess, all at once. Part i's output is used only when the parse of part i-1 (itself sequential
// from a verified start) stopped at exactly part i's start; from the first part that fails this,
// the speculative work is dropped and the rest of the window is parsed in order. The result
// (events, order, skips, errors and their offsets) is therefore always that of a sequential
// parse, whatever the thread count. A window whose parts all hold is merged into the builder
// (in file order) while the next window's parts parse: the parts run on parser threads started
// once per file (a TaskPool), task 0 merging the previous window (on the merge's own pool) and
// then parsing part 0. OVERLAPSCOPE_WINDOWS prints a per-window timeline (file_reader_timeline.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "importers/kineto/file_context.h"
#include "importers/kineto/import.h"
#include "importers/kineto/input_stream.h"
#include "importers/kineto/json_scan.h"
#include "importers/kineto/mapped_file.h"

namespace overlapscope::import {

class TaskPool;  // task_pool.h

class FileReader {
 public:
  FileReader(const std::string& path, model::TraceBuilder& builder, const ImportOptions& options);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
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
  absl::Status Truncated();  // sets truncated_
  const char* End() const { return win_ + len_; }
  // Drops bytes before `keep` and appends the next block (the window grows when a single value
  // is larger than a block). Sets eof_ when no data is left.
  absl::Status Refill(const char* keep);
  // The same over a mapped plain file: the window is a view of the map (nothing copied), with
  // kPad zeros written after its end (the bytes they hide kept and put back at the next refill).
  absl::Status RefillMapped(const char* keep);
  void StartPrefetch(int buffer, size_t bytes);
  void WaitPrefetch();
  // On many threads, buffer 0 (the second block's) is allocated at the start and its pages
  // touched on a thread of their own while the first block is read: the second read then copies
  // into memory already mapped. Joined before buffer 0 is read into.
  void StartPrefault();
  void WaitPrefault();
  // Over a mapped plain file, where the parse leaves a CPU of this process's set idle (threads_
  // below their count; OVERLAPSCOPE_MAP_POPULATE=0 or 1 decides instead): the page-table entries
  // of the bytes the next window adds are made on a thread of their own (MADV_POPULATE_READ)
  // while this window is parsed, as the .json.gz's reader inflates beside the parse, so the
  // parser threads do not take those page faults. Joined at the next refill and when the reader
  // ends; a failure (an old kernel, a file cut short) only leaves the faults to the parse.
  void StartMapPopulate(int64_t from, size_t bytes);
  void WaitMapPopulate();
  // Skips whitespace from pos_, refilling; fails with Truncated() at the end of the data.
  absl::Status SkipWsRefill();
  // Runs step(p, after, err) -> Scan from pos_, refilling and retrying on kNeedMore.
  template <typename Step>
  absl::Status RunStep(Step step, std::string_view what);
  absl::Status ParseTopLevel(bool* saw_events);
  absl::Status ParseTopLevelValue(const std::string& key);
  absl::Status ParseEventArray();
  ChunkResult ParseChunk(const char* p, ArrayState state);
  // p, then the guessed event starts of parts 1.. (increasing; fewer than threads_ in a small
  // window or where no boundary is found).
  std::vector<const char*> SplitPoints(const char* p) const;
  void ReserveFromFirstChunk(const char* parsed_to);
  // Adjusts first_share_ from one window's part parse times (seconds[0]: part 0) and the time
  // task 0 spent merging.
  void BalanceFirstPart(const std::vector<double>& seconds, double merge_seconds);
  // Merges the previous window's parts (pending_parts_ of set pending_set_), in file order;
  // returns the seconds it took (0 when none were pending).
  double MergePending();
  ThreadOut& Out(int set, size_t part) { return outs_[set][part]; }
  static int Which(int set, size_t part) { return set * kMaxParserThreads + static_cast<int>(part); }
  ChunkResult ParseEvents(const char* p, ArrayState state, const char* stop_at, ThreadOut& out) const;
  // The per-window timeline (file_reader_timeline.cc), printed to stderr at the end of the
  // parse when OVERLAPSCOPE_WINDOWS is set: what the calling thread did in each window and when
  // the other parts ended. Seconds on the phase clock (base/phase_log.h). Costs nothing else.
  struct WindowTimes {
    double start = 0, spawned = 0, merged = 0, part0 = 0, last_part = 0, joined = 0;
    double refill = 0, refill_wait = 0;  // the Refill before this window: all of it, the wait for the read
    size_t bytes = 0, parts = 0;
  };
  static double Now();
  void PrintTimeline() const;

  bool timeline_on_ = false;
  std::vector<WindowTimes> timeline_;
  double refill_s_ = 0, refill_wait_s_ = 0;  // the last Refill's

  FileContext ctx_;
  const ImportOptions& options_;
  int threads_ = 1;
  int parts_ = 1;             // parts a window is split into at most (threads_, or OVERLAPSCOPE_PARTS)
  double first_share_ = 1.0;  // part 0's share of a window against 1 for each other part
  std::unique_ptr<InputStream> in_;
  const MappedFile* map_ = nullptr;   // in_'s map of a plain file, or nullptr: windows are read
  size_t map_next_ = 0;               // bytes the next mapped window adds (what a read would get)
  int64_t map_released_ = 0;          // file bytes before this given back (MappedFile::Release)
  char map_hidden_[scan::kPad] = {};  // the file's bytes under the window's zero padding
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t size = 0;  // allocated bytes
  };
  Buffer bufs_[2];
  int cur_ = 0;             // buffer holding the window
  char* win_ = nullptr;     // window start (inside bufs_[cur_])
  size_t block_ = 0;        // bytes read per refill
  size_t first_block_ = 0;  // bytes of the first read
  size_t len_ = 0;          // window bytes
  int64_t base_ = 0;        // stream offset of win_[0]
  std::thread reader_;      // prefetch of the next block, when running
  std::thread prefault_;    // StartPrefault's, when running
  std::thread populate_;    // StartMapPopulate's, when running
  bool map_ahead_ = false;  // PopulateBeside's
  int staged_ = -1;         // buffer the prefetch fills (kGap bytes in)
  size_t staged_bytes_ = 0;
  absl::Status staged_status_;
  int64_t window_end_file_pos_ = 0;
  int64_t in_file_size_ = 0;
  bool compressed_ = false;  // input file position (compressed) at the window's end
  bool eof_ = false, reserved_ = false, truncated_ = false;
  const char* pos_ = nullptr;
  // Two sets of parser outputs: a window's parts parse into set_ while task 0 merges the
  // previous window's (the other set) beside them, in file order, before its own part.
  ThreadOut outs_[2][kMaxParserThreads];
  // The parser threads (threads_ - 1 beside the calling one) and the merge's helpers, started
  // once per file where a window has parts (base::RunAll and std::thread would start them again
  // for every window: ~20 thread starts a window on 16 threads).
  std::unique_ptr<TaskPool> parse_pool_, merge_pool_;
  int set_ = 0;
  int pending_set_ = 0;
  size_t pending_parts_ = 0;
};

}  // namespace overlapscope::import
