// ReducedRanks (engine/reduce.h): reduced ranks in an unlinked temporary file. The file is
// unlinked as soon as it is created, so nothing is left behind whatever way the process ends; the
// kernel's page cache decides what stays in memory, and it may evict it (unlike the heap).
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "engine/reduce.h"
#include "engine/reduce_internal.h"

namespace overlapscope::engine {
namespace {

absl::Status IoError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

int64_t StatusMb(const std::string& key) {  // VmRSS / VmHWM of /proc/self/status, MB
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::strtoll(line.c_str() + key.size() + 1, nullptr, 10) / 1024;
  return -1;
}

}  // namespace

namespace reduce {
void Phase(const char* what) {
  static const bool on = [] {
    const char* e = std::getenv("OVERLAPSCOPE_TIMING");
    return e != nullptr && std::string(e) == "1";
  }();
  static const auto start = std::chrono::steady_clock::now();
  if (!on) return;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double cpu = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                     static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  std::fprintf(stderr, "[per-rank] %s: wall %.2f s, cpu %.2f s, rss %lld MB, peak %lld MB\n", what,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), cpu,
               static_cast<long long>(StatusMb("VmRSS")), static_cast<long long>(StatusMb("VmHWM")));
}

void GiveBackFreeMemory() {
#if defined(__GLIBC__)
  // Only when resident memory grew by kSlack since the last time: trimming costs page faults
  // when the next rank touches the memory again (~10% more CPU when done after every rank).
  constexpr int64_t kSlack = int64_t{256} << 20;
  static std::mutex mu;
  static int64_t after_last = 0;
  std::lock_guard<std::mutex> lock(mu);
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  const int64_t rss = static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
  if (rss > 0 && rss < after_last + kSlack) return;
  malloc_trim(0);
  after_last = std::max<int64_t>(0, rss - kSlack / 2);  // what trimming typically leaves, roughly
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) == 2)
      after_last = static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
    std::fclose(f);
  }
#endif
}
}  // namespace reduce

absl::StatusOr<std::shared_ptr<ReducedRanks>> ReducedRanks::Create() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = absl::StrCat(dir != nullptr && *dir != '\0' ? dir : "/tmp", "/overlapscope-ranks-XXXXXX");
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return IoError("cannot create the temporary file for reduced ranks", path);
  ::unlink(path.c_str());
  return std::shared_ptr<ReducedRanks>(new ReducedRanks(fd, path));
}

ReducedRanks::~ReducedRanks() { ::close(fd_); }

absl::Status ReducedRanks::Put(int64_t file, const std::string& bytes) {
  int64_t at = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    at = end_;
    end_ += static_cast<int64_t>(bytes.size());
  }
  for (size_t done = 0; done < bytes.size();) {  // pwrite at a reserved range: writers do not wait on each other
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("cannot write reduced ranks to the temporary file", path_);
    done += static_cast<size_t>(n);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (where_.count(file) == 0) order_.push_back(file);
  where_[file] = {at, static_cast<int64_t>(bytes.size())};  // a replaced range stays unused
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReducedRanks::Get(int64_t file) const {
  std::pair<int64_t, int64_t> w;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = where_.find(file);
    if (it == where_.end()) return absl::NotFoundError(absl::StrCat("reduced rank of file ", file, " missing"));
    w = it->second;
  }
  std::string s(static_cast<size_t>(w.second), '\0');
  for (size_t done = 0; done < s.size();) {
    const ssize_t n = ::pread(fd_, s.data() + done, s.size() - done, static_cast<off_t>(w.first + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError("cannot read reduced ranks back from the temporary file", path_);
    done += static_cast<size_t>(n);
  }
  return s;
}

std::vector<int64_t> ReducedRanks::files() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_;
}

int64_t ReducedRanks::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return end_;
}

}  // namespace overlapscope::engine
