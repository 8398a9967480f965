// The parallel inflate's output side (gzip_parallel_batch.cc): a batch writes the output that
// falls inside the Read that started it straight into the caller's buffer and queues the rest,
// so Read sizes decide which bytes go which way. Whatever the Read size, the same bytes, and the
// same error after the same bytes (batches are cut from the compressed data alone), at 1, 3 and
// 16 threads in odd chunk sizes, on every block kind, several members, cut and corrupted
// files; and the batch timeline (SetTimed) accounts for every byte.
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
  int64_t out_pos = 0;
};

// Reads sizes cycle through `reads` (several sizes, so a batch starts at any offset of a read).
Outcome Inflate(const std::string& gz, int threads, size_t chunk, const std::vector<size_t>& reads) {
  ParallelGunzip p(reinterpret_cast<const uint8_t*>(gz.data()), gz.size(), threads, chunk);
  Outcome o;
  std::string buf(*std::max_element(reads.begin(), reads.end()), '\0');
  for (size_t i = 0;; ++i) {
    auto r = p.Read(buf.data(), reads[i % reads.size()]);
    o.out_pos = p.out_pos();
    if (!r.ok()) {
      o.error = std::string(r.status().message());
      return o;
    }
    if (*r == 0) return o;
    o.bytes.append(buf.data(), *r);
  }
}

void ExpectSameEveryReadSize(const std::string& gz, const std::string& what) {
  const std::vector<size_t> whole = {size_t{16} << 20};
  const std::vector<std::vector<size_t>> others = {{(1 << 20) + 5}, {65537, 4099, 300007}};
  for (int threads : {1, 3, 16}) {
    for (size_t chunk : {size_t{3001}, size_t{0}}) {
      const Outcome a = Inflate(gz, threads, chunk, whole);
      for (const auto& reads : others) {
        const Outcome b = Inflate(gz, threads, chunk, reads);
        ASSERT_EQ(a.error, b.error) << what << " threads " << threads << " chunk " << chunk << " read " << reads[0];
        ASSERT_EQ(a.out_pos, b.out_pos) << what << " threads " << threads << " chunk " << chunk;
        ASSERT_TRUE(a.bytes == b.bytes) << what << " threads " << threads << " chunk " << chunk;
      }
    }
  }
}

TEST(ParallelInflateReads, SameBytesEveryReadSizeBlockKindAndMembers) {
  const std::string text = TraceLike(1 << 20, 31);
  for (int level : {1, 9}) {
    const std::string gz = Gzip(text, level);
    ExpectSameEveryReadSize(gz, "level " + std::to_string(level));
    const Outcome o = Inflate(gz, 16, 20011, {4099});
    EXPECT_TRUE(o.error.empty()) << o.error;
    EXPECT_TRUE(o.bytes == text);
  }
  ExpectSameEveryReadSize(Gzip(text, 0), "stored");
  ExpectSameEveryReadSize(Gzip(text, 6, Z_FIXED), "fixed");
  ExpectSameEveryReadSize(Gzip(text, 6, Z_HUFFMAN_ONLY), "huffman only");
  ExpectSameEveryReadSize(Gzip(text.substr(0, 1 << 20), 9) + Gzip("", 6) + Gzip(text, 6, Z_RLE), "members");
}

TEST(ParallelInflateReads, SameErrorsAfterTheSameBytes) {
  const std::string gz = Gzip(TraceLike(600 << 10, 37), 6) + Gzip(TraceLike(200 << 10, 41), 9);
  std::mt19937 rng(43);
  for (int round = 0; round < 16; ++round) {
    std::string bad = gz;
    if (round % 2 == 0) {
      bad.resize(20 + rng() % (gz.size() - 20));  // cut anywhere
    } else {
      for (int f = 0; f < 3; ++f) bad[10 + rng() % (bad.size() - 10)] ^= static_cast<char>(1 + rng() % 255);
    }
    ExpectSameEveryReadSize(bad, "round " + std::to_string(round));
  }
}

TEST(ParallelInflateReads, TimelineCountsEveryByte) {
  const std::string text = TraceLike(2 << 20, 47);
  const std::string gz = Gzip(text, 6);
  ParallelGunzip p(reinterpret_cast<const uint8_t*>(gz.data()), gz.size(), 4, 20011);
  EXPECT_EQ(p.TimesReport(), "");
  p.SetTimed(true);
  std::string buf(300007, '\0');
  size_t total = 0;
  for (;;) {
    auto r = p.Read(buf.data(), buf.size());
    ASSERT_TRUE(r.ok()) << r.status();
    if (*r == 0) break;
    total += *r;
  }
  EXPECT_EQ(total, text.size());
  const std::string report = p.TimesReport();
  const size_t batches = static_cast<size_t>(std::count(report.begin(), report.end(), '\n')) - 1;
  EXPECT_GT(batches, 1u);
  EXPECT_NE(report.find("inflate: " + std::to_string(batches) + " batches"), std::string::npos) << report;
  // Output per batch, as printed (MB with one decimal), adds up to the file's within rounding.
  double mb = 0;
  for (size_t at = report.find(" out "); at != std::string::npos; at = report.find(" out ", at + 1))
    mb += std::stod(report.substr(at + 5));
  EXPECT_NEAR(mb, static_cast<double>(text.size()) / 1e6, 0.05 * static_cast<double>(batches) + 0.01) << report;
}

}  // namespace
}  // namespace overlapscope::import
