// Entry points: path expansion, rank from file names, multi-file import.
#include "importers/kineto/import.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <filesystem>
#include <new>
#include <system_error>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/natural_order.h"
#include "base/run_all.h"
#include "base/status_macros.h"
#include "importers/kineto/input_stream.h"

namespace overlapscope::import {
namespace {

namespace fs = std::filesystem;

bool HasTraceExtension(const std::string& name) {
  return absl::EndsWith(name, ".json") || absl::EndsWith(name, ".json.gz");
}

// True when the first 64 KiB (decompressed) mention a Kineto top-level key.
bool LooksLikeTrace(const std::string& path) {
  auto in = InputStream::Open(path);
  if (!in.ok()) return false;
  std::string head(64 << 10, '\0');
  size_t got = 0;
  while (got < head.size()) {
    auto r = (*in)->Read(head.data() + got, head.size() - got);
    if (!r.ok() || *r == 0) break;
    got += *r;
  }
  head.resize(got);
  return absl::StrContains(head, "\"traceEvents\"") || absl::StrContains(head, "\"schemaVersion\"");
}

std::string_view StripExtension(std::string_view base) {
  for (std::string_view ext : {".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json"})
    if (base.ends_with(ext)) return base.substr(0, base.size() - ext.size());
  return base;
}

int32_t ParseDigits(std::string_view s) {
  if (s.empty() || s.size() > 9) return -1;
  int32_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

int32_t RankFromFileName(std::string_view path) {
  std::string_view base =
      path.substr(path.find_last_of('/') == std::string_view::npos ? 0 : path.find_last_of('/') + 1);
  std::string lower(base);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (size_t at = lower.find("rank"); at != std::string::npos; at = lower.find("rank", at + 1)) {
    size_t i = at + 4;
    if (i < lower.size() && (lower[i] == '_' || lower[i] == '-')) ++i;
    size_t j = i;
    while (j < lower.size() && std::isdigit(static_cast<unsigned char>(lower[j]))) ++j;
    if (int32_t r = ParseDigits(std::string_view(lower).substr(i, j - i)); r >= 0) return r;
  }
  std::string_view stem = StripExtension(base);
  size_t dash = stem.find_last_of('-');
  if (dash != std::string_view::npos) return ParseDigits(stem.substr(dash + 1));
  return -1;
}

std::string HostFromTraceFileName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.ends_with(".gz")) base.remove_suffix(3);
  constexpr std::string_view kSuffix = ".pt.trace.json";
  if (!base.ends_with(kSuffix)) return "";
  base.remove_suffix(kSuffix.size());
  // Strips "<sep><digits>" off the end when it has min..max digits; false otherwise.
  auto strip = [&base](char sep, size_t min_digits, size_t max_digits) {
    size_t at = base.find_last_of(sep);
    if (at == std::string_view::npos) return false;
    std::string_view digits = base.substr(at + 1);
    if (digits.size() < min_digits || digits.size() > max_digits) return false;
    for (char c : digits)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    base = base.substr(0, at);
    return true;
  };
  // PyTorch's name: "<hostname>_<pid>.<time>": time.time_ns() (19 digits) or, before, the time
  // in ms (13 digits); a pid has at most 7 digits. Anything else ("rank-0.Apr_03_18_51_38.1102")
  // names no host.
  if (!strip('.', 13, 19) || !strip('_', 1, 7) || base.empty()) return "";
  for (char c : base)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) return "";  // not a host name
  return std::string(base);
}

absl::Status CheckDirectoryEntry(const fs::directory_entry& entry) {
  std::error_code ec;
  const fs::file_status st = entry.status(ec);  // follows symlinks
  const std::string path = entry.path().string();
  if (ec) return absl::InvalidArgumentError(absl::StrCat(path, ": offset 0: cannot open: ", ec.message()));
  if (fs::is_regular_file(st) || fs::is_directory(st)) return absl::OkStatus();
  const char* what = fs::is_fifo(st) ? " (a FIFO)" : fs::is_socket(st) ? " (a socket)" : " (a device or special file)";
  return absl::InvalidArgumentError(absl::StrCat(path, ": offset 0: cannot open: not a regular file", what));
}

absl::StatusOr<std::vector<std::string>> ExpandTracePaths(absl::Span<const std::string> paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st))
      return absl::NotFoundError(absl::StrCat(p, ": offset 0: cannot open: no such file or directory"));
    if (!fs::is_directory(st)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(p, ec)) {
      std::string name = entry.path().filename().string();
      if (!HasTraceExtension(name)) continue;
      // A trace-named entry that cannot be read (a FIFO, a symlink loop, a dangling link) is an
      // error: skipping it would analyze the job without one of its ranks.
      if (absl::Status s = CheckDirectoryEntry(entry); !s.ok()) return s;
      if (entry.is_regular_file(ec)) names.push_back(name);
    }
    if (ec) return absl::InvalidArgumentError(absl::StrCat(p, ": offset 0: cannot list directory: ", ec.message()));
    std::sort(names.begin(), names.end(), base::NaturalLess);  // rank2 before rank10
    absl::flat_hash_set<std::string> present(names.begin(), names.end());
    size_t found = 0;
    for (const std::string& name : names) {
      if (absl::EndsWith(name, ".json") && present.contains(name + ".gz")) continue;  // same trace twice
      std::string full = (fs::path(p) / name).string();
      if (!LooksLikeTrace(full)) continue;
      out.push_back(full);
      ++found;
    }
    if (found == 0)
      return absl::NotFoundError(absl::StrCat(p, ": offset 0: no Kineto trace (*.json, *.json.gz) in directory"));
  }
  return out;
}

namespace {

absl::StatusOr<model::Trace> ImportTracesOrThrow(absl::Span<const std::string> paths, const ImportOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandTracePaths(paths));
  if (files.empty()) return absl::InvalidArgumentError("no trace file given");
  model::TraceBuilder builder;
  for (size_t i : RankOrder(files)) RETURN_IF_ERROR(ImportKinetoFile(files[i], builder, options));
  RETURN_IF_ERROR(CheckOneFilePerRank(builder));
  builder.data().clock_note = kKinetoClockNote;
  model::FinalizeOptions finalize;
  finalize.threads = base::ThreadsOrCores(options.threads);
  return std::move(builder).Finalize(finalize);
}

}  // namespace

absl::Status CheckOneFilePerRank(const model::TraceBuilder& builder) {
  // Refuse instead of producing wrong cross-rank numbers.
  const model::TraceData& d = builder.data();
  const auto& procs = d.processes;
  for (size_t i = 0; i < procs.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (procs[i].rank != model::kNone && procs[i].rank == procs[j].rank)
        return absl::InvalidArgumentError(absl::StrCat(
            std::string(d.strings.Get(procs[i].source)), ": offset 0: rank ", procs[i].rank, " already comes from ",
            std::string(d.strings.Get(procs[j].source)), " (give one file per rank)"));
  return absl::OkStatus();
}

absl::StatusOr<model::Trace> ImportTraces(absl::Span<const std::string> paths, const ImportOptions& options) {
  try {  // no exception leaves the module (Finalize of a huge trace may run out of memory)
    return ImportTracesOrThrow(paths, options);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while building the trace");
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("import failed: ") + e.what());
  }
}

}  // namespace overlapscope::import
