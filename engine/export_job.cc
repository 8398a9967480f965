#include "engine/export_job.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/reduce_internal.h"
#include "exporters/perfetto_overview.h"
#include "exporters/perfetto_writer.h"
#include "importers/import_any.h"

namespace overlapscope::engine {
namespace {

// The rank files written so far, by input file index (filled from the reduction's workers).
class RankWriter {
 public:
  RankWriter(std::string dir, size_t files, bool analyze) : dir_(std::move(dir)), names_(files), analyze_(analyze) {}

  absl::Status Write(int64_t file, const RankModel& m) {
    const model::Trace& t = m.trace;
    const int32_t rank = t.processes().empty() ? -1 : t.processes().front().rank;
    const std::string name =
        rank >= 0 ? absl::StrCat("rank", rank, ".pftrace") : absl::StrCat("process", file, ".pftrace");
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto [it, fresh] = owner_.emplace(name, file);
      if (!fresh && it->second != file)
        return absl::InvalidArgumentError(
            absl::StrCat("input files ", it->second, " and ", file, " both hold rank ", rank, ": one file per rank"));
    }
    const std::string path = (std::filesystem::path(dir_) / name).string();
    exporters::PerfettoStats st;
    RETURN_IF_ERROR(exporters::WritePerfetto(t, analyze_ ? &m.result : nullptr, path, &st));
    std::lock_guard<std::mutex> lock(mu_);
    if (names_[file].empty()) bytes_ += st.bytes;  // a rank written again (clock shift) counts once
    names_[file] = path;
    return absl::OkStatus();
  }

  const std::vector<std::string>& names() const { return names_; }
  int64_t bytes() const { return bytes_; }
  void Set(size_t file, std::string path, int64_t bytes) {
    names_[file] = std::move(path);
    bytes_ += bytes;
  }

