// The Kineto importer's inflate alone, on one .json.gz: the streaming path it takes at 1-2
// threads (ISA-L where built in, else zlib) against the parallel inflate (gzip_parallel.h) at each
// thread count given, reading through the same 32 MiB window as the importer. Prints MB/s of
// uncompressed output and CPU seconds of all threads (best of ROUNDS) and checks, in one more round each, that every
// path gives the same bytes (CRC-32 and length).
//   parallel_inflate_bench FILE.json.gz [ROUNDS] [THREADS...]   (threads default: 1 2 cores)
// With OVERLAPSCOPE_WINDOWS set, the last round of each thread count prints its batches'
// timeline (ParallelGunzip::TimesReport) to stderr.
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "importers/kineto/gzip_parallel.h"
#include "importers/kineto/input_stream.h"

namespace {

using overlapscope::import::InputStream;
using overlapscope::import::ParallelGunzip;

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Result {
  double seconds = 1e30;
  double cpu_seconds = 0;  // of the fastest round, all threads together
  int64_t bytes = -1;
  uint32_t crc = 0;
};

// Reads everything through a 32 MiB window; with `check`, the CRC-32 of the output too (a round
// of its own: its time is not the inflate's).
template <typename ReadFn>
void Drain(ReadFn read, bool check, Result* best) {
  std::vector<char> window(size_t{32} << 20);
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  int64_t total = 0;
  uLong crc = crc32(0, nullptr, 0);
  for (;;) {
    auto r = read(window.data(), window.size());
    if (!r.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(r.status().message()).c_str());
      std::exit(1);
    }
    if (*r == 0) break;
    if (check) crc = crc32(crc, reinterpret_cast<const Bytef*>(window.data()), static_cast<uInt>(*r));
    total += static_cast<int64_t>(*r);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (check) {
    best->bytes = total;
    best->crc = static_cast<uint32_t>(crc);
  } else if (s < best->seconds) {
    best->seconds = s;
    best->cpu_seconds = CpuSeconds() - cpu0;
  }
}

void Print(const char* what, const Result& r) {
  std::printf("%-22s %8.1f MB/s  %.3f s  cpu %.3f s  %lld bytes  crc %08x\n", what, r.bytes / r.seconds / 1e6,
              r.seconds, r.cpu_seconds, static_cast<long long>(r.bytes), r.crc);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: parallel_inflate_bench FILE.json.gz [ROUNDS] [THREADS...]\n");
    return 64;
  }
  const std::string path = argv[1];
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  std::vector<int> threads;
  for (int i = 3; i < argc; ++i) threads.push_back(std::max(1, std::atoi(argv[i])));
  if (threads.empty()) threads = {1, 2, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))};
  std::ifstream f(path, std::ios::binary);
  const std::vector<char> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Result serial;
  for (int r = 0; r <= rounds; ++r) {
    auto in = InputStream::Open(path, 1);
    if (!in.ok()) return 1;
    Drain([&](char* d, size_t n) { return (*in)->Read(d, n); }, r == rounds, &serial);
  }
  Print("serial (ISA-L or zlib)", serial);
  bool same = true;
  for (int t : threads) {
    Result par;
    for (int r = 0; r <= rounds; ++r) {
      ParallelGunzip gz(reinterpret_cast<const uint8_t*>(file.data()), file.size(), t);
      const bool timed = r == rounds - 1 && std::getenv("OVERLAPSCOPE_WINDOWS") != nullptr;
      gz.SetTimed(timed);
      Drain([&](char* d, size_t n) { return gz.Read(d, n); }, r == rounds, &par);
      if (timed) std::fprintf(stderr, "%d threads:\n%s", t, gz.TimesReport().c_str());
    }
    const std::string what = "parallel, " + std::to_string(t) + " threads";
    Print(what.c_str(), par);
    same = same && par.crc == serial.crc && par.bytes == serial.bytes;
  }
  std::printf("%s\n", same ? "same bytes on every path" : "OUTPUT DIFFERS");
  return same ? 0 : 1;
}
