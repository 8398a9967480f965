// The parallel gzip inflate (importers/kineto/gzip_parallel.h) against zlib: the same bytes on
// real traces and on generated data compressed every way zlib can (levels 1/6/9, stored, fixed,
// Huffman-only, RLE blocks, several members), at 1-16 threads and many chunk sizes; errors for
// corrupt trailers, corrupt data and files cut anywhere, never a crash.
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "gzip_util.h"
#include "importers/kineto/gzip_parallel.h"
#include "importers/kineto/input_stream.h"
#include "test_util.h"

namespace overlapscope::import {
namespace {

namespace fs = std::filesystem;

// zlib's inflate of every member; empty on error.
absl::StatusOr<std::string> ZlibGunzip(const std::string& gz) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return absl::InternalError("init");
  std::string out;
  std::vector<char> buf(1 << 16);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf.data());
    z.avail_out = static_cast<uInt>(buf.size());
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf.data(), buf.size() - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);
      continue;
    }
    if (rc != Z_OK) {
      inflateEnd(&z);
      return absl::DataLossError(z.msg ? z.msg : "error");
    }
  }
  inflateEnd(&z);
  return out;
}

std::string Gzip(const std::string& in, int level, int strategy = Z_DEFAULT_STRATEGY) {
  return testing::GzipOf(in, level, strategy);
}

// The parallel inflate's output; *guessed: the chunks it decoded from a guessed start and kept.
absl::StatusOr<std::string> Parallel(const std::string& gz, int threads, size_t chunk, size_t window = 1 << 20,
                                     int64_t* guessed = nullptr) {
  ParallelGunzip p(reinterpret_cast<const uint8_t*>(gz.data()), gz.size(), threads, chunk);
  std::string out, buf(window, '\0');
  for (;;) {
    auto r = p.Read(buf.data(), buf.size());
    if (!r.ok()) return r.status();
    if (guessed != nullptr) *guessed = p.guessed_kept();
    if (*r == 0) return out;
    out.append(buf.data(), *r);
  }
}

std::string ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Kineto-like JSON lines: repetitive keys, varying numbers (what the importer reads).
std::string TraceLike(size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s = "{\"traceEvents\": [\n";
  const char* names[] = {"aten::mm", "ncclKernel_AllReduce_RING_LL_Sum_float", "cudaLaunchKernel", "aten::add_"};
  while (s.size() < bytes) {
    s += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"";
    s += names[rng() % 4];
    s += "\", \"pid\": " + std::to_string(rng() % 8) + ", \"tid\": " + std::to_string(rng() % 100000) +
         ", \"ts\": " + std::to_string(rng()) + ", \"dur\": " + std::to_string(rng() % 5000) + "},\n";
  }
  return s + "{}]}\n";
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// Same bytes as zlib at every thread count and chunk size; with `parallel`, some chunks were
// decoded from a guessed start wherever there are two threads and chunks of 16 KiB or more (not
// all by the fallback that decodes one chunk after another; a batch of smaller chunks may hold
// no block boundary of zlib's, whose blocks take ~5-30 KiB).
void ExpectSame(const std::string& gz, const std::string& what, std::vector<int> threads, std::vector<size_t> chunks,
                bool parallel = false) {
  auto want = ZlibGunzip(gz);
  ASSERT_TRUE(want.ok()) << what;
  for (int t : threads) {
    for (size_t c : chunks) {
      int64_t guessed = 0;
      auto got = Parallel(gz, t, c, 1 << 20, &guessed);
      if (parallel && t >= 2 && c >= (16 << 10) && gz.size() > 8 * c) {
        EXPECT_GT(guessed, 0) << what << " threads " << t << " chunk " << c;
      }
      ASSERT_TRUE(got.ok()) << what << " threads " << t << " chunk " << c << ": " << got.status();
      ASSERT_EQ(got->size(), want->size()) << what << " threads " << t << " chunk " << c;
      ASSERT_TRUE(*got == *want) << what << " threads " << t << " chunk " << c;
    }
  }
}

TEST(ParallelInflate, RealTracesAsZlib) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(testing::DataPath("")))
    if (e.is_regular_file() && e.path().string().ends_with(".json.gz")) files.push_back(e.path());
  ASSERT_GE(files.size(), 10u);
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return fs::file_size(a) > fs::file_size(b); });
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string gz = ReadBytes(files[i].string());
    // The four largest at every thread count 1-16; every file at 4 threads in 16 KiB chunks.
    if (i < 4) {
      ExpectSame(gz, files[i].string(), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {16 << 10}, true);
    } else {
      ExpectSame(gz, files[i].string(), {4}, {16 << 10}, true);
    }
  }
}

