// libbench_cupti_floor.so: the cost floor of a CUPTI tracer, for the capture benchmark
// (run_bench.py). CUDA loads it through CUDA_INJECTION64_PATH; it enables only the activity
// kinds every tracer needs (CONCURRENT_KERNEL, MEMCPY, MEMSET), counts the records of each
// completed buffer and drops them: no API records, no file written while the program runs, no
// timestamp callback. At exit it flushes and writes $BENCH_FLOOR_OUT/floor.<pid>.txt:
//   kernels N memcpys M memsets S dropped D
#include <cupti.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::atomic<long long> g_kernels{0}, g_memcpys{0}, g_memsets{0};
std::atomic<size_t> g_dropped{0};
constexpr size_t kBufferBytes = 8 << 20;

void CUPTIAPI Requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI Completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  if (!buffer) return;
  CUpti_Activity* rec = nullptr;
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: ++g_kernels; break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: ++g_memcpys; break;
      case CUPTI_ACTIVITY_KIND_MEMSET: ++g_memsets; break;
      default: break;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) g_dropped += dropped;
  std::free(buffer);
}

void AtExit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const char* dir = std::getenv("BENCH_FLOOR_OUT");
  if (!dir || !*dir) return;
  const std::string path = std::string(dir) + "/floor." + std::to_string(::getpid()) + ".txt";
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fprintf(f, "kernels %lld memcpys %lld memsets %lld dropped %zu\n", g_kernels.load(), g_memcpys.load(),
                 g_memsets.load(), g_dropped.load());
    std::fclose(f);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (cuptiActivityRegisterCallbacks(Requested, Completed) != CUPTI_SUCCESS) return 1;
  for (CUpti_ActivityKind k :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
    if (cuptiActivityEnable(k) != CUPTI_SUCCESS) std::fprintf(stderr, "bench floor: cannot enable kind %d\n", k);
  std::atexit(AtExit);
  return 1;
}
