// libFuzzer target: `.ovspill` capture files (formats/spill_records.h) through the spill reader
// (importers/ovspill/spill_reader.h): records, string interning, NVTX pairs, NCCL attribution and
// NVTX payload decoding. Checks: an accepted file finalizes into a trace that keeps the model's
// invariants; a refused one names the file in its error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "importers/ovspill/spill_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace overlapscope;
  const std::string path = "fuzz.ovspill";
  model::TraceBuilder b;
  absl::Status s = import::ReadSpillBytes(std::string_view(reinterpret_cast<const char*>(data), size), path, b);
  if (!s.ok()) {
    fuzz::CheckImportError(s, path);
    return 0;
  }
  auto t = std::move(b).Finalize();
  if (!t.ok()) fuzz::Fail("the spill reader built a trace that does not finalize", t.status().message());
  fuzz::CheckTrace(*t);
  return 0;
}
