// overlapscope run WORKLOAD [options]: runs a built-in CUDA/NCCL/cuBLAS workload on the local
// GPUs (one thread per GPU; under mpirun one rank per process), prints its own timing table
// (CUDA events, METRICS.md §7) and the collectives' skew as the ranks time it, captures each mode
// with CUPTI and prints what the analysis finds, and writes traces and reports (-o). Under MPI
// only rank 0 prints and writes; every rank exits with the same status.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"

#if defined(OVERLAPSCOPE_HAVE_WORKLOADS)
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/run_capture.h"
#include "cli/run_capture_mpi.h"
#include "nlohmann/json.hpp"
#include "workloads/all_reduce.h"
#include "workloads/all_to_all.h"
#include "workloads/d2h.h"
#include "workloads/matmul_allgather.h"
#include "workloads/mpi_world.h"
#include "workloads/sm_clock.h"
#endif

namespace overlapscope::cli {

#if !defined(OVERLAPSCOPE_HAVE_WORKLOADS)

int RunWorkload(int argc, char** argv) {
  std::fputs("overlapscope run: this build has no workloads (built without CUDA, CUPTI or NCCL)\n", stderr);
  return kExitError;
}

#else

namespace {

const CommandSpec kSpec{
    "run",
    "overlapscope run WORKLOAD [options]   (WORKLOAD: matmul-allgather | all-to-all | all-reduce | d2h)",
    "Runs a built-in workload on all local GPUs (one thread per GPU, one NCCL communicator), times\n"
    "it with CUDA events (median of --iters after --warmup), validates every result on the device\n"
    "(a wrong result is exit status 1), then captures --capture-iters more iterations of each mode\n"
    "with CUPTI, analyzes them and prints the findings. Each rank also times every collective\n"
    "itself (CUDA events right before and after it): skew = max - min over ranks of those durations.\n"
    "\n"
    "all-reduce compares ncclAllReduce, overlapscope's one-shot and two-shot kernels (peer pointers,\n"
    "flag barriers in device memory), its one-shot-push kernel (stores into the peers' receive\n"
    "buffers, no barrier) and NCCL's symmetric-memory all-reduce per message size\n"
    "(--impl, --sizes; needs at least 2 GPUs).\n"
    "\n"
    "MPI: `mpirun -np N overlapscope run WORKLOAD ...` (all but d2h) runs one rank per\n"
    "process, each on the GPU of its local rank (one GPU per rank; at most as many ranks per host as\n"
    "GPUs). The NCCL id goes from rank 0 by MPI_Bcast; rank 0 gathers the timings, prints them and,\n"
    "under capture, reads every rank's capture (DIR/<workload>-<mode>/rank<R>.ovspill) into one\n"
    "multi-process analysis. Without -o the capture files go to a temporary directory on rank 0's\n"
    "host: use -o DIR on a directory all ranks share when the ranks span several hosts. Detected from\n"
    "the launcher's environment (OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_RANK) or forced with --mpi;\n"
    "needs a build with MPI (libopenmpi-dev at build time). A CUDA/NCCL error on any rank ends all\n"
    "ranks (MPI_Abort); a validation failure on any rank makes every rank exit 1.",
    {{"mode", "M[,M]",
      "modes to run, or 'all'. matmul-allgather: sequential, overlap, overlap-ce "
      "(default sequential,overlap); all-to-all: sync, async, async-ce (default all); d2h: blocking, "
      "nonblocking-nosync, nonblocking-event (default all)",
      true},
     {"output", "DIR",
      "write DIR/<workload>-<mode>/{trace.pftrace,report.json,report.txt}, the raw capture beside them "
      "(capture.ovspill and the NCCL plugin's nccl.<pid>.ovnccl; under MPI rank<R>.ovspill), which "
      "analyze, replay and export read again, and DIR/<workload>-timings.{txt,json} (-o DIR works too)"},
     {"gpus", "N", "GPUs (ranks) to use; default all visible (d2h: 1); under MPI the ranks are the processes"},
     {"iters", "N", "timed iterations per phase (default 20)"},
     {"warmup", "N", "warm-up iterations per phase (default 5)"},
     {"capture-iters", "N", "iterations captured per mode (default 5; 0 = no capture)"},
     {"no-capture", "", "time only; no CUPTI capture or analysis"},
     {"json", "", "print the timing figures as JSON (schema overlapscope.run/1)"},
     {"report", "", "print the full analysis report of every captured mode (default: a summary)"},
     {"impl", "I[,I]", "all-reduce: nccl, one-shot, two-shot, one-shot-push, nccl-symmetric, or 'all' (default all)",
      true},
     {"sizes", "SPEC",
      "all-reduce: message sizes per rank, A..B (doubling) or A,B,C; units B, KB, MB, GB are 1024-based "
      "(default 0.5MB..64MB)"},
     {"reps", "N", "all-reduce: all-reduces per timed iteration, each timed (default 5)"},
     {"ar-blocks", "N",
      "all-reduce: blocks per GPU of our kernels (one-shot, two-shot, one-shot-push), at most (1..128; default "
      "64, one-shot-push 128)"},
     {"m", "N", "GEMM rows (default 8192)"},
     {"n", "N", "GEMM columns (default 8192)"},
     {"k", "N", "GEMM inner dimension (default 8192; all-to-all 2048)"},
     {"dtype", "T", "fp16 | bf16 | fp32 (default fp16; FP32 accumulate; all-reduce: default bf16)"},
     {"data", "D",
      "matmul-allgather, all-to-all: GEMM inputs: random (default; N(0,1) as torch.randn, sampled FP64 "
      "validation) or structured (closed form, every element checked exactly; draws less power)"},
     {"ar-timing", "T",
      "all-reduce: each (default; an event pair around every all-reduce), batch (the --reps all-reduces "
      "back to back between one event pair, time / reps, as nccl-tests time) or graph (the same captured "
      "into one CUDA graph, as inference servers' custom all-reduce tables time)"},
     {"ar-no-hold", "",
      "all-reduce: enqueue without holding the stream behind a spinning kernel, for profilers that serialize "
      "every launch (Nsight Compute); the figures then include the host's launch gaps"},
     {"ag-mb", "MIB", "matmul-allgather: all-gather input per rank in MiB (default 64)"},
     {"ag-sweep", "MIB[,MIB]", "matmul-allgather: also time the all-gather alone at these sizes"},
     {"layers", "N", "all-to-all: matmul + all-to-all layers per step (default 4)"},
     {"a2a-impl", "I", "all-to-all: auto | alltoall | sendrecv (default auto: ncclAlltoAll if the library has it)"},
     {"nccl-max-ctas", "N", "maxCTAs of the NCCL communicator (fewer SMs for NCCL kernels)"},
     {"sm-carveout", "N", "matmul-allgather: in the overlap modes the GEMM leaves N SMs free (cublasSetSmCountTarget)"},
     {"cublas-workspace-mb", "MB", "cuBLAS workspace per GPU (default 32, as PyTorch on Hopper; 0: cuBLAS's default)"},
     {"burn-in-ms", "MS", "GEMMs back to back before measuring, for steady clocks (default 500)"},
     {"producer-us", "US", "d2h: GPU time to produce a batch (default 2000)"},
     {"irrelevant-us", "US", "d2h: GPU work not needing the flag (default 500)"},
     {"host-work-us", "US", "d2h: host work per step before the flag is read (default 1000)"},
     {"timeout-s", "S", "give up (exit 1) when a phase hangs this long (default 300)"},
     {"delay-rank", "R", "matmul-allgather, all-to-all: rank R is a straggler (needs --delay-us)"},
     {"delay-us", "US",
      "rank R runs a GPU spin kernel of US microseconds on the collective's stream right "
      "before every collective (timed and captured phases; not the --ag-sweep). The ranks' "
      "events start after the spin: in the overlap modes the late rank's NCCL kernel may then "
      "still wait for SMs the GEMM holds, which the capture shows and the events do not"},
     {"mpi", "", "one rank per process under an MPI launcher (the default when its environment is seen)"}},
    "exit codes: 0 ok, 1 a CUDA/NCCL error or a validation failure, 64 bad command line"};

bool ParseInt(const ParsedArgs& a, const char* flag, int64_t& v, std::string& err) {
  if (!a.Has(flag)) return true;
  if (!absl::SimpleAtoi(a.Get(flag), &v)) err = absl::StrCat("--", flag, " needs an integer, got '", a.Get(flag), "'");
  return err.empty();
}
bool ParseDouble(const ParsedArgs& a, const char* flag, double& v, std::string& err) {
  if (!a.Has(flag)) return true;
  if (!absl::SimpleAtod(a.Get(flag), &v)) err = absl::StrCat("--", flag, " needs a number, got '", a.Get(flag), "'");
  return err.empty();
}

std::vector<std::string> Modes(const ParsedArgs& a, const std::vector<std::string>& all,
                               const std::vector<std::string>& fallback) {
  std::vector<std::string> out;
  for (const auto& v : a.All("mode"))
    for (auto part : absl::StrSplit(v, ',', absl::SkipEmpty())) {
      if (part == "all") return all;
      out.emplace_back(part);
    }
  return out.empty() ? fallback : out;
}

nlohmann::json ToJson(const workloads::WorkloadResult& r) {
  nlohmann::json j = {{"schema", "overlapscope.run/1"},
                      {"workload", r.workload},
                      {"device", r.device},
                      {"config", r.config},
                      {"ranks", r.ranks},
                      {"nranks", r.nranks},
                      {"figures", r.figures},
                      {"notes", r.notes},
                      {"errors", r.errors},
                      {"ok", r.ok()}};
  return j;
}

// The command line's numbers and lists, checked: defaults as --help states them.
struct RunOptions {
  int64_t gpus = 0, iters = 20, warmup = 5, cap = 5, m = 8192, n = 8192, k = 8192, layers = 4, max_ctas = 0,
          prod = 2000, irr = 500, host = 1000, carve = 0, burn = 500, delay_rank = -1, delay_us = 0, reps = 5,
          ar_blocks = 0, blas_ws = 32;
  double ag_mb = 64, timeout = 300;
  workloads::DType dtype{};
  workloads::GemmData data = workloads::GemmData::kRandom;
  workloads::AllReduceTiming ar_timing = workloads::AllReduceTiming::kEach;
  std::vector<double> sweep;
  std::vector<int64_t> sizes;
};

// Parses and checks the options of workload `wl`; the error message, or "" when they are good.
// Every check happens before a GPU is touched, so a bad command line costs nothing.
std::string ParseRunOptions(const ParsedArgs& args, const std::string& wl, RunOptions& o) {
  std::string err;
  o.gpus = wl == "d2h" ? 1 : 0;
  o.k = wl == "all-to-all" ? 2048 : 8192;
  ParseInt(args, "gpus", o.gpus, err) && ParseInt(args, "iters", o.iters, err) &&
      ParseInt(args, "warmup", o.warmup, err) && ParseInt(args, "capture-iters", o.cap, err) &&
      ParseInt(args, "m", o.m, err) && ParseInt(args, "n", o.n, err) && ParseInt(args, "k", o.k, err) &&
      ParseInt(args, "layers", o.layers, err) && ParseInt(args, "nccl-max-ctas", o.max_ctas, err) &&
      ParseInt(args, "producer-us", o.prod, err) && ParseInt(args, "irrelevant-us", o.irr, err) &&
      ParseInt(args, "host-work-us", o.host, err) && ParseInt(args, "sm-carveout", o.carve, err) &&
      ParseInt(args, "burn-in-ms", o.burn, err) && ParseInt(args, "delay-rank", o.delay_rank, err) &&
      ParseInt(args, "delay-us", o.delay_us, err) && ParseInt(args, "reps", o.reps, err) &&
      ParseInt(args, "ar-blocks", o.ar_blocks, err) && ParseInt(args, "cublas-workspace-mb", o.blas_ws, err) &&
      ParseDouble(args, "ag-mb", o.ag_mb, err) && ParseDouble(args, "timeout-s", o.timeout, err);
  if (err.empty() && (o.iters < 1 || o.warmup < 0 || o.cap < 0 || o.gpus < 0 || o.blas_ws < 0 || o.blas_ws > 4096))
    err = "--iters must be >= 1; --warmup, --capture-iters, --gpus >= 0; --cublas-workspace-mb 0..4096";
  if (err.empty() && args.Has("ar-blocks") && (o.ar_blocks < 1 || o.ar_blocks > 128))
    err = absl::StrCat("--ar-blocks must be 1..128, got ", o.ar_blocks);
  auto dtype = workloads::ParseDType(args.Get("dtype", wl == "all-reduce" ? "bf16" : "fp16"));
  if (err.empty() && !dtype.ok()) err = std::string(dtype.status().message());
  if (dtype.ok()) o.dtype = *dtype;
  auto data = workloads::ParseGemmData(args.Get("data", "random"));
  if (err.empty() && !data.ok()) err = std::string(data.status().message());
  if (data.ok()) o.data = *data;
  const std::string timing = args.Get("ar-timing", "each");
  if (err.empty() && timing != "each" && timing != "batch" && timing != "graph")
    err = absl::StrCat("--ar-timing must be each, batch or graph, got '", timing, "'");
  o.ar_timing = timing == "batch"   ? workloads::AllReduceTiming::kBatch
                : timing == "graph" ? workloads::AllReduceTiming::kGraph
                                    : workloads::AllReduceTiming::kEach;
  for (auto part : absl::StrSplit(args.Get("ag-sweep"), ',', absl::SkipEmpty())) {
    double v = 0;
    if (!absl::SimpleAtod(part, &v) || v <= 0) err = absl::StrCat("--ag-sweep: bad size '", part, "'");
    o.sweep.push_back(v);
  }
  if (err.empty() && wl == "d2h" && (args.Has("delay-rank") || args.Has("delay-us")))
    err = "--delay-rank/--delay-us: d2h runs no collectives (matmul-allgather, all-to-all)";
  if (err.empty() && wl == "all-reduce" && (args.Has("delay-rank") || args.Has("delay-us")))
    err = "--delay-rank/--delay-us: all-reduce has no straggler injection (matmul-allgather, all-to-all)";
  if (err.empty() && wl == "all-reduce" && args.Has("sizes")) {
    auto s = workloads::ParseAllReduceSizes(args.Get("sizes"));
    if (s.ok()) {
      o.sizes = *s;
    } else {
      err = std::string(s.status().message());
    }
  }
  if (err.empty() && args.Has("delay-rank") != args.Has("delay-us"))
    err = "--delay-rank R and --delay-us US go together (rank R is late by US microseconds)";
  return err;
}

// MPI (one rank per process): checks that this build and workload can run under it and calls
// MPI_Init. Returns an exit code on failure, -1 to go on.
int StartMpi(const std::string& wl, const workloads::mpi::LaunchEnv& launch) {
  const std::string why =
      launch.launched ? absl::StrCat("started by an MPI launcher (", launch.evidence, ")") : std::string("--mpi given");
  if (!workloads::mpi::CompiledIn()) {
    std::fprintf(stderr,
                 "overlapscope run: %s, but this overlapscope-run was built without MPI (libopenmpi-dev was not "
                 "found at build time): rebuild with it, or run without mpirun (one process drives all local "
                 "GPUs, one thread per GPU)\n",
                 why.c_str());
    return kExitError;
  }
  if (wl == "d2h") {
    std::fprintf(stderr, "overlapscope run: %s, but d2h is a one-GPU workload: run it without mpirun\n", why.c_str());
    return kExitUsage;
  }
  if (absl::Status st = workloads::mpi::Init(); !st.ok()) {
    std::fprintf(stderr, "overlapscope run: %s: %s\n", why.c_str(), std::string(st.message()).c_str());
    return kExitError;
  }
  return -1;
}

workloads::RunParams RunParamsOf(const RunOptions& o, bool use_mpi) {
  workloads::RunParams rp;
  rp.gpus = static_cast<int>(o.gpus);
  rp.iters = static_cast<int>(o.iters);
  rp.warmup = static_cast<int>(o.warmup);
  rp.nccl_max_ctas = static_cast<int>(o.max_ctas);
  rp.timeout_s = o.timeout;
  rp.burn_in_ms = static_cast<int>(o.burn);
  rp.cublas_workspace_mb = static_cast<int>(o.blas_ws);
  rp.delay_rank = static_cast<int>(o.delay_rank);
  rp.delay_us = o.delay_us;
  rp.mpi = use_mpi;
  return rp;
}

// --impl: the all-reduce implementations asked for ('all', or none given: every one).
std::vector<std::string> AllReduceImplsOf(const ParsedArgs& args) {
  if (!args.Has("impl")) return workloads::AllReduceImpls();
  std::vector<std::string> impls;
  for (const auto& v : args.All("impl"))
    for (auto part : absl::StrSplit(v, ',', absl::SkipEmpty())) {
      if (part == "all") {
        impls = workloads::AllReduceImpls();
        break;
      }
      impls.emplace_back(part);
    }
  return impls;
}

// Runs workload `wl` (known: RunWorkload checked the name) with its own options.
absl::StatusOr<workloads::WorkloadResult> Dispatch(const std::string& wl, const ParsedArgs& args, const RunOptions& ro,
                                                   const workloads::RunParams& rp,
                                                   const workloads::CaptureHooks& hooks) {
  const workloads::GemmShape shape{ro.m, ro.n, ro.k, ro.dtype, ro.data};
  if (wl == "matmul-allgather") {
    workloads::MatmulAllGatherOptions o;
    o.run = rp;
    o.gemm = shape;
    o.ag_mb = ro.ag_mb;
    o.sweep_mb = ro.sweep;
    o.sm_carveout = static_cast<int>(ro.carve);
    o.modes = Modes(args, workloads::MatmulAllGatherModes(), {"sequential", "overlap"});
    return workloads::RunMatmulAllGather(o, hooks);
  }
  if (wl == "all-to-all") {
    workloads::AllToAllOptions o;
    o.run = rp;
    o.gemm = shape;
    o.layers = static_cast<int>(ro.layers);
    o.impl = args.Get("a2a-impl", "auto");
    o.modes = Modes(args, workloads::AllToAllModes(), workloads::AllToAllModes());
    return workloads::RunAllToAll(o, hooks);
  }
  if (wl == "all-reduce") {
    workloads::AllReduceOptions o;
    o.run = rp;
    o.dtype = ro.dtype;
    o.sizes = ro.sizes;
    o.impls = AllReduceImplsOf(args);
    o.reps = static_cast<int>(ro.reps);
    o.max_blocks = static_cast<int>(ro.ar_blocks);
    o.timing = ro.ar_timing;
    o.hold = !args.Has("ar-no-hold");
    return workloads::RunAllReduce(o, hooks);
  }
  workloads::D2HOptions o;
  o.run = rp;
  o.producer_us = ro.prod;
  o.irrelevant_us = ro.irr;
  o.host_work_us = ro.host;
  o.modes = Modes(args, workloads::D2HModes(), workloads::D2HModes());
  return workloads::RunD2H(o, hooks);
}

// Rank 0's output: the timing table (or its JSON) on stdout, and with -o the timings and the
// captures' summaries as files. Returns the exit code.
int PrintAndWrite(const ParsedArgs& args, const std::string& wl, const workloads::WorkloadResult& r,
                  const std::string& capture_text, int exit_code) {
  std::string text = absl::StrCat(r.workload, " on ", r.device, "\n", r.config, "\nranks: ", r.ranks, "\n");
  for (const auto& note : r.notes) absl::StrAppend(&text, note, "\n");
  absl::StrAppend(&text, r.table);
  for (const auto& e : r.errors) absl::StrAppend(&text, "ERROR: ", e, "\n");
  if (args.Has("json")) {
    std::printf("%s\n", ToJson(r).dump(2).c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
  const std::string out_dir = args.Get("output");
  if (!out_dir.empty()) {
    absl::Status st = WriteTextFile(absl::StrCat(out_dir, "/", wl, "-timings.txt"), text + capture_text);
    if (st.ok()) st = WriteTextFile(absl::StrCat(out_dir, "/", wl, "-timings.json"), ToJson(r).dump(2) + "\n");
    if (!st.ok()) {
      std::fprintf(stderr, "overlapscope run: %s\n", std::string(st.message()).c_str());
      return kExitError;
    }
  }
  return exit_code;
}

}  // namespace

int RunWorkload(int argc, char** argv) {
  // -o DIR is the documented short form of --output.
  std::vector<std::string> storage(argv, argv + argc);
  for (auto& s : storage)
    if (s == "-o") s = "--output";
  std::vector<char*> args_v;
  for (auto& s : storage) args_v.push_back(s.data());
  ParsedArgs args;
  if (int rc = ParseOrExit(kSpec, static_cast<int>(args_v.size()), args_v.data(), args); rc >= 0) return rc;
  if (args.positionals.size() != 1) {
    std::fprintf(stderr,
                 "overlapscope run: give exactly one WORKLOAD (matmul-allgather, all-to-all, all-reduce, d2h)\n");
    return kExitUsage;
  }
  const std::string wl = args.positionals[0];
  RunOptions ro;
  if (std::string err = ParseRunOptions(args, wl, ro); !err.empty()) {
    std::fprintf(stderr, "overlapscope run: %s\n", err.c_str());
    return kExitUsage;
  }
  // MPI: one rank per process. MPI_Finalize runs when `finalize` goes, after the workload and
  // its communicators are gone.
  const workloads::mpi::LaunchEnv launch = workloads::mpi::DetectLaunch();
  const bool use_mpi = args.Has("mpi") || launch.launched;
  struct Finalize {
    ~Finalize() { workloads::mpi::Finalize(); }
  } finalize;
  if (use_mpi)
    if (int rc = StartMpi(wl, launch); rc >= 0) return rc;
  const bool rank0 = !use_mpi || workloads::mpi::Rank() == 0;
  const std::string out_dir = args.Get("output");
  const bool capture = !args.Has("no-capture") && ro.cap > 0;
  FILE* summaries = args.Has("json") ? stderr : stdout;
  // Exactly one of the two captures exists: the in-process one, or the MPI one (rank 0 analyzes).
  std::unique_ptr<RunCapture> rc;
  std::unique_ptr<MpiRunCapture> mrc;
  workloads::CaptureHooks hooks;
  if (use_mpi) {
    mrc = std::make_unique<MpiRunCapture>(wl, out_dir, capture ? static_cast<int>(ro.cap) : 0, summaries,
                                          args.Has("report"));
    if (capture) {
      if (absl::Status st = mrc->Init(); !st.ok()) {
        if (rank0) std::fprintf(stderr, "overlapscope run: %s\n", std::string(st.message()).c_str());
        return kExitError;
      }
      hooks = mrc->Hooks();
    }
  } else {
    rc = std::make_unique<RunCapture>(wl, out_dir, capture ? static_cast<int>(ro.cap) : 0, summaries,
                                      args.Has("report"));
    if (capture) hooks = rc->Hooks();
  }
  if (wl != "matmul-allgather" && wl != "all-to-all" && wl != "all-reduce" && wl != "d2h") {
    std::fprintf(stderr, "overlapscope run: unknown workload '%s' (matmul-allgather, all-to-all, all-reduce, d2h)\n",
                 wl.c_str());
    return kExitUsage;
  }
  // The SM clock of the timed phases (NVML), printed under the timing table (rank 0's process).
  std::unique_ptr<workloads::SmClockSampler> clock = rank0 ? workloads::SmClockSampler::Start() : nullptr;
  workloads::SetActiveSmClock(clock.get());
  absl::StatusOr<workloads::WorkloadResult> res = Dispatch(wl, args, ro, RunParamsOf(ro, use_mpi), hooks);
  workloads::SetActiveSmClock(nullptr);
  if (res.ok() && clock) {
    const std::string line = clock->Summary();
    if (!line.empty()) absl::StrAppend(&res->table, line, "\n");
    clock->AddFigures(res->figures);
  }
  if (!res.ok()) {
    // Under MPI the ranks agreed on this error: rank 0 says it.
    if (rank0)
      std::fprintf(stderr, "overlapscope run %s: %s\n", wl.c_str(), std::string(res.status().message()).c_str());
    return res.status().code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitError;
  }
  // Every rank has the same figures and errors (gathered), so every rank exits alike.
  const int exit_code = res->ok() ? kExitOk : kExitError;
  if (!rank0) return exit_code;
  return PrintAndWrite(args, wl, *res, rc ? rc->text() : mrc->text(), exit_code);
}

#endif  // OVERLAPSCOPE_HAVE_WORKLOADS

}  // namespace overlapscope::cli
