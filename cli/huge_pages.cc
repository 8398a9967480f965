#include "cli/huge_pages.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace overlapscope::cli {
namespace {

constexpr char kTunables[] = "GLIBC_TUNABLES";
constexpr char kHugetlb[] = "glibc.malloc.hugetlb=1";
// Set beside the tunable for the re-executed process: the tunable is ours, remove both.
constexpr char kMarker[] = "OVERLAPSCOPE_HUGEPAGES_SET";

std::string ReadSmallFile(const char* path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

bool WantHugePageRestart(const char* tunables, const char* opt_in, const char* preload, const std::string& thp_enabled,
                         const std::string& glibc) {
  if (opt_in == nullptr || std::strcmp(opt_in, "1") != 0 || tunables != nullptr) return false;
  if (preload != nullptr && preload[0] != '\0') return false;
  // Only where huge pages come on request: "[always]" gives them without asking, "[never]" not at
  // all.
  if (thp_enabled.find("[madvise]") == std::string::npos) return false;
  int major = 0, minor = 0;
  if (std::sscanf(glibc.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 35);  // the tunable's first release
}

void UseHugePages(char** argv) {
#if defined(__GLIBC__) && defined(__linux__)
  if (std::getenv(kMarker) != nullptr) {  // the re-executed process: malloc has read the tunable
    const char* t = std::getenv(kTunables);
    if (t != nullptr && std::strcmp(t, kHugetlb) == 0) ::unsetenv(kTunables);
    ::unsetenv(kMarker);
    return;
  }
  // Opt-in: without the variable every run would read the kernel's setting for nothing.
  const char* opt_in = std::getenv("OVERLAPSCOPE_HUGEPAGES");
  if (opt_in == nullptr) return;
  if (!WantHugePageRestart(std::getenv(kTunables), opt_in, std::getenv("LD_PRELOAD"),
                           ReadSmallFile("/sys/kernel/mm/transparent_hugepage/enabled"), gnu_get_libc_version()))
    return;
  if (::setenv(kTunables, kHugetlb, 1) != 0 || ::setenv(kMarker, "1", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  ::unsetenv(kTunables);  // the exec failed: go on without
  ::unsetenv(kMarker);
#else
  (void)argv;
#endif
}

}  // namespace overlapscope::cli
