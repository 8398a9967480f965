#include "engine/reduce.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyze/clock_align.h"
#include "analyze/cross_rank.h"
#include "analyze/findings/finding_rule.h"
#include "base/status_macros.h"
#include "engine/reduce_internal.h"
#include "engine/session_state.h"
#include "importers/import_any.h"
#include "report/shift_times.h"

namespace overlapscope::engine {
namespace {

using reduce::RankPart;

// Peak resident bytes per byte of Kineto JSON while one rank is imported and analyzed
// (measured: docs/PERFORMANCE.md, "per-rank reduction"; rounded up).
constexpr double kPeakPerJsonByte = 0.6;

int64_t FileBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  return f ? static_cast<int64_t>(f.tellg()) : 0;
}

analyze::ClockAlignMode ModeOf(ClockAlign m) {
  return m == ClockAlign::kOff  ? analyze::ClockAlignMode::kOff
         : m == ClockAlign::kOn ? analyze::ClockAlignMode::kOn
                                : analyze::ClockAlignMode::kAuto;
}

// Reduces files[i] for each i in `which` on `jobs` threads, largest estimate first, admitting a
// rank while the estimates in flight fit the budget (one always runs). parts[i] is filled.
class Pool {
 public:
  Pool(const std::vector<std::string>& files, const analyze::AnalyzeOptions& a, int64_t top_n, const ReduceOptions& o,
       ReduceStats* stats, ReducedRanks* store)
      : files_(files),
        a_(a),
        top_n_(top_n),
        o_(o),
        stats_(stats),
        store_(store),
        start_(std::chrono::steady_clock::now()) {}

  absl::Status Run(const std::vector<size_t>& which, const std::vector<int64_t>& shift,
                   std::vector<std::optional<RankPart>>* parts) {
    queue_ = which;
    total_ = static_cast<int64_t>(which.size());
    for (size_t i : queue_) {
      Estimate(i);  // before the workers read them
      total_bytes_ += FileBytes(files_[i]);
    }
    std::stable_sort(queue_.begin(), queue_.end(), [&](size_t x, size_t y) { return Estimate(x) > Estimate(y); });
    shift_ = &shift;
    parts_ = parts;
    errors_.assign(files_.size(), absl::OkStatus());
    const int n = std::max(1, std::min<int>(o_.jobs, static_cast<int>(queue_.size())));
    std::vector<std::thread> threads;
    for (int i = 1; i < n; ++i) {
      try {
        threads.emplace_back([this] { Work(); });
      } catch (const std::system_error&) {
        break;  // fewer threads: the rest is done by those that started
      }
    }
    Work();
    for (std::thread& t : threads) t.join();
    for (size_t i : which)
      if (!errors_[i].ok()) return errors_[i];
    return absl::OkStatus();
  }

 private:
  int64_t Estimate(size_t i) {
    if (estimates_.empty()) {
      estimates_.resize(files_.size(), -1);
    }
    if (estimates_[i] < 0) estimates_[i] = EstimatedRankBytes(files_[i]);
    return estimates_[i];
  }

