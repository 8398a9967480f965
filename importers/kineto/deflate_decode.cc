// Raw deflate decoding from any bit offset (see deflate_decode.h). Written from RFC 1951; the
// validity rules for codes follow what zlib accepts, so that both refuse the same streams.
#include "importers/kineto/deflate_decode.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace overlapscope::import::deflate {
namespace {

constexpr uint8_t kCodeOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

absl::Status Corrupt(const char* why) { return absl::DataLossError(why); }
absl::Status Truncated() { return absl::DataLossError("truncated gzip stream"); }

template <typename Sym>
absl::Status DecodeStored(BitReader& br, OutBuf<Sym>& out) {
  br.Drop(br.bits & 7);  // to the byte boundary
  br.Refill();
  const uint32_t len = br.Take(16), nlen = br.Take(16);
  if (br.Overrun()) return Truncated();
  if (len != (~nlen & 0xffff)) return Corrupt("invalid stored block lengths");
  const uint64_t at = br.BitPos() / 8;
  if (at + len > br.size) return Truncated();
  if (out.n + len > out.limit) return absl::ResourceExhaustedError("inflates past the chunk limit");
  out.Reserve(out.n + len);
  for (uint32_t i = 0; i < len; ++i) out.p[out.n + i] = br.data[at + i];
  out.n += len;
  br.Seek((at + len) * 8);
  return absl::OkStatus();
}

constexpr int kRoot = HuffTable::kRootBits;
constexpr uint64_t kRootMask = (uint64_t{1} << kRoot) - 1;

// The entry for the code that starts at the bottom of `buf`: the root's, or its subtable's.
inline uint32_t Lookup(const uint32_t* table, uint64_t buf) {
  uint32_t e = table[buf & kRootMask];
  if (e & HuffTable::kLink) e = table[(e >> 16) + ((buf >> kRoot) & ((1u << ((e >> 8) & 15)) - 1))];
  return e;
}

// A length's or distance's value: its base plus its extra bits (after the code's own bits).
inline uint32_t Value(uint32_t e, uint64_t buf) {
  const uint32_t used = e & 31;
  return (e >> 16) + (static_cast<uint32_t>(buf & ((uint64_t{1} << used) - 1)) >> ((e >> 8) & 15));
}

// Writes a literal entry's one or two bytes at o[n] (the second slot is written either way:
// the caller keeps room) and advances n.
template <typename Sym>
inline void EmitLiterals(uint32_t e, Sym* o, size_t& n) {
  // One store of both slots: bytes 2-3 of e, widened to 16-bit symbols where Sym is.
  if constexpr (sizeof(Sym) == 1) {
    const uint16_t v = static_cast<uint16_t>(e >> 16);
    std::memcpy(o + n, &v, 2);
  } else {
    const uint32_t v = ((e >> 16) & 0xff) | ((e >> 24) << 16);
    std::memcpy(o + n, &v, 4);
  }
  n += 1 + ((e >> 13) & 1);
}

template <typename Sym>
absl::Status DecodeHuffman(BitReader& reader, const BlockTables& t, OutBuf<Sym>& out) {
  constexpr size_t kSlack = 258 + 64;  // six literals or a longest match, and the copy's overshoot
  constexpr uint32_t kStep = 8 / sizeof(Sym);
  // A local copy: stores through a byte pointer could alias the reader, which the compiler
  // would then reload from memory after every byte written.
  BitReader br = reader;
  const uint32_t* lit = t.lit.entry;
  const uint32_t* dist = t.dist.entry;
  size_t n = out.n;
  Sym* o = out.p.get();
  for (;;) {
    if (out.cap - n < kSlack) {
      if (n + kSlack > out.limit) return absl::ResourceExhaustedError("inflates past the chunk limit");
      out.n = n;
      out.Reserve(n + kSlack);
      o = out.p.get();
    }
    br.Refill();  // 56 bits: three root entries (33), or a length with its distance (48)
    if (br.pos > br.size && br.Overrun()) {
      out.n = n;  // what was decoded up to the end: where the data broke (gzip_parallel.h error_pos)
      return Truncated();
    }
    uint32_t e = lit[br.buf & kRootMask];
    if (e & HuffTable::kLiteral) {  // up to three root entries of one or two literals each
      br.Drop(static_cast<int>(e & 31));
      EmitLiterals(e, o, n);
      e = lit[br.buf & kRootMask];
      if (e & HuffTable::kLiteral) {
        br.Drop(static_cast<int>(e & 31));
        EmitLiterals(e, o, n);
        e = lit[br.buf & kRootMask];
        if (e & HuffTable::kLiteral) {
          br.Drop(static_cast<int>(e & 31));
          EmitLiterals(e, o, n);
          continue;
        }
      }
    }
    if (br.bits < 48) br.Refill();  // a length code, extra, distance code, extra
    if (e & HuffTable::kLink) e = Lookup(lit, br.buf);
    const int used = static_cast<int>(e & 31);
    if (used == 0) return Corrupt("invalid literal/length code");
    if (e & HuffTable::kLiteral) {  // a code longer than the root's
      br.Drop(used);
      EmitLiterals(e, o, n);
      continue;
    }
    if (e & HuffTable::kEnd) {
      br.Drop(used);
      break;
    }
    const uint32_t len = Value(e, br.buf);
    br.Drop(used);
    e = Lookup(dist, br.buf);
    if ((e & 31) == 0) return Corrupt("invalid distance code");
    const uint32_t d = Value(e, br.buf);
    br.Drop(static_cast<int>(e & 31));
    if (d > n) return Corrupt("invalid distance too far back");
    const Sym* s = o + n - d;
    Sym* dst = o + n;
    if (d >= 4 * kStep) {  // 32-byte steps never read what this step writes
      for (uint32_t i = 0; i < len; i += 4 * kStep) std::memcpy(dst + i, s + i, 32);
    } else if (d >= kStep) {  // nor do 8-byte steps here
      for (uint32_t i = 0; i < len; i += kStep) std::memcpy(dst + i, s + i, 8);
    } else {
      for (uint32_t i = 0; i < len; ++i) dst[i] = s[i];
    }
    n += len;
  }
  out.n = n;
  reader = br;
  if (br.Overrun()) return Truncated();
  return absl::OkStatus();
}

}  // namespace