TEST(ParallelInflate, GeneratedDataEveryBlockKind) {
  const std::string text = TraceLike(3 << 20, 7), noise = RandomBytes(600 << 10, 9);
  const std::vector<int> threads = {1, 2, 3, 7, 16};
  const std::vector<size_t> chunks = {3000, 64 << 10};
  for (int level : {1, 6, 9}) ExpectSame(Gzip(text, level), "level " + std::to_string(level), threads, chunks, true);
  ExpectSame(Gzip(text, 0), "stored", threads, chunks);
  ExpectSame(Gzip(text, 6, Z_FIXED), "fixed", threads, chunks);
  ExpectSame(Gzip(text, 6, Z_HUFFMAN_ONLY), "huffman only", threads, chunks);
  ExpectSame(Gzip(text, 6, Z_RLE), "rle", threads, chunks);
  ExpectSame(Gzip(noise, 6), "random bytes", threads, chunks);
  ExpectSame(Gzip(text.substr(0, 100), 6), "tiny", threads, chunks);
  ExpectSame(Gzip("", 6), "empty", threads, chunks);
  // Several members, of every kind, one after another (gzip -c a b > c).
  const std::string members = Gzip(text.substr(0, 1 << 20), 9) + Gzip(noise, 1) + Gzip("", 6) +
                              Gzip(text.substr(5, 200 << 10), 0) + Gzip(text, 6, Z_FIXED);
  ExpectSame(members, "members", threads, chunks);
}

// Reads of any size: a byte at a time, odd sizes, and reads of many chunks at once (copied side
// by side from 4 MiB up).
TEST(ParallelInflate, AnyReadSize) {
  const std::string small = Gzip(TraceLike(1 << 20, 3), 6), large = Gzip(TraceLike(12 << 20, 4), 6);
  for (const std::string* gz : {&small, &large}) {
    auto want = ZlibGunzip(*gz);
    ASSERT_TRUE(want.ok());
    const std::vector<size_t> windows =
        gz == &small ? std::vector<size_t>{1, 777, 64 << 10} : std::vector<size_t>{(5 << 20) + 3, 16 << 20};
    for (size_t window : windows) {
      auto got = Parallel(*gz, 4, 32 << 10, window);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_TRUE(*got == *want) << window;
    }
  }
}

TEST(ParallelInflate, CutAnywhereIsAnError) {
  const std::string gz = Gzip(TraceLike(400 << 10, 5), 6) + Gzip(TraceLike(100 << 10, 6), 0);
  const size_t chunk = 4 << 10;
  std::vector<size_t> cuts;
  for (size_t at = 0; at < gz.size(); at += chunk) {  // every chunk boundary and its neighbours
    for (size_t d : {size_t{0}, size_t{1}, size_t{7}}) {
      if (at + d > 0 && at + d < gz.size()) cuts.push_back(at + d);
      if (at >= d + 1 && at - d - 1 < gz.size()) cuts.push_back(at - d - 1);
    }
  }
  for (size_t k = 1; k <= 20; ++k) cuts.push_back(gz.size() - k);  // inside the trailers
  for (size_t cut : cuts) {
    if (cut < 2) continue;
    const std::string part = gz.substr(0, cut);
    for (int t : {1, 3, 8}) {
      auto got = Parallel(part, t, chunk);
      EXPECT_FALSE(got.ok()) << "cut at " << cut << " threads " << t;
    }
  }
}