  void Work() {
    for (;;) {
      size_t i = 0;
      int64_t est = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] {
          return queue_.empty() || failed_ || in_flight_ == 0 ||
                 in_flight_ + estimates_[queue_.front()] <= o_.memory_budget_bytes;
        });
        if (queue_.empty() || failed_) return;
        i = queue_.front();
        queue_.erase(queue_.begin());
        est = estimates_[i];
        in_flight_ += est;
        stats_->max_in_flight_bytes = std::max(stats_->max_in_flight_bytes, in_flight_);
      }
      absl::StatusOr<RankPart> part = ReduceGuarded(i);
      std::lock_guard<std::mutex> lock(mu_);
      in_flight_ -= est;
      if (part.ok()) {
        bytes_done_ += part->file_bytes;
        (*parts_)[i] = std::move(part).value();
      } else {
        errors_[i] = part.status();
        failed_ = true;
      }
      ++done_;
      if (o_.progress) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        o_.progress(ReduceProgress{done_, total_, bytes_done_, total_bytes_, s});
      }
      cv_.notify_all();
    }
  }

  absl::StatusOr<RankPart> ReduceGuarded(size_t i) {
    try {  // no exception leaves the engine
      std::function<absl::Status(const RankModel&)> each;
      if (o_.each_rank) each = [&](const RankModel& m) { return o_.each_rank(static_cast<int64_t>(i), m); };
      ASSIGN_OR_RETURN(RankPart p,
                       reduce::ReduceRank(files_[i], a_, top_n_, (*shift_)[i], o_.jobs > 1 ? 1 : a_.threads, each));
      p.file_bytes = FileBytes(files_[i]);
      // Serialized from now until rendered: what stays in memory is the rank's summary, its
      // global partial and its collective record.
      RETURN_IF_ERROR(store_->Put(static_cast<int64_t>(i), reduce::SerializePart(p)));
      reduce::TrimRank(&p.rank);
      reduce::TrimConcurrency(&p.concurrency);
      p.compact = {};  // the gathering reads it back
      reduce::GiveBackFreeMemory();
      return p;
    } catch (const std::bad_alloc&) {
      return absl::ResourceExhaustedError(absl::StrCat(files_[i], ": out of memory while reducing this rank"));
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat(files_[i], ": reducing this rank failed: ", e.what()));
    }
  }

  const std::vector<std::string>& files_;
  const analyze::AnalyzeOptions& a_;
  const int64_t top_n_;
  const ReduceOptions& o_;
  ReduceStats* stats_;
  ReducedRanks* store_;
  const std::chrono::steady_clock::time_point start_;
  std::vector<int64_t> estimates_;
  std::vector<size_t> queue_;
  const std::vector<int64_t>* shift_ = nullptr;
  std::vector<std::optional<RankPart>>* parts_ = nullptr;
  std::vector<absl::Status> errors_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t in_flight_ = 0, done_ = 0, bytes_done_ = 0, total_ = 0, total_bytes_ = 0;
  bool failed_ = false;
};

// The gathered collectives, each rank's record read back from the store in turn.
absl::StatusOr<reduce::GatheredCollectives> Gather(const std::vector<std::optional<RankPart>>& parts,
                                                   const PerRankReport::State& st, const model::ClockShiftFn& shift) {
  const reduce::CompactLoader load = [&st](size_t i) -> absl::StatusOr<reduce::CompactRank> {
    ASSIGN_OR_RETURN(std::string bytes, st.ranks->Get(static_cast<int64_t>(i)));
    ASSIGN_OR_RETURN(reduce::CompactRank c, reduce::DeserializeCompact(bytes, st.files[i]));
    reduce::ShiftCompact(&c, reduce::ShiftOf(st, i));
    return c;
  };
  return reduce::GatherCollectives(parts.size(), load, parts.front()->header.clock_note, shift);
}