void BitReader::Seek(uint64_t bit) {
  pos = static_cast<size_t>(bit / 8);
  buf = 0;
  bits = 0;
  Refill();
  Drop(static_cast<int>(bit % 8));
}

void BitReader::RefillSlow() {
  while (bits < 56) {
    const uint64_t b = pos < size ? data[pos] : 0;
    buf |= b << bits;
    ++pos;
    bits += 8;
  }
}

absl::Status ReadDynamicTables(BitReader& br, BlockTables* t) {
  br.Refill();
  const int nlen = static_cast<int>(br.Take(5)) + 257, ndist = static_cast<int>(br.Take(5)) + 1;
  const int ncode = static_cast<int>(br.Take(4)) + 4;
  if (nlen > 286 || ndist > 30) return Corrupt("too many length or distance symbols");
  uint8_t cl[19] = {0};
  for (int i = 0; i < ncode; ++i) {
    if (i == 10) br.Refill();
    cl[kCodeOrder[i]] = static_cast<uint8_t>(br.Take(3));
  }
  HuffTable& ct = t->dist;  // scratch until the distance code is built
  if (!BuildTable(cl, 19, CodeKind::kCodeLengths, &ct)) return Corrupt("invalid code lengths set");
  uint8_t lens[286 + 30];
  const int total = nlen + ndist;
  for (int i = 0; i < total;) {
    br.Refill();
    if (br.pos > br.size && br.Overrun()) return Truncated();
    const uint32_t e = ct.entry[br.buf & kRootMask];  // codes of at most 7 bits: root only
    const int l = static_cast<int>(e & 31);
    if (l == 0) return Corrupt("invalid code lengths set");
    br.Drop(l);
    const uint32_t sym = e >> 16;
    if (sym < 16) {
      lens[i++] = static_cast<uint8_t>(sym);
      continue;
    }
    uint8_t v = 0;
    int rep;
    if (sym == 16) {
      if (i == 0) return Corrupt("invalid bit length repeat");
      v = lens[i - 1];
      rep = 3 + static_cast<int>(br.Take(2));
    } else if (sym == 17) {
      rep = 3 + static_cast<int>(br.Take(3));
    } else {
      rep = 11 + static_cast<int>(br.Take(7));
    }
    if (i + rep > total) return Corrupt("invalid bit length repeat");
    std::memset(lens + i, v, static_cast<size_t>(rep));
    i += rep;
  }
  if (br.Overrun()) return Truncated();
  if (lens[256] == 0) return Corrupt("invalid code -- missing end-of-block");
  if (!BuildTable(lens, nlen, CodeKind::kLiterals, &t->lit)) return Corrupt("invalid literal/lengths set");
  if (!BuildTable(lens + nlen, ndist, CodeKind::kDistances, &t->dist)) return Corrupt("invalid distances set");
  return absl::OkStatus();
}

