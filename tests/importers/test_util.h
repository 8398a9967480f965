// Helpers of the importer tests: temp files, reading real traces, comparing traces.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "importers/kineto/import.h"
#include "model/trace.h"

namespace overlapscope::import::testing {

inline std::string DataPath(const std::string& rel) { return std::string(OVERLAPSCOPE_TEST_DATA) + "/" + rel; }

// Whole file, decompressed when gzip.
inline std::string ReadFileText(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// A file under the test's temp dir holding `content` (gzip-compressed when gz).
// Where WriteTemp puts NAME: a directory of this process under the test temp dir (under ctest -j
// the tests of one binary run as parallel processes, and fixed names in one directory collided).
inline std::string TempPath(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/ovs_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  return dir + "/" + name;
}

inline std::string WriteTemp(const std::string& name, const std::string& content, bool gz = false) {
  std::string path = TempPath(name);
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb6");
    gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary) << content;
  }
  return path;
}

inline absl::StatusOr<model::Trace> ImportOne(const std::string& path, int threads = 0, int64_t chunk = 0) {
  ImportOptions opt;
  opt.threads = threads;
  opt.chunk_bytes = chunk;
  return ImportTraces({path}, opt);
}

// Kineto-like document around the given event texts.
inline std::string Doc(const std::vector<std::string>& events, const std::string& before = "",
                       const std::string& after = "") {
  std::string s = "{\n  \"schemaVersion\": 1,\n" + before + "  \"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n  " : "  ") + events[i];
  s += "\n  ]" + after + "\n}\n";
  return s;
}

// A text rendering of everything the importer produced (names resolved, ids as native values),
// so two traces compare equal exactly when their contents are the same.
inline std::string Dump(const model::Trace& t) {
  std::ostringstream o;
  auto stream_text = [&](model::StreamId s) {
    if (s < 0) return std::string("-");
    const auto& st = t.streams()[s];
    return std::to_string(t.devices()[st.device].ordinal) + "/" + std::to_string(st.native_id) + "/" +
           std::string(t.str(st.name));
  };
  auto thread_text = [&](model::ThreadId th) {
    return th < 0 ? std::string("-")
                  : std::to_string(t.threads()[th].tid) + "/" + std::string(t.str(t.threads()[th].name));
  };
  for (const auto& p : t.processes())
    o << "P " << p.pid << " " << p.rank << " " << p.world_size << " " << t.str(p.name) << "\n";
  for (const auto& d : t.devices()) o << "D " << d.process << " " << d.ordinal << " " << t.str(d.name) << "\n";
  for (const auto& k : t.kernels())
    o << "K " << k.start_ns << " " << k.end_ns << " " << stream_text(k.stream) << " " << k.correlation_id << " "
      << k.external_id << " " << t.str(k.name) << " " << k.grid.x << "," << k.grid.y << "," << k.grid.z << " "
      << k.block.x << "," << k.block.y << "," << k.block.z << " " << k.registers_per_thread << " "
      << k.shared_memory_bytes << " " << k.collective << "\n";
  for (const auto& m : t.memcpys())
    o << "C " << m.start_ns << " " << m.end_ns << " " << stream_text(m.stream) << " " << m.correlation_id << " "
      << m.external_id << " " << t.str(m.name) << " " << m.bytes << " " << int(m.kind) << int(m.src_kind)
      << int(m.dst_kind) << " " << int(m.is_async) << "\n";
  for (const auto& m : t.memsets())
    o << "S " << m.start_ns << " " << m.end_ns << " " << stream_text(m.stream) << " " << m.correlation_id << " "
      << t.str(m.name) << " " << m.bytes << " " << int(m.memory_kind) << " " << int(m.is_async) << "\n";
  for (const auto& a : t.api_calls())
    o << "A " << a.start_ns << " " << a.end_ns << " " << thread_text(a.thread) << " " << a.correlation_id << " "
      << a.external_id << " " << t.str(a.name) << " " << int(a.kind) << "\n";
  for (const auto& y : t.syncs())
    o << "Y " << y.start_ns << " " << y.end_ns << " " << int(y.kind) << " " << thread_text(y.thread) << " "
      << stream_text(y.stream) << " " << stream_text(y.wait_on_stream) << " " << y.event_id << " "
      << y.event_record_correlation_id << " " << y.correlation_id << " " << t.str(y.name) << "\n";
  for (const auto& r : t.ranges())
    o << "R " << r.start_ns << " " << r.end_ns << " " << int(r.kind) << " " << thread_text(r.thread) << " "
      << r.external_id << " " << t.str(r.name) << "\n";
  for (const auto& g : t.gpu_ranges())
    o << "G " << g.start_ns << " " << g.end_ns << " " << stream_text(g.stream) << " " << t.str(g.name) << "\n";
  for (const auto& c : t.collectives())
    o << "L " << c.start_ns << " " << c.end_ns << " " << t.str(c.op) << " " << t.str(c.communicator) << " "
      << t.str(c.dtype) << " " << c.in_elements << " " << c.out_elements << " " << c.bytes << " " << c.rank << " "
      << c.nranks << " " << c.sequence << " " << stream_text(c.stream) << "\n";
  for (const auto& s : t.sources()) {
    o << "Src " << s.events_read << " " << s.events_kept << " " << s.skipped() << " " << s.base_time_ns << "\n";
    for (const auto& [k, v] : s.kept_by_category) o << " kept " << k << " " << v << "\n";
    for (size_t i = 0; i < model::kStatCount; ++i)
      if (s.counts[i] != 0)
        o << " stat " << model::Describe(static_cast<model::Stat>(i)).name << " " << s.counts[i] << "\n";
    for (const auto& [k, v] : s.details)
      o << " detail " << model::Describe(k.first).name << " " << k.second << " " << v << "\n";
    for (const auto& e : s.examples) o << " ex " << e << "\n";
  }
  return o.str();
}

// The details of every statistic that skips records, merged: reason (or category) -> count.
inline std::map<std::string, int64_t> SkipDetails(const model::SourceStats& s) {
  std::map<std::string, int64_t> out;
  for (const auto& [k, v] : s.details)
    if (model::Describe(k.first).effect == model::StatEffect::kSkipped) out[k.second] += v;
  return out;
}

// The count of one detail of one statistic (0 when absent).
inline int64_t DetailOf(const model::SourceStats& s, model::Stat stat, const std::string& detail) {
  auto it = s.details.find({stat, detail});
  return it == s.details.end() ? 0 : it->second;
}

}  // namespace overlapscope::import::testing
