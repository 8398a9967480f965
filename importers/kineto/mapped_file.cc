#include "importers/kineto/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace overlapscope::import {
namespace {

// The live mappings the handler may answer for. A fixed table of lock-free slots: the handler
// may run on any thread at any time, so it takes no lock and allocates nothing.
constexpr int kSlots = 64;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uintptr_t> lo{0}, hi{0};  // [lo, hi): the file's pages; lo 0 = not live
  std::atomic<int64_t> missing{-1};     // file offset of the first page found missing, -1: none
};
Slot g_slots[kSlots];
struct sigaction g_previous;
uintptr_t g_page = 4096;
bool g_enabled = false;

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const uintptr_t lo = s.lo.load(std::memory_order_acquire);
    if (lo == 0 || a < lo || a >= s.hi.load(std::memory_order_relaxed)) continue;
    // The file ends before this page now: zeros in its place, and the reader told.
    const uintptr_t page = a & ~(g_page - 1);
    void* r = ::mmap(reinterpret_cast<void*>(page), g_page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (r == MAP_FAILED) break;  // cannot answer: as if not ours
    const int64_t off = static_cast<int64_t>(page - lo);
    int64_t seen = s.missing.load(std::memory_order_relaxed);
    while ((seen < 0 || off < seen) && !s.missing.compare_exchange_weak(seen, off)) {
    }
    errno = saved_errno;
    return;
  }
  // Not a mapped input's fault: what the process did before the handler came.
  errno = saved_errno;
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  const bool fault = info->si_code > 0;  // raised by an instruction, not sent by kill(2)
  if (g_previous.sa_handler == SIG_IGN && !fault) return;
  if (g_previous.sa_handler == SIG_DFL || g_previous.sa_handler == SIG_IGN) {
    // The default action (ignoring a fault would run the instruction forever), delivered once
    // this handler returns: the signal stays blocked until then.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGBUS, &dfl, nullptr);
    ::raise(SIGBUS);
    return;
  }
  g_previous.sa_handler(sig);
}

bool Install() {
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) g_page = static_cast<uintptr_t>(page);
  struct sigaction sa {};
  sa.sa_sigaction = OnSigbus;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  return ::sigaction(SIGBUS, &sa, &g_previous) == 0;
}

size_t RoundUp(size_t n) { return (n + g_page - 1) & ~(g_page - 1); }

}  // namespace

bool EnableMappedReads() {
  static std::once_flag once;
  std::call_once(once, [] { g_enabled = Install(); });
  return g_enabled;
}

bool MappedReadsEnabled() { return g_enabled; }

std::unique_ptr<MappedFile> MappedFile::Map(int fd, int64_t size, size_t pad) {
  if (!g_enabled || size <= 0) return nullptr;
  int slot = -1;
  for (int i = 0; i < kSlots && slot < 0; ++i) {
    bool expected = false;
    if (g_slots[i].used.compare_exchange_strong(expected, true)) slot = i;
  }
  if (slot < 0) return nullptr;
  const size_t file_pages = RoundUp(static_cast<size_t>(size));
  const size_t total = file_pages + RoundUp(pad + 1);
  // Zero pages for the whole range first, then the file over its head: the pad after the file's
  // last page is anonymous memory (a file mapping past the file's end would fault).
  void* all = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* file =
      all == MAP_FAILED ? MAP_FAILED : ::mmap(all, file_pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0);
  if (file == MAP_FAILED) {
    if (all != MAP_FAILED) ::munmap(all, total);
    g_slots[slot].used.store(false);
    return nullptr;
  }
  ::madvise(file, file_pages, MADV_SEQUENTIAL);
  Slot& s = g_slots[slot];
  s.missing.store(-1, std::memory_order_relaxed);
  s.hi.store(reinterpret_cast<uintptr_t>(file) + file_pages, std::memory_order_relaxed);
  s.lo.store(reinterpret_cast<uintptr_t>(file), std::memory_order_release);
  return std::unique_ptr<MappedFile>(new MappedFile(fd, static_cast<char*>(file), size, total, slot));
}

MappedFile::~MappedFile() {
  Slot& s = g_slots[slot_];
  s.lo.store(0, std::memory_order_release);
  ::munmap(base_, mapped_);
  s.used.store(false, std::memory_order_release);
}

absl::Status MappedFile::Changed(const std::string& path) const {
  int64_t missing = g_slots[slot_].missing.load(std::memory_order_acquire);
  struct stat st {};
  const int64_t now = ::fstat(fd_, &st) == 0 ? static_cast<int64_t>(st.st_size) : size_;
  if (missing < 0 && now >= size_) return absl::OkStatus();
  if (missing < 0 || now < missing) missing = now;
  return absl::AbortedError(absl::StrCat(path, ": offset ", missing, ": the file changed size while read (", size_,
                                         " bytes when opened, ", now, " now)"));
}

int64_t MappedFile::Release(int64_t from, int64_t to) const {
  const size_t lo = RoundUp(static_cast<size_t>(std::max<int64_t>(from, 0)));
  const size_t hi = static_cast<size_t>(std::clamp<int64_t>(to, 0, size_)) & ~(g_page - 1);
  if (hi <= lo) return from;
  ::madvise(base_ + lo, hi - lo, MADV_DONTNEED);
  return static_cast<int64_t>(hi);
}

}  // namespace overlapscope::import
