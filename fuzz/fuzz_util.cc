#include "fuzz/fuzz_util.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace overlapscope::fuzz {

MemFile::MemFile(std::string_view bytes) {
  fd_ = ::memfd_create("overlapscope-fuzz", MFD_CLOEXEC);
  if (fd_ < 0) Fail("memfd_create failed", "");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n <= 0) Fail("write to memfd failed", "");
    done += static_cast<size_t>(n);
  }
  path_ = absl::StrCat("/proc/self/fd/", fd_);
}

MemFile::~MemFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<std::string_view> SplitFiles(std::string_view data) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < kMaxFiles) {
    const size_t at = data.find(kFileSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(data.substr(0, at));
    data.remove_prefix(at + kFileSeparator.size());
  }
  parts.push_back(data);
  return parts;
}

void Fail(const char* what, absl::string_view detail) {
  std::fprintf(stderr, "FUZZ CHECK FAILED: %s\n%.*s\n", what,
               static_cast<int>(detail.size() > 4000 ? 4000 : detail.size()), detail.data());
  std::abort();
}

std::string GzipMember(std::string_view in, int level, int strategy) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, strategy) != Z_OK) Fail("deflateInit2", "");
  std::string out(deflateBound(&z, in.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) Fail("deflate", "");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void CheckImportError(const absl::Status& s, const std::string& path) {
  const absl::string_view m = s.message();
  // An exception that escaped a reader (caught at the module boundary) is a bug, not an answer.
  if (s.code() == absl::StatusCode::kInternal) Fail("import failed with an internal error", m);
  if (s.code() == absl::StatusCode::kResourceExhausted) return;  // out of memory: said so
  if (m.substr(0, path.size()) != path || m.substr(path.size(), 2) != ": ")
    Fail("import error does not start with the file's path", m);
}

namespace {

template <typename Events>
void CheckSpans(const model::Trace& t, const Events& v, const char* what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].end_ns < v[i].start_ns) Fail("event ends before it starts", absl::StrCat(what, "[", i, "]"));
    if (v[i].start_ns < t.start_ns() || v[i].end_ns > t.end_ns())
      Fail("event outside the trace's [start_ns, end_ns]", absl::StrCat(what, "[", i, "]"));
    if (i > 0 && v[i].start_ns < v[i - 1].start_ns) Fail("events not sorted by start", absl::StrCat(what, "[", i, "]"));
  }
}

template <typename Events>
void CheckGpuIds(const model::Trace& t, const Events& v, const char* what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].device < 0 || static_cast<size_t>(v[i].device) >= t.devices().size() || v[i].stream < 0 ||
        static_cast<size_t>(v[i].stream) >= t.streams().size() || t.DeviceOfStream(v[i].stream) != v[i].device)
      Fail("GPU event with a device/stream id out of range", absl::StrCat(what, "[", i, "]"));
  }
}

}  // namespace

void CheckTrace(const model::Trace& t) {
  if (t.end_ns() < t.start_ns()) Fail("trace ends before it starts", "");
  CheckSpans(t, t.kernels(), "kernels");
  CheckSpans(t, t.memcpys(), "memcpys");
  CheckSpans(t, t.memsets(), "memsets");
  CheckSpans(t, t.api_calls(), "api_calls");
  CheckSpans(t, t.syncs(), "syncs");
  CheckSpans(t, t.ranges(), "ranges");
  CheckSpans(t, t.gpu_ranges(), "gpu_ranges");
  CheckGpuIds(t, t.kernels(), "kernels");
  CheckGpuIds(t, t.memcpys(), "memcpys");
  CheckGpuIds(t, t.memsets(), "memsets");
  for (size_t i = 0; i < t.api_calls().size(); ++i)
    if (t.api_calls()[i].thread < 0 || static_cast<size_t>(t.api_calls()[i].thread) >= t.threads().size())
      Fail("API call with a thread id out of range", absl::StrCat("api_calls[", i, "]"));
  for (const model::Collective& c : t.collectives())
    if (c.end_ns < c.start_ns) Fail("collective ends before it starts", "");
  // Import statistics add up (importers/kineto/import.h): nothing is dropped uncounted.
  for (const model::SourceStats& s : t.sources()) {
    if (s.format.rfind("kineto-json", 0) != 0) continue;
    if (s.events_read != s.events_kept + s.skipped() + s.ignored())
      Fail("kineto import statistics do not add up",
           absl::StrFormat("%s: read %d != kept %d + skipped %d + ignored %d", s.path, s.events_read, s.events_kept,
                           s.skipped(), s.ignored()));
  }
}

