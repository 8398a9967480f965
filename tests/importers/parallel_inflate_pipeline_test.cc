// The parallel inflate with the next batch decoded beside the last one's resolution
// (ParallelGunzip::SetPipelined): the same bytes, the same errors after the same bytes as
// without (given chunk sizes; automatic ones are smaller pipelined), at 1, 2, 3 and 16 threads
// in odd chunk sizes, on every block kind, several members, cut and corrupted files.
#include <zlib.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "gzip_util.h"
#include "importers/kineto/gzip_parallel.h"

namespace overlapscope::import {
namespace {

std::string Gzip(const std::string& in, int level, int strategy = Z_DEFAULT_STRATEGY) {
  return testing::GzipOf(in, level, strategy);
}

std::string TraceLike(size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s = "{\"traceEvents\": [\n";
  while (s.size() < bytes) {
    s += "{\"ph\": \"X\", \"name\": \"k" + std::to_string(rng() % 40) + "\", \"tid\": " + std::to_string(rng() % 1000) +
         ", \"ts\": " + std::to_string(rng()) + ", \"dur\": " + std::to_string(rng() % 5000) + "},\n";
  }
  return s + "{}]}\n";
}

struct Outcome {
  std::string bytes;
  std::string error;  // empty: read to the end
};

Outcome Inflate(const std::string& gz, int threads, size_t chunk, bool pipelined) {
  ParallelGunzip p(reinterpret_cast<const uint8_t*>(gz.data()), gz.size(), threads, chunk);
  p.SetPipelined(pipelined);
  Outcome o;
  std::string buf((1 << 20) + 5, '\0');
  for (;;) {
    auto r = p.Read(buf.data(), buf.size());
    if (!r.ok()) {
      o.error = std::string(r.status().message());
      return o;
    }
    if (*r == 0) return o;
    o.bytes.append(buf.data(), *r);
  }
}

void ExpectSameBothWays(const std::string& gz, const std::string& what) {
  for (int threads : {1, 2, 3, 16}) {
    for (size_t chunk : {size_t{3001}, size_t{20011}, size_t{0}}) {
      const Outcome a = Inflate(gz, threads, chunk, false), b = Inflate(gz, threads, chunk, true);
      ASSERT_EQ(a.error, b.error) << what << " threads " << threads << " chunk " << chunk;
      if (chunk == 0 && !a.error.empty()) {
        // Automatic sizes: pipelined batches are smaller, so an error may come a few chunks
        // earlier, after fewer of the same bytes.
        const size_t n = std::min(a.bytes.size(), b.bytes.size());
        ASSERT_TRUE(a.bytes.compare(0, n, b.bytes, 0, n) == 0) << what << " threads " << threads;
        continue;
      }
      ASSERT_EQ(a.bytes.size(), b.bytes.size()) << what << " threads " << threads << " chunk " << chunk;
      ASSERT_TRUE(a.bytes == b.bytes) << what << " threads " << threads << " chunk " << chunk;
    }
  }
}

TEST(ParallelInflatePipelined, SameBytesEveryBlockKindAndMembers) {
  const std::string text = TraceLike(3 << 20, 31);
  for (int level : {1, 6, 9}) {
    const std::string gz = Gzip(text, level);
    ExpectSameBothWays(gz, "level " + std::to_string(level));
    const Outcome o = Inflate(gz, 3, 20011, true);
    EXPECT_TRUE(o.error.empty()) << o.error;
    EXPECT_TRUE(o.bytes == text);
  }
  ExpectSameBothWays(Gzip(text, 0), "stored");
  ExpectSameBothWays(Gzip(text, 6, Z_FIXED), "fixed");
  ExpectSameBothWays(Gzip(text, 6, Z_HUFFMAN_ONLY), "huffman only");
  ExpectSameBothWays(Gzip(text.substr(0, 1 << 20), 9) + Gzip("", 6) + Gzip(text, 6, Z_RLE), "members");
}

TEST(ParallelInflatePipelined, SameErrorsAfterTheSameBytes) {
  const std::string gz = Gzip(TraceLike(1 << 20, 37), 6) + Gzip(TraceLike(300 << 10, 41), 9);
  std::mt19937 rng(43);
  for (int round = 0; round < 24; ++round) {
    std::string bad = gz;
    if (round % 2 == 0) {
      bad.resize(20 + rng() % (gz.size() - 20));  // cut anywhere
    } else {
      for (int f = 0; f < 3; ++f) bad[10 + rng() % (bad.size() - 10)] ^= static_cast<char>(1 + rng() % 255);
    }
    ExpectSameBothWays(bad, "round " + std::to_string(round));
  }
}

}  // namespace
}  // namespace overlapscope::import
