// libFuzzer target: the parallel gzip inflate (importers/kineto/gzip_parallel.h) against zlib.
// An input that starts with the gzip magic is the file as it is (corrupt deflate data, bad
// trailers, trailing garbage, several members). Any other input is data this target compresses
// itself, in two members whose zlib level and strategy (stored, fixed, Huffman-only, RLE,
// default) come from its first byte, so that mutations of the data reach every block kind.
// Threads (1-16) and chunk sizes (from 64 bytes) come from the input's length.
// Checks: the parallel inflate accepts exactly what zlib accepts, with zlib's bytes; and the
// Kineto importer at 4 threads, parallel inflate against the streaming one, accepts the same
// files and reads the same trace.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "importers/import_any.h"
#include "importers/kineto/gzip_parallel.h"

namespace {

using overlapscope::fuzz::Fail;

// zlib's reading of every member; false on any error.
bool ZlibGunzip(const std::string& gz, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) Fail("inflateInit2", "");
  std::vector<char> buf(1 << 16);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  bool ok = true;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf.data());
    z.avail_out = static_cast<uInt>(buf.size());
    const int rc = inflate(&z, Z_NO_FLUSH);
    out->append(buf.data(), buf.size() - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);
      continue;
    }
    if (rc != Z_OK) {
      ok = false;
      break;
    }
  }
  inflateEnd(&z);
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace overlapscope;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string file;
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    file.assign(in);
  } else {
    const int pick = size > 0 ? data[0] : 0;
    const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FIXED, Z_HUFFMAN_ONLY, Z_RLE, Z_FILTERED};
    const int level = pick % 10, strategy = strategies[(pick / 10) % 5];
    const size_t cut = size / 2;
    file = fuzz::GzipMember(in.substr(0, cut), level, strategy) +
           fuzz::GzipMember(in.substr(cut), 9 - level, Z_DEFAULT_STRATEGY);
  }
  std::string want;
  const bool zlib_ok = ZlibGunzip(file, &want);
  const int threads = 1 + static_cast<int>(size % 16);
  const size_t chunk = 64 + (size * 7) % 4096;
  import::ParallelGunzip p(reinterpret_cast<const uint8_t*>(file.data()), file.size(), threads, chunk);
  std::string got, buf(1000 + size % 5000, '\0');
  absl::Status err;
  for (;;) {
    auto r = p.Read(buf.data(), buf.size());
    if (!r.ok()) {
      err = r.status();
      break;
    }
    if (*r == 0) break;
    got.append(buf.data(), *r);
  }
  if (zlib_ok != err.ok()) Fail("the parallel inflate and zlib disagree on accepting the file", err.message());
  if (zlib_ok && got != want) Fail("the parallel inflate's bytes differ from zlib's", "");
  // Through the importer: the parallel and the streaming inflate at 4 threads read alike.
  fuzz::MemFile f(file);
  import::ImportAnyOptions o;
  o.kineto.threads = 4;
  o.kineto.chunk_bytes = 8192;
  ::setenv("OVERLAPSCOPE_INFLATE", "parallel", 1);
  auto par = import::ImportAny({f.path()}, o);
  ::setenv("OVERLAPSCOPE_INFLATE", "serial", 1);
  auto ser = import::ImportAny({f.path()}, o);
  ::unsetenv("OVERLAPSCOPE_INFLATE");
  if (par.ok() != ser.ok())
    Fail("the parallel and the streaming inflate disagree on importing the file",
         par.ok() ? ser.status().message() : par.status().message());
  if (!par.ok()) {
    fuzz::CheckImportError(par.status(), f.path());
    return 0;
  }
  fuzz::CheckSameImport(ser, par);
  fuzz::CheckTrace(*par);
  return 0;
}