// The head of the report (every section, the ranks reduced to their summaries, no instances:
// PerRankReport renders those from the store and the gathered records) into *st.
void Assemble(std::vector<std::optional<RankPart>>& parts, reduce::GatheredCollectives g,
              const analyze::ClockAlignment& alignment, const std::string& clock_note,
              const std::vector<std::string>& inputs, int64_t top_n, PerRankReport::State* st) {
  st->cross = analyze::AnalyzeCrossRank(g.trace, &g.arrivals);
  const analyze::CrossRankResult& cross = st->cross;
  report::Report header = parts.front()->header;
  header.inputs = inputs;
  header.warnings.clear();
  header.clock_note = clock_note;
  report::ReportInfo info;
  info.clock_alignment = alignment;
  // The clock fields as Header() makes them for the whole trace (pids from the gathered one).
  const report::Report clock = report::Header(g.trace, analyze::AnalysisResult{}, info);
  header.options.align_clocks = clock.options.align_clocks;
  header.clock_alignment = clock.clock_alignment;
  std::vector<report::GlobalPartial> partials;
  std::vector<report::RankReport> ranks;
  report::StreamConcurrency conc = parts.front()->concurrency;
  conc.devices.clear();
  for (auto& g_ : conc.groups) g_.activities = 0;
  const bool job_filter = reduce::JobHasSteps(parts);
  for (size_t i = 0; i < parts.size(); ++i) {
    RankPart& p = *parts[i];
    reduce::ChooseHtaVariant(&p, job_filter);
    for (report::ImportWarning& w : p.header.warnings) header.warnings.push_back(std::move(w));
    report::AddCrossRankSummary(cross, static_cast<model::ProcessId>(i), &p.rank.summary);
    ranks.push_back(std::move(p.rank));
    partials.push_back(std::move(p.partial));
    for (size_t k = 0; k < conc.groups.size() && k < p.concurrency.groups.size(); ++k)
      conc.groups[k].activities += p.concurrency.groups[k].activities;
    for (report::DeviceConcurrency& d : p.concurrency.devices) conc.devices.push_back(std::move(d));
    parts[i].reset();
  }
  st->head = report::Assemble(std::move(header), report::MergePartials(partials), std::move(ranks),
                              report::BuildCrossRank(g.trace, cross, g.exposed, top_n, /*instances=*/false));
  report::Report& rep = st->head;
  // Not computed: the same empty sections as the whole-model path with critical_path off.
  rep.critical_path = report::BuildCriticalPath(g.trace, analyze::CriticalPathResult{});
  rep.straggler_causes = report::BuildStragglerCauses(g.trace, analyze::StragglerResult{}, cross);
  rep.stream_concurrency = std::move(conc);
  rep.paths_skipped = std::string(kPathsOff);
  st->gathered = std::move(g);
}

// What every step of a reduction shares: the files, the analysis options, the normalized
// reduce options and the statistics.
struct Prepared {
  std::vector<std::string> files;
  analyze::AnalyzeOptions a;
  int64_t top_n = 10;
  ReduceOptions o;
  std::shared_ptr<PerRankReport::State> st = std::make_shared<PerRankReport::State>();
  bool whole = false;  // one file: the whole-model path
};

absl::StatusOr<Prepared> PrepareFiles(std::vector<std::string> files, const AnalyzeOptions& options,
                                      const ReduceOptions& o);

absl::StatusOr<Prepared> Prepare(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                 ReduceOptions o) {
  if (o.jobs < 0 || o.memory_budget_bytes < 0)
    return absl::InvalidArgumentError("--jobs and --memory-budget must not be negative");
  if (o.jobs == 0) o.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (o.memory_budget_bytes == 0) o.memory_budget_bytes = DefaultMemoryBudget();
  ASSIGN_OR_RETURN(import::ExpandedInputs in, import::ExpandInputs(inputs));
  return PrepareFiles(std::move(in.files), options, o);
}

// Prepare for files already listed (the parts of a job gathered from its processes: their
// names, which need not exist here).
absl::StatusOr<Prepared> PrepareFiles(std::vector<std::string> files, const AnalyzeOptions& options,
                                      const ReduceOptions& o) {
  Prepared p;
  p.files = std::move(files);
  p.o = o;
  ReduceStats& st = p.st->stats;
  p.st->files = p.files;
  st.ranks = static_cast<int64_t>(p.files.size());
  st.jobs = o.jobs;
  st.memory_budget_bytes = o.memory_budget_bytes;
  for (const std::string& f : p.files) st.bytes += FileBytes(f);
  p.whole = p.files.size() < 2;
  AnalyzeOptions per_rank = options;
  per_rank.critical_path = false;
  per_rank.keep_critical_path = false;
  ASSIGN_OR_RETURN(p.a, ToAnalyzeOptions(per_rank));
  if (o.jobs > 1) p.a.threads = 1;  // the ranks are the parallelism
  p.a.mark_message_times = true;
  p.a.hta_both_filters = true;  // HTA's step filter is the job's decision (ChooseHtaVariant)
  p.top_n = static_cast<int64_t>(options.top_n);
  return p;
}

absl::StatusOr<PerRankReport> WholePath(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                        Prepared& p) {
  LoadOptions lo;
  lo.align_clocks = p.o.align_clocks;
  ASSIGN_OR_RETURN(Session s, Load(inputs, lo));
  ASSIGN_OR_RETURN(Analysis a, Analyze(s, options));
  p.st->head = a.report();
  p.st->whole = true;
  return PerRankReport(p.st);
}

