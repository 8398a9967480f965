// overlapscope profile [-o DIR] [--trace-format perfetto|chrome] [--api default|all]
//                      [--capture-range none|cudaProfilerApi|nvtx] [--nvtx-capture NAME[@DOMAIN]]
//                      [--capture-range-end repeat|repeat:N|stop] [--delay S] [--duration S] -- CMD ARGS...
//
// Runs any CUDA program under CUPTI capture without changing it: CUDA loads
// libovscope_inject.so (CUDA_INJECTION64_PATH) into every process of CMD that initializes CUDA,
// NVTX ranges reach CUPTI through NVTX_INJECTION64_PATH=libcupti.so, and each process writes
// DIR/rank<R>.ovspill (or pid<P>.ovspill). After CMD exits the spill files are read, each is
// written as DIR/<same name>.pftrace (with that rank's analysis tracks) or .json (Kineto-style
// Chrome JSON), and a capture summary plus the analysis report of all processes together is
// printed.
//
// The injection library is looked up in this order: $OVERLAPSCOPE_INJECT_LIB, next to this
// binary, <binary dir>/../capture/cupti/ (the build tree), <binary dir>/../lib/.
// NCCL's profiler plugin (libnccl-profiler-overlapscope.so): $OVERLAPSCOPE_NCCL_PLUGIN, next to
// the injection library, then the same places; NCCL_PROFILER_PLUGIN points NCCL at it and
// OVERLAPSCOPE_NCCL_DIR=DIR makes every NCCL process write DIR/nccl.<pid>.ovnccl, which the
// spill reader merges (unless --no-nccl-plugin or the user set NCCL_PROFILER_PLUGIN).
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/load.h"

#if !defined(OVERLAPSCOPE_HAVE_CUPTI)
#include <cstdio>
#include <cstring>
namespace overlapscope::cli {
// Without CUPTI there is nothing to run; --help still says what the command is (exit 0).
int RunProfile(int argc, char** argv) {
  bool help = false;
  for (int i = 0; i < argc && std::strcmp(argv[i], "--") != 0; ++i)
    help |= !std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h");
  std::fputs(help ? "usage: overlapscope profile [-o DIR] [--trace-format perfetto|chrome] -- CMD ARGS...\n\n" : "",
             stdout);
  std::fputs("overlapscope profile: this build has no CUDA/CUPTI (configure with a CUDA toolkit)\n",
             help ? stdout : stderr);
  return help ? kExitOk : kExitError;
}
}  // namespace overlapscope::cli
#else
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capture/cupti/capture_range.h"
#include "capture/cupti/capture_session.h"
#include "engine/engine.h"