 private:
  const std::string dir_;
  std::mutex mu_;
  std::map<std::string, int64_t> owner_;
  std::vector<std::string> names_;
  int64_t bytes_ = 0;
  const bool analyze_;
};

exporters::OverviewDevice Device(const report::DeviceReport& d, int64_t* iterations) {
  exporters::OverviewDevice o;
  o.ordinal = d.device;
  for (const report::IterationOverlap& it : d.iterations) {
    if (it.gpu_start_ns == 0 && it.gpu_end_ns == 0) continue;  // no GPU work in this iteration
    exporters::OverviewIteration x;
    x.number = it.iteration;
    x.start_ns = it.gpu_start_ns;
    x.end_ns = it.gpu_end_ns;
    x.comm_ns = it.stats.comm_ns;
    x.hidden_comm_ns = it.stats.hidden_comm_ns;
    x.exposed_comm_ns = it.stats.exposed_comm_ns;
    for (const report::NamedValue& g : it.gap_ns) x.idle_ns.push_back({g.name, g.value});
    o.iterations.push_back(std::move(x));
    ++*iterations;
  }
  return o;
}

// The overview's input from the streamed report (one rank part and one collective instance in
// memory at a time): ranks in report order (= input file order); each wait goes to the rank
// whose (pid, host) its participant has, or, where copied traces share them, its rank number.
std::vector<exporters::OverviewRank> Overview(const report::ReportView& v, JobExport* out) {
  const report::Report& head = *v.head;
  std::vector<exporters::OverviewRank> ranks;
  std::map<std::pair<int64_t, std::string>, std::vector<size_t>> by_process;
  for (size_t i = 0; i < head.ranks.size(); ++i) {
    report::RankReport scratch;
    const report::RankReport& rk = v.rank(i, &scratch);
    exporters::OverviewRank o;
    o.label = head.ranks[i].label;
    o.host = head.ranks[i].host;
    o.pid = head.ranks[i].pid;
    for (const report::DeviceReport& d : rk.devices) o.devices.push_back(Device(d, &out->iterations));
    by_process[{o.pid, o.host}].push_back(ranks.size());
    ranks.push_back(std::move(o));
  }
  const report::CrossRank& x = head.collectives_across_ranks;
  std::map<std::string, int64_t> rank_of_label;  // participant label -> index in ranks, -1: ambiguous
  for (const report::Participant& p : x.participants) {
    auto it = p.ref.pid ? by_process.find({*p.ref.pid, p.host.value_or("")}) : by_process.end();
    std::vector<size_t> c = it == by_process.end() ? std::vector<size_t>{} : it->second;
    if (c.size() > 1 && p.ref.rank)
      c.erase(std::remove_if(c.begin(), c.end(), [&](size_t i) { return head.ranks[i].rank != p.ref.rank; }), c.end());
    rank_of_label[p.ref.label] = c.size() == 1 ? static_cast<int64_t>(c[0]) : -1;
  }
  for (size_t k = 0; k < v.instance_count; ++k) {
    report::Instance scratch;
    const report::Instance& in = v.instance(k, &scratch);
    for (const report::InstanceRank& ir : in.ranks) {
      if (ir.wait_ns <= 0) continue;
      auto it = rank_of_label.find(ir.ref.label);
      if (it == rank_of_label.end() || it->second < 0) {
        ++out->waits_unplaced;
        continue;
      }
      exporters::OverviewWait w;
      w.arrival_ns = ir.arrival_ns;
      w.wait_ns = ir.wait_ns;
      w.instance = in.index;
      w.sequence = in.sequence.value_or(-1);
      w.skew_ns = in.skew_ns;
      w.op = in.op;
      w.communicator = in.communicator;
      w.last = in.last.value_or("");
      ranks[it->second].waits.push_back(std::move(w));
      ++out->waits;
    }
  }
  return ranks;
}

absl::StatusOr<JobExport> Run(const std::vector<std::string>& inputs, const std::string& out_dir,
                              const JobExportOptions& options) {
  ASSIGN_OR_RETURN(import::ExpandedInputs in, import::ExpandInputs(inputs));
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec || !std::filesystem::is_directory(out_dir))
    return absl::UnavailableError(
        absl::StrCat(out_dir, ": cannot create the output directory", ec ? ": " + ec.message() : std::string()));
  RankWriter writer(out_dir, in.files.size(), options.analyze);
  ReduceOptions ro = options.reduce;
  ro.each_rank = [&](int64_t file, const RankModel& m) { return writer.Write(file, m); };
  AnalyzeOptions ao;
  ao.critical_path = false;  // the reduction cannot compute it; a one-file job skips it too
  ASSIGN_OR_RETURN(PerRankReport red, ReducePerRank(inputs, ao, ro));
  JobExport out;
  out.stats = red.stats();
  for (size_t i = 0; i < in.files.size(); ++i)
    if (writer.names()[i].empty()) {  // the whole-model path (one file): write it from a Session
      LoadOptions lo;
      lo.align_clocks = ro.align_clocks;
      ASSIGN_OR_RETURN(Session s, Load({in.files[i]}, lo));
      std::optional<Analysis> a;
      if (options.analyze) {
        ASSIGN_OR_RETURN(Analysis x, Analyze(s, ao));
        a = std::move(x);
      }
      const int32_t rank = s.trace().processes().empty() ? -1 : s.trace().processes().front().rank;
      const std::string path = (std::filesystem::path(out_dir) / (rank >= 0 ? absl::StrCat("rank", rank, ".pftrace")
                                                                            : absl::StrCat("process", i, ".pftrace")))
                                   .string();
      ExportOptions eo;
      eo.analysis = a ? &*a : nullptr;
      ASSIGN_OR_RETURN(PerfettoExport st, ExportPerfetto(s, path, eo));
      writer.Set(i, path, st.bytes);
    }
  for (const report::ImportWarning& w : red.head().warnings) out.warnings.push_back(w.message);
  out.rank_files = writer.names();
  out.rank_bytes = writer.bytes();
  std::vector<exporters::OverviewRank> ranks = Overview(red.view(), &out);
  RETURN_IF_ERROR(red.status());  // a reduced rank that could not be read back
  out.overview = (std::filesystem::path(out_dir) / "overview.pftrace").string();
  ASSIGN_OR_RETURN(exporters::PerfettoStats st, exporters::WriteOverview(std::move(ranks), out.overview));
  out.overview_stats.packets = st.packets;
  out.overview_stats.tracks = st.tracks;
  out.overview_stats.lane_tracks = st.lane_tracks;
  out.overview_stats.slices = st.slices;
  out.overview_stats.counter_samples = st.counter_samples;
  out.overview_stats.bytes = st.bytes;
  out.overview_stats.time_shift_ns = st.time_shift_ns;
  return out;
}

}  // namespace

absl::StatusOr<JobExport> ExportJob(const std::vector<std::string>& inputs, const std::string& out_dir,
                                    const JobExportOptions& options) {
  try {
    return Run(inputs, out_dir, options);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(out_dir, ": out of memory while exporting the job"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(out_dir, ": exporting the job failed: ", e.what()));
  }
}

bool IsOutputError(const absl::Status& s) { return s.code() == absl::StatusCode::kUnavailable; }

}  // namespace overlapscope::engine
