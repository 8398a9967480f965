#include "cli/run_capture.h"

#if defined(OVERLAPSCOPE_HAVE_WORKLOADS)

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "capture/cupti/capture_session.h"
#include "engine/capture.h"

namespace overlapscope::cli {

struct RunCapture::Session {
  std::unique_ptr<cupti::CaptureSession> cupti;
};

absl::Status WriteTextFile(const std::string& path, const std::string& content) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  std::ofstream f(path, std::ios::binary);
  if (f) f.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!f) return absl::InternalError(absl::StrCat(path, ": cannot write: ", std::strerror(errno)));
  return absl::OkStatus();
}

std::string CrossRankSummaryLine(const report::CrossRank& x) {
  if (x.instances.empty()) return "";
  std::vector<int64_t> skew;
  for (const auto& i : x.instances) skew.push_back(i.skew_ns);
  std::sort(skew.begin(), skew.end());
  const size_t n = skew.size();
  const double median =
      n % 2 ? static_cast<double>(skew[n / 2]) : 0.5 * static_cast<double>(skew[n / 2 - 1] + skew[n / 2]);
  return absl::StrFormat("    collectives matched across ranks: %d (unmatched %d); skew median %.3f ms, max %.3f ms\n",
                         n, x.unmatched, median / 1e6, x.max_skew_ns / 1e6);
}

std::string PrepareCaptureEnv(int iters, FILE* note_to) {
  std::string lib = cupti::CuptiLibraryPath();
  if (!lib.empty()) setenv("NVTX_INJECTION64_PATH", lib.c_str(), /*overwrite=*/0);
  // NCCL's profiler plugin adds communicator, sequence, algorithm, protocol and channels to the
  // captured collectives. NCCL loads it at the first communicator init, which cmd_run.cc runs
  // after constructing the capture. The plugin writes under a fresh temporary directory (or
  // OVERLAPSCOPE_NCCL_DIR when the user gave one); each session's Stop() reads its window.
  if (iters <= 0 || std::getenv("OVERLAPSCOPE_NO_NCCL_PLUGIN")) return "";
  const char* dir = std::getenv("OVERLAPSCOPE_NCCL_DIR");
  const bool user_dir = dir && *dir;
  if (std::string why = cupti::SetNcclPluginEnv(user_dir ? dir : ""); !why.empty()) {
    if (note_to) std::fprintf(note_to, "  note: %s\n", why.c_str());
    return "";
  }
  return user_dir ? "" : std::getenv("OVERLAPSCOPE_NCCL_DIR");
}

RunCapture::RunCapture(std::string workload, std::string out_dir, int iters, FILE* out, bool full_report)
    : workload_(std::move(workload)),
      out_dir_(std::move(out_dir)),
      iters_(iters),
      out_(out),
      full_report_(full_report),
      session_(new Session) {
  nccl_tmp_dir_ = PrepareCaptureEnv(iters_, out_);
}

RunCapture::~RunCapture() {
  if (nccl_tmp_dir_.empty()) return;
  std::error_code ec;  // the plugin may still append at exit: an unlinked file takes it harmlessly
  std::filesystem::remove_all(nccl_tmp_dir_, ec);
}

workloads::CaptureHooks RunCapture::Hooks() {
  workloads::CaptureHooks h;
  h.iters = iters_;
  h.begin = [this](const std::string& mode) { return Begin(mode); };
  h.end = [this](const std::string& mode) { return End(mode); };
  return h;
}

void KeepNcclPluginCopy(const std::string& dir) {
  const char* nccl_dir = std::getenv("OVERLAPSCOPE_NCCL_DIR");
  if (!nccl_dir || !*nccl_dir) return;
  const std::string name = absl::StrCat("/nccl.", ::getpid(), ".ovnccl");
  std::error_code ec;  // no plugin file (no NCCL in this run): nothing to keep
  if (std::filesystem::exists(nccl_dir + name, ec))
    std::filesystem::copy_file(nccl_dir + name, dir + name, std::filesystem::copy_options::overwrite_existing, ec);
}

std::string RunCapture::ModeDir(const std::string& mode) const {
  return absl::StrCat(out_dir_, "/", workload_, "-", mode);
}