namespace overlapscope::cli {
namespace {

const CommandSpec kSpec{
    "profile",
    "overlapscope profile [-o DIR] [--trace-format perfetto|chrome] [--api default|all]\n"
    "       [--capture-range cudaProfilerApi|nvtx [--nvtx-capture NAME[@DOMAIN]]]\n"
    "       [--capture-range-end repeat|repeat:N|stop] [--delay S] [--duration S] -- CMD ARGS...",
    "Runs CMD (any CUDA program, PyTorch included; all its processes) under CUPTI capture:\n"
    "kernels, copies, memsets, syncs, CUDA runtime/driver calls and NVTX ranges, on one\n"
    "CLOCK_REALTIME time axis per host. Writes DIR/rank<R>.ovspill per process (raw capture),\n"
    "DIR/rank<R>.pftrace (open in ui.perfetto.dev; with --trace-format chrome: DIR/rank<R>.json,\n"
    "Kineto-style) and prints a capture summary and the analysis report of all processes.",
    {{"output", "DIR", "output directory, also -o DIR (default: overlapscope-profile)"},
     {"trace-format", "FORMAT", "perfetto (default) or chrome"},
     {"api", "WHICH", "default: the calls the analyses read (capture/cupti/api_table.h), each once; all: every call"},
     {"capture-range", "KIND",
      "none (default), cudaProfilerApi (cudaProfilerStart..Stop; torch.cuda.profiler) or nvtx"},
     {"nvtx-capture", "NAME[@DOMAIN]", "with --capture-range=nvtx: the NVTX range to record inside"},
     {"capture-range-end", "END", "repeat (default: every range), repeat:N (the first N), stop"},
     {"delay", "S", "record nothing before S seconds after the program started"},
     {"duration", "S", "close a window after S seconds at the latest (no range: record S seconds)"},
     {"no-driver-api", "", "do not record CUDA driver API calls (fewer records)"},
     {"no-nccl-plugin", "", "do not load overlapscope's NCCL profiler plugin"}},
    "NCCL: unless --no-nccl-plugin is given or NCCL_PROFILER_PLUGIN is already set, NCCL loads\n"
    "libnccl-profiler-overlapscope.so (NCCL_PROFILER_PLUGIN) and each process writes\n"
    "DIR/nccl.<pid>.ovnccl: communicator, rank, sequence number, algorithm, protocol and\n"
    "channels of every collective, merged into the captured collectives.\n"
    "environment: OVERLAPSCOPE_INJECT_LIB overrides the injection library path;\n"
    "OVERLAPSCOPE_NCCL_PLUGIN the NCCL plugin path; OVERLAPSCOPE_NCCL_KERNEL_CH=0 stops the\n"
    "plugin from asking NCCL for per-channel GPU times (less proxy-thread work);\n"
    "OVERLAPSCOPE_VERBOSE=1 makes every captured process say where it writes.\n"
    "capture windows: outside a window nothing is recorded; each window is listed in the summary\n"
    "and reported separately; without a range the report starts at the first GPU activity.\n"
    "exit codes: 0 ok, 1 capture or output failed, 4 CMD exited non-zero (traces are still\n"
    "written), 64 bad command line"};

std::string Dirname(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}

bool Exists(const std::string& p) { return ::access(p.c_str(), R_OK) == 0; }

std::string FindInjectionLibrary() {
  if (const char* env = std::getenv("OVERLAPSCOPE_INJECT_LIB"); env && *env) return env;
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  const std::string dir = Dirname(exe);
  for (const std::string& c : {dir + "/libovscope_inject.so", dir + "/../capture/cupti/libovscope_inject.so",
                               dir + "/../lib/libovscope_inject.so"})
    if (Exists(c)) return c;
  return "";
}

std::string Absolute(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

// The NCCL plugin beside the injection library ("" = let SetNcclPluginEnv look for it);
// $OVERLAPSCOPE_NCCL_PLUGIN wins.
std::string NcclPluginNextTo(const std::string& inject) {
  if (const char* env = std::getenv("OVERLAPSCOPE_NCCL_PLUGIN"); env && *env) return Absolute(env);
  const std::string c = Dirname(Absolute(inject)) + "/libnccl-profiler-overlapscope.so";
  return Exists(c) ? c : "";
}

// Runs argv with the injection environment; returns the wait status, or -1 if fork failed.
int RunTarget(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  // Like system(): the target gets Ctrl-C; we wait for it and still collect its traces.
  struct sigaction ign {
  }, old_int{}, old_quit{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  const pid_t pid = ::fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    ::execvp(cargv[0], cargv.data());
    std::fprintf(stderr, "overlapscope profile: cannot run %s: %s\n", cargv[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = -1;
  if (pid > 0)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  return pid > 0 ? status : -1;
}

// Checks --api and the capture-range flags and passes them to the injection library (capture/
// cupti/capture_range.h); variables the flags do not set are cleared so that nothing leaks in from
// the caller's environment. Returns "" or the message of a bad command line.
std::string SetCaptureEnv(const ParsedArgs& args) {
  const std::string api = args.Get("api", "default");
  if (api != "default" && api != "all") return "--api must be default or all, not '" + api + "'";
  cupti::RangeConfig rc;
  std::string err;
  if (args.Has("capture-range")) err = cupti::ParseCaptureRange(args.Get("capture-range"), &rc);
  if (err.empty() && args.Has("nvtx-capture")) err = cupti::ParseNvtxCapture(args.Get("nvtx-capture"), &rc);
  if (err.empty() && args.Has("capture-range-end")) err = cupti::ParseRangeEnd(args.Get("capture-range-end"), &rc);
  if (err.empty() && args.Has("delay")) err = cupti::ParseSeconds(args.Get("delay"), &rc.delay_ns);
  if (err.empty() && args.Has("duration")) err = cupti::ParseSeconds(args.Get("duration"), &rc.duration_ns);
  if (err.empty()) err = cupti::CheckRangeConfig(rc);
  if (!err.empty()) return err;
  auto set = [&](const char* env, const char* flag) {
    if (args.Has(flag))
      ::setenv(env, args.Get(flag).c_str(), 1);
    else
      ::unsetenv(env);
  };
  set(cupti::kEnvCaptureRange, "capture-range");
  set(cupti::kEnvNvtxCapture, "nvtx-capture");
  set(cupti::kEnvRangeEnd, "capture-range-end");
  set(cupti::kEnvDelay, "delay");
  set(cupti::kEnvDuration, "duration");
  if (api == "all")
    ::setenv("OVERLAPSCOPE_API", "all", 1);
  else
    ::unsetenv("OVERLAPSCOPE_API");
  return "";
}

}  // namespace

int RunProfile(int argc, char** argv) {
  // `-o DIR` (the short form users know from nsys) means --output DIR; only before `--`.
  std::vector<std::string> own;
  int i = 0;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i)
    own.push_back(std::strcmp(argv[i], "-o") ? argv[i] : "--output");
  for (; i < argc; ++i) own.push_back(argv[i]);
  std::vector<char*> own_argv;
  for (auto& a : own) own_argv.push_back(a.data());
  ParsedArgs args;
  if (int rc = ParseOrExit(kSpec, static_cast<int>(own_argv.size()), own_argv.data(), args); rc >= 0) return rc;
  if (!args.positionals.empty()) {
    std::fprintf(stderr, "overlapscope profile: unexpected argument '%s' (the command goes after --)\n",
                 args.positionals[0].c_str());
    return kExitUsage;
  }
  if (args.after_dashdash.empty()) {
    std::fprintf(stderr, "overlapscope profile: no command given (use: overlapscope profile -- CMD ARGS...)\n");
    return kExitUsage;
  }
  const std::string format = args.Get("trace-format", "perfetto");
  if (format != "perfetto" && format != "chrome") {
    std::fprintf(stderr, "overlapscope profile: --trace-format must be perfetto or chrome, not '%s'\n", format.c_str());
    return kExitUsage;
  }
  if (std::string err = SetCaptureEnv(args); !err.empty()) {
    std::fprintf(stderr, "overlapscope profile: %s\n", err.c_str());
    return kExitUsage;
  }
  const bool ranged = (args.Has("capture-range") && args.Get("capture-range") != "none") || args.Has("delay");
  const std::string inject = FindInjectionLibrary();
  if (inject.empty()) {
    std::fprintf(stderr,
                 "overlapscope profile: libovscope_inject.so not found next to the binary or in the "
                 "build tree; set OVERLAPSCOPE_INJECT_LIB\n");
    return kExitError;
  }
  const std::string dir_arg = args.Get("output", "overlapscope-profile");
  ::mkdir(dir_arg.c_str(), 0755);
  const std::string dir = Absolute(dir_arg);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "overlapscope profile: %s: cannot create output directory\n", dir.c_str());
    return kExitError;
  }
  for (const auto& old : FilesEndingIn(dir, ".ovspill")) ::unlink(old.c_str());  // only our own old captures
  for (const auto& old : FilesEndingIn(dir, ".ovnccl")) ::unlink(old.c_str());

  ::setenv("CUDA_INJECTION64_PATH", Absolute(inject).c_str(), 1);
  ::setenv("OVERLAPSCOPE_SPILL_DIR", dir.c_str(), 1);
  ::unsetenv("OVERLAPSCOPE_INJECTED");
  if (args.Has("no-driver-api")) ::setenv("OVERLAPSCOPE_DRIVER_API", "0", 1);
  const std::string cupti = cupti::CuptiLibraryPath();
  if (!std::getenv("NVTX_INJECTION64_PATH") && !cupti.empty()) {
    // A default the injection may replace by the libcupti the target really loaded.
    ::setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 1);
    ::setenv("OVERLAPSCOPE_NVTX_DEFAULT", "1", 1);
  }

