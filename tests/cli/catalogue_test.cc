// Runs every case of the bad-input catalogue (catalogue.h) through the real CLI.
#include "catalogue.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli_runner.h"
#include "gtest/gtest.h"
#include "zlib.h"

namespace overlapscope::testing {

void WriteFile(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string DataDir() { return OVERLAPSCOPE_TEST_DATA; }

std::string Gzip(const std::string& bytes) {
  z_stream z{};
  deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, bytes.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void WriteGzipBomb(const std::string& path, const std::string& prefix, char fill, int64_t repeat,
                   const std::string& suffix) {
  gzFile g = gzopen(path.c_str(), "wb1");
  gzwrite(g, prefix.data(), static_cast<unsigned>(prefix.size()));
  const std::string block(1 << 20, fill);
  for (int64_t left = repeat; left > 0; left -= static_cast<int64_t>(block.size()))
    gzwrite(g, block.data(), static_cast<unsigned>(std::min<int64_t>(left, static_cast<int64_t>(block.size()))));
  gzwrite(g, suffix.data(), static_cast<unsigned>(suffix.size()));
  gzclose(g);
}

std::string KinetoDoc(const std::string& events, const std::string& extra_top_level) {
  return "{\"schemaVersion\": 1, " + extra_top_level + "\"traceEvents\": [" + events + "]}";
}

std::string KernelEvent(const std::string& name_json, const std::string& ts, const std::string& dur) {
  return "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": " + name_json + ", \"pid\": 0, \"tid\": 7, \"ts\": " + ts +
         ", \"dur\": " + dur + ", \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 1}}";
}

namespace {

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

class Catalogue : public ::testing::TestWithParam<CatalogueCase> {};

}  // namespace

// gtest prints parameters of failed tests: the name, not the bytes of the struct.
void PrintTo(const CatalogueCase& c, std::ostream* os) { *os << c.name; }

namespace {

TEST_P(Catalogue, ExitCodeMessageAndBoundedMemory) {
  const CatalogueCase& c = GetParam();
  const std::string dir = ::testing::TempDir() + "/catalogue/" + c.name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<std::string> args = c.setup(dir);
  for (auto& a : args) a = Replace(a, "$DATA", DataDir());
  const int64_t mem = UnderSanitizer() ? 4 * c.max_rss_mb + 512 : c.max_rss_mb;
  const CliRun r = RunCliLimited(args, CliLimits{std::max<int64_t>(mem, 512) * 3, c.timeout_s});
  const std::string want = Replace(c.message, "$DIR", dir);
  const std::string& where = c.in_stdout ? r.out : r.err;
  std::string problem;
  if (r.hung)
    problem = "hung";
  else if (r.exit_code != c.exit_code)
    problem = "exit " + std::to_string(r.exit_code) + ", want " + std::to_string(c.exit_code);
  else if (where.find(want) == std::string::npos)
    problem = "message missing: '" + want + "'";
  else if (r.peak_rss_kb > mem * 1024)
    problem = "peak memory " + std::to_string(r.peak_rss_kb / 1024) + " MB > " + std::to_string(mem) + " MB";
  if (!c.pending.empty()) {
    if (!problem.empty()) GTEST_SKIP() << "waits for " << c.pending << ": " << problem << "; " << r.Describe();
    FAIL() << "passes now: remove its pending mark (" << c.pending << ")";
  }
  EXPECT_EQ(problem, "") << r.Describe();
  std::filesystem::remove_all(dir);
}

std::vector<CatalogueCase> All() {
  std::vector<CatalogueCase> all;
  for (auto list : {KinetoCases, FileCases, CaptureCases, OptionCases}) {
    auto v = list();
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(BadInput, Catalogue, ::testing::ValuesIn(All()),
                         [](const ::testing::TestParamInfo<CatalogueCase>& i) { return i.param.name; });

}  // namespace
}  // namespace overlapscope::testing
