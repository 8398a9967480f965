// PerRankReport (engine/reduce.h): the report of a per-rank reduction rendered part by part. A
// rank is read back from ReducedRanks when the renderer asks for it and completed with what only
// the whole job knows (its cross-rank summary figures, the findings' times relative to the job's
// start); a collective instance is built from the gathered records when asked for. Nothing holds
// every rank or every instance row at once.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze/findings/finding_rule.h"
#include "base/status_macros.h"
#include "engine/reduce_internal.h"
#include "engine/session_state.h"
#include "engine/stream_report.h"
#include "report/build.h"
#include "report/shift_times.h"

namespace overlapscope::engine {
namespace {

// Rank i's element of the JSON report straight from its stored text (no parse): the head's
// summary put in, the findings' times made relative. "" when it cannot be read (rank() then
// says why).
std::string RankJsonText(const PerRankReport::State& s, size_t i) {
  absl::StatusOr<std::string> bytes = s.ranks->Get(static_cast<int64_t>(i));
  if (!bytes.ok()) return "";
  const size_t at = reduce::ReportOffset(*bytes);
  if (at == std::string::npos) return "";
  const int64_t shift = reduce::ShiftOf(s, i);
  std::string element = report::RankElementOfDocument(std::string_view(*bytes).substr(at), s.head.ranks[i].summary);
  if (shift != 0) element = report::ShiftRankTimesJson(element, shift);
  // A marked time moved by `shift`, relative to the job's start: relative to start - shift.
  return analyze::findings::UnmarkTimes(element, s.head.time_span.start_ns - shift, analyze::findings::kTimeMarkerJson);
}

// Rank i whole: its part read back, with the head's summary (cross-rank figures added there).
absl::StatusOr<report::RankReport> LoadRank(const PerRankReport::State& s, size_t i) {
  ASSIGN_OR_RETURN(std::string bytes, s.ranks->Get(static_cast<int64_t>(i)));
  ASSIGN_OR_RETURN(reduce::RankPart part, reduce::DeserializePart(bytes, s.files[i]));
  report::RankReport r = std::move(part.rank);
  report::ShiftRankTimes(&r, reduce::ShiftOf(s, i));
  r.summary = s.head.ranks[i].summary;
  for (report::Finding& f : r.findings.items) {
    f.message = analyze::findings::UnmarkTimes(f.message, s.head.time_span.start_ns);
    f.advice = analyze::findings::UnmarkTimes(f.advice, s.head.time_span.start_ns);
  }
  return r;
}

// Makes the parts of the report ahead of the renderer on `threads` threads (parsing a rank back,
// building and dumping an instance: most of the rendering), at most threads + 1 parts made and
// not yet taken, in increasing order from the last part asked for; a part asked out of that
// order (a second pass) restarts it there. make(i) must not throw.
template <typename T>
class Ahead {
 public:
  Ahead(size_t n, int threads, std::function<T(size_t)> make) : n_(n), threads_(threads), make_(std::move(make)) {}
  ~Ahead() { Stop(); }

  T Take(size_t i) {
    if (!started_ || i != want_) Start(i);
    if (workers_.empty()) return make_(i);  // no thread could start: make it here
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return ready_.count(i) > 0; });
    T l = std::move(ready_.at(i));
    ready_.erase(i);
    want_ = i + 1;
    cv_.notify_all();
    return l;
  }

 private:
  void Start(size_t from) {
    Stop();
    started_ = true;
    stop_ = false;
    ready_.clear();
    next_ = want_ = from;
    for (int t = 0; t < threads_; ++t) {
      try {
        workers_.emplace_back([this] { Work(); });
      } catch (const std::system_error&) {
        break;  // fewer threads
      }
    }
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }

  void Work() {
    for (;;) {
      size_t k = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || (next_ < n_ && next_ <= want_ + static_cast<size_t>(threads_)); });
        if (stop_) return;
        k = next_++;
      }
      T l = make_(k);
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_.emplace(k, std::move(l));
      }
      cv_.notify_all();
    }
  }

  const size_t n_;
  const int threads_;
  const std::function<T(size_t)> make_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> workers_;
  std::map<size_t, T> ready_;
  size_t next_ = 0, want_ = 0;
  bool started_ = false, stop_ = false;
};

}  // namespace

namespace reduce {
void TrimRank(report::RankReport* r) {
  report::RankReport t;
  t.label = std::move(r->label);
  t.rank = r->rank;
  t.pid = r->pid;
  t.host = std::move(r->host);
  t.source = std::move(r->source);
  t.summary = std::move(r->summary);
  *r = std::move(t);
}
void TrimConcurrency(report::StreamConcurrency* c) {
  for (report::DeviceConcurrency& d : c->devices) std::vector<report::IterationConcurrency>().swap(d.iterations);
}
}  // namespace reduce

const report::Report& PerRankReport::head() const { return s_->head; }
const ReduceStats& PerRankReport::stats() const { return s_->stats; }
absl::Status PerRankReport::status() const { return s_->status; }