// Rewrites rank `q`'s stored part (what the report's rank body is rendered from): read, changed
// by `change`, put back. The in-memory part keeps only summaries; callers change those themselves.
absl::Status RewriteStored(const PerRankReport::State& st, size_t q, const std::function<void(RankPart*)>& change) {
  ASSIGN_OR_RETURN(std::string bytes, st.ranks->Get(static_cast<int64_t>(q)));
  ASSIGN_OR_RETURN(RankPart full, reduce::DeserializePart(bytes, st.files[q]));
  bytes.clear();
  change(&full);
  return st.ranks->Put(static_cast<int64_t>(q), reduce::SerializePart(full));
}

// HTA's step filter is the job's decision (>= 2 distinct step names over every rank): the ranks
// whose own decision differs take their other variant (reduce::ChooseHtaVariant).
absl::Status ChooseHtaVariants(std::vector<std::optional<RankPart>>& parts, const PerRankReport::State& st) {
  const bool job_filter = reduce::JobHasSteps(parts);
  for (size_t q = 0; q < parts.size(); ++q) {
    RankPart& kept = *parts[q];
    if (!kept.hta_other || kept.hta_other->step_filter != job_filter) continue;
    RETURN_IF_ERROR(RewriteStored(st, q, [&](RankPart* full) { reduce::ChooseHtaVariant(full, job_filter); }));
    kept.rank.summary.hta_compat_overlap_pct = kept.hta_other->overlap_pct;
    kept.hta_other.reset();
  }
  return absl::OkStatus();
}

// Clock alignment from the gathered records, as Load aligns the whole trace. The ranks of a
// shifted host are moved by its offset as their stored parts are read (State::shift_ns; exact,
// see report/shift_times.h), not read again — except under `export --per-rank` (ReduceOptions::
// each_rank), which writes each rank's events and so reduces those ranks again with the offset.
// Then the report.
absl::StatusOr<PerRankReport> Finish(const std::vector<std::string>& inputs, Prepared& p,
                                     std::vector<std::optional<RankPart>>& parts) {
  reduce::Phase("ranks reduced");
  analyze::ClockAlignment alignment;
  ASSIGN_OR_RETURN(reduce::GatheredCollectives g,
                   Gather(parts, *p.st, analyze::ClockAlignmentShift(ModeOf(p.o.align_clocks), &alignment)));
  reduce::Phase("collectives gathered");
  const std::string clock_note = g.trace.clock_note();
  if (alignment.applied()) {
    std::vector<size_t> moved;
    std::vector<int64_t> shift(p.files.size(), 0);
    for (const analyze::HostClock& h : alignment.hosts)
      if (h.aligned && h.offset_ns != 0)
        for (model::ProcessId q : h.processes) {
          shift[q] = h.offset_ns;
          moved.push_back(static_cast<size_t>(q));
        }
    if (p.o.each_rank) {
      p.st->stats.reduced_again = static_cast<int64_t>(moved.size());
      Pool pool(p.files, p.a, p.top_n, p.o, &p.st->stats, p.st->ranks.get());
      RETURN_IF_ERROR(pool.Run(moved, shift, &parts));
    } else {
      // Moved as they are read (State::shift_ns); the partial's time span is in memory.
      p.st->stats.shifted = static_cast<int64_t>(moved.size());
      p.st->shift_ns = shift;
      for (size_t q : moved) report::ShiftPartialTimes(&parts[q]->partial, shift[q]);
    }
    ASSIGN_OR_RETURN(g, Gather(parts, *p.st, nullptr));
  }
  RETURN_IF_ERROR(ChooseHtaVariants(parts, *p.st));
  Assemble(parts, std::move(g), alignment, clock_note, inputs, p.top_n, p.st.get());
  reduce::GiveBackFreeMemory();
  reduce::Phase("matched across ranks, report head assembled");
  return PerRankReport(p.st);
}

