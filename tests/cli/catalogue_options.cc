// Bad-input catalogue: option values and files named by options (catalogue.h). Every bad value
// is refused with exit 64 and a message naming the option and the value (issue 11: --min-gap
// nan once became INT64_MIN and inverted the filter); a file an option names that cannot be read
// is exit 2.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "catalogue.h"

namespace overlapscope::testing {
namespace {

// `analyze` of a good trace with `opts`.
CatalogueCase Opt(std::string id, std::vector<std::string> opts, int code, std::string msg) {
  CatalogueCase c;
  c.name = std::move(id);
  c.setup = [opts](const std::string&) {
    std::vector<std::string> a = {"analyze", "$DATA/kineto/ag_overlap/rank0.json.gz"};
    a.insert(a.end(), opts.begin(), opts.end());
    return a;
  };
  c.exit_code = code;
  c.message = std::move(msg);
  return c;
}

// `analyze --classes FILE` with FILE made by `make` in the case directory.
CatalogueCase Rules(std::string id, std::function<std::string(const std::string&)> make, int code, std::string msg) {
  CatalogueCase c;
  c.name = std::move(id);
  c.setup = [make](const std::string& dir) {
    return std::vector<std::string>{"analyze", "$DATA/kineto/ag_overlap/rank0.json.gz", "--classes", make(dir)};
  };
  c.exit_code = code;
  c.message = std::move(msg);
  return c;
}

const char kNotTime[] = "is not a time";

}  // namespace

std::vector<CatalogueCase> OptionCases() {
  return {
      Opt("MinGapNan", {"--min-gap", "nan"}, 64, std::string("--min-gap 'nan' ") + kNotTime),
      Opt("MinGapInf", {"--min-gap", "inf"}, 64, std::string("--min-gap 'inf' ") + kNotTime),
      Opt("MinGapHuge", {"--min-gap", "1e300"}, 64, "--min-gap '1e300' is out of range"),
      Opt("MinGapHugeSeconds", {"--min-gap", "1e30s"}, 64, "--min-gap '1e30s' is out of range"),
      Opt("MinGapNegative", {"--min-gap", "-5us"}, 64, std::string("--min-gap '-5us' ") + kNotTime),
      Opt("MinGapEmpty", {"--min-gap="}, 64, std::string("--min-gap '' ") + kNotTime),
      Opt("MinGapBadUnit", {"--min-gap", "5xs"}, 64, std::string("--min-gap '5xs' ") + kNotTime),
      Opt("MinGapHex", {"--min-gap", "0x10"}, 64, std::string("--min-gap '0x10' ") + kNotTime),
      Opt("RuntimeCutoffBeyondInt64", {"--runtime-cutoff", "1e19us"}, 64, "--runtime-cutoff '1e19us' is out of range"),
      Opt("LaunchDelayCutoffWord", {"--launch-delay-cutoff", "soon"}, 64,
          std::string("--launch-delay-cutoff 'soon' ") + kNotTime),
      Opt("TopZero", {"--top", "0"}, 64, "--top '0' is out of range"),
      Opt("TopBeyondInt64", {"--top", "99999999999999999999"}, 64, "--top '99999999999999999999' is out of range"),
      Opt("CollectivesNegative", {"--collectives", "-1"}, 64, "--collectives '-1' is not a non-negative integer"),
      Opt("RequireNan", {"--require", "overlap_ratio>=nan"}, 64, "'nan' is not a finite number"),
      Opt("RequireInf", {"--require", "blocked_share<=inf"}, 64, "'inf' is not a finite number"),
      Opt("RequireUnknownMetric", {"--require", "x>=1"}, 64, "unknown metric 'x'"),
      Opt("RequireNoOperator", {"--require", "overlap_ratio"}, 64, "expected METRIC OP NUMBER"),
      Opt("CommKernelBadRegex", {"--comm-kernel", "(["}, 64, "--comm-kernel: invalid regex '(['"),
      Opt("CommKernelBackreference", {"--comm-kernel", "(a)\\1"}, 64, "--comm-kernel: invalid regex '(a)\\1'"),
      Opt("AlignClocksBogus", {"--align-clocks", "maybe"}, 64, "maybe"),
      Opt("IterationMarkerEmpty", {"--iteration-marker="}, 64, "--iteration-marker needs a non-empty NAME"),
      Opt("TraceOutputInMissingDir", {"--trace", "/nonexistent/dir/x.pftrace"}, 1, "/nonexistent/dir/x.pftrace"),
      Rules(
          "ClassesDirectory", [](const std::string& d) { return d; }, 2, "--classes $DIR: a directory, not a file"),
      Rules(
          "ClassesMissing", [](const std::string& d) { return d + "/none.txt"; }, 2,
          "--classes $DIR/none.txt: cannot open"),
      Rules(
          "ClassesFifo",
          [](const std::string& d) {
            ::mkfifo((d + "/r.txt").c_str(), 0644);
            return d + "/r.txt";
          },
          2, "--classes $DIR/r.txt: a FIFO, not a file"),
      Rules(
          "ClassesBadLine",
          [](const std::string& d) {
            WriteFile(d + "/r.txt", "comm ^ok\nbogus ncclX\n");
            return d + "/r.txt";
          },
          2, "$DIR/r.txt:2: unknown class 'bogus'"),
      Rules(
          "ClassesLookahead",
          [](const std::string& d) {
            WriteFile(d + "/r.txt", "comm (?=nccl)x\n");
            return d + "/r.txt";
          },
          2, "$DIR/r.txt:1: invalid regex '(?=nccl)x'"),
      Rules(
          "ClassesTooLarge",
          [](const std::string& d) {
            WriteFile(d + "/r.txt", std::string(2 << 20, '#'));
            return d + "/r.txt";
          },
          2, "bytes, more than"),
  };
}

}  // namespace overlapscope::testing