TEST(ParallelInflate, CorruptTrailerIsAnError) {
  std::string gz = Gzip(TraceLike(300 << 10, 11), 6);
  std::string bad_crc = gz, bad_size = gz;
  bad_crc[gz.size() - 8] ^= 1;
  bad_size[gz.size() - 2] ^= 1;
  for (int t : {1, 4, 16}) {
    auto a = Parallel(bad_crc, t, 8 << 10), b = Parallel(bad_size, t, 8 << 10);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().message(), "incorrect data check");
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.status().message(), "incorrect length check");
  }
  auto trailing = Parallel(gz + "garbage", 4, 8 << 10);
  ASSERT_FALSE(trailing.ok());
  EXPECT_EQ(trailing.status().message(), "incorrect header check");
}

// Flipped bytes anywhere: an error (or, where zlib accepts the file, zlib's bytes), never a
// crash or a hang.
TEST(ParallelInflate, CorruptDataNeverCrashes) {
  const std::string gz = Gzip(TraceLike(200 << 10, 13), 9);
  std::mt19937 rng(17);
  for (int round = 0; round < 300; ++round) {
    std::string bad = gz;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[10 + rng() % (bad.size() - 10)] ^= static_cast<char>(1 + rng() % 255);
    auto want = ZlibGunzip(bad);
    auto got = Parallel(bad, 1 + static_cast<int>(rng() % 8), 2 << 10);
    if (want.ok() && got.ok()) {
      EXPECT_TRUE(*got == *want) << round;
    }
    if (!want.ok()) {
      EXPECT_FALSE(got.ok()) << round << ": zlib says " << want.status();
    }
  }
}

TEST(ParallelInflate, InputStreamErrorNamesPathAndOffset) {
  std::string gz = Gzip(TraceLike(300 << 10, 19), 6);
  gz.resize(gz.size() - 3);
  const std::string path = testing::WriteTemp("cut.json.gz", gz);
  auto in = InputStream::Open(path, 8);
  ASSERT_TRUE(in.ok()) << in.status();
  std::string buf(1 << 20, '\0');
  absl::Status err;
  for (;;) {
    auto r = (*in)->Read(buf.data(), buf.size());
    if (!r.ok()) {
      err = r.status();
      break;
    }
    ASSERT_NE(*r, 0u) << "a cut file read to the end without an error";
  }
  EXPECT_TRUE(absl::StartsWith(err.message(), path + ": offset ")) << err;
  EXPECT_TRUE(absl::EndsWith(err.message(), ": gzip error: truncated gzip stream")) << err;
}

// OVERLAPSCOPE_INFLATE_THREADS (a measurement aid): the same bytes with 1, 3 or 16 inflate
// threads under 16 parser threads, and with 16 under 6.
TEST(ParallelInflate, InflateThreadsSettingSameBytes) {
  const std::string text = TraceLike(6 << 20, 29);
  const std::string path = testing::WriteTemp("threads.json.gz", Gzip(text, 6));
  for (const auto& [env, threads] : std::vector<std::pair<const char*, int>>{{"1", 16}, {"3", 16}, {"16", 6}}) {
    ::setenv("OVERLAPSCOPE_INFLATE_THREADS", env, 1);
    auto in = InputStream::Open(path, threads);
    ::unsetenv("OVERLAPSCOPE_INFLATE_THREADS");
    ASSERT_TRUE(in.ok()) << in.status();
    std::string got, buf((1 << 20) + 3, '\0');
    for (;;) {
      auto r = (*in)->Read(buf.data(), buf.size());
      ASSERT_TRUE(r.ok()) << r.status();
      if (*r == 0) break;
      got.append(buf.data(), *r);
    }
    EXPECT_TRUE(got == text) << env;
  }
}

}  // namespace
}  // namespace overlapscope::import