absl::StatusOr<PerRankReport> Reduce(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                     const ReduceOptions& o) {
  reduce::Phase("start");
  ASSIGN_OR_RETURN(Prepared p, Prepare(inputs, options, o));
  if (p.whole) return WholePath(inputs, options, p);
  ASSIGN_OR_RETURN(p.st->ranks, ReducedRanks::Create());
  std::vector<std::optional<RankPart>> parts(p.files.size());
  std::vector<size_t> all(p.files.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  Pool pool(p.files, p.a, p.top_n, p.o, &p.st->stats, p.st->ranks.get());
  RETURN_IF_ERROR(pool.Run(all, std::vector<int64_t>(p.files.size(), 0), &parts));
  return Finish(inputs, p, parts);
}

// Process `part` of `parts` takes every parts-th file by decreasing estimate (balanced bytes).
std::vector<size_t> ShareOf(const std::vector<std::string>& files, int part, int parts) {
  std::vector<std::pair<int64_t, size_t>> by_size;
  for (size_t i = 0; i < files.size(); ++i) by_size.push_back({-EstimatedRankBytes(files[i]), i});
  std::stable_sort(by_size.begin(), by_size.end());
  std::vector<size_t> mine;
  for (size_t k = 0; k < by_size.size(); ++k)
    if (static_cast<int>(k % static_cast<size_t>(parts)) == part) mine.push_back(by_size[k].second);
  return mine;
}

}  // namespace

int64_t DefaultMemoryBudget() {
  // A shared node's share, set by whoever runs the job (and the tests of the automatic switch).
  if (const char* env = std::getenv("OVERLAPSCOPE_MEMORY_BUDGET"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end != nullptr && *end == '\0' && v > 0) return v;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return int64_t{4} << 30;
  return static_cast<int64_t>(pages) * page / 2;
}

absl::StatusOr<JobEstimate> EstimateJob(const std::vector<std::string>& inputs) {
  ASSIGN_OR_RETURN(import::ExpandedInputs in, import::ExpandInputs(inputs));
  JobEstimate e;
  e.files = static_cast<int64_t>(in.files.size());
  for (const std::string& f : in.files) e.model_bytes += EstimatedRankBytes(f);
  return e;
}

int64_t EstimatedRankBytes(const std::string& path) {
  const int64_t size = FileBytes(path);
  int64_t json = size;
  if (absl::EndsWith(path, ".gz") && size >= 4) {
    std::ifstream f(path, std::ios::binary);
    unsigned char b[4] = {0, 0, 0, 0};
    f.seekg(size - 4);
    f.read(reinterpret_cast<char*>(b), 4);
    // ISIZE: the uncompressed size mod 2^32 (RFC 1952); a file past 4 GiB wraps, so never less
    // than 4x the compressed bytes.
    const int64_t isize = int64_t{b[0]} | int64_t{b[1]} << 8 | int64_t{b[2]} << 16 | int64_t{b[3]} << 24;
    json = std::max(isize, 4 * size);
  }
  return static_cast<int64_t>(static_cast<double>(json) * kPeakPerJsonByte);
}

absl::StatusOr<std::shared_ptr<ReducedRanks>> ReduceShare(const std::vector<std::string>& inputs,
                                                          const AnalyzeOptions& options, const ReduceOptions& reduce,
                                                          int part, int parts) {
  try {
    if (parts < 1 || part < 0 || part >= parts) return absl::InvalidArgumentError("bad partition");
    ASSIGN_OR_RETURN(Prepared p, Prepare(inputs, options, reduce));
    ASSIGN_OR_RETURN(std::shared_ptr<ReducedRanks> out, ReducedRanks::Create());
    if (p.whole) return out;  // one file: AssembleShares analyzes it whole
    const std::vector<size_t> mine = ShareOf(p.files, part, parts);
    std::vector<std::optional<RankPart>> done(p.files.size());  // trimmed: summaries, partials, records
    Pool pool(p.files, p.a, p.top_n, p.o, &p.st->stats, out.get());
    RETURN_IF_ERROR(pool.Run(mine, std::vector<int64_t>(p.files.size(), 0), &done));
    return out;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("reducing the ranks failed: ", e.what()));
  }
}

