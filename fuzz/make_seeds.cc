// Builds the seed corpora of the fuzz targets from the project's test data:
//
//   fuzz_make_seeds OUT_DIR DATA_DIR [EXTRA_KINETO_DIR...]
//
// writes OUT_DIR/<target>/ for each target:
//   kineto_json  small coherent excerpts of every Kineto trace (DATA_DIR/kineto, and each
//                EXTRA dir, e.g. ../shared/traces): the metadata, one profiler step's worth of
//                events (or a slice of the middle), their GPU work and flows, at most 400 events
//   kineto_gzip  the compressed test traces as they are, and the excerpts gzip-compressed
//   gzip_parallel  the same as kineto_gzip
//   ovspill      DATA_DIR/capture/*.ovspill, and a small capture with capture windows (one
//                closed, one its process died in) that the test captures lack
//   ovnccl       plugin files whose records fall into ovnccl_fuzz.cc's synthetic capture
//   pipeline     excerpts alone and as rank pairs, captures alone and in pairs
// Small seeds keep the fuzzers fast; the full files stay in the regression runs (CMakeLists).
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "formats/ovnccl_format.h"
#include "formats/spill_records.h"
#include "fuzz/fuzz_util.h"
#include "nlohmann/json.hpp"
#include "ovnccl_writer.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string ReadFile(const fs::path& p) {
  if (p.extension() == ".gz") {
    gzFile g = gzopen(p.c_str(), "rb");
    std::string out;
    char buf[1 << 16];
    int n;
    while (g && (n = gzread(g, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    if (g) gzclose(g);
    return out;
  }
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& p, const std::string& bytes, bool gzip = false) {
  fs::create_directories(p.parent_path());
  if (gzip) {
    gzFile g = gzopen(p.c_str(), "wb6");
    gzwrite(g, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(g);
    return;
  }
  std::ofstream(p, std::ios::binary) << bytes;
}

double Num(const json& e, const char* k) {
  auto it = e.find(k);
  return it != e.end() && it->is_number() ? it->get<double>() : -1;
}

// One profiler step's events (or the middle 2% of the trace), their GPU work and flows.
std::string Excerpt(const std::string& text) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    return "";
  const json& ev = doc["traceEvents"];
  double lo = 1e300, hi = -1e300, w0 = -1, w1 = -1;
  for (const json& e : ev) {
    if (!e.is_object() || Num(e, "ts") < 0) continue;
    lo = std::min(lo, Num(e, "ts")), hi = std::max(hi, Num(e, "ts"));
    if (w0 < 0 && e.value("name", json()).is_string() && e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0 &&
        Num(e, "dur") > 0)
      w0 = Num(e, "ts"), w1 = w0 + Num(e, "dur");
  }
  if (w0 < 0) w0 = lo + (hi - lo) * 0.49, w1 = lo + (hi - lo) * 0.51;
  std::set<double> corr;
  json kept = json::array();
  for (const json& e : ev) {
    if (!e.is_object()) continue;
    const double ts = Num(e, "ts"), end = ts + std::max(0.0, Num(e, "dur"));
    const bool meta = e.value("ph", "") == "M";
    if (!meta && !(ts >= w0 && ts <= w1) && !(ts <= w0 && end >= w0)) continue;
    if (kept.size() >= 400) break;
    if (e.contains("args") && e["args"].is_object() && e["args"].contains("correlation"))
      corr.insert(Num(e["args"], "correlation"));
    kept.push_back(e);
  }
  for (const json& e : ev) {  // GPU work of kept launches that ran after the window
    if (!e.is_object() || kept.size() >= 600) continue;
    const double ts = Num(e, "ts");
    if (ts >= w0 && ts <= w1) continue;
    const bool linked = e.contains("args") && e["args"].is_object() && e["args"].contains("correlation") &&
                        corr.count(Num(e["args"], "correlation"));
    const bool flow = e.value("cat", "") == "ac2g" && corr.count(Num(e, "id"));
    if (linked || flow) kept.push_back(e);
  }
  doc["traceEvents"] = kept;
  return doc.dump();
}

std::vector<fs::path> TraceFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (e.is_regular_file() && (n.ends_with(".json") || n.ends_with(".json.gz")) && n.find("timings") == n.npos)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void NcclSeeds(const fs::path& out) {
  using overlapscope::formats::kTypeCollApi;
  using overlapscope::formats::kTypeGroupApi;
  using overlapscope::formats::OvncclKind;
  using overlapscope::formats::OvncclStats;
  overlapscope::testing::OvncclWriter w;
  w.Process(4242).Comm(1, 0xabc, 2, 1, "world").Comm(2, 0xdef, 2, 1);
  w.Api(1, 0, 1, kTypeGroupApi, 1050, 11).Api(2, 1, 1, kTypeCollApi, 1100, 11, "AllGather", 1024, "ncclFloat16", 0);
  w.Coll(3, 2, 1, 1400, 11, "AllGather", 1024, "ncclFloat16", 7, 2, "RING", "SIMPLE", 1);
  w.ChStart(4, 3, 900000, 0).ChStop(4, 905000).ChStart(5, 3, 900300, 1).ChStop(5, 905400);
  w.Stop(3, 1500).Stop(2, 1800).Stop(1, 1900);
  WriteFile(out / "one_allgather.ovnccl", w.bytes());
  w.Api(10, 0, 2, kTypeGroupApi, 3050, 11).Api(11, 10, 2, kTypeCollApi, 3060, 11, "AllGather", 2048, "ncclBfloat16", 3);
  w.Stop(11, 3800).Stop(10, 3900);
  w.Api(50, 0, 1, kTypeGroupApi, 4990, 11).Api(51, 50, 1, kTypeCollApi, 5010, 11, "AllGather", 512, "ncclFloat32", 1);
  w.Coll(52, 51, 1, 5950, 99, "AllGather", 512, "ncclFloat32", 8, 1, "RING", "LL", 1);
  w.Stop(51, 5090).Stop(50, 5900).Stop(52, 5960, 99);
  w.Api(20, 0, 1, kTypeGroupApi, 7000, 11).Api(21, 20, 1, kTypeCollApi, 7050, 11, "AllReduce", 256, "ncclFloat32", 0);
  w.Coll(22, 21, 1, 7500, 11, "AllReduce", 256, "ncclFloat32", 0, 4, "TREE", "LL", 1);
  w.Stop(22, 7600).Stop(21, 7850).Stop(20, 7900);
  w.Rec(OvncclKind::kStats, OvncclStats{40, 39, 1, 0, 3, 0});
  WriteFile(out / "mixed.ovnccl", w.bytes());
  WriteFile(out / "header_only.ovnccl", overlapscope::testing::OvncclWriter().bytes());
}

// A capture with two windows: the first opened (end 0) and closed around a launch, the second
// (named by an NVTX range) opened and never closed, as when the process dies inside it.
std::string WindowsCapture() {
  namespace f = overlapscope::formats;
  std::string b;
  f::SpillEncoder::AppendFileHeader(&b);
  f::SpillEncoder::AppendString(&b, 1, "cudaLaunchKernel");
  f::SpillEncoder::AppendString(&b, 2, "_Z1kv");
  f::SpillEncoder::AppendString(&b, 3, "train_step");
  f::SpillEncoder::Append(&b, f::SpillType::kProcess, f::SpillProcess{77, 0, 1, 0, 0, 0, 0});
  auto launch = [&b](uint32_t corr, int64_t api, int64_t start, int64_t end) {
    f::SpillEncoder::Append(&b, f::SpillType::kApi, f::SpillApi{api, api + 100, 77, 7, corr, 211, 0, 1, 0, {}});
    f::SpillKernel k{};
    k.start = start, k.end = end, k.stream = 7, k.correlation = corr, k.name_sid = 2;
    f::SpillEncoder::Append(&b, f::SpillType::kKernel, k);
  };
  f::SpillEncoder::Append(&b, f::SpillType::kWindow,
                          f::SpillWindow{500, 0, 1, f::kWindowCudaProfilerApi, 0, f::kWindowEndStop});
  launch(1, 1000, 2000, 3000);
  f::SpillEncoder::Append(&b, f::SpillType::kWindow,
                          f::SpillWindow{500, 3500, 1, f::kWindowCudaProfilerApi, 0, f::kWindowEndRange});
  f::SpillEncoder::Append(&b, f::SpillType::kWindow, f::SpillWindow{5000, 0, 2, f::kWindowNvtx, 3, f::kWindowEndStop});
  launch(2, 5500, 6000, 7000);
  return f::SpillEncoder::Frame(b);  // version 2, as writers frame records now
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fuzz_make_seeds OUT_DIR DATA_DIR [EXTRA_KINETO_DIR...]\n");
    return 64;
  }
  const fs::path out = argv[1], data = argv[2];
  std::vector<fs::path> traces = TraceFiles(data / "kineto");
  for (int i = 3; i < argc; ++i) {
    auto more = TraceFiles(argv[i]);
    traces.insert(traces.end(), more.begin(), more.end());
  }
  const std::string sep(overlapscope::fuzz::kFileSeparator);
  std::vector<std::string> excerpts;
  int n = 0;
  for (const fs::path& p : traces) {
    const std::string name = std::to_string(n++) + "_" + p.parent_path().filename().string() + "_" +
                             p.filename().string().substr(0, p.filename().string().find('.'));
    const std::string ex = Excerpt(ReadFile(p));
    if (p.extension() == ".gz" && fs::file_size(p) < (64 << 10)) {
      WriteFile(out / "kineto_gzip" / (name + ".json.gz"), ReadFile(p), true);
      WriteFile(out / "gzip_parallel" / (name + ".json.gz"), ReadFile(p), true);
    }
    if (ex.empty()) continue;
    excerpts.push_back(ex);
    WriteFile(out / "kineto_json" / (name + ".json"), ex);
    WriteFile(out / "kineto_gzip" / (name + "_excerpt.json.gz"), ex, true);
    WriteFile(out / "gzip_parallel" / (name + "_excerpt.json.gz"), ex, true);
    WriteFile(out / "pipeline" / (name + ".json"), ex);
  }
  for (size_t i = 0; i + 1 < excerpts.size(); i += 2)
    WriteFile(out / "pipeline" / ("pair" + std::to_string(i) + ".json"), excerpts[i] + sep + excerpts[i + 1]);
  std::vector<std::string> spills;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(data / "capture", ec))
    if (e.path().extension() == ".ovspill") {
      spills.push_back(ReadFile(e.path()));
      WriteFile(out / "ovspill" / e.path().filename(), spills.back());
      WriteFile(out / "pipeline" / e.path().filename(), spills.back());
    }
  if (spills.size() >= 2) WriteFile(out / "pipeline" / "spill_pair.ovspill", spills[0] + sep + spills[1]);
  WriteFile(out / "ovspill" / "windows.ovspill", WindowsCapture());
  WriteFile(out / "pipeline" / "windows.ovspill", WindowsCapture());
  NcclSeeds(out / "ovnccl");
  std::printf("seeds in %s: %zu traces, %zu excerpts, %zu captures\n", out.c_str(), traces.size(), excerpts.size(),
              spills.size());
  return excerpts.empty() || spills.empty() ? 1 : 0;
}