template <typename Sym>
void OutBuf<Sym>::Reserve(size_t want) {
  if (want <= cap) return;
  const size_t grown = std::max(want, cap + cap / 2 + 4096);
  std::unique_ptr<Sym[]> q(new Sym[grown]);
  if (n > 0) std::memcpy(q.get(), p.get(), n * sizeof(Sym));
  p = std::move(q);
  cap = grown;
}

template <typename Sym>
absl::Status DecodeBlocks(BitReader& br, uint64_t stop_bit, bool check_markers, OutBuf<Sym>& out, BlockTables& t,
                          Stop* why) {
  // Index of the last marker in out (wide output only): once the last 32 KiB are free of
  // markers, the rest of the chunk can be decoded into bytes.
  size_t checked = out.n > kWindow ? out.n - kWindow : 0, last_marker = 0;
  bool any_marker = false;
  for (;;) {
    if constexpr (std::is_same_v<Sym, uint16_t>) {
      if (check_markers) {
        // The newest marker only: scan back from the end (markers are usually close to it).
        const size_t low = std::max(checked, out.n > kWindow ? out.n - kWindow : 0);
        for (size_t i = out.n; i > low; --i) {
          if (out.p[i - 1] >= kMarker) {
            last_marker = i - 1, any_marker = true;
            break;
          }
        }
        checked = out.n;
        if (!any_marker || out.n - last_marker > kWindow) {
          *why = Stop::kMarkerFree;
          return absl::OkStatus();
        }
      }
    }
    if (br.BitPos() >= stop_bit) {
      *why = Stop::kReachedStop;
      return absl::OkStatus();
    }
    br.Refill();
    const bool final = br.Take(1) != 0;
    const uint32_t type = br.Take(2);
    if (br.Overrun()) return Truncated();
    absl::Status s;
    if (type == 0) {
      s = DecodeStored(br, out);
    } else if (type == 1) {
      s = DecodeHuffman(br, FixedTables(), out);
    } else if (type == 2) {
      s = ReadDynamicTables(br, &t);
      if (s.ok()) s = DecodeHuffman(br, t, out);
    } else {
      s = Corrupt("invalid block type");
    }
    if (!s.ok()) return s;
    ++t.blocks;
    if (final) {
      *why = Stop::kFinalBlock;
      return absl::OkStatus();
    }
  }
}

template struct OutBuf<uint8_t>;
template struct OutBuf<uint16_t>;
template absl::Status DecodeBlocks<uint8_t>(BitReader&, uint64_t, bool, OutBuf<uint8_t>&, BlockTables&, Stop*);
template absl::Status DecodeBlocks<uint16_t>(BitReader&, uint64_t, bool, OutBuf<uint16_t>&, BlockTables&, Stop*);

}  // namespace overlapscope::import::deflate
