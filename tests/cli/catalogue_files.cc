// Bad-input catalogue: paths that are not readable trace files (catalogue.h).
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "catalogue.h"

namespace overlapscope::testing {
namespace {

using Setup = std::function<std::vector<std::string>(const std::string&)>;

CatalogueCase Case(std::string id, Setup setup, int code, std::string msg, std::string pending = "") {
  CatalogueCase c;
  c.name = std::move(id);
  c.setup = std::move(setup);
  c.exit_code = code;
  c.message = std::move(msg);
  c.in_stdout = code == 0;
  c.pending = std::move(pending);
  c.timeout_s = 10;
  return c;
}

std::string Doc(int rank) {
  return KinetoDoc(KernelEvent("\"k\""), "\"distributedInfo\": {\"rank\": " + std::to_string(rank) + "}, ");
}

}  // namespace

std::vector<CatalogueCase> FileCases() {
  return {
      Case(
          "NonexistentPath",
          [](const std::string& d) {
            return std::vector<std::string>{"info", d + "/nope.json"};
          },
          2, "$DIR/nope.json: "),
      Case(
          "ReadFailsAfterOpen",  // open succeeds, read(2) fails with EIO (also as root)
          [](const std::string&) {
            return std::vector<std::string>{"info", "/proc/self/mem"};
          },
          2, "/proc/self/mem: "),
      Case(
          "NoReadPermission",
          [](const std::string& d) {
            WriteFile(d + "/t.json", Doc(0));
            ::chmod((d + "/t.json").c_str(), 0);
            // root reads it anyway: then the same refusal comes from a path through a file
            return ::geteuid() == 0 ? std::vector<std::string>{"info", d + "/t.json/x"}
                                    : std::vector<std::string>{"info", d + "/t.json"};
          },
          2, "$DIR/t.json"),
      Case(
          "EmptyDirectory",
          [](const std::string& d) {
            return std::vector<std::string>{"info", d};
          },
          2, "$DIR"),
      Case(
          "DirectoryOfNonTraces",
          [](const std::string& d) {
            WriteFile(d + "/notes.txt", "hello");
            WriteFile(d + "/timings.json", "{\"a\": 1}");
            return std::vector<std::string>{"info", d};
          },
          2, "$DIR"),
      Case(
          "SymlinkLoop",
          [](const std::string& d) {
            ::symlink((d + "/b.json").c_str(), (d + "/a.json").c_str());
            ::symlink((d + "/a.json").c_str(), (d + "/b.json").c_str());
            return std::vector<std::string>{"info", d + "/a.json"};
          },
          2, "$DIR/a.json: "),
      Case(
          "SymlinkLoopInsideDirectory",
          [](const std::string& d) {
            WriteFile(d + "/rank0.json", Doc(0));
            ::symlink((d + "/loop.json").c_str(), (d + "/loop.json").c_str());
            return std::vector<std::string>{"info", d};
          },
          2, "$DIR/loop.json: offset 0: cannot open: "),
      Case(
          "DanglingSymlink",
          [](const std::string& d) {
            ::symlink((d + "/missing.json").c_str(), (d + "/t.json").c_str());
            return std::vector<std::string>{"info", d + "/t.json"};
          },
          2, "$DIR/t.json: "),
      Case(
          "FifoAsTrace",
          [](const std::string& d) {
            ::mkfifo((d + "/t.json").c_str(), 0644);
            return std::vector<std::string>{"info", d + "/t.json"};
          },
          2, "$DIR/t.json: offset 0: cannot open: not a regular file (a FIFO)"),
      Case(
          "FifoInsideDirectory",
          [](const std::string& d) {
            WriteFile(d + "/rank0.json", Doc(0));
            ::mkfifo((d + "/rank1.json").c_str(), 0644);
            return std::vector<std::string>{"info", d};
          },
          2, "$DIR/rank1.json: offset 0: cannot open: not a regular file (a FIFO)"),
      Case(
          "DevNull",
          [](const std::string&) {
            return std::vector<std::string>{"info", "/dev/null"};
          },
          2, "/dev/null: "),
      Case(
          "DevZero",
          [](const std::string&) {
            return std::vector<std::string>{"info", "/dev/zero"};
          },
          2, "/dev/zero: offset 0: "),
      Case(
          "DuplicateRankTwoFiles",
          [](const std::string& d) {
            WriteFile(d + "/a.json", Doc(0));
            WriteFile(d + "/b.json", Doc(0));
            return std::vector<std::string>{"info", d + "/a.json", d + "/b.json"};
          },
          2, "rank 0 already comes from"),
      Case(
          "DuplicateRankByFileName",
          [](const std::string& d) {
            WriteFile(d + "/rank3.json", KinetoDoc(KernelEvent("\"k\"")));
            WriteFile(d + "/trainer_rank_3.json", KinetoDoc(KernelEvent("\"k\"")));
            return std::vector<std::string>{"info", d};
          },
          2, "rank 3 already comes from"),
      Case(
          "SameFileTwice",
          [](const std::string& d) {
            WriteFile(d + "/rank0.json", Doc(0));
            return std::vector<std::string>{"info", d + "/rank0.json", d + "/rank0.json"};
          },
          2, "rank 0 already comes from"),
      Case(
          "SpillMixedWithJson",
          [](const std::string& d) {
            WriteFile(d + "/rank0.ovspill", ReadFile(DataDir() + "/capture/known_work_normal.ovspill"));
            WriteFile(d + "/rank1.json", Doc(1));
            return std::vector<std::string>{"info", d + "/rank0.ovspill", d + "/rank1.json"};
          },
          2, "Kineto traces and .ovspill captures cannot be analyzed together"),
      Case(
          "TraceIsADirectoryOfDirectories",
          [](const std::string& d) {
            ::mkdir((d + "/sub.json").c_str(), 0755);
            return std::vector<std::string>{"info", d};
          },
          2, "$DIR"),
  };
}

}  // namespace overlapscope::testing
