// Shared pieces of the libFuzzer targets (fuzz/*_fuzz.cc): in-memory files for readers that
// take paths, splitting one input into several per-rank files, the checks every target applies
// to what the readers accept (the model's invariants) and reject (the error names the file and
// a byte offset), and the pipeline after import (analyze, export, render) with its oracles.
//
// A violated check calls Fail(), which prints what was violated and aborts: libFuzzer records
// the input as a crash, and the regression runner (regression_main.cc) fails its ctest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/session.h"
#include "model/trace.h"

namespace overlapscope::fuzz {

// An anonymous in-memory file (memfd_create) holding `bytes`; path() is "/proc/self/fd/N",
// which the importers open like any file. Never touches the disk, so parallel runs and
// crashes leave nothing behind.
class MemFile {
 public:
  explicit MemFile(std::string_view bytes);
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Separates per-rank files inside one fuzz input (the pipeline target): a line no trace holds.
inline constexpr std::string_view kFileSeparator = "\n#OVERLAPSCOPE-NEXT-FILE#\n";
inline constexpr size_t kMaxFiles = 4;
// The parts of `data` between separators, at most kMaxFiles (the rest stays in the last part).
std::vector<std::string_view> SplitFiles(std::string_view data);

[[noreturn]] void Fail(const char* what, absl::string_view detail);

// One gzip member of `in` as zlib's deflate writes it at `level` (0-9) and `strategy` (zlib's
// Z_DEFAULT_STRATEGY = 0, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED); Fail() where zlib fails.
std::string GzipMember(std::string_view in, int level, int strategy);

// An import error must name the input (`path` as given) and say where: "PATH: offset N: ..."
// or "PATH: <reason>" for errors that concern the whole file; ResourceExhausted (out of memory,
// said so) is accepted too. Fails otherwise, and on Internal (an exception escaped a reader).
void CheckImportError(const absl::Status& s, const std::string& path);

// Invariants every finalized trace keeps (model/trace.h): events inside [start_ns, end_ns] of
// the trace, start <= end, ids in range. Fails on the first violation.
void CheckTrace(const model::Trace& t);

// The import of one input with one parser thread and with several (`many`) must agree: both
// refused with the same message, or both accepted with the same events (kinds, times, names,
// streams and threads by native id) and the same statistics. Fails otherwise.
void CheckSameImport(const absl::StatusOr<model::Trace>& one, const absl::StatusOr<model::Trace>& many);

// Analyzes the session (one thread, then four, whose JSON report must be the same; default rules) and renders every
// report (JSON, text, Markdown, explain-classes, every gate) through the engine's API, then encodes Perfetto with and
// without the analysis and Chrome JSON of every process. Checks: the trace keeps the model's
// invariants, the JSON report parses and holds no NaN/inf, the Perfetto bytes decode as protobuf
// packets, each Chrome document imports back without error. Fails on any violation; an input
// the pipeline refuses is not one.
void RunPipeline(const engine::Session& session);

}  // namespace overlapscope::fuzz
