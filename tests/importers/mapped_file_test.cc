// Plain .json read through a map (importers/kineto/mapped_file.h): the same traces and errors as
// pread, and a file cut while mapped is an error naming the file, never a crash or zeros.
#include "importers/kineto/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "importers/import_any.h"
#include "importers/kineto/import.h"
#include "importers/kineto/input_stream.h"
#include "test_util.h"

#if defined(__SANITIZE_THREAD__)
#define OVS_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OVS_TEST_UNDER_TSAN 1
#endif
#endif

namespace overlapscope::import {
namespace {

using testing::DataPath;
using testing::Dump;
using testing::ImportOne;
using testing::WriteTemp;

// Runs f with plain files read by pread(2) (OVERLAPSCOPE_READ=pread), then restores mapping.
template <typename F>
auto WithPread(F f) {
  setenv("OVERLAPSCOPE_READ", "pread", 1);
  auto r = f();
  unsetenv("OVERLAPSCOPE_READ");
  return r;
}

std::string Bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
  return s;
}

TEST(MappedFile, MapsTheFileThenZeros) {
  ASSERT_TRUE(EnableMappedReads());
  for (size_t n : {size_t{1}, size_t{4095}, size_t{4096}, size_t{8192}, size_t{10000}}) {
    const std::string text = Bytes(n);
    const std::string path = WriteTemp("mapped_" + std::to_string(n), text);
    const int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    {
      auto m = MappedFile::Map(fd, static_cast<int64_t>(n), 64);
      ASSERT_NE(m, nullptr);
      EXPECT_EQ(std::string(m->data(), n), text);
      for (size_t i = 0; i < 64; ++i) EXPECT_EQ(m->data()[n + i], '\0') << n << " " << i;
      m->data()[n] = 'x';  // the pad is writable, and so is the file's copy
      m->data()[0] = 'y';
      EXPECT_TRUE(m->Changed(path).ok());
      EXPECT_EQ(m->Release(0, static_cast<int64_t>(n)), static_cast<int64_t>(n / 4096 * 4096));
      if (n >= 4096) EXPECT_EQ(m->data()[0], 'a');  // a released page is the file's again
    }
    EXPECT_EQ(testing::ReadFileText(path), text);  // the file never changes
    ::close(fd);
  }
}

TEST(MappedFile, ThePlainStreamMapsOnlyWhenAskedAndAllowed) {
  ASSERT_TRUE(EnableMappedReads());
  const std::string text = testing::ReadFileText(DataPath("kineto/ag_overlap/rank0.json"));
  const std::string path = DataPath("kineto/ag_overlap/rank0.json");
  auto mapped = InputStream::Open(path, 1, /*may_map=*/true);
  ASSERT_TRUE(mapped.ok());
  ASSERT_NE((*mapped)->mapped(), nullptr);
  EXPECT_EQ(std::string((*mapped)->mapped()->data(), text.size()), text);
  // Read() copies from the map: the same bytes.
  std::string got(text.size() + 10, '\0');
  size_t n = 0;
  for (;;) {
    auto r = (*mapped)->Read(got.data() + n, 1000);
    ASSERT_TRUE(r.ok());
    if (*r == 0) break;
    n += *r;
  }
  EXPECT_EQ(got.substr(0, n), text);
  auto unasked = InputStream::Open(path, 1);
  EXPECT_EQ((*unasked)->mapped(), nullptr);
  auto off = WithPread([&] { return InputStream::Open(path, 1, true); });
  EXPECT_EQ((*off)->mapped(), nullptr);
  auto gz = InputStream::Open(path + ".gz", 1, true);
  EXPECT_EQ((*gz)->mapped(), nullptr);
}

TEST(MappedFile, CutWhileMappedReadsZerosAndSaysSo) {
  ASSERT_TRUE(EnableMappedReads());
  const size_t n = size_t{1} << 20;
  const std::string path = WriteTemp("mapped_cut", Bytes(n));
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto m = MappedFile::Map(fd, static_cast<int64_t>(n), 64);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->data()[700000], 'a' + 700000 % 26);
  ASSERT_EQ(::truncate(path.c_str(), 100000), 0);
  // Past the new end: the page faults (SIGBUS), the handler maps zeros, the read goes on.
  EXPECT_EQ(m->data()[600000], '\0');
  EXPECT_EQ(m->data()[900001], '\0');
  const absl::Status s = m->Changed(path);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(s.message(),
            path + ": offset 100000: the file changed size while read (1048576 bytes when opened, 100000 now)");
  ::close(fd);
}

TEST(MappedFile, CutInsideTheLastPageIsSeenToo) {
  // A cut inside a page reads zeros after the new end without a fault: fstat tells it.
  ASSERT_TRUE(EnableMappedReads());
  const std::string path = WriteTemp("mapped_cut_page", Bytes(10000));
  const int fd = ::open(path.c_str(), O_RDONLY);
  auto m = MappedFile::Map(fd, 10000, 64);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(::truncate(path.c_str(), 9000), 0);
  EXPECT_EQ(m->data()[9500], '\0');
  EXPECT_NE(m->Changed(path).message().find("offset 9000: the file changed size while read"), std::string::npos);
  ::close(fd);
}

