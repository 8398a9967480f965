#include "importers/import_any.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/natural_order.h"
#include "base/status_macros.h"
#include "formats/ovnccl_format.h"
#include "formats/spill_records.h"
#include "importers/open_file.h"

namespace overlapscope::import {
namespace {

namespace fs = std::filesystem;

// *.ovspill files of `dir`, in natural order of names (rank0, rank1, ..., rank10, then pid
// files); an entry of that name that cannot be read is an error (CheckDirectoryEntry).
absl::StatusOr<std::vector<std::string>> SpillFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= 8 || !absl::EndsWith(name, ".ovspill")) continue;
    RETURN_IF_ERROR(CheckDirectoryEntry(e));
    if (e.is_regular_file(ec)) out.push_back(dir + "/" + name);
  }
  std::sort(out.begin(), out.end(), base::NaturalLess);  // rank2 before rank10
  return out;
}

// The same process captured in two files (a copied .ovspill) would count its work twice in every
// cross-rank figure. Two processes of one rank (a child that inherited RANK) stay allowed.
// Processes are in file order (one per file: ImportIntoOrThrow checks it).
absl::Status CheckOneFilePerProcess(const model::TraceBuilder& builder, const std::vector<std::string>& files) {
  const auto& procs = builder.data().processes;
  for (size_t i = 0; i < procs.size() && i < files.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (procs[i].rank == procs[j].rank && procs[i].pid == procs[j].pid && procs[i].host == procs[j].host)
        return absl::InvalidArgumentError(absl::StrCat(
            files[i], ": offset 0: rank ",
            procs[i].rank == model::kNone ? std::string("(none)") : absl::StrCat(procs[i].rank), " already comes from ",
            files[j], " (the same process, pid ", procs[i].pid, ", in two capture files)"));
  return absl::OkStatus();
}

absl::StatusOr<ExpandedInputs> ExpandOrThrow(absl::Span<const std::string> paths) {
  ExpandedInputs in;
  for (const std::string& p : paths) {
    std::error_code ec;
    std::vector<std::string> files;
    if (fs::is_directory(p, ec)) {
      ASSIGN_OR_RETURN(files, SpillFilesIn(p));
    }
    if (files.empty()) {
      ASSIGN_OR_RETURN(files, ExpandTracePaths({p}));
    }
    for (std::string& f : files) {
      ASSIGN_OR_RETURN(InputFormat format, DetectFormat(f));
      in.files.push_back(std::move(f));
      in.formats.push_back(format);
    }
  }
  if (in.files.empty()) return absl::InvalidArgumentError("no trace file given");
  bool spill = false, kineto = false;
  for (size_t i = 0; i < in.files.size(); ++i) {
    if (in.formats[i] == InputFormat::kNcclPlugin)
      return absl::InvalidArgumentError(absl::StrCat(in.files[i],
                                                     ": offset 0: an NCCL profiler plugin file is merged into the "
                                                     "capture next to it: give the .ovspill file or its directory"));
    (in.formats[i] == InputFormat::kSpill ? spill : kineto) = true;
  }
  if (spill && kineto)
    return absl::InvalidArgumentError(
        "Kineto traces and .ovspill captures cannot be analyzed together in one call (different clocks and "
        "processes); give one kind");
  // Rank order even where names do not carry the rank (distributedInfo only), then the files
  // without a rank (pid<P>.ovspill captures by pid).
  ExpandedInputs sorted;
  for (size_t i : RankOrder(in.files, /*read_heads=*/kineto)) {
    sorted.files.push_back(std::move(in.files[i]));
    sorted.formats.push_back(in.formats[i]);
  }
  return sorted;
}

absl::StatusOr<ExpandedInputs> ImportIntoOrThrow(absl::Span<const std::string> paths, const ImportAnyOptions& options,
                                                 model::TraceBuilder& builder) {
  ASSIGN_OR_RETURN(ExpandedInputs in, ExpandOrThrow(paths));
  const int n = static_cast<int>(in.files.size());
  for (int i = 0; i < n; ++i) {
    const std::string& f = in.files[static_cast<size_t>(i)];
    auto report = [&](int64_t done, int64_t total) {
      if (options.progress) options.progress(ImportProgress{i, n, f, done, total});
    };
    if (in.formats[static_cast<size_t>(i)] == InputFormat::kSpill) {
      report(0, 0);
      RETURN_IF_ERROR(ReadSpillFile(f, builder, options.spill));
    } else {
      ImportOptions kineto = options.kineto;
      kineto.progress = nullptr;
      if (options.progress) kineto.progress = report;
      if (absl::Status st = ImportKinetoFile(f, builder, kineto); !st.ok()) {
        // A file refused on several parser threads is read again on one, alone, and refused
        // with that reading's message: where a part stops (a gzip error's offset, the first bad
        // byte) must not depend on the thread count. Only failing inputs pay for it.
        // A file that changed size while read (Aborted, kineto/mapped_file.h) is not read again.
        if (kineto.threads == 1 || absl::IsAborted(st)) return st;
        model::TraceBuilder alone;
        kineto.threads = 1;
        kineto.progress = nullptr;
        absl::Status one = ImportKinetoFile(f, alone, kineto);
        return one.ok() ? st : one;
      }
    }
    // Callers map files to processes by position (engine exports one rank's file).
    if (builder.data().processes.size() != static_cast<size_t>(i) + 1)
      return absl::InternalError(absl::StrCat(f, ": offset 0: the reader made ",
                                              static_cast<int64_t>(builder.data().processes.size()) - i,
                                              " processes for one file"));
  }
  if (in.formats.front() == InputFormat::kSpill) {
    RETURN_IF_ERROR(CheckOneFilePerProcess(builder, in.files));
    builder.data().clock_note = kSpillClockNote;
  } else {
    RETURN_IF_ERROR(CheckOneFilePerRank(builder));
    builder.data().clock_note = kKinetoClockNote;
  }
  return in;
}

}  // namespace

