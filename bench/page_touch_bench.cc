// page_touch_bench: what a fresh page costs on this machine.
//
// Every large vector a run allocates is fresh memory: the kernel maps and zeroes each 4 KiB page
// on its first touch, and on a virtual machine the host may have to back it too. On some machines
// (a guest that reports freed memory to its host) that costs several microseconds per page, which
// makes a 200 MB `analyze` or a 3 GB what-if spend a large part of its CPU in the kernel and makes
// figures differ between machines and sessions. This prints the cost, so a timing can be read
// beside it.
//
//   page_touch_bench [MB] [ROUNDS] [SLEEP_S]
//
// Each round maps MB MiB of anonymous memory, writes one byte per 4 KiB page (first touch), writes
// them again (already mapped: the memory's own speed), and unmaps it; SLEEP_S seconds between
// rounds give a host that takes freed memory back time to do so. Prints µs per page for both
// passes, and the kernel settings that decide the cost where it can read them. Exit code 2 on bad
// arguments, 1 when the memory cannot be mapped.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

constexpr std::size_t kPage = 4096;

double Seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// One pass over the pages; volatile so the writes are not folded away.
double TouchUs(volatile char* p, std::size_t bytes, char value) {
  const double t0 = Seconds();
  for (std::size_t i = 0; i < bytes; i += kPage) p[i] = value;
  return (Seconds() - t0) * 1e6 / static_cast<double>(bytes / kPage);
}

void PrintSetting(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (in && std::getline(in, line)) std::printf("%s: %s\n", path, line.c_str());
}

bool ParseArg(const char* text, long min, long* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min) return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long mb = 512, rounds = 4, sleep_s = 0;
  if (argc > 4 || (argc > 1 && !ParseArg(argv[1], 1, &mb)) || (argc > 2 && !ParseArg(argv[2], 1, &rounds)) ||
      (argc > 3 && !ParseArg(argv[3], 0, &sleep_s))) {
    std::fprintf(stderr, "usage: page_touch_bench [MB>=1] [ROUNDS>=1] [SLEEP_S>=0]\n");
    return 2;
  }
  PrintSetting("/sys/kernel/mm/transparent_hugepage/enabled");
  PrintSetting("/sys/module/page_reporting/parameters/page_reporting_order");
  const std::size_t bytes = static_cast<std::size_t>(mb) << 20;
  for (long r = 0; r < rounds; ++r) {
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::fprintf(stderr, "page_touch_bench: cannot map %ld MiB\n", mb);
      return 1;
    }
    auto* p = static_cast<volatile char*>(m);
    const double first_us = TouchUs(p, bytes, 1);
    const double again_us = TouchUs(p, bytes, 2);
    munmap(m, bytes);
    std::printf("round %ld: first touch %.3f us/page, mapped %.3f us/page (%ld MiB, %zu pages)\n", r, first_us,
                again_us, mb, bytes / kPage);
    if (sleep_s > 0 && r + 1 < rounds) sleep(static_cast<unsigned>(sleep_s));
  }
  return 0;
}
