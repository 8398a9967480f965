// libFuzzer target: the whole pipeline. The input holds up to four per-rank files separated by
// fuzz::kFileSeparator; each is a Kineto JSON / .json.gz file, or a `.ovspill` capture when it
// starts with the spill magic (a call reads one format, as the CLI does). They are imported into
// one trace, which is then analyzed (with clock alignment), rendered (JSON, text, Markdown,
// explain-classes, gates) and exported (Perfetto with and without the analysis, Chrome JSON
// that must import back): fuzz_util.h lists the checks.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "formats/spill_records.h"
#include "fuzz/fuzz_util.h"
#include "importers/kineto/import.h"
#include "importers/ovspill/spill_reader.h"

namespace {

using namespace overlapscope;

bool IsSpill(std::string_view part) {
  return part.size() >= sizeof(formats::kSpillMagic) &&
         std::memcmp(part.data(), formats::kSpillMagic, sizeof(formats::kSpillMagic)) == 0;
}

absl::StatusOr<model::Trace> ImportSpills(const std::vector<std::string_view>& parts) {
  model::TraceBuilder b;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string path = "rank" + std::to_string(i) + ".ovspill";
    if (absl::Status s = import::ReadSpillBytes(parts[i], path, b); !s.ok()) {
      fuzz::CheckImportError(s, path);
      return s;
    }
  }
  auto t = std::move(b).Finalize();
  if (!t.ok()) fuzz::Fail("spill files made a trace that does not finalize", t.status().message());
  return t;
}

absl::StatusOr<model::Trace> ImportKineto(const std::vector<std::string_view>& parts) {
  std::vector<std::unique_ptr<fuzz::MemFile>> files;
  std::vector<std::string> paths;
  for (std::string_view p : parts) {
    files.push_back(std::make_unique<fuzz::MemFile>(p));
    paths.push_back(files.back()->path());
  }
  import::ImportOptions o;
  o.threads = 1;
  auto t = import::ImportTraces(paths, o);
  if (!t.ok()) {
    // The error names one of the files.
    bool named = false;
    for (const std::string& p : paths) named |= t.status().message().substr(0, p.size()) == p;
    if (!named) fuzz::Fail("import error names none of the files", t.status().message());
  }
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string_view> parts =
      fuzz::SplitFiles(std::string_view(reinterpret_cast<const char*>(data), size));
  size_t spills = 0;
  for (std::string_view p : parts) spills += IsSpill(p) ? 1 : 0;
  if (spills != 0 && spills != parts.size()) return 0;  // mixed formats: refused before reading
  auto t = spills ? ImportSpills(parts) : ImportKineto(parts);
  if (!t.ok()) return 0;
  fuzz::CheckTrace(*t);
  fuzz::RunPipeline(*t);
  return 0;
}
