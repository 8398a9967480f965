// Inflate of one .json.gz file: streaming zlib (16 MiB output window, what the Kineto importer's
// reader thread does) against libdeflate's whole-buffer decompress (the whole file and its whole
// output in memory). Prints MB/s of uncompressed output and the memory each needs.
//   inflate_bench FILE.json.gz [ROUNDS]
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Streaming: the compressed file in 1 MiB reads, output through a 16 MiB window.
int64_t Zlib(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return -1;
  z_stream z{};
  inflateInit2(&z, 16 + MAX_WBITS);
  std::vector<unsigned char> in(1 << 20), out(16 << 20);
  int64_t total = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (z.avail_in == 0) {
      z.avail_in = static_cast<uInt>(std::fread(in.data(), 1, in.size(), f));
      z.next_in = in.data();
      if (z.avail_in == 0) break;
    }
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    total += static_cast<int64_t>(out.size() - z.avail_out);
  }
  inflateEnd(&z);
  std::fclose(f);
  return rc == Z_STREAM_END ? total : -1;
}

// Whole buffer: the file read at once, output sized from the gzip trailer (ISIZE).
// Seconds of the decompress call alone (buffers allocated and touched before), set by Libdeflate.
double g_call_s = 0;

int64_t Libdeflate(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> in((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (in.size() < 18) return -1;
  const auto* b = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
  const size_t isize = size_t{b[0]} | size_t{b[1]} << 8 | size_t{b[2]} << 16 | size_t{b[3]} << 24;
  std::vector<char> out(isize);
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  size_t got = 0;
  libdeflate_result r = libdeflate_gzip_decompress(d, in.data(), in.size(), out.data(), out.size(), &got);
  const auto t0 = std::chrono::steady_clock::now();  // again, the output pages now resident
  r = libdeflate_gzip_decompress(d, in.data(), in.size(), out.data(), out.size(), &got);
  g_call_s = Seconds(t0);
  libdeflate_free_decompressor(d);
  return r == LIBDEFLATE_SUCCESS ? static_cast<int64_t>(got) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: inflate_bench FILE.json.gz [ROUNDS]\n");
    return 64;
  }
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    const int64_t a = Zlib(argv[1]);
    const double za = Seconds(t0);
    t0 = std::chrono::steady_clock::now();
    const int64_t b = Libdeflate(argv[1]);
    const double lb = Seconds(t0) - g_call_s;  // the first call, with reading and allocation
    if (a < 0 || b < 0 || a != b) {
      std::fprintf(stderr, "inflate_bench: %s: inflate failed or sizes differ (%lld, %lld)\n", argv[1],
                   static_cast<long long>(a), static_cast<long long>(b));
      return 1;
    }
    std::printf(
        "round %d: %lld MB: zlib streaming %.3f s (%.0f MB/s, 17 MiB buffers), libdeflate whole file "
        "%.3f s (%.0f MB/s, file + output in memory; the call alone on resident pages %.3f s, %.0f MB/s)\n",
        r, static_cast<long long>(a / 1000000), za, static_cast<double>(a) / 1e6 / za, lb,
        static_cast<double>(b) / 1e6 / lb, g_call_s, static_cast<double>(b) / 1e6 / g_call_s);
  }
  return 0;
}
