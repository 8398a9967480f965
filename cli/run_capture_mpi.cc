#include "cli/run_capture_mpi.h"

#if defined(OVERLAPSCOPE_HAVE_WORKLOADS)

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "capture/cupti/capture_session.h"
#include "cli/run_capture.h"
#include "engine/capture.h"
#include "workloads/mpi_world.h"

namespace overlapscope::cli {

namespace mpi = workloads::mpi;

struct MpiRunCapture::Session {
  std::unique_ptr<cupti::CaptureSession> cupti;
};

MpiRunCapture::MpiRunCapture(std::string workload, std::string out_dir, int iters, FILE* out, bool full_report)
    : workload_(std::move(workload)),
      out_dir_(std::move(out_dir)),
      iters_(iters),
      out_(out),
      full_report_(full_report),
      session_(new Session) {
  nccl_tmp_dir_ = PrepareCaptureEnv(iters_, mpi::Rank() <= 0 ? out_ : nullptr);
}

MpiRunCapture::~MpiRunCapture() {
  if (!nccl_tmp_dir_.empty()) {
    std::error_code ec;  // the plugin may still append at exit: an unlinked file takes it harmlessly
    std::filesystem::remove_all(nccl_tmp_dir_, ec);
  }
  if (temp_dir_ && mpi::Rank() == 0) {
    std::error_code ec;
    std::filesystem::remove_all(base_dir_, ec);
  }
}

absl::Status MpiRunCapture::Init() {
  absl::Status st;
  std::string dir = out_dir_;
  if (dir.empty() && mpi::Rank() == 0) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/overlapscope-run-XXXXXX");
    if (mkdtemp(tmpl.data()) == nullptr)
      st = absl::InternalError(absl::StrCat(tmpl, ": cannot create a temporary directory"));
    dir = tmpl;
  }
  RETURN_IF_ERROR(mpi::Agree(st));
  if (out_dir_.empty()) {
    ASSIGN_OR_RETURN(std::vector<std::string> dirs, mpi::AllGather(dir));
    dir = dirs[0];
    temp_dir_ = true;
  }
  base_dir_ = dir;
  return absl::OkStatus();
}

workloads::CaptureHooks MpiRunCapture::Hooks() {
  workloads::CaptureHooks h;
  h.iters = iters_;
  h.begin = [this](const std::string& mode) { return Begin(mode); };
  h.end = [this](const std::string& mode) { return End(mode); };
  return h;
}

absl::Status MpiRunCapture::Begin(const std::string& mode) {
  const std::string dir = absl::StrCat(base_dir_, "/", workload_, "-", mode);
  cupti::CaptureOptions o;
  o.spill_path = absl::StrCat(dir, "/rank", mpi::Rank(), ".ovspill");
  o.keep_spill_file = true;
  o.rank = mpi::Rank();
  o.world_size = mpi::Size();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::remove(o.spill_path, ec);  // a spill file of an earlier run (-o reused)
  window_start_ns_ = cupti::NowNs();
  auto s = cupti::CaptureSession::Start(o);
  absl::Status st = s.status();
  if (s.ok()) session_->cupti = std::move(s).value();
  if (!st.ok()) st = absl::Status(st.code(), absl::StrCat("capture start: ", st.message()));
  return mpi::Agree(st);
}

absl::Status MpiRunCapture::End(const std::string& mode) {
  absl::Status st;
  if (!session_->cupti) {
    st = absl::FailedPreconditionError("capture end without start");
  } else {
    // This rank's trace is read back from its spill file by rank 0 below.
    auto trace = engine::StopCapture(*session_->cupti);  // flushes the NCCL plugin's file too
    session_->cupti.reset();
    if (!trace.ok()) st = absl::Status(trace.status().code(), absl::StrCat("capture stop: ", trace.status().message()));
  }
  const std::string dir = absl::StrCat(base_dir_, "/", workload_, "-", mode);
  // The plugin file covers the whole process; a copy next to the spill file is what
  // ReadSpillFiles merges (records outside the window below are left out, not errors).
  if (st.ok()) KeepNcclPluginCopy(dir);
  // Every rank's spill file is complete once all ranks are past Stop().
  RETURN_IF_ERROR(mpi::Agree(st));
  ASSIGN_OR_RETURN(std::vector<std::string> starts, mpi::AllGather(absl::StrCat(window_start_ns_)));
  ASSIGN_OR_RETURN(std::vector<std::string> ends, mpi::AllGather(absl::StrCat(cupti::NowNs())));
  if (mpi::Rank() == 0) st = AnalyzeOnRank0(mode, dir, starts, ends);
  return mpi::Agree(st);
}

absl::Status MpiRunCapture::AnalyzeOnRank0(const std::string& mode, const std::string& dir,
                                           const std::vector<std::string>& starts,
                                           const std::vector<std::string>& ends) {
  std::vector<std::string> files;
  for (int r = 0; r < mpi::Size(); ++r) files.push_back(absl::StrCat(dir, "/rank", r, ".ovspill"));
  // One window for all ranks: the earliest session start to the latest stop.
  engine::LoadOptions load;
  load.nccl_window_start_ns = std::numeric_limits<int64_t>::max();
  load.nccl_window_end_ns = std::numeric_limits<int64_t>::min();
  for (size_t r = 0; r < starts.size() && r < ends.size(); ++r) {
    int64_t s = 0, e = 0;
    if (!absl::SimpleAtoi(starts[r], &s) || !absl::SimpleAtoi(ends[r], &e))
      return absl::InternalError(
          absl::StrCat("rank ", r, " sent a malformed capture window: ", starts[r], " ", ends[r]));
    load.nccl_window_start_ns = std::min(load.nccl_window_start_ns, s);
    load.nccl_window_end_ns = std::max(load.nccl_window_end_ns, e);
  }
  // Read once, clocks of several hosts aligned as `analyze` aligns them, analyzed once.
  ASSIGN_OR_RETURN(engine::Session session, engine::Load(files, load));
  ASSIGN_OR_RETURN(engine::Analysis analysis, engine::Analyze(session));
  std::string block = absl::StrCat("  analysis of ", workload_, " ", mode, " (", iters_, " captured iterations, ",
                                   mpi::Size(), " MPI ranks):\n", ModeSummary(analysis));
  if (full_report_) {
    ASSIGN_OR_RETURN(std::string text, engine::RenderReport(analysis, engine::ReportFormat::kText));
    absl::StrAppend(&block, text);
  }
  if (!temp_dir_) {
    RETURN_IF_ERROR(WriteModeOutputs(dir, analysis));
    absl::StrAppend(&block, "    wrote ", dir, "/{trace.pftrace, report.json, report.txt, rank*.ovspill}\n");
  } else {
    std::error_code ec;
    for (const auto& f : files) std::filesystem::remove(f, ec);
    std::filesystem::remove_all(dir, ec);  // the plugin copies, and the mode's directory
  }
  std::fputs(block.c_str(), out_);
  std::fflush(out_);
  text_ += block;
  return absl::OkStatus();
}

}  // namespace overlapscope::cli

#endif  // OVERLAPSCOPE_HAVE_WORKLOADS