report::ReportView PerRankReport::view() const {
  const State& s = *s_;
  if (s.whole) return report::ViewOf(s.head);
  report::ReportView v;
  v.head = &s.head;
  const int threads = std::max(1, s.stats.jobs);
  const size_t n = s.head.ranks.size();
  auto structs = std::make_shared<Ahead<absl::StatusOr<report::RankReport>>>(n, threads, [&s](size_t i) {
    try {
      return LoadRank(s, i);
    } catch (const std::bad_alloc&) {
      return absl::StatusOr<report::RankReport>(
          absl::ResourceExhaustedError(absl::StrCat(s.files[i], ": out of memory while rendering this rank")));
    }
  });
  v.rank = [&s, structs](size_t i, report::RankReport* scratch) -> const report::RankReport& {
    absl::StatusOr<report::RankReport> r = structs->Take(i);
    if (r.ok()) {
      *scratch = std::move(r).value();
    } else {  // the rest still renders; the caller fails the run (status())
      if (s.status.ok()) s.status = r.status();
      *scratch = s.head.ranks[i];
    }
    return *scratch;
  };
  // "" when a part cannot be made here: the renderer then makes it from rank(i) / instance(k).
  auto rank_texts = std::make_shared<Ahead<std::string>>(n, threads, [&s](size_t i) {
    try {
      return RankJsonText(s, i);
    } catch (const std::bad_alloc&) {
      return std::string();
    }
  });
  v.rank_json = [rank_texts](size_t i) {
    if (i == 0) reduce::Phase("writing the ranks");
    return rank_texts->Take(i);
  };
  auto concurrency_texts = std::make_shared<Ahead<std::string>>(n, threads, [&s](size_t i) {
    try {
      absl::StatusOr<std::string> bytes = s.ranks->Get(static_cast<int64_t>(i));
      const size_t at = bytes.ok() ? reduce::ReportOffset(*bytes) : std::string::npos;
      if (at == std::string::npos) {
        if (s.status.ok()) s.status = absl::InternalError(absl::StrCat(s.files[i], ": reduced rank unreadable"));
        return std::string();
      }
      return report::RankConcurrencyOfDocument(std::string_view(*bytes).substr(at));
    } catch (const std::bad_alloc&) {
      if (s.status.ok()) s.status = absl::ResourceExhaustedError("out of memory while rendering the report");
      return std::string();
    }
  });
  v.rank_concurrency_json = [concurrency_texts](size_t i) { return concurrency_texts->Take(i); };
  v.instance_count = s.cross.instances.size();
  v.instance = [&s](size_t k, report::Instance* scratch) -> const report::Instance& {
    *scratch = report::BuildInstance(s.gathered.trace, s.cross, s.gathered.exposed, k);
    return *scratch;
  };
  auto instance_texts = std::make_shared<Ahead<std::string>>(v.instance_count, threads, [&s](size_t k) {
    try {
      return report::InstanceElementJson(report::BuildInstance(s.gathered.trace, s.cross, s.gathered.exposed, k));
    } catch (const std::bad_alloc&) {
      return std::string();
    }
  });
  v.instance_json = [instance_texts](size_t k) {
    if (k == 0) reduce::Phase("writing the collective instances");
    return instance_texts->Take(k);
  };
  for (const analyze::CollectiveInstance& ci : s.cross.instances)
    v.instance_rows += static_cast<int64_t>(ci.ranks.size());
  return v;
}

absl::StatusOr<report::Report> PerRankReport::Materialize() const {
  try {
    if (s_->whole) return s_->head;
    const report::ReportView v = view();
    report::Report r = s_->head;
    report::RankReport rank;
    for (size_t i = 0; i < r.ranks.size(); ++i) r.ranks[i] = v.rank(i, &rank);
    r.stream_concurrency.devices.clear();  // the head's have no per-iteration figures
    for (size_t i = 0; i < r.ranks.size(); ++i) {
      ASSIGN_OR_RETURN(std::string bytes, s_->ranks->Get(static_cast<int64_t>(i)));
      ASSIGN_OR_RETURN(reduce::RankPart part, reduce::DeserializePart(bytes, s_->files[i]));
      for (report::DeviceConcurrency& d : part.concurrency.devices)
        r.stream_concurrency.devices.push_back(std::move(d));
    }
    report::Instance inst;
    for (size_t k = 0; k < v.instance_count; ++k) r.collectives_across_ranks.instances.push_back(v.instance(k, &inst));
    RETURN_IF_ERROR(status());
    return r;
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while assembling the report");
  }
}

absl::Status WriteReport(const PerRankReport& report, ReportFormat format, const RenderOptions& options,
                         std::FILE* out) {
  RETURN_IF_ERROR(StreamReport(report.view(), format, options, out));
  reduce::Phase("report written");
  return report.status();
}

}  // namespace overlapscope::engine
