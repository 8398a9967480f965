// capture_spill_bench [KERNELS]: cost of the capture spill format (formats/spill_records.h, written by capture/cupti).
// Writes KERNELS kernel records + one launch API record each (as a capture of a launch loop
// would), the way the collector does (encode into a buffer, write out every ~8 MiB), then
// reads the file back into a model::Trace. Prints bytes per kernel, encode and read rates and
// the peak RSS of each phase. Default 2,000,000 kernels.
#if __has_include("importers/ovspill/spill_reader.h")
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "importers/ovspill/spill_reader.h"

namespace {

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace overlapscope::import;
  using namespace overlapscope::formats;
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 2000000;
  const std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                           "/capture_spill_bench." + std::to_string(::getpid()) + ".ovspill";
  const auto t0 = std::chrono::steady_clock::now();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return 1;
  std::string out;
  SpillEncoder::AppendFileHeader(&out);
  SpillEncoder::Append(&out, SpillType::kProcess, SpillProcess{1, 0, 1, 0, 0, 0, 0});
  const char* names[4] = {"_Z8kernel_aPfi", "_Z8kernel_bPfi", "ampere_sgemm_128x64_nn",
                          "ncclDevKernel_AllGather_RING_LL"};
  for (uint32_t i = 0; i < 4; ++i) SpillEncoder::AppendString(&out, i + 1, names[i]);
  SpillEncoder::AppendString(&out, 5, "cudaLaunchKernel");
  int64_t bytes = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = 1000000 + i * 3000;
    SpillApi a{t, t + 800, 1, 1, static_cast<uint32_t>(i + 1), 211, 0, 5, 0, {}};
    SpillEncoder::Append(&out, SpillType::kApi, a);
    SpillKernel k{};
    k.start = t + 1000, k.end = t + 2500, k.stream = 7 + static_cast<uint32_t>(i % 2), k.context = 1;
    k.correlation = static_cast<uint32_t>(i + 1), k.name_sid = 1 + static_cast<uint32_t>(i % 4);
    k.grid[0] = k.block[0] = 128, k.grid[1] = k.grid[2] = k.block[1] = k.block[2] = 1;
    SpillEncoder::Append(&out, SpillType::kKernel, k);
    if (out.size() >= (8u << 20)) {  // the collector writes after every CUPTI buffer
      bytes += ::write(fd, out.data(), out.size());
      out.clear();
    }
  }
  SpillEncoder::Append(&out, SpillType::kEnd, SpillEnd{0, 0, 0});
  bytes += ::write(fd, out.data(), out.size());
  ::close(fd);
  const auto t1 = std::chrono::steady_clock::now();
  const double rss_write = PeakRssMiB();
  overlapscope::model::TraceBuilder builder;
  absl::Status read = ReadSpillFile(path, builder);
  if (!read.ok()) {
    std::fprintf(stderr, "%s\n", std::string(read.message()).c_str());
    return 1;
  }
  const auto t_read = std::chrono::steady_clock::now();
  auto trace = std::move(builder).Finalize();
  const auto t2 = std::chrono::steady_clock::now();
  ::unlink(path.c_str());
  if (!trace.ok()) {
    std::fprintf(stderr, "%s\n", std::string(trace.status().message()).c_str());
    return 1;
  }
  const double w = std::chrono::duration<double>(t1 - t0).count(), r = std::chrono::duration<double>(t2 - t1).count();
  std::printf("spill: %lld kernels + %lld API records, %.1f MB (%.1f bytes per kernel incl. its API record)\n",
              (long long)n, (long long)n, bytes / 1e6, double(bytes) / n);
  std::printf("encode+write: %.3f s (%.2f M kernels/s), peak RSS %.1f MiB\n", w, n / w / 1e6, rss_write);
  const double rd = std::chrono::duration<double>(t_read - t1).count();
  std::printf(
      "read into model::Trace: %.3f s (%.2f M kernels/s; decode+join %.3f s, Finalize %.3f s), kernels %zu "
      "api %zu, peak RSS %.1f MiB\n",
      r, n / r / 1e6, rd, r - rd, trace->kernels().size(), trace->api_calls().size(), PeakRssMiB());
  return trace->kernels().size() == static_cast<size_t>(n) ? 0 : 1;
}
#else
#include <cstdio>
int main() {
  std::puts("capture_spill_bench: built without CUDA (no os_cupti), nothing to measure");
  return 0;
}
#endif