// Killed by the fault: SIGBUS (its default action), or SIGABRT where a sanitizer's handler came
// before ours and reports it (ThreadSanitizer exits 66 instead). Never a plain exit: the fault
// was not swallowed.
bool KilledByTheFault(int status) {
  if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT)) return true;
#if defined(OVS_TEST_UNDER_TSAN)
  // ThreadSanitizer's own SIGBUS handler: it reports the fault and exits with its exitcode, 66.
  return WIFEXITED(status) && WEXITSTATUS(status) == 66;
#else
  return false;
#endif
}

TEST(MappedFileDeathTest, OtherBusErrorsStillKill) {
  // A SIGBUS outside the importer's maps (here a map of the test's own, cut) goes to the handler
  // installed before (the default action: death by SIGBUS).
  EXPECT_EXIT(
      {
        EnableMappedReads();
        const std::string path = WriteTemp("mapped_other", Bytes(1 << 16));
        const int fd = ::open(path.c_str(), O_RDONLY);
        volatile char* p = static_cast<char*>(::mmap(nullptr, 1 << 16, PROT_READ, MAP_PRIVATE, fd, 0));
        (void)::truncate(path.c_str(), 0);
        std::_Exit(p[40000] == 'x' ? 3 : 4);
      },
      KilledByTheFault, "");
  EXPECT_EXIT(
      {
        EnableMappedReads();
        ::raise(SIGBUS);
        std::_Exit(5);
      },
      KilledByTheFault, "");
}

// A Kineto document of `events` kernels, several MB.
std::string BigDoc(int events) {
  std::vector<std::string> ev;
  for (int i = 0; i < events; ++i) {
    ev.push_back("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" + std::to_string(i % 50) +
                 "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(1000 + i * 10) +
                 ", \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(i + 1) +
                 "}}");
  }
  return testing::Doc(ev);
}

TEST(MappedImport, CutWhileImportedFailsNamingTheFile) {
  ASSERT_TRUE(EnableMappedReads());
  const std::string path = WriteTemp("mapped_import_cut.json", BigDoc(60000));
  // Each way of readying the next window beside the parse (StartMapPopulate), with each count.
  for (const auto& [threads, populate] :
       std::vector<std::pair<int, const char*>>{{1, "2"}, {2, "1"}, {4, "0"}, {1, "0"}, {2, "2"}, {4, "1"}}) {
    setenv("OVERLAPSCOPE_MAP_POPULATE", populate, 1);
    ASSERT_TRUE(ImportOne(path, threads, 1 << 16).ok());
    const std::string full = testing::ReadFileText(path);
    ImportOptions opt;
    opt.threads = threads;
    opt.chunk_bytes = 1 << 16;
    bool cut = false;
    opt.progress = [&](int64_t done, int64_t) {
      if (!cut && done > (1 << 20)) cut = ::truncate(path.c_str(), 1 << 20) == 0;  // mid-import
    };
    auto t = ImportTraces({path}, opt);
    ASSERT_TRUE(cut);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kAborted);
    EXPECT_NE(t.status().message().find(path + ": offset 1048576: the file changed size while read ("),
              std::string::npos)
        << t.status();
    WriteTemp("mapped_import_cut.json", full);
    unsetenv("OVERLAPSCOPE_MAP_POPULATE");
  }
}

TEST(MappedImport, CutWhileLoadedIsNotReadAgain) {
  // ImportInto reads a file refused on several threads again on one, for that reading's
  // message; a file that changed size keeps its own (the second reading would see another file).
  ASSERT_TRUE(EnableMappedReads());
  const std::string path = WriteTemp("mapped_load_cut.json", BigDoc(60000));
  ImportAnyOptions opt;
  opt.kineto.threads = 2;
  opt.kineto.chunk_bytes = 1 << 16;
  bool cut = false;
  opt.progress = [&](const ImportProgress& p) {
    if (!cut && p.done_bytes > (1 << 20)) cut = ::truncate(path.c_str(), 1 << 20) == 0;
  };
  model::TraceBuilder builder;
  auto in = ImportInto({path}, opt, builder);
  ASSERT_TRUE(cut);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().message(), path + ": offset 1048576: the file changed size while read (" +
                                       std::to_string(BigDoc(60000).size()) + " bytes when opened, 1048576 now)");
}