namespace {

// Everything the parse decides, by native ids and names (so that the order in which the merge
// met streams, threads and strings does not matter, only what was read).
// Debian's Abseil has its own string_view.
absl::string_view Av(std::string_view v) { return absl::string_view(v.data(), v.size()); }

std::string ImportSignature(const model::Trace& t) {
  std::string s;
  auto stream = [&](model::StreamId id) {
    if (id < 0) return std::string("-");
    const model::Stream& st = t.streams()[id];
    return absl::StrCat(t.devices()[st.device].ordinal, "/", st.native_id);
  };
  auto thread = [&](model::ThreadId id) { return id < 0 ? std::string("-") : absl::StrCat(t.threads()[id].tid); };
  for (const auto& k : t.kernels())
    absl::StrAppend(&s, "K", k.start_ns, ",", k.end_ns, ",", stream(k.stream), ",", Av(t.str(k.name)), "\n");
  for (const auto& m : t.memcpys()) absl::StrAppend(&s, "C", m.start_ns, ",", m.end_ns, ",", stream(m.stream), "\n");
  for (const auto& m : t.memsets()) absl::StrAppend(&s, "S", m.start_ns, ",", m.end_ns, ",", stream(m.stream), "\n");
  for (const auto& a : t.api_calls())
    absl::StrAppend(&s, "A", a.start_ns, ",", a.end_ns, ",", thread(a.thread), ",", a.correlation_id, ",",
                    Av(t.str(a.name)), "\n");
  for (const auto& y : t.syncs()) absl::StrAppend(&s, "Y", y.start_ns, ",", y.end_ns, ",", thread(y.thread), "\n");
  for (const auto& r : t.ranges())
    absl::StrAppend(&s, "R", r.start_ns, ",", r.end_ns, ",", thread(r.thread), ",", Av(t.str(r.name)), "\n");
  for (const auto& g : t.gpu_ranges()) absl::StrAppend(&s, "G", g.start_ns, ",", g.end_ns, ",", stream(g.stream), "\n");
  for (const auto& c : t.collectives()) absl::StrAppend(&s, "L", c.start_ns, ",", c.end_ns, ",", Av(t.str(c.op)), "\n");
  for (const auto& src : t.sources()) {
    absl::StrAppend(&s, "Src", src.events_read, ",", src.events_kept, ",", src.skipped(), "\n");
    for (size_t i = 0; i < src.counts.size(); ++i) absl::StrAppend(&s, " n", i, "=", src.counts[i]);
    for (const auto& [k, v] : src.details) absl::StrAppend(&s, " d", static_cast<int>(k.first), k.second, "=", v, "\n");
    for (const std::string& e : src.examples) absl::StrAppend(&s, " ex ", e, "\n");
  }
  return s;
}

}  // namespace

void CheckSameImport(const absl::StatusOr<model::Trace>& one, const absl::StatusOr<model::Trace>& many) {
  if (one.ok() != many.ok())
    Fail("one parser thread and several disagree on accepting the input",
         one.ok() ? many.status().message() : one.status().message());
  if (!one.ok()) {
    if (one.status().message() != many.status().message())
      Fail("one parser thread and several refuse the input differently",
           absl::StrCat(one.status().message(), " | ", many.status().message()));
    return;
  }
  if (ImportSignature(*one) != ImportSignature(*many)) Fail("one parser thread and several read different traces", "");
}

}  // namespace overlapscope::fuzz