std::string_view ToString(InputFormat f) {
  switch (f) {
    case InputFormat::kKinetoJson: return "kineto-json";
    case InputFormat::kKinetoJsonGz: return "kineto-json.gz";
    case InputFormat::kSpill: return "ovspill";
    case InputFormat::kNcclPlugin: return "ovnccl";
  }
  return "?";
}

absl::StatusOr<InputFormat> DetectFormat(const std::string& path) {
  ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));  // a FIFO would block: an error instead
  char head[8] = {};
  size_t got = 0;
  while (got < sizeof(head)) {
    const ssize_t n = ::read(fd, head + got, sizeof(head) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
    return InputFormat::kKinetoJsonGz;
  if (got == 8 && std::memcmp(head, formats::kSpillMagic, 8) == 0) return InputFormat::kSpill;
  if (got == 8 && std::memcmp(head, formats::kOvncclMagic, 8) == 0) return InputFormat::kNcclPlugin;
  if (absl::EndsWith(path, ".ovspill")) return InputFormat::kSpill;  // its reader says what is wrong
  return InputFormat::kKinetoJson;
}

absl::StatusOr<ExpandedInputs> ExpandInputs(absl::Span<const std::string> paths) {
  try {
    return ExpandOrThrow(paths);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("listing inputs failed: ", e.what()));
  }
}

absl::StatusOr<ExpandedInputs> ImportInto(absl::Span<const std::string> paths, const ImportAnyOptions& options,
                                          model::TraceBuilder& builder) {
  try {  // no exception leaves the module
    return ImportIntoOrThrow(paths, options, builder);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while reading the traces");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("import failed: ", e.what()));
  }
}

absl::StatusOr<model::Trace> ImportAny(absl::Span<const std::string> paths, const ImportAnyOptions& options,
                                       const model::FinalizeOptions& finalize) {
  model::TraceBuilder builder;
  ASSIGN_OR_RETURN(ExpandedInputs in, ImportInto(paths, options, builder));
  try {
    return std::move(builder).Finalize(finalize);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while building the trace");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("building the trace failed: ", e.what()));
  }
}

}  // namespace overlapscope::import