TEST(MappedImport, GzipCutWhileInflatedInParallelFails) {
  // The parallel inflate maps the compressed file: through a MappedFile where mapping is enabled.
  ASSERT_TRUE(EnableMappedReads());
  const std::string doc = BigDoc(60000);
  const std::string path = WriteTemp("mapped_cut.json.gz", doc, /*gz=*/true);
  auto in = InputStream::Open(path, 8);
  ASSERT_TRUE(in.ok());
  std::string buf(1 << 20, '\0');
  auto first = (*in)->Read(buf.data(), buf.size());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(buf.substr(0, 1000), doc.substr(0, 1000));
  ASSERT_EQ(::truncate(path.c_str(), 1000), 0);
  auto next = (*in)->Read(buf.data(), buf.size());
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.status().code(), absl::StatusCode::kAborted);
  EXPECT_NE(next.status().message().find(path + ": offset 1000: the file changed size while read ("), std::string::npos)
      << next.status();
}

TEST(MappedImport, SameTracesAndErrorsAsPread) {
  ASSERT_TRUE(EnableMappedReads());
  for (const char* sc : {"ag_overlap", "a2a_async", "d2h_blocking"}) {
    // The real traces as plain .json (some are stored gzip only).
    const std::string text = testing::ReadFileText(DataPath(std::string("kineto/") + sc + "/rank0.json.gz"));
    ASSERT_FALSE(text.empty());
    const std::string path = WriteTemp(std::string(sc) + ".json", text);
    for (int64_t chunk : {int64_t{0}, int64_t{777}, int64_t{4096}, int64_t{65536}}) {
      for (int threads : {1, 2, 3}) {
        auto read = WithPread([&] { return ImportOne(path, threads, chunk); });
        // The next window's pages populated beside the parse, and not (StartMapPopulate).
        for (const char* populate : {"1", "0"}) {
          setenv("OVERLAPSCOPE_MAP_POPULATE", populate, 1);
          auto mapped = ImportOne(path, threads, chunk);
          unsetenv("OVERLAPSCOPE_MAP_POPULATE");
          ASSERT_TRUE(mapped.ok() && read.ok()) << mapped.status() << read.status();
          EXPECT_EQ(Dump(*mapped), Dump(*read))
              << sc << " chunk " << chunk << " threads " << threads << " " << populate;
        }
      }
    }
    // Cut copies: the same error, offset and all (a cut at a page's end included).
    for (size_t cut : {size_t{1}, size_t{4096}, text.size() / 3, text.size() / 2 + 1, text.size() - 2}) {
      const std::string p = WriteTemp("mapped_short.json", text.substr(0, cut));
      for (int64_t chunk : {int64_t{0}, int64_t{4096}}) {
        setenv("OVERLAPSCOPE_MAP_POPULATE", chunk == 0 ? "1" : "0", 1);
        auto mapped = ImportOne(p, 2, chunk);
        unsetenv("OVERLAPSCOPE_MAP_POPULATE");
        auto read = WithPread([&] { return ImportOne(p, 2, chunk); });
        ASSERT_EQ(mapped.ok(), read.ok()) << sc << " cut " << cut;
        if (mapped.ok()) {
          EXPECT_EQ(Dump(*mapped), Dump(*read));
        } else {
          EXPECT_EQ(mapped.status(), read.status()) << sc << " cut " << cut;
        }
      }
    }
  }
}

TEST(MappedImport, LongValuesAsPread) {
  // A value longer than the room kept before a window (256 KiB) takes the window's slow path: a
  // mapped window then grows over it as a read one does; past 64 MiB both refuse it alike.
  ASSERT_TRUE(EnableMappedReads());
  std::vector<std::string> ev;
  for (int i = 0; i < 2000; ++i) {
    const std::string name = i % 500 == 7 ? std::string((size_t{1} << 20) + 13 * i, 'n') : "k" + std::to_string(i);
    ev.push_back("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + name +
                 "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(1000 + i * 10) +
                 ", \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(i + 1) +
                 "}}");
  }
  const std::string path = WriteTemp("mapped_long.json", testing::Doc(ev));
  for (int64_t chunk : {int64_t{4096}, int64_t{65536}, int64_t{0}}) {
    for (int threads : {1, 2}) {
      auto mapped = ImportOne(path, threads, chunk);
      auto read = WithPread([&] { return ImportOne(path, threads, chunk); });
      ASSERT_TRUE(mapped.ok() && read.ok()) << mapped.status() << read.status();
      EXPECT_EQ(Dump(*mapped), Dump(*read)) << "chunk " << chunk << " threads " << threads;
    }
  }
  const std::string big = WriteTemp(
      "mapped_huge.json", testing::Doc({"{\"ph\": \"X\", \"name\": \"" + std::string(size_t{65} << 20, 'b') + "\"}"}));
  auto mapped = ImportOne(big, 2, 1 << 20);
  auto read = WithPread([&] { return ImportOne(big, 2, 1 << 20); });
  ASSERT_FALSE(mapped.ok());
  EXPECT_EQ(mapped.status(), read.status());
  EXPECT_NE(mapped.status().message().find("larger than 64 MiB"), std::string::npos) << mapped.status();
  std::remove(big.c_str());
}

}  // namespace
}  // namespace overlapscope::import
