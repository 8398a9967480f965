// Helpers of the capture GPU tests (capture_util.h).
#include "capture_util.h"

#include <cuda_runtime.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace overlapscope::testing {

std::string NoGpuReason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e);
  if (n == 0) return "no CUDA device";
  return "";
}

std::string BinaryPath(const std::string& name) {
  if (const char* dir = std::getenv("OVERLAPSCOPE_BIN_DIR"); dir && *dir) {
    std::string p = std::string(dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
#ifdef OVERLAPSCOPE_BINARY_DIR
  for (const char* sub : {"/cli/", "/tests/gpu/programs/"}) {
    std::string p = std::string(OVERLAPSCOPE_BINARY_DIR) + sub + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
#endif
  return name;
}

std::string FreshDir(const std::string& tag) {
  const char* base = std::getenv("OVERLAPSCOPE_TEST_OUT");
  if (!base || !*base) base = std::getenv("TMPDIR");
  std::string root = (base && *base) ? base : "/tmp";
  ::mkdir(root.c_str(), 0755);
  std::string dir = root + "/" + tag + "." + std::to_string(::getpid());
  RunCommand("rm -rf '" + dir + "'");
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

std::vector<std::string> SpillFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 8 && n.substr(n.size() - 8) == ".ovspill") out.push_back(dir + "/" + n);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int RunCommand(const std::string& cmd) {
  std::printf("$ %s\n", cmd.c_str());
  std::fflush(stdout);
  int status = std::system(cmd.c_str());
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::printf("-> exit %d\n", rc);
  return rc;
}

}  // namespace overlapscope::testing