  if (args.Has("no-nccl-plugin")) {
    ::unsetenv("OVERLAPSCOPE_NCCL_DIR");
  } else if (std::string why = cupti::SetNcclPluginEnv(dir, NcclPluginNextTo(inject)); !why.empty()) {
    std::fprintf(stderr, "overlapscope profile: %s\n", why.c_str());
  }

  ::setenv(cupti::kEnvT0, std::to_string(cupti::NowNs()).c_str(), 1);  // --delay counts from here
  const int status = RunTarget(args.after_dashdash);
  int rc = kExitOk;
  if (status == -1) {
    std::fprintf(stderr, "overlapscope profile: fork failed: %s\n", std::strerror(errno));
    return kExitError;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "overlapscope profile: %s exited with status %d (traces are still written)\n",
                 args.after_dashdash[0].c_str(), WEXITSTATUS(status));
    rc = kExitTargetFailed;
  } else if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "overlapscope profile: %s was killed by signal %d (%s); traces are still written\n",
                 args.after_dashdash[0].c_str(), WTERMSIG(status), strsignal(WTERMSIG(status)));
    rc = kExitTargetFailed;
  }

  const std::vector<std::string> files = FilesEndingIn(dir, ".ovspill");
  if (files.empty()) {
    std::fprintf(stderr, "overlapscope profile: no process of '%s' initialized CUDA: nothing captured in %s\n",
                 args.after_dashdash[0].c_str(), dir.c_str());
    return rc == kExitOk ? kExitError : rc;
  }
  // Every spill file is read once, into one session (clocks aligned as `analyze` would), and
  // analyzed once; each rank's trace file is that rank's part of both.
  auto session = engine::Load(files);
  if (!session.ok()) {
    std::fprintf(stderr, "overlapscope profile: %s\n", std::string(session.status().message()).c_str());
    return kExitError;
  }
  auto analysis = engine::Analyze(*session);
  if (!analysis.ok())
    std::fprintf(stderr, "overlapscope profile: analysis failed: %s\n",
                 std::string(analysis.status().message()).c_str());
  for (size_t i = 0; i < session->files().size(); ++i) {
    const std::string& f = session->files()[i];
    const std::string written = f.substr(0, f.size() - 8) + (format == "perfetto" ? ".pftrace" : ".json");
    engine::ExportOptions one;
    one.only_file = static_cast<int64_t>(i);
    absl::Status s;
    if (format == "perfetto") {
      one.analysis = analysis.ok() ? &*analysis : nullptr;  // the rank's analysis as extra tracks
      s = engine::ExportPerfetto(*session, written, one).status();
    } else {
      s = engine::ExportChrome(*session, written, one).status();
    }
    if (!s.ok()) {
      std::fprintf(stderr, "overlapscope profile: %s\n", std::string(s.message()).c_str());
      rc = kExitError;
    } else {
      std::printf("wrote %s\n", written.c_str());
    }
  }
  auto summary = engine::DescribeCapture(*session, ranged);
  if (summary.ok()) std::fputs(summary->c_str(), stdout);
  if (analysis.ok()) {
    auto text = engine::RenderReport(*analysis, engine::ReportFormat::kText);
    if (text.ok()) std::printf("\n%s", text->c_str());
  }
  return rc;
}

}  // namespace overlapscope::cli
#endif  // OVERLAPSCOPE_HAVE_CUPTI
