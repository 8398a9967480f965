// CaptureSession: the in-process face of the collector (collector.h); see capture_session.h.
#include "capture/cupti/capture_session.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "capture/cupti/collector.h"

namespace overlapscope::cupti {

int64_t NowNs() { return internal::RealtimeNs(); }

namespace {

constexpr char kNcclPluginName[] = "libnccl-profiler-overlapscope.so";

std::string SelfDir() {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  std::string s(exe);
  const size_t slash = s.rfind('/');
  return slash == std::string::npos ? "." : s.substr(0, slash);
}

// Asks the plugin in this process (if NCCL loaded it) to write what it holds; returns this
// process's plugin file when it exists, else "".
std::string FlushNcclPlugin() {
  const char* dir = std::getenv("OVERLAPSCOPE_NCCL_DIR");
  if (!dir || !*dir) return "";
  using FlushFn = int (*)();
  auto flush = reinterpret_cast<FlushFn>(::dlsym(RTLD_DEFAULT, "ovscope_nccl_plugin_flush"));
  // NCCL dlopen()s the plugin RTLD_LOCAL: find it by the name NCCL loaded it under.
  const char* names[] = {std::getenv("NCCL_PROFILER_PLUGIN"), kNcclPluginName};
  for (const char* name : names) {
    if (flush || !name || !*name) continue;
    if (void* h = ::dlopen(name, RTLD_LAZY | RTLD_NOLOAD)) {
      flush = reinterpret_cast<FlushFn>(::dlsym(h, "ovscope_nccl_plugin_flush"));
      ::dlclose(h);  // RTLD_NOLOAD took a reference; the plugin is -z nodelete anyway
    }
  }
  if (flush) flush();
  std::string file = absl::StrCat(dir, "/nccl.", ::getpid(), ".ovnccl");
  return ::access(file.c_str(), R_OK) == 0 ? file : "";
}

}  // namespace

std::string FindNcclPlugin() {
  if (const char* env = std::getenv("OVERLAPSCOPE_NCCL_PLUGIN"); env && *env) return env;
  const std::string dir = SelfDir();
  if (dir.empty()) return "";
  for (const std::string& c :
       {absl::StrCat(dir, "/", kNcclPluginName), absl::StrCat(dir, "/../capture/cupti/", kNcclPluginName),
        absl::StrCat(dir, "/../lib/", kNcclPluginName)}) {
    char real[PATH_MAX];
    if (::access(c.c_str(), R_OK) == 0 && ::realpath(c.c_str(), real)) return real;
  }
  return "";
}

std::string SetNcclPluginEnv(const std::string& dir_in, const std::string& plugin_in) {
  if (const char* user = std::getenv("NCCL_PROFILER_PLUGIN"); user && *user)
    return absl::StrCat("NCCL_PROFILER_PLUGIN is already set (", user, "): overlapscope's NCCL plugin not loaded");
  const std::string plugin = plugin_in.empty() ? FindNcclPlugin() : plugin_in;
  if (plugin.empty())
    return absl::StrCat(kNcclPluginName,
                        " not found next to the binary or in the build tree (set OVERLAPSCOPE_NCCL_PLUGIN)");
  std::string dir = dir_in;
  if (dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/overlapscope-nccl-XXXXXX");
    if (!::mkdtemp(templ.data())) return absl::StrCat(templ, ": cannot create directory: ", std::strerror(errno));
    dir = templ;
  } else if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::StrCat(dir, ": cannot create directory: ", std::strerror(errno));
  }
  ::setenv("NCCL_PROFILER_PLUGIN", plugin.c_str(), 1);
  ::setenv("OVERLAPSCOPE_NCCL_DIR", dir.c_str(), 1);
  return "";
}
std::string CuptiLibraryPath() { return internal::CuptiLibraryPath(); }

absl::StatusOr<std::unique_ptr<CaptureSession>> CaptureSession::Start(const CaptureOptions& options) {
  if (const char* inj = std::getenv("OVERLAPSCOPE_INJECTED"); inj && *inj == '1')
    return absl::FailedPreconditionError(
        "this process already runs under the overlapscope injection library (overlapscope profile); "
        "its capture covers this session's work");
  if (internal::CollectorActive()) return absl::FailedPreconditionError("a capture is already active in this process");
  std::string path = options.spill_path;
  if (path.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    path = absl::StrCat(tmp && *tmp ? tmp : "/tmp", "/overlapscope-", ::getpid(), "-", NowNs(), ".ovspill");
  }
  if (options.nvtx && !std::getenv("NVTX_INJECTION64_PATH")) {
    // NVTX looks for its injection at its first call; before that, pointing it at libcupti
    // routes NVTX ranges into the MARKER activity records.
    const std::string cupti = internal::CuptiLibraryPath();
    if (!cupti.empty()) ::setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 0);
  }
  internal::CollectorConfig c;
  c.spill_path = path;
  c.buffer_bytes = options.buffer_bytes;
  c.max_buffers = options.max_buffers;
  c.driver_api = options.driver_api;
  c.api = options.all_api_calls ? internal::ApiRecording::kAll : internal::ApiRecording::kSelected;
  if (const char* v = std::getenv("OVERLAPSCOPE_API_MECHANISM"); v && std::string(v) == "activity")
    c.api_mechanism = internal::ApiMechanism::kActivity;
  c.whole_trigger = formats::kWindowSession;
  c.nvtx = options.nvtx;
  c.rank = options.rank >= 0 ? options.rank : internal::RankFromEnv();
  c.world_size = options.world_size >= 0 ? options.world_size : internal::WorldSizeFromEnv();
  c.crash_handlers = false;  // the host program owns its signals; Stop()/~CaptureSession flush
  if (std::string err = internal::StartCollector(c); !err.empty())
    return absl::InternalError(absl::StrCat("CUPTI capture: ", err));
  internal::RecordDeviceNames();
  return std::unique_ptr<CaptureSession>(
      new CaptureSession(path, options.keep_spill_file || !options.spill_path.empty(), NowNs()));
}

absl::StatusOr<CaptureFiles> CaptureSession::Stop() {
  if (stopped_) return absl::FailedPreconditionError("CaptureSession::Stop called twice");
  stopped_ = true;
  if (std::string err = internal::StopCollector(internal::EndReason::kStop); !err.empty()) {
    if (!keep_) ::unlink(path_.c_str());
    return absl::InternalError(absl::StrCat("CUPTI capture: ", err));
  }
  CaptureFiles files;
  files.spill_path = path_;
  files.delete_spill_after_read = !keep_;
  files.nccl_plugin_file = FlushNcclPlugin();
  files.start_ns = start_ns_;
  files.stop_ns = NowNs();
  return files;
}

CaptureSession::~CaptureSession() {
  if (stopped_) return;
  internal::StopCollector(internal::EndReason::kStop);
  if (!keep_) ::unlink(path_.c_str());
}

}  // namespace overlapscope::cupti
