// gen_kineto_trace IN.json[.gz] OUT.json[.gz] [--mb N] [--level L]
//
// Makes a large Kineto trace for import_bench by tiling a real one in time: the event text of
// IN is copied tile after tile (metadata "ph":"M" events only once), each tile shifted by the
// trace's span (ts) and by the largest id (correlation, External id, ac2g flow id,
// wait_on_cuda_event_record_corr_id), so ids stay unique and consistent across tiles. The text
// keeps Kineto's own layout; only those numbers are rewritten (ts exactly, in integer ns).
// Stops after the first tile that reaches N MB (10^6 bytes) of output (default 500). An output
// name ending in .gz is written with zlib at level L (default 6). Write it to /tmp; never commit.
#include <zlib.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "importers/kineto/json_scan.h"

namespace scan = overlapscope::import::scan;

namespace {

bool ReadAll(const std::string& path, std::string* out) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files too
  if (f == nullptr) return false;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  gzclose(f);
  return n == 0;
}

// Keys whose integer values are ids shifted per tile; "ts" is shifted in time.
constexpr std::string_view kIdKeys[] = {
    "\"correlation\": ", "\"External id\": ", "\"id\": ", "\"wait_on_cuda_event_record_corr_id\": "};

struct Out {
  FILE* plain = nullptr;
  gzFile gz = nullptr;
  int64_t bytes = 0;
  void Write(std::string_view s) {
    if (gz)
      gzwrite(gz, s.data(), static_cast<unsigned>(s.size()));
    else
      fwrite(s.data(), 1, s.size(), plain);
    bytes += static_cast<int64_t>(s.size());
  }
};

