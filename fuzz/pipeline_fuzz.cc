// libFuzzer target: the whole pipeline as a front end runs it. The input holds up to four
// per-rank files separated by fuzz::kFileSeparator, each anything the engine reads (Kineto JSON,
// .json.gz, a .ovspill capture: recognized by its first bytes). engine::Load imports them into
// one session with clock alignment on (every process its own clock domain when no host is
// named); then analysis, every report, gates and exports with their oracles (fuzz_util.h).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace overlapscope;
  std::vector<std::unique_ptr<fuzz::MemFile>> files;
  std::vector<std::string> paths;
  for (std::string_view part : fuzz::SplitFiles(std::string_view(reinterpret_cast<const char*>(data), size))) {
    files.push_back(std::make_unique<fuzz::MemFile>(part));
    paths.push_back(files.back()->path());
  }
  engine::LoadOptions o;
  o.threads = 1;
  o.align_clocks = engine::ClockAlign::kOn;
  auto session = engine::Load(paths, o);
  if (!session.ok()) {
    // A refusal names one of the files, or says that the inputs do not go together, or that
    // memory ran out. Anything else (an escaped exception, a trace that does not finalize) is a bug.
    const absl::Status& s = session.status();
    bool named = false;
    for (const std::string& p : paths) named |= s.message().substr(0, p.size() + 2) == p + ": ";
    const bool together = s.message().find("cannot be analyzed together") != absl::string_view::npos;
    if (s.code() == absl::StatusCode::kInternal ||
        (!named && !together && s.code() != absl::StatusCode::kResourceExhausted))
      fuzz::Fail("load error names none of the files", s.message());
    return 0;
  }
  fuzz::RunPipeline(*session);
  return 0;
}
