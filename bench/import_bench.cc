// import_bench FILE... [--threads N] [--chunk-mb M] [--repeat R] [--stats]
//
// Imports Kineto traces as ImportTraces does (ImportKinetoFile per file, then Finalize) and prints, per run: wall
// time, uncompressed MB/s (MB = 10^6 bytes), events/s, the process's peak RSS (getrusage
// ru_maxrss) next to the input size, and CPU seconds (user+system, all threads; on a shared
// machine wall time depends on the load, CPU time much less). Targets (checked here, never in tests):
// >= 300 MB/s on a >= 500 MB trace with peak RSS <= 0.5x the file size.
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "importers/kineto/import.h"
#include "model/source_stats.h"

namespace {

int64_t PeakRssBytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

// User + system CPU seconds of this process so far (all threads).
double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int64_t FileSize(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 ? st.st_size : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  overlapscope::import::ImportOptions opt;
  int repeat = 1;
  bool stats = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc)
      opt.threads = std::atoi(argv[++i]);
    else if (a == "--chunk-mb" && i + 1 < argc)
      opt.chunk_bytes = std::atoll(argv[++i]) << 20;
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else if (a == "--stats")
      stats = true;
    else
      files.push_back(a);
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: import_bench FILE... [--threads N] [--chunk-mb M] [--repeat R] [--stats]\n");
    return 64;
  }
  int64_t on_disk = 0;
  for (const auto& f : files) on_disk += FileSize(f);
  for (int r = 0; r < repeat; ++r) {
    double c0 = CpuSeconds();
    auto t0 = std::chrono::steady_clock::now();
    // ImportTraces = for each file ImportKinetoFile, then Finalize; timed apart for the report.
    overlapscope::model::TraceBuilder builder;
    auto expanded = overlapscope::import::ExpandTracePaths(files);
    absl::Status st = expanded.status();
    for (const auto& f : st.ok() ? *expanded : std::vector<std::string>{}) {
      st = overlapscope::import::ImportKinetoFile(f, builder, opt);
      if (!st.ok()) break;
    }
    auto tf = std::chrono::steady_clock::now();
    double cf = CpuSeconds();
    absl::StatusOr<overlapscope::model::Trace> trace =
        st.ok() ? std::move(builder).Finalize() : absl::StatusOr<overlapscope::model::Trace>(st);
    auto t1 = std::chrono::steady_clock::now();
    if (!trace.ok()) {
      std::fprintf(stderr, "import failed: %s\n", std::string(trace.status().message()).c_str());
      return 2;
    }
    double s = std::chrono::duration<double>(t1 - t0).count();
    double cpu = CpuSeconds() - c0;
    double fin_wall = std::chrono::duration<double>(t1 - tf).count(), fin_cpu = CpuSeconds() - cf;
    int64_t bytes = 0, events = 0;
    for (const auto& src : trace->sources()) {
      bytes += src.bytes;
      events += src.events_read;
    }
    int64_t rss = PeakRssBytes();
    std::printf(
        "run %d: %.3f s  %.1f MB/s (uncompressed %.1f MB, on disk %.1f MB)  %.2f M events/s (%lld events, %lld kept "
        "in model)  peak RSS %.1f MB = %.2fx uncompressed, %.2fx on disk  CPU %.3f s (%.1f MB per CPU-s)\n",
        r, s, bytes / 1e6 / s, bytes / 1e6, on_disk / 1e6, events / 1e6 / s, static_cast<long long>(events),
        static_cast<long long>(trace->total_events()), rss / 1e6, static_cast<double>(rss) / bytes,
        static_cast<double>(rss) / on_disk, cpu, bytes / 1e6 / cpu);
    std::printf("       of which model Finalize (sort + indexes): %.3f s wall, %.3f s CPU\n", fin_wall, fin_cpu);
    if (stats && r == 0) {
      for (const auto& src : trace->sources()) {
        std::printf("%s (%s): read %lld kept %lld skipped %lld\n", src.path.c_str(), src.format.c_str(),
                    static_cast<long long>(src.events_read), static_cast<long long>(src.events_kept),
                    static_cast<long long>(src.skipped()));
        for (const auto& [k, v] : src.kept_by_category)
          std::printf("  kept %s %lld\n", k.c_str(), static_cast<long long>(v));
        for (size_t i = 0; i < overlapscope::model::kStatCount; ++i) {
          const auto st = static_cast<overlapscope::model::Stat>(i);
          if (src.Count(st) == 0) continue;
          std::printf("  %s %s %lld\n",
                      std::string(overlapscope::model::ToString(overlapscope::model::Describe(st).severity)).c_str(),
                      std::string(overlapscope::model::Describe(st).name).c_str(),
                      static_cast<long long>(src.Count(st)));
          for (const auto& [what, n] : src.Details(st))
            std::printf("    %s %lld\n", what.c_str(), static_cast<long long>(n));
        }
        for (const auto& e : src.examples) std::printf("  e.g. %s\n", e.c_str());
      }
      std::printf("kernels %zu memcpys %zu memsets %zu api %zu syncs %zu ranges %zu gpu_ranges %zu collectives %zu\n",
                  trace->kernels().size(), trace->memcpys().size(), trace->memsets().size(), trace->api_calls().size(),
                  trace->syncs().size(), trace->ranges().size(), trace->gpu_ranges().size(),
                  trace->collectives().size());
    }
  }
  return 0;
}
