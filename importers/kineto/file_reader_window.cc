// The window of FileReader: its sizes (the constructor), double buffering with a prefetching
// reader thread, the second buffer touched ahead, a mapped file's next window populated ahead
// (file_reader.h).
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <system_error>
#include <thread>

#include "base/status_macros.h"
#include "importers/kineto/file_reader.h"
#include "importers/kineto/task_pool.h"

namespace overlapscope::import {
namespace {

// Room before each block for the unparsed tail of the previous window (usually part of one
// event); a longer tail takes the slow path (copy both into one buffer).
constexpr size_t kGap = size_t{256} << 10;
// One JSON value (an event, a top-level value) may not exceed 64 MiB: the window, and with it
// the reader's memory, stays bounded whatever the file holds (a 2 GiB name in a 2 MB .json.gz).
constexpr size_t kMaxWindow = size_t{64} << 20;
constexpr size_t kDefaultBlock = size_t{16} << 20;
// madvise(2)'s MADV_POPULATE_READ (Linux 5.14), where the C library's headers predate it.
#ifdef MADV_POPULATE_READ
constexpr int kMadvPopulateRead = MADV_POPULATE_READ;
#else
constexpr int kMadvPopulateRead = 22;
#endif

// Whether the mapped windows' pages are populated beside the parse (StartMapPopulate): where
// `threads` parser threads leave a CPU of the process's set idle; OVERLAPSCOPE_MAP_POPULATE=0 or
// =1 decides instead (a measurement aid). Reading the populated bytes once as well (into the
// shared cache, as a copying reader leaves them) measured no faster at 2 threads on 16 CPUs
// (docs/PERFORMANCE.md, eleventh round): not kept.
bool PopulateBeside(int threads) {
  if (const char* e = std::getenv("OVERLAPSCOPE_MAP_POPULATE"); e != nullptr && (e[0] == '0' || e[0] == '1'))
    return e[0] == '1';
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  return threads < cpus;
}

}  // namespace

FileReader::FileReader(const std::string& path, model::TraceBuilder& builder, const ImportOptions& options)
    : options_(options) {
  ctx_.path = path;
  ctx_.builder = &builder;
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  threads_ = std::clamp(options.threads > 0 ? options.threads : hw, 1, kMaxParserThreads);
  ctx_.threads = threads_;
  parts_ = threads_;
  if (const int k = PositiveEnv("OVERLAPSCOPE_PARTS"); k > 0 && threads_ >= 2)
    parts_ = std::min(k, kMaxParserThreads);  // measurement aid (PERFORMANCE, seventh round)
  timeline_on_ = std::getenv("OVERLAPSCOPE_WINDOWS") != nullptr;
  // Default window: 2 MiB per parser thread, 16..32 MiB (two are held: 64 MiB at most).
  block_ = options.chunk_bytes > 0
               ? static_cast<size_t>(options.chunk_bytes)
               : std::clamp(static_cast<size_t>(threads_) * (size_t{2} << 20), kDefaultBlock, 2 * kDefaultBlock);
  if (const int mb = PositiveEnv("OVERLAPSCOPE_WINDOW_MB"); mb > 0)
    block_ = static_cast<size_t>(mb) << 20;  // measurement aid (PERFORMANCE, seventh round)
  // The first read as large as the others: a first block an eighth of them (the parse starting
  // while the next one is read) measured no faster on 16 CPUs (PERFORMANCE, seventh round), as the
  // first reads into fresh buffers set the pace; OVERLAPSCOPE_FIRST_BLOCK_KB sets it to measure.
  first_block_ = block_;
  if (const int kb = PositiveEnv("OVERLAPSCOPE_FIRST_BLOCK_KB"); kb > 0)
    first_block_ = static_cast<size_t>(kb) << 10;  // measurement aid, as above
}

FileReader::~FileReader() {
  WaitPrefetch();
  WaitPrefault();
  WaitMapPopulate();
}

void FileReader::StartMapPopulate(int64_t from, size_t bytes) {
  const int64_t to = std::min(from + static_cast<int64_t>(bytes), map_->size());
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  const int64_t lo = from / page * page;
  if (to <= lo) return;
  char* start = map_->data() + lo;
  const size_t len = static_cast<size_t>(to - lo);
  try {
    populate_ = std::thread([start, len] { ::madvise(start, len, kMadvPopulateRead); });
  } catch (const std::system_error&) {
    // no thread: the parse faults the pages in as it reads them
  }
}

void FileReader::WaitMapPopulate() {
  if (populate_.joinable()) populate_.join();
}

void FileReader::StartPrefault() {
  if (threads_ < 4 || first_block_ != block_) return;  // no spare core to do it beside the read
  const size_t need = kGap + block_ + scan::kPad;
  Buffer& b = bufs_[0];
  b.data = std::make_unique_for_overwrite<char[]>(need);
  b.size = need;
  try {
    prefault_ = std::thread([p = b.data.get(), need] {
      for (size_t i = 0; i < need; i += 4096) p[i] = 0;  // a write per page maps it
    });
  } catch (const std::system_error&) {
    // no thread: the read maps the pages as it copies
  }
}

void FileReader::WaitPrefault() {
  if (prefault_.joinable()) prefault_.join();
}

void FileReader::StartPrefetch(int buffer, size_t bytes) {
  if (buffer == 0) WaitPrefault();
  Buffer& b = bufs_[buffer];
  const size_t need = kGap + bytes + scan::kPad;
  if (b.size < need) {
    b.data = std::make_unique_for_overwrite<char[]>(need);
    b.size = need;
  }
  staged_ = buffer;
  staged_bytes_ = 0;
  staged_status_ = absl::OkStatus();
  char* dst = b.data.get() + kGap;
  // Only this thread touches in_ until WaitPrefetch() joins it.
  auto read = [this, dst, bytes] {
    size_t got = 0;
    try {  // nothing may escape a thread
      while (got < bytes) {
        auto r = in_->Read(dst + got, bytes - got);
        if (!r.ok()) {
          staged_status_ = r.status();
          break;
        }
        if (*r == 0) break;
        got += *r;
      }
    } catch (const std::exception& e) {
      staged_status_ = absl::InternalError(std::string(ctx_.path) + ": offset " + std::to_string(base_ + len_) +
                                           ": read failed: " + e.what());
    }
    staged_bytes_ = got;
  };
  try {
    reader_ = std::thread(read);
  } catch (const std::system_error&) {
    read();  // no thread available: read now
  }
}

void FileReader::WaitPrefetch() {
  if (reader_.joinable()) reader_.join();
}

absl::Status FileReader::Refill(const char* keep) {
  if (map_ != nullptr) return RefillMapped(keep);
  const size_t carry = keep != nullptr ? static_cast<size_t>(End() - keep) : 0;
  const int64_t drop = keep != nullptr ? keep - win_ : 0;
  const double t0 = timeline_on_ ? Now() : 0;
  if (staged_ < 0) StartPrefetch(1 - cur_, first_block_);  // first fill: nothing in flight yet
  WaitPrefetch();
  if (timeline_on_) refill_wait_s_ = Now() - t0;
  RETURN_IF_ERROR(staged_status_);
  const int s = staged_;
  const size_t n = staged_bytes_;
  staged_ = -1;
  Buffer& dst = bufs_[s];
  char* block = dst.data.get() + kGap;
  char* start;
  if (carry <= kGap) {
    start = block - carry;
    if (carry > 0) std::memcpy(start, keep, carry);
  } else {
    if (carry + n > kMaxWindow) return ErrorAt(keep, "a single JSON value (one event) is larger than 64 MiB");
    const size_t need = carry + n + scan::kPad;
    if (dst.size >= need) {
      std::memmove(dst.data.get() + carry, block, n);
      std::memcpy(dst.data.get(), keep, carry);
    } else {
      auto bigger = std::make_unique_for_overwrite<char[]>(need);
      std::memcpy(bigger.get(), keep, carry);
      std::memcpy(bigger.get() + carry, block, n);
      dst.data = std::move(bigger);
      dst.size = need;
    }
    start = dst.data.get();
  }
  base_ += drop;
  win_ = start;
  len_ = carry + n;
  cur_ = s;
  std::memset(win_ + len_, 0, scan::kPad);
  pos_ = win_;
  // Read here, between the join and the next prefetch: in_ belongs to the reader otherwise.
  window_end_file_pos_ = in_->file_position();
  if (options_.progress) options_.progress(window_end_file_pos_, in_->file_size());
  if (n == 0) {
    eof_ = true;
  } else {
    // The old window's buffer is free now. After a long unparsed tail (one huge value) read as
    // much as the window holds, so a value of size S costs O(log S) refills, not O(S / block).
    StartPrefetch(1 - cur_, carry > kGap ? std::max(block_, len_) : block_);
  }
  if (timeline_on_) refill_s_ = Now() - t0;
  return absl::OkStatus();
}

absl::Status FileReader::RefillMapped(const char* keep) {
  // The windows, their sizes and errors are Refill's over the same bytes (the window ends where
  // a read of the same request would have), so results and offsets are the same.
  const size_t carry = keep != nullptr ? static_cast<size_t>(End() - keep) : 0;
  const int64_t drop = keep != nullptr ? keep - win_ : 0;
  const int64_t next = base_ + static_cast<int64_t>(len_);  // the first byte past the window
  WaitMapPopulate();
  if (win_ == nullptr) {
    map_next_ = block_;
    map_ahead_ = PopulateBeside(threads_);
  }
  RETURN_IF_ERROR(map_->Changed(ctx_.path));
  const size_t n = static_cast<size_t>(std::min(static_cast<int64_t>(map_next_), map_->size() - next));
  if (carry > kGap && carry + n > kMaxWindow)
    return ErrorAt(keep, "a single JSON value (one event) is larger than 64 MiB");
  char* file = map_->data();
  if (win_ != nullptr) std::memcpy(file + next, map_hidden_, scan::kPad);  // the file's bytes again
  base_ += drop;
  win_ = file + base_;
  len_ = carry + n;
  std::memcpy(map_hidden_, win_ + len_, scan::kPad);
  std::memset(win_ + len_, 0, scan::kPad);
  pos_ = win_;
  window_end_file_pos_ = base_ + static_cast<int64_t>(len_);
  if (options_.progress) options_.progress(window_end_file_pos_, map_->size());
  if (n == 0) {
    eof_ = true;
  } else {
    map_next_ = carry > kGap ? std::max(block_, len_) : block_;
    if (map_ahead_) StartMapPopulate(window_end_file_pos_, map_next_);
  }
  map_released_ = map_->Release(map_released_, base_);  // the bytes before the window are done with
  return absl::OkStatus();
}

}  // namespace overlapscope::import
