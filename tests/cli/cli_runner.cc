#include "cli_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include "gtest/gtest.h"

namespace overlapscope::testing {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OVERLAPSCOPE_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define OVERLAPSCOPE_TEST_ASAN 1
#endif

bool UnderSanitizer() {
#if defined(OVERLAPSCOPE_TEST_ASAN)
  return true;
#else
  return false;
#endif
}

std::string CliRun::Describe() const {
  std::string s = hung ? std::string("HUNG (killed)") : "exit " + std::to_string(exit_code);
  s += ", peak " + std::to_string(peak_rss_kb / 1024) + " MB; stderr: " + err.substr(0, 1500);
  if (!out.empty()) s += "; stdout: " + out.substr(0, 500);
  return s;
}

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

CliRun RunCliLimited(const std::vector<std::string>& args, const CliLimits& limits) {
  static int counter = 0;
  const std::string base =
      ::testing::TempDir() + "/cli_run_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const std::string out_path = base + ".out", err_path = base + ".err";
  const std::string bin = std::string(OVERLAPSCOPE_BINARY_DIR) + "/cli/overlapscope";
  std::vector<std::string> argv_s = {bin};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string asan = "ASAN_OPTIONS=abort_on_error=1:hard_rss_limit_mb=" + std::to_string(limits.memory_mb);
  if (const char* old = std::getenv("ASAN_OPTIONS")) asan += std::string(":") + old;

  CliRun r;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || in < 0) ::_exit(120);
    ::dup2(in, 0), ::dup2(o, 1), ::dup2(e, 2);
    if (UnderSanitizer()) {
      ::putenv(asan.data());
    } else {
      const rlim_t bytes = static_cast<rlim_t>(limits.memory_mb) << 20;
      struct rlimit rl = {bytes, bytes};
      ::setrlimit(RLIMIT_AS, &rl);
    }
    ::execv(bin.c_str(), argv.data());
    ::_exit(121);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limits.timeout_s);
  int status = 0;
  struct rusage ru = {};
  for (;;) {
    const pid_t w = ::wait4(pid, &status, WNOHANG, &ru);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &ru);
      r.hung = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.peak_rss_kb = ru.ru_maxrss;
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  std::remove(out_path.c_str()), std::remove(err_path.c_str());
  return r;
}

}  // namespace overlapscope::testing
