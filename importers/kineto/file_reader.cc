// FileReader: the window and the top-level object (see file_reader.h).
#include "importers/kineto/file_reader.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/phase_log.h"
#include "base/status_macros.h"
#include "importers/kineto/task_pool.h"

namespace overlapscope::import {
namespace {

// Where the parallel inflate's batches run, from OVERLAPSCOPE_SHARED_POOL (a measurement aid):
// "0" on threads of its own, "1" on the parse's threads serving both task lists in the order they
// come; unset or anything else on the parse's threads, the inflate's tasks first (the default).
enum class InflatePool { kOwn, kSharedInOrder, kSharedInflateFirst };
InflatePool InflatePoolFromEnv() {
  const char* v = std::getenv("OVERLAPSCOPE_SHARED_POOL");
  if (v == nullptr) return InflatePool::kSharedInflateFirst;
  switch (std::atoi(v)) {
    case 0: return InflatePool::kOwn;
    case 1: return InflatePool::kSharedInOrder;
    default: return InflatePool::kSharedInflateFirst;
  }
}

using scan::NumKind;
using scan::Scan;

// Iterates the members of the object at p, calling member(key, value_start, &after) -> Scan
// for each; the callback parses or skips the value.
template <typename Member>
Scan ForEachMember(const char* p, const char* end, const char** after, const char** err, Member member) {
  std::string scratch;
  int repaired = 0;
  const char* q = scan::SkipWs(p + 1);
  if (*q == '}') {
    *after = q + 1;
    return Scan::kOk;
  }
  for (;;) {
    if (*q != '"') return q >= end ? Scan::kNeedMore : (*err = "expected a key string", Scan::kError);
    std::string_view key;
    Scan s = scan::ParseString(q, end, &q, &scratch, &key, &repaired, err);
    if (s != Scan::kOk) return s;
    q = scan::SkipWs(q);
    if (*q != ':') return q >= end ? Scan::kNeedMore : (*err = "expected ':'", Scan::kError);
    q = scan::SkipWs(q + 1);
    s = member(key, q, &q);
    if (s != Scan::kOk) return s;
    q = scan::SkipWs(q);
    if (*q == ',') {
      q = scan::SkipWs(q + 1);
      continue;
    }
    if (*q == '}') {
      *after = q + 1;
      return Scan::kOk;
    }
    return q >= end ? Scan::kNeedMore : (*err = "expected ',' or '}'", Scan::kError);
  }
}

// An integer member value, or skipped (with *ok false) when it has another type.
Scan IntOrSkip(const char* v, const char* end, const char** after, int64_t* out, bool* ok, const char** err) {
  NumKind kind;
  Scan s = scan::ParseInt(v, end, after, out, &kind, err);
  if (s != Scan::kOk) return s;
  *ok = kind == NumKind::kOk;
  if (kind == NumKind::kNotNumber) return scan::SkipValue(v, end, after, err);
  return Scan::kOk;
}

// distributedInfo: {"rank": R, "world_size": N, ...}; other members and a value that is not an
// object are skipped. A negative rank is no rank.
Scan DistributedInfo(const char* p, const char* end, const char** after, const char** err, FileContext& ctx) {
  if (*p != '{') return scan::SkipValue(p, end, after, err);
  ctx.has_rank = false;
  return ForEachMember(p, end, after, err, [&](std::string_view k, const char* v, const char** a) {
    bool ok = false;
    if (k == "rank") {
      Scan s = IntOrSkip(v, end, a, &ctx.rank, &ok, err);
      ctx.has_rank = ok && ctx.rank >= 0;
      return s;
    }
    if (k == "world_size") return IntOrSkip(v, end, a, &ctx.world_size, &ok, err);
    return scan::SkipValue(v, end, a, err);
  });
}

// deviceProperties: [{"id": N, "name": "...", ...}, ...] -> (id, name) in *out (cleared first:
// a step is retried after a refill). Entries that are not objects, or have no integer id, are
// skipped; a name is cut at 256 bytes.
Scan DeviceNames(const char* p, const char* end, const char** after, const char** err,
                 std::vector<std::pair<int64_t, std::string>>* out) {
  out->clear();
  if (*p != '[') return scan::SkipValue(p, end, after, err);
  const char* q = scan::SkipWs(p + 1);
  if (*q == ']') {
    *after = q + 1;
    return Scan::kOk;
  }
  for (;;) {
    if (*q != '{') {
      Scan s = scan::SkipValue(q, end, &q, err);
      if (s != Scan::kOk) return s;
    } else {
      int64_t id = -1;
      bool has_id = false;
      std::string name, scratch;
      int repaired = 0;
      Scan s = ForEachMember(q, end, &q, err, [&](std::string_view k, const char* v, const char** a) {
        if (k == "id") return IntOrSkip(v, end, a, &id, &has_id, err);
        if (k == "name" && *v == '"') {
          std::string_view n;
          Scan t = scan::ParseString(v, end, a, &scratch, &n, &repaired, err);
          name.assign(n.substr(0, 256));  // a device name; a hostile one is cut
          return t;
        }
        return scan::SkipValue(v, end, a, err);
      });
      if (s != Scan::kOk) return s;
      if (has_id) out->emplace_back(id, name);
    }
    q = scan::SkipWs(q);
    if (*q == ',') {
      q = scan::SkipWs(q + 1);
      continue;
    }
    if (*q == ']') {
      *after = q + 1;
      return Scan::kOk;
    }
    if (q >= end) return Scan::kNeedMore;
    *err = "expected ',' or ']'";
    return Scan::kError;
  }
}

}  // namespace

absl::Status FileReader::ErrorAt(const char* p, std::string_view reason) const {
  return absl::InvalidArgumentError(
      absl::StrCat(ctx_.path, ": offset ", base_ + (p - win_), ": ", std::string(reason)));
}

absl::Status FileReader::Truncated() {
  truncated_ = true;
  return absl::InvalidArgumentError(absl::StrCat(ctx_.path, ": offset ", base_ + static_cast<int64_t>(len_),
                                                 ": unexpected end of data (truncated file?)"));
}

absl::Status FileReader::SkipWsRefill() {
  for (;;) {
    pos_ = scan::SkipWs(pos_);
    if (pos_ < End()) return absl::OkStatus();
    if (eof_) return Truncated();
    RETURN_IF_ERROR(Refill(pos_));
  }
}

template <typename Step>
absl::Status FileReader::RunStep(Step step, std::string_view what) {
  for (;;) {
    const char* after = nullptr;
    const char* err = "malformed JSON";
    Scan s = step(pos_, &after, &err);
    if (s == Scan::kOk) {
      pos_ = after;
      return absl::OkStatus();
    }
    if (s == Scan::kError) return ErrorAt(pos_, absl::StrCat(err, " (in ", std::string(what), ")"));
    if (eof_) return Truncated();
    RETURN_IF_ERROR(Refill(pos_));
  }
}

absl::Status FileReader::ParseTopLevelValue(const std::string& key) {
  const char* end = End();
  if (key == "baseTimeNanoseconds") {
    ctx_.base_offset = base_ + (pos_ - win_);
    bool ok = false;
    RETURN_IF_ERROR(RunStep(
        [&](const char* p, const char** after, const char** err) {
          end = End();
          return IntOrSkip(p, end, after, &ctx_.base_ns, &ok, err);
        },
        key));
    if (!ok)
      return absl::InvalidArgumentError(
          absl::StrCat(ctx_.path, ": offset ", ctx_.base_offset, ": baseTimeNanoseconds is not an int64 integer"));
    ctx_.has_base = true;
    return absl::OkStatus();
  }
  if (key == "host_name") {
    return RunStep(
        [&](const char* p, const char** after, const char** err) {
          if (*p != '"') return scan::SkipValue(p, End(), after, err);
          std::string scratch;
          std::string_view v;
          int repaired = 0;
          Scan s = scan::ParseString(p, End(), after, &scratch, &v, &repaired, err);
          if (s == Scan::kOk) ctx_.host_name.assign(v.substr(0, 255));  // gethostname's limit
          return s;
        },
        key);
  }
  if (key == "distributedInfo") {
    return RunStep([&](const char* p, const char** after,
                       const char** err) { return DistributedInfo(p, End(), after, err, ctx_); },
                   key);
  }
  if (key == "deviceProperties") {
    return RunStep([&](const char* p, const char** after,
                       const char** err) { return DeviceNames(p, End(), after, err, &ctx_.device_names); },
                   key);
  }
  return RunStep(
      [&](const char* p, const char** after, const char** err) { return scan::SkipValue(p, End(), after, err); }, key);
}

absl::Status FileReader::Run() {
  ASSIGN_OR_RETURN(in_, InputStream::Open(ctx_.path, threads_, /*may_map=*/true));
  map_ = in_->mapped();
  // A quarter of the parser threads copy each block of a plain file from the page cache (at
  // least one, at most 8): beside 16 parsers one copying thread would set the pace.
  int read_threads = std::clamp(threads_ / 4, 1, 8);
  if (const int r = PositiveEnv("OVERLAPSCOPE_READ_THREADS"); r > 0)
    read_threads = std::min(r, 16);  // measurement aid (PERFORMANCE, seventh round)
  in_->SetReadThreads(read_threads);
  if (threads_ >= 2) {
    int merge_threads = std::min(threads_, kMaxMergeThreads);
    if (const int m = PositiveEnv("OVERLAPSCOPE_MERGE_THREADS"); m > 0)
      merge_threads = std::min(m, kMaxParserThreads);  // measurement aid (PERFORMANCE, seventh round)
    merge_pool_ = std::make_unique<TaskPool>(merge_threads);
    ctx_.merge_pool = merge_pool_.get();
  }
  // The parallel inflate's batches take their turns on the parse's threads, its tasks before
  // the parse's (the reader needs them first): with threads of its own, 16 inflating and 16
  // parsing threads on 16 CPUs, every batch and window waited for threads the other had
  // preempted (PERFORMANCE, ninth round: -0.4 CPU-s at 16 threads). OVERLAPSCOPE_SHARED_POOL=0
  // gives it its own (=1: the lists in the order they come); measurement aids.
  if (const InflatePool mode = InflatePoolFromEnv(); threads_ >= 2 && mode != InflatePool::kOwn) {
    parse_pool_ = std::make_unique<TaskPool>(threads_);
    in_->SetSharedPool(parse_pool_.get(), /*inflate_first=*/mode == InflatePool::kSharedInflateFirst);
  }
  in_file_size_ = in_->file_size();
  compressed_ = in_->compressed();
  // Only where the second block will be a full one (a .json.gz of block_ / 2 holds ~7 blocks).
  const int64_t block = static_cast<int64_t>(block_);
  if (compressed_ ? in_file_size_ >= block / 2 : in_file_size_ >= 4 * block) StartPrefault();
  RETURN_IF_ERROR(Refill(nullptr));
  model::TraceBuilder& b = *ctx_.builder;
  model::Process proc;
  proc.source = b.Intern(ctx_.path);
  ctx_.process = b.AddProcess(proc);
  const model::TraceData& d = b.data();
  ctx_.kernels0 = d.kernels.size(), ctx_.memcpys0 = d.memcpys.size(), ctx_.memsets0 = d.memsets.size();
  ctx_.api0 = d.api_calls.size(), ctx_.syncs0 = d.syncs.size(), ctx_.ranges0 = d.ranges.size();
  ctx_.gpu_ranges0 = d.gpu_ranges.size(), ctx_.collectives0 = d.collectives.size();

  bool saw_events = false;
  absl::Status top = ParseTopLevel(&saw_events);
  MergePending();  // (ParseEventArray merged them on its way out: nothing is left here)
  if (map_ != nullptr) RETURN_IF_ERROR(map_->Changed(ctx_.path));  // before any result read from it
  if (!top.ok()) {
    // The brief of an unreadable file is "ends before traceEvents closes": once every event is
    // in, a file cut in its trailing keys (traceName, a late baseTimeNanoseconds) still imports,
    // and says so.
    if (!(saw_events && truncated_)) return top;
    ctx_.stats.Add(ctx_.has_base ? model::Stat::kKinetoTruncatedAfterEvents : model::Stat::kKinetoTruncatedNoBase);
  }
  if (!ctx_.has_rank) {
    int32_t r = RankFromFileName(ctx_.path);
    if (r >= 0) ctx_.has_rank = true, ctx_.rank = r;
  }
  PrintTimeline();
  ctx_.pool = parse_pool_.get();
  base::PhaseLog("parse (a Kineto file)");
  return FinishFile(ctx_, base_ + static_cast<int64_t>(len_), compressed_);
}

absl::Status FileReader::ParseTopLevel(bool* saw_events) {
  // Top level: optional UTF-8 byte-order mark, then '{' ("key": value),* '}'.
  if (len_ >= 3 && std::memcmp(pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
  pos_ = scan::SkipWs(pos_);
  if (pos_ >= End()) return ErrorAt(pos_, base_ + static_cast<int64_t>(len_) == 0 ? "empty file" : "no JSON value");
  if (*pos_ == '[') {
    // A bare array of events: Kineto before PyTorch 1.8 (2020 nightlies) and the legacy autograd
    // profiler's export_chrome_trace. Only whitespace may follow it.
    ++pos_;
    RETURN_IF_ERROR(ParseEventArray());
    *saw_events = true;
    ctx_.array_top_level = true;
    for (;;) {
      pos_ = scan::SkipWs(pos_);
      if (pos_ < End()) return ErrorAt(pos_, "data after the top-level array");
      if (eof_) return absl::OkStatus();
      RETURN_IF_ERROR(Refill(pos_));
    }
  }
  if (*pos_ != '{') return ErrorAt(pos_, "top level is neither a JSON object nor an array of events");
  ++pos_;
  bool first = true;
  for (;;) {
    RETURN_IF_ERROR(SkipWsRefill());
    if (*pos_ == '}' && first) break;
    if (*pos_ != '"') return ErrorAt(pos_, "expected a key string in the top-level object");
    std::string key;
    RETURN_IF_ERROR(RunStep(
        [&](const char* p, const char** after, const char** err) {
          std::string scratch;
          std::string_view view;
          int repaired = 0;
          Scan s = scan::ParseString(p, End(), after, &scratch, &view, &repaired, err);
          if (s != Scan::kOk) return s;
          const char* q = scan::SkipWs(*after);
          if (*q != ':') return q >= End() ? Scan::kNeedMore : (*err = "expected ':'", Scan::kError);
          q = scan::SkipWs(q + 1);
          if (q >= End()) return Scan::kNeedMore;
          key.assign(view);
          *after = q;
          return Scan::kOk;
        },
        "the top-level object"));
    if (key == "traceEvents") {
      if (*pos_ != '[') return ErrorAt(pos_, "traceEvents is not an array");
      ++pos_;
      RETURN_IF_ERROR(ParseEventArray());
      *saw_events = true;
    } else {
      RETURN_IF_ERROR(ParseTopLevelValue(key));
    }
    first = false;
    RETURN_IF_ERROR(SkipWsRefill());
    if (*pos_ == ',') {
      ++pos_;
      continue;
    }
    if (*pos_ == '}') break;
    return ErrorAt(pos_, "expected ',' or '}' in the top-level object");
  }
  ++pos_;     // past the closing '}'
  for (;;) {  // only whitespace may follow
    pos_ = scan::SkipWs(pos_);
    if (pos_ < End()) return ErrorAt(pos_, "data after the top-level object");
    if (eof_) break;
    RETURN_IF_ERROR(Refill(pos_));
  }
  if (!*saw_events) return ErrorAt(pos_, "no traceEvents array in the file");
  return absl::OkStatus();
}

absl::Status ImportKinetoFile(const std::string& path, model::TraceBuilder& builder, const ImportOptions& options) {
  // No exception leaves the module: allocation failures (a trace too large for memory) and
  // thread errors become a status naming the file.
  try {
    FileReader reader(path, builder, options);
    return reader.Run();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(path + ": offset 0: out of memory while importing");
  } catch (const std::exception& e) {
    return absl::InternalError(path + ": offset 0: import failed: " + e.what());
  }
}

}  // namespace overlapscope::import
