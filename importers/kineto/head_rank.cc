// The rank a Kineto file records, read from its head, and the rank order of input files (see
// import.h: RankFromTraceHead, SortTracesByRank).
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "importers/kineto/import.h"
#include "importers/kineto/input_stream.h"
#include "importers/kineto/json_scan.h"

namespace overlapscope::import {
namespace {

using scan::Scan;

// Kineto writes distributedInfo after a few small members and deviceProperties (a few hundred
// bytes per GPU), always before traceEvents: 64 KiB of inflated JSON hold it.
constexpr size_t kHeadBytes = size_t{64} << 10;

// The first kHeadBytes of the (inflated) file, followed by kPad NUL bytes (json_scan's buffer
// contract); "" when it cannot be read.
std::string ReadHead(const std::string& path, size_t* got) {
  *got = 0;
  auto in = InputStream::Open(path);
  if (!in.ok()) return "";
  std::string head(kHeadBytes + scan::kPad, '\0');
  while (*got < kHeadBytes) {
    auto r = (*in)->Read(head.data() + *got, kHeadBytes - *got);
    if (!r.ok() || *r == 0) break;
    *got += *r;
  }
  return head;
}

// The value of the first member of the object whose '{' is at p that `want(key)` accepts (that
// key in *key, which may point into *scratch), or nullptr: no such member, malformed, or cut by
// the end of the head.
template <typename Want>
const char* FindMember(const char* p, const char* end, Want want, std::string* scratch, std::string_view* key) {
  if (*p != '{') return nullptr;
  int repaired = 0;
  const char* err = nullptr;
  const char* q = scan::SkipWs(p + 1);
  while (q < end && *q == '"') {
    if (scan::ParseString(q, end, &q, scratch, key, &repaired, &err) != Scan::kOk) return nullptr;
    q = scan::SkipWs(q);
    if (*q != ':') return nullptr;
    q = scan::SkipWs(q + 1);
    if (want(*key)) return q;
    if (scan::SkipValue(q, end, &q, &err) != Scan::kOk) return nullptr;
    q = scan::SkipWs(q);
    if (*q != ',') return nullptr;
    q = scan::SkipWs(q + 1);
  }
  return nullptr;
}

// distributedInfo's "rank" (the object at p), or -1: absent, not a non-negative integer, or
// cut by the end of the head.
int32_t RankOfObject(const char* p, const char* end) {
  std::string scratch;
  std::string_view key;
  const char* q = FindMember(
      p, end, [](std::string_view k) { return k == "rank"; }, &scratch, &key);
  if (q == nullptr) return -1;
  int64_t v = 0;
  scan::NumKind kind;
  const char* err = nullptr;
  if (scan::ParseInt(q, end, &q, &v, &kind, &err) != Scan::kOk || kind != scan::NumKind::kOk) return -1;
  return v >= 0 && v <= INT32_MAX ? static_cast<int32_t>(v) : -1;
}

}  // namespace

int32_t RankFromTraceHead(const std::string& path) {
  size_t got = 0;
  const std::string head = ReadHead(path, &got);
  if (got == 0) return -1;
  const char* end = head.data() + got;
  const char* q = head.data();
  if (got >= 3 && std::memcmp(q, "\xEF\xBB\xBF", 3) == 0) q += 3;
  q = scan::SkipWs(q);
  // Top-level members up to traceEvents (after it nothing is read: it is the bulk of the file); a
  // bare array of events (old Kineto) records no rank.
  std::string scratch;
  std::string_view key;
  q = FindMember(
      q, end, [](std::string_view k) { return k == "traceEvents" || k == "distributedInfo"; }, &scratch, &key);
  return q != nullptr && key == "distributedInfo" ? RankOfObject(q, end) : -1;
}

int32_t RankOfTraceFile(const std::string& path) {
  const int32_t r = RankFromTraceHead(path);
  return r >= 0 ? r : RankFromFileName(path);
}

std::vector<size_t> RankOrder(const std::vector<std::string>& files, bool read_heads) {
  std::vector<int64_t> key(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const int32_t r = read_heads ? RankOfTraceFile(files[i]) : RankFromFileName(files[i]);
    key[i] = r >= 0 ? r : int64_t{INT32_MAX} + 1;  // files without a rank after the ranked ones
  }
  std::vector<size_t> order(files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
  return order;
}

}  // namespace overlapscope::import
