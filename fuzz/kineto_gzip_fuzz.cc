// libFuzzer target: gzip-compressed Kineto JSON (.json.gz). An input that starts with the gzip
// magic is the file as it is (corrupt deflate data, bad trailers, trailing garbage, several
// members, bombs). Any other input is JSON that this target compresses itself, cut into up to
// three gzip members at points taken from the input, so that mutations of the JSON also travel
// through the inflating reader and its member boundaries. Checks as in kineto_json_fuzz.cc.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "importers/import_any.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace overlapscope;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string file;
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    file.assign(in);
  } else {
    // Member boundaries from the input's length, so that one input always compresses the same.
    const size_t a = size / 3, b = size - size / 5;
    file = fuzz::GzipMember(in.substr(0, a), 6, Z_DEFAULT_STRATEGY) +
           fuzz::GzipMember(in.substr(a, b - a), 6, Z_DEFAULT_STRATEGY) +
           fuzz::GzipMember(in.substr(b), 6, Z_DEFAULT_STRATEGY);
  }
  fuzz::MemFile f(file);
  import::ImportAnyOptions o;
  // One window size for both readings: a gzip error's offset is the uncompressed bytes the
  // inflater had produced when it failed, which ISA-L hands out in whole blocks, so it depends
  // on how much output was asked for at a time (the window), not on the thread count.
  o.kineto.threads = 1;
  o.kineto.chunk_bytes = 8192;
  // The streaming inflate at both thread counts (the parallel one would name another offset in
  // a gzip error; gzip_parallel_fuzz.cc compares the two inflates).
  ::setenv("OVERLAPSCOPE_INFLATE", "serial", 1);
  auto t = import::ImportAny({f.path()}, o);
  // The N-thread split (importers/kineto/file_reader.h) must read the same: 4 parts per window.
  o.kineto.threads = 4;
  fuzz::CheckSameImport(t, import::ImportAny({f.path()}, o));
  if (!t.ok()) {
    fuzz::CheckImportError(t.status(), f.path());
    return 0;
  }
  fuzz::CheckTrace(*t);
  return 0;
}