// Copies one event, rewriting ts (+shift_ns) and ids (+id_shift, when >= 0).
void WriteEvent(std::string_view ev, int64_t shift_ns, int64_t id_shift, std::string& tmp, Out& out) {
  tmp.clear();
  size_t i = 0;
  while (i < ev.size()) {
    size_t best = std::string_view::npos, klen = 0;
    bool is_ts = false;
    auto consider = [&](std::string_view key, bool ts) {
      size_t at = ev.find(key, i);
      if (at < best) best = at, klen = key.size(), is_ts = ts;
    };
    consider("\"ts\": ", true);
    for (auto k : kIdKeys) consider(k, false);
    if (best == std::string_view::npos) break;
    size_t v = best + klen;
    tmp.append(ev.substr(i, v - i));
    const char* after = nullptr;
    const char* err = nullptr;
    int64_t x = 0;
    scan::NumKind kind;
    scan::Scan s = is_ts ? scan::ParseMicrosAsNs(ev.data() + v, ev.data() + ev.size(), &after, &x, &kind, &err)
                         : scan::ParseInt(ev.data() + v, ev.data() + ev.size(), &after, &x, &kind, &err);
    if (s != scan::Scan::kOk || kind != scan::NumKind::kOk) {
      i = v;
      continue;
    }
    char num[64];
    if (is_ts) {
      int64_t t = x + shift_ns;
      std::snprintf(num, sizeof num, "%" PRId64 ".%03" PRId64, t / 1000, t % 1000);
    } else {
      std::snprintf(num, sizeof num, "%" PRId64, x >= 0 ? x + id_shift : x);
    }
    tmp.append(num);
    i = static_cast<size_t>(after - ev.data());
  }
  tmp.append(ev.substr(std::min(i, ev.size())));
  out.Write(tmp);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gen_kineto_trace IN.json[.gz] OUT.json[.gz] [--mb N] [--level L]\n");
    return 64;
  }
  std::string in_path = argv[1], out_path = argv[2];
  int64_t target = 500'000'000;
  int level = 6;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--mb") == 0) target = std::atoll(argv[i + 1]) * 1'000'000;
    if (std::strcmp(argv[i], "--level") == 0) level = std::atoi(argv[i + 1]);
  }
  std::string text;
  if (!ReadAll(in_path, &text)) {
    std::fprintf(stderr, "cannot read %s\n", in_path.c_str());
    return 2;
  }
  text.append(scan::kPad, '\0');  // the scanner's sentinel contract
  const char* base = text.data();
  const char* end = base + text.size() - scan::kPad;
  size_t key = text.find("\"traceEvents\"");
  size_t open = key == std::string::npos ? key : text.find('[', key);
  if (open == std::string::npos) {
    std::fprintf(stderr, "%s: no traceEvents array\n", in_path.c_str());
    return 2;
  }
  // Event texts, with the separators between them.
  std::vector<std::string_view> events, meta;
  const char* p = base + open + 1;
  int64_t lo = INT64_MAX, hi = INT64_MIN, max_id = 0;
  for (;;) {
    p = scan::SkipWs(p);
    if (*p == ',') {
      ++p;
      continue;
    }
    if (*p != '{') break;
    const char* after = nullptr;
    const char* err = nullptr;
    if (scan::SkipValue(p, end, &after, &err) != scan::Scan::kOk) {
      std::fprintf(stderr, "%s: malformed event at offset %td\n", in_path.c_str(), p - base);
      return 2;
    }
    std::string_view ev(p, static_cast<size_t>(after - p));
    bool is_meta = ev.find("\"ph\": \"M\"") != std::string_view::npos;
    (is_meta ? meta : events).push_back(ev);
    if (!is_meta) {
      size_t t = ev.find("\"ts\": "), d = ev.find("\"dur\": ");
      int64_t ts = 0, dur = 0;
      scan::NumKind k;
      if (t != std::string_view::npos &&
          scan::ParseMicrosAsNs(ev.data() + t + 6, end, &after, &ts, &k, &err) == scan::Scan::kOk &&
          k == scan::NumKind::kOk) {
        if (d != std::string_view::npos) scan::ParseMicrosAsNs(ev.data() + d + 7, end, &after, &dur, &k, &err);
        lo = std::min(lo, ts);
        hi = std::max(hi, ts + std::max<int64_t>(dur, 0));
      }
      for (auto key_text : kIdKeys) {
        size_t at = ev.find(key_text);
        int64_t id = 0;
        if (at != std::string_view::npos &&
            scan::ParseInt(ev.data() + at + key_text.size(), end, &after, &id, &k, &err) == scan::Scan::kOk &&
            k == scan::NumKind::kOk)
          max_id = std::max(max_id, id);
      }
    }
    p += ev.size();
  }
  if (*p != ']' || events.empty()) {
    std::fprintf(stderr, "%s: unexpected traceEvents layout at offset %td\n", in_path.c_str(), p - base);
    return 2;
  }
  std::string_view header(base, open + 1), footer(p, static_cast<size_t>(end - p));
  const int64_t span = (hi - lo) + 1000;  // 1 us gap between tiles
  const int64_t id_span = max_id + 1;

  Out out;
  bool gz = out_path.size() > 3 && out_path.compare(out_path.size() - 3, 3, ".gz") == 0;
  if (gz)
    out.gz = gzopen(out_path.c_str(), ("wb" + std::to_string(level)).c_str());
  else
    out.plain = std::fopen(out_path.c_str(), "wb");
  if (out.gz == nullptr && out.plain == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
    return 2;
  }
  out.Write(header);
  std::string tmp;
  bool first = true;
  for (std::string_view m : meta) {
    out.Write(first ? "\n  " : ",\n  ");
    out.Write(m);
    first = false;
  }
  int64_t tiles = 0, n = 0;
  while (out.bytes < target) {
    for (std::string_view ev : events) {
      out.Write(first ? "\n  " : ",\n  ");
      first = false;
      WriteEvent(ev, tiles * span, tiles * id_span, tmp, out);
      ++n;
    }
    ++tiles;
  }
  out.Write("\n  ");
  out.Write(footer);
  if (gz)
    gzclose(out.gz);
  else
    std::fclose(out.plain);
  std::printf("%s: %" PRId64 " tiles, %" PRId64 " events (+%zu metadata), %.1f MB uncompressed\n", out_path.c_str(),
              tiles, n, meta.size(), out.bytes / 1e6);
  return 0;
}