namespace {

// The report from every rank's reduced part in `ranks` (file i of p.files: process i).
absl::StatusOr<PerRankReport> AssembleStored(const std::vector<std::string>& inputs, Prepared& p,
                                             std::shared_ptr<ReducedRanks> ranks) {
  std::vector<std::optional<RankPart>> parts(p.files.size());
  for (int64_t f : ranks->files()) {  // one at a time: each kept trimmed, its bytes stay in the file
    if (f < 0 || static_cast<size_t>(f) >= parts.size())
      return absl::InvalidArgumentError(absl::StrCat("reduced rank of file ", f, " out of range"));
    ASSIGN_OR_RETURN(std::string bytes, ranks->Get(f));
    ASSIGN_OR_RETURN(RankPart part, reduce::DeserializePart(bytes, p.files[f]));
    reduce::TrimRank(&part.rank);
    reduce::TrimConcurrency(&part.concurrency);
    part.compact = {};  // the gathering reads it back
    parts[f] = std::move(part);
  }
  for (size_t i = 0; i < parts.size(); ++i)
    if (!parts[i]) return absl::InvalidArgumentError(absl::StrCat(p.files[i], ": no process reduced this rank"));
  p.st->ranks = std::move(ranks);
  return Finish(inputs, p, parts);
}

}  // namespace

absl::StatusOr<PerRankReport> AssembleShares(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                             const ReduceOptions& reduce, std::shared_ptr<ReducedRanks> ranks) {
  try {
    ASSIGN_OR_RETURN(Prepared p, Prepare(inputs, options, reduce));
    if (p.whole) return WholePath(inputs, options, p);
    return AssembleStored(inputs, p, std::move(ranks));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while assembling the ranks");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("assembling the ranks failed: ", e.what()));
  }
}

absl::StatusOr<std::string> ReduceRankPart(const std::string& path, const AnalyzeOptions& options) {
  try {
    ReduceOptions o;
    o.jobs = 1;
    ASSIGN_OR_RETURN(Prepared p, Prepare({path}, options, o));
    if (p.files.size() != 1)
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": offset 0: one rank's trace expected, found ", p.files.size(), " files"));
    ASSIGN_OR_RETURN(std::shared_ptr<ReducedRanks> store, ReducedRanks::Create());
    std::vector<std::optional<RankPart>> done(1);
    Pool pool(p.files, p.a, p.top_n, p.o, &p.st->stats, store.get());
    RETURN_IF_ERROR(pool.Run({0}, {0}, &done));
    return store->Get(0);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": out of memory while reducing this rank"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(path, ": reducing this rank failed: ", e.what()));
  }
}

absl::StatusOr<report::Report> AssembleParts(const std::vector<std::string>& names,
                                             const std::vector<std::string>& parts, const AnalyzeOptions& options) {
  try {
    if (names.empty() || names.size() != parts.size())
      return absl::InvalidArgumentError("a job's parts: one name per part, at least one part");
    ReduceOptions o;
    o.jobs = 1;
    o.memory_budget_bytes = DefaultMemoryBudget();
    ASSIGN_OR_RETURN(Prepared p, PrepareFiles(names, options, o));
    ASSIGN_OR_RETURN(std::shared_ptr<ReducedRanks> store, ReducedRanks::Create());
    for (size_t i = 0; i < parts.size(); ++i) RETURN_IF_ERROR(store->Put(static_cast<int64_t>(i), parts[i]));
    ASSIGN_OR_RETURN(PerRankReport r, AssembleStored(names, p, std::move(store)));
    RETURN_IF_ERROR(r.status());
    return r.Materialize();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while assembling the job's parts");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("assembling the job's parts failed: ", e.what()));
  }
}

absl::StatusOr<PerRankReport> ReducePerRank(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                            const ReduceOptions& reduce) {
  try {
    return Reduce(inputs, options, reduce);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while reducing the ranks");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("reducing the ranks failed: ", e.what()));
  }
}

absl::StatusOr<ReducedReport> AnalyzePerRank(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                                             const ReduceOptions& reduce) {
  ASSIGN_OR_RETURN(PerRankReport r, ReducePerRank(inputs, options, reduce));
  ASSIGN_OR_RETURN(report::Report whole, r.Materialize());
  return ReducedReport{std::move(whole), r.stats()};
}

}  // namespace overlapscope::engine
