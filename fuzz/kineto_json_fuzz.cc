// libFuzzer target: Kineto / PyTorch-profiler JSON bytes through the importers' entry
// (importers/import_any.h, which hands them to the Kineto reader), with a 4 KiB window so that every chunk boundary of
// the streaming parser is exercised. Checks: an accepted file makes a trace that keeps the model's invariants and
// counts every event; a refused one names the file in its error. The file is read with pread(2) and again mapped
// (importers/kineto/mapped_file.h: how the CLI reads a plain .json): the same trace or error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "importers/import_any.h"
#include "importers/kineto/mapped_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace overlapscope;
  static const bool mapped = import::EnableMappedReads();
  fuzz::MemFile f(std::string_view(reinterpret_cast<const char*>(data), size));
  setenv("OVERLAPSCOPE_READ", "pread", 1);
  import::ImportAnyOptions o;
  o.kineto.threads = 1;
  o.kineto.chunk_bytes = 4096;
  auto t = import::ImportAny({f.path()}, o);
  // The N-thread split (importers/kineto/file_reader.h) must read the same: 4 parts per window.
  o.kineto.threads = 4;
  o.kineto.chunk_bytes = 8192;
  fuzz::CheckSameImport(t, import::ImportAny({f.path()}, o));
  unsetenv("OVERLAPSCOPE_READ");
  if (mapped) {
    o.kineto.threads = 2;
    o.kineto.chunk_bytes = 4096;
    fuzz::CheckSameImport(t, import::ImportAny({f.path()}, o));
  }
  if (!t.ok()) {
    fuzz::CheckImportError(t.status(), f.path());
    return 0;
  }
  fuzz::CheckTrace(*t);
  return 0;
}