absl::Status RunCapture::Begin(const std::string& mode) {
  cupti::CaptureOptions o;
  if (!out_dir_.empty()) {  // the raw capture stays beside the reports (replay, analyze read it again)
    const std::string dir = ModeDir(mode);
    o.spill_path = dir + "/" + kRunSpillName;
    o.keep_spill_file = true;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::remove(o.spill_path, ec);  // a capture of an earlier run (-o reused)
    std::filesystem::remove(absl::StrCat(dir, "/nccl.", ::getpid(), ".ovnccl"), ec);
  }
  auto s = cupti::CaptureSession::Start(o);
  if (!s.ok()) return absl::Status(s.status().code(), absl::StrCat("capture start: ", s.status().message()));
  session_->cupti = std::move(s).value();
  return absl::OkStatus();
}

namespace {
std::string Ms(int64_t ns) { return absl::StrFormat("%.3f ms", ns / 1e6); }
}  // namespace

std::string ModeSummary(const engine::Analysis& a) {
  const engine::EventCounts n = engine::CountEvents(a.session());
  std::string s = absl::StrFormat("    captured %d kernels, %d memcpys, %d API calls, %d syncs, %d NVTX ranges",
                                  n.kernels, n.memcpys, n.api_calls, n.syncs, n.ranges);
  if (n.processes > 1) absl::StrAppend(&s, " from ", n.processes, " processes");
  s += "\n";
  const report::Report& r = a.report();
  for (const report::RankReport& rk : r.ranks)
    for (const report::DeviceReport& d : rk.devices) {
      const report::OverlapFigures& w = d.overlap;
      absl::StrAppendFormat(&s, "    %sGPU %d: comm %s, hidden %s, exposed %s, overlap %s, compute %s\n",
                            rk.rank ? absl::StrCat("rank ", *rk.rank, " ") : "", d.device, Ms(w.comm_ns),
                            Ms(w.hidden_comm_ns), Ms(w.exposed_comm_ns),
                            w.overlap_ratio ? absl::StrFormat("%.1f%%", 100 * *w.overlap_ratio) : std::string("n/a"),
                            Ms(w.compute_ns));
    }
  for (const report::RankReport& rk : r.ranks) {
    absl::StrAppendFormat(&s, "    %shost blocked %s", rk.rank ? absl::StrCat("rank ", *rk.rank, " ") : "",
                          Ms(rk.summary.blocked_ns));
    for (const report::KindFigures& k : rk.findings.by_kind)
      if (k.count > 0) absl::StrAppendFormat(&s, "; %s x%d", k.kind, k.count);
    s += "\n";
  }
  s += CrossRankSummaryLine(r.collectives_across_ranks);
  return s;
}

absl::Status WriteModeOutputs(const std::string& dir, const engine::Analysis& analysis) {
  for (auto [file, format] : {std::pair{"/report.json", engine::ReportFormat::kJson},
                              std::pair{"/report.txt", engine::ReportFormat::kText}}) {
    ASSIGN_OR_RETURN(std::string text, engine::RenderReport(analysis, format));
    RETURN_IF_ERROR(WriteTextFile(dir + file, text));
  }
  engine::ExportOptions draw;
  draw.analysis = &analysis;
  return engine::ExportPerfetto(analysis.session(), dir + "/trace.pftrace", draw).status();
}

absl::Status RunCapture::End(const std::string& mode) {
  if (!session_->cupti) return absl::FailedPreconditionError("capture end without start");
  auto captured =
      engine::StopCaptureSession(*session_->cupti, absl::StrCat("overlapscope run ", workload_, " --mode ", mode));
  session_->cupti.reset();
  if (!captured.ok())
    return absl::Status(captured.status().code(), absl::StrCat("capture stop: ", captured.status().message()));
  ASSIGN_OR_RETURN(engine::Analysis analysis, engine::Analyze(*captured));
  std::string block = absl::StrCat("  analysis of ", workload_, " ", mode, " (", iters_, " captured iterations):\n",
                                   ModeSummary(analysis));
  if (full_report_) {
    ASSIGN_OR_RETURN(std::string text, engine::RenderReport(analysis, engine::ReportFormat::kText));
    absl::StrAppend(&block, text);
  }
  if (!out_dir_.empty()) {
    const std::string dir = ModeDir(mode);
    KeepNcclPluginCopy(dir);
    RETURN_IF_ERROR(WriteModeOutputs(dir, analysis));
    absl::StrAppend(&block, "    wrote ", dir, "/{trace.pftrace, report.json, report.txt, ", kRunSpillName, "}\n");
  }
  std::fputs(block.c_str(), out_);
  std::fflush(out_);
  text_ += block;
  return absl::OkStatus();
}

}  // namespace overlapscope::cli

#endif  // OVERLAPSCOPE_HAVE_WORKLOADS
