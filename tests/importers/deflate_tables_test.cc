// The parallel inflate's own decoder tables (importers/kineto/deflate_decode.h): every code of
// every length (subtables past the root's 11 bits included) leads to its symbol, literal pairs
// are exactly the pairs whose two codes fit the root, lengths and distances carry their RFC 1951
// bases and extra bits; and streams whose codes reach 15 bits decode as zlib does at 1, 2, 3
// and 16 threads in odd chunk sizes.
#include <zlib.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "gzip_util.h"
#include "importers/kineto/deflate_decode.h"
#include "importers/kineto/gzip_parallel.h"

namespace overlapscope::import {
namespace {

using deflate::HuffTable;

// RFC 1951 3.2.2: the canonical codes of `lens`, bit-reversed into the stream's order.
std::vector<uint32_t> StreamCodes(const std::vector<uint8_t>& lens) {
  int count[16] = {0};
  for (uint8_t l : lens) ++count[l];
  count[0] = 0;
  uint32_t next[16] = {0}, code = 0;
  for (int b = 1; b <= 15; ++b) next[b] = code = (code + static_cast<uint32_t>(count[b - 1])) << 1;
  std::vector<uint32_t> out(lens.size(), 0);
  for (size_t s = 0; s < lens.size(); ++s) {
    if (lens[s] == 0) continue;
    const uint32_t c = next[lens[s]]++;
    uint32_t r = 0;
    for (int i = 0; i < lens[s]; ++i) r |= ((c >> i) & 1) << (lens[s] - 1 - i);
    out[s] = r;
  }
  return out;
}

// The entry for the bits at the bottom of `buf`, followed through a link as the decoder does.
uint32_t Find(const HuffTable& t, uint64_t buf) {
  constexpr int kRoot = HuffTable::kRootBits;
  uint32_t e = t.entry[buf & ((1u << kRoot) - 1)];
  if (e & HuffTable::kLink) e = t.entry[(e >> 16) + ((buf >> kRoot) & ((1u << ((e >> 8) & 15)) - 1))];
  return e;
}

// Literals 0..15 with codes of 1, 2, ..., 15, 15 bits (complete), end of block nowhere: every
// literal found with its own length whatever bits follow; pairs exactly where both fit 11 bits.
TEST(DeflateTables, EveryCodeLengthLeadsToItsSymbol) {
  std::vector<uint8_t> lens(286, 0);
  for (int s = 0; s < 15; ++s) lens[s] = static_cast<uint8_t>(s + 1);
  lens[15] = 15;
  const std::vector<uint32_t> codes = StreamCodes(lens);
  auto t = std::make_unique<HuffTable>();
  ASSERT_TRUE(deflate::BuildTable(lens.data(), 286, deflate::CodeKind::kLiterals, t.get()));
  std::mt19937_64 rng(5);
  for (int s = 0; s < 16; ++s) {
    for (int trial = 0; trial < 64; ++trial) {
      const uint64_t buf = codes[s] | (rng() << lens[s]);
      const uint32_t e = Find(*t, buf);
      ASSERT_TRUE(e & HuffTable::kLiteral) << s;
      EXPECT_EQ((e >> 16) & 0xff, static_cast<uint32_t>(s));
      // The second code: the literal whose code the next bits start with.
      int s2 = -1;
      for (int c = 0; c < 16; ++c)
        if (((buf >> lens[s]) & ((1u << lens[c]) - 1)) == codes[c]) s2 = c;
      ASSERT_GE(s2, 0);
      const bool pair = lens[s] + lens[s2] <= HuffTable::kRootBits;
      ASSERT_EQ((e & HuffTable::kPair) != 0, pair) << s << " then " << s2;
      EXPECT_EQ(e & 31, static_cast<uint32_t>(pair ? lens[s] + lens[s2] : lens[s])) << s;
      if (pair) {
        EXPECT_EQ(e >> 24, static_cast<uint32_t>(s2));
      }
    }
  }
}

// An over-subscribed code and an incomplete one (more than a single 1-bit code) are refused as
// zlib refuses them; one 1-bit distance code is allowed and its other pattern is no code.
TEST(DeflateTables, BadCodesRefusedAndTheLoneCodeAllowed) {
  auto t = std::make_unique<HuffTable>();
  std::vector<uint8_t> over = {1, 1, 1}, incomplete = {2, 2, 2}, lone = {1};
  EXPECT_FALSE(deflate::BuildTable(over.data(), 3, deflate::CodeKind::kDistances, t.get()));
  EXPECT_FALSE(deflate::BuildTable(incomplete.data(), 3, deflate::CodeKind::kDistances, t.get()));
  ASSERT_TRUE(deflate::BuildTable(lone.data(), 1, deflate::CodeKind::kDistances, t.get()));
  EXPECT_EQ(Find(*t, 0) & 31, 1u);  // distance 1: code 0, no extra bits
  EXPECT_EQ(Find(*t, 0) >> 16, 1u);
  EXPECT_EQ(Find(*t, 1) & 31, 0u);  // no code
}

// The fixed code's lengths and distances: base and extra bits of RFC 1951 3.2.5; symbols 286,
// 287 and distances 30, 31 are no code.
TEST(DeflateTables, FixedCodeBasesAndExtraBits) {
  const deflate::BlockTables& f = deflate::FixedTables();
  std::vector<uint8_t> lit(288, 8), dist(32, 5);
  for (int s = 144; s < 256; ++s) lit[s] = 9;
  for (int s = 256; s < 280; ++s) lit[s] = 7;
  const std::vector<uint32_t> lc = StreamCodes(lit), dc = StreamCodes(dist);
  // symbol, its code's length, base, extra bits
  const struct {
    int sym, base, extra;
  } lengths[] = {{257, 3, 0}, {265, 11, 1}, {269, 19, 2}, {284, 227, 5}, {285, 258, 0}};
  for (const auto& l : lengths) {
    for (uint64_t x = 0; x < (uint64_t{1} << l.extra); ++x) {
      const uint64_t buf = lc[l.sym] | (x << lit[l.sym]);
      const uint32_t e = Find(f.lit, buf);
      EXPECT_EQ(e & 31, static_cast<uint32_t>(lit[l.sym] + l.extra)) << l.sym;
      EXPECT_EQ((e >> 16) + ((buf & ((uint64_t{1} << (e & 31)) - 1)) >> ((e >> 8) & 15)), l.base + x) << l.sym;
    }
  }
  EXPECT_TRUE(Find(f.lit, lc[256]) & HuffTable::kEnd);
  EXPECT_EQ(Find(f.lit, lc[286]), 0u);
  EXPECT_EQ(Find(f.lit, lc[287]), 0u);
  const uint64_t far = dc[29] | (uint64_t{8191} << 5);  // distance code 29, extra all ones: 32768
  const uint32_t e = Find(f.dist, far);
  EXPECT_EQ(e & 31, 18u);
  EXPECT_EQ((e >> 16) + ((far & ((uint64_t{1} << 18) - 1)) >> 5), 32768u);
  EXPECT_EQ(Find(f.dist, dc[30]), 0u);
  EXPECT_EQ(Find(f.dist, dc[31]), 0u);
}

std::string Gzip9(const std::string& in, int strategy) { return testing::GzipOf(in, 9, strategy, 9); }

// Bytes of a geometric law (byte k about twice as rare as byte k - 1: Huffman codes of up to
// 15 bits), with runs copied from up to 32 KiB back (long distance codes too).
std::string Skewed(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < n) {
    if (s.size() > 40000 && rng() % 8 == 0) {
      const size_t d = 1 + rng() % 32768, len = 3 + rng() % 200;
      for (size_t i = 0; i < len; ++i) s += s[s.size() - d];
      continue;
    }
    int k = 0;
    while (k < 40 && (rng() & 1)) ++k;
    s += static_cast<char>('a' + k);
  }
  return s;
}

TEST(DeflateTables, LongCodesAsZlibAtEveryThreadCount) {
  const std::string text = Skewed(3 << 20, 23);
  for (int strategy : {Z_DEFAULT_STRATEGY, Z_HUFFMAN_ONLY}) {
    const std::string gz = Gzip9(text, strategy);
    for (int threads : {1, 2, 3, 16}) {
      for (size_t chunk : {size_t{3001}, size_t{65537}}) {
        ParallelGunzip p(reinterpret_cast<const uint8_t*>(gz.data()), gz.size(), threads, chunk);
        std::string out, buf((1 << 20) + 7, '\0');
        for (;;) {
          auto r = p.Read(buf.data(), buf.size());
          ASSERT_TRUE(r.ok()) << r.status() << " threads " << threads << " chunk " << chunk;
          if (*r == 0) break;
          out.append(buf.data(), *r);
        }
        ASSERT_TRUE(out == text) << "strategy " << strategy << " threads " << threads << " chunk " << chunk;
        if (threads > 1 && chunk > 60000) EXPECT_GT(p.guessed_kept(), 0) << threads;
      }
    }
  }
}

}  // namespace
}  // namespace overlapscope::import
