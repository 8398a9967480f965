// Bad-input catalogue: malformed Kineto JSON and gzip (catalogue.h).
#include <string>
#include <vector>

#include "catalogue.h"

namespace overlapscope::testing {
namespace {

// A case whose input is one file `name` with `bytes`, given to `info`.
CatalogueCase Info(std::string id, std::string file, std::string bytes, int code, std::string msg,
                   std::string pending = "") {
  CatalogueCase c;
  c.name = std::move(id);
  c.setup = [file, bytes](const std::string& dir) {
    WriteFile(dir + "/" + file, bytes);
    return std::vector<std::string>{"info", dir + "/" + file};
  };
  c.exit_code = code;
  c.message = std::move(msg);
  c.in_stdout = code == 0;
  c.pending = std::move(pending);
  return c;
}

// `analyze` of one file (exit 0 expected; `msg` must appear in the report on stdout).
CatalogueCase Analyze(std::string id, std::string bytes, std::string msg, std::vector<std::string> extra = {}) {
  CatalogueCase c;
  c.name = std::move(id);
  c.setup = [bytes, extra](const std::string& dir) {
    WriteFile(dir + "/t.json", bytes);
    std::vector<std::string> a = {"analyze", dir + "/t.json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  c.message = std::move(msg);  // gate lines go to stderr
  return c;
}

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

std::vector<CatalogueCase> KinetoCases() {
  const std::string k = KernelEvent("\"k\"");
  std::vector<CatalogueCase> v = {
      Info("EmptyFile", "t.json", "", 2, "$DIR/t.json: offset 0: "),
      Info("WhitespaceOnly", "t.json", "   \n\t  ", 2, "$DIR/t.json: offset "),
      Info("NotJson", "t.json", "hello world", 2, "$DIR/t.json: offset 0: "),
      // Kineto before PyTorch 1.8 wrote a bare array of events (read like traceEvents).
      Info("TopLevelArray", "t.json", "[" + k + "]", 0, "kernels=1"),
      Info("NoTraceEvents", "t.json", "{\"schemaVersion\": 1}", 2, "$DIR/t.json: "),
      Info("TraceEventsNotArray", "t.json", "{\"traceEvents\": 5}", 2, "$DIR/t.json: offset "),
      Info("TruncatedInEvent", "t.json", KinetoDoc(k).substr(0, 60), 2, "$DIR/t.json: offset "),
      Info("TruncatedInString", "t.json", "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"abc", 2,
           "$DIR/t.json: offset "),
      Info("TruncatedAfterEvents", "t.json", "{\"traceEvents\": [" + k + "], \"displayTimeUnit\": \"m", 0,
           "kineto_truncated_no_base"),
      Info("GarbageAfterDocument", "t.json", KinetoDoc(k) + " trailing garbage", 2, "$DIR/t.json: offset "),
      Info("Utf8BomAtStart", "t.json", "\xEF\xBB\xBF" + KinetoDoc(k), 0, "kernels=1"),
      Info("RawNulInDocument", "t.json", KinetoDoc(k).insert(20, std::string(1, '\0')), 2, "$DIR/t.json: offset "),
      Info("TsIsString", "t.json", KinetoDoc(KernelEvent("\"k\"", "\"10\"")), 0, "ts not a number"),
      Info("DurNegative", "t.json", KinetoDoc(KernelEvent("\"k\"", "10", "-5")), 0, "negative dur"),
      Info("TsHugeExponent", "t.json", KinetoDoc(KernelEvent("\"k\"", "1e400")), 0, "ts beyond int64 ns"),
      Info("TsBeyondInt64Ns", "t.json", KinetoDoc(KernelEvent("\"k\"", "9300000000000000")), 0, "ts beyond int64 ns"),
      Info("TsNegativeHuge", "t.json", KinetoDoc(KernelEvent("\"k\"", "-9200000000000000")), 0, "kernels=0"),
      Info("DurHuge", "t.json", KinetoDoc(KernelEvent("\"k\"", "10", "9200000000000000")), 0, "kernels=0"),
      Info("TsNaNLiteral", "t.json", KinetoDoc(KernelEvent("\"k\"", "NaN")), 0, "ts not finite"),
      Info("TsHundredDigits", "t.json", KinetoDoc(KernelEvent("\"k\"", std::string(100, '7'))), 0,
           "ts beyond int64 ns"),
      Info("NameNotString", "t.json", KinetoDoc(KernelEvent("42")), 0, "name not a string"),
      Info("ArgsNotObject", "t.json",
           KinetoDoc("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1, "
                     "\"dur\": 1, \"args\": [1, 2]}"),
           0, "args not an object"),
      Info("MissingPh", "t.json", KinetoDoc("{\"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1}"), 0,
           "missing ph"),
      Info("UnsupportedPh", "t.json", KinetoDoc("{\"ph\": \"B\", \"cat\": \"cpu_op\", \"name\": \"k\", \"ts\": 1}"), 0,
           "unsupported ph"),
      Info("DeviceOutOfRange", "t.json",
           KinetoDoc("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1, "
                     "\"dur\": 1, \"args\": {\"device\": 1e12, \"stream\": 7}}"),
           0, "device"),
      Info("DeepNestingInArgs", "t.json",
           KinetoDoc("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1, "
                     "\"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, \"deep\": " +
                     Nested(200000) + "}}"),
           0, "kernels=1"),
      Info("DeepNestingTopLevel", "t.json", Nested(500000), 2, "$DIR/t.json: offset 1: expected '{'"),
      Info("DeepNestingInEvents", "t.json", "{\"traceEvents\": [" + Nested(300000) + "]}", 2,
           "$DIR/t.json: offset 17: expected '{' (an event object) in traceEvents"),
      Info("InvalidUtf8InName", "t.json", KinetoDoc(KernelEvent("\"bad \xC3\x28 \xFF name\"")), 0, "strings_repaired"),
      Info("LoneSurrogateInName", "t.json", KinetoDoc(KernelEvent("\"lone \\ud800 x\"")), 0, "kernels=1"),
      Info("ReversedSurrogatePair", "t.json", KinetoDoc(KernelEvent("\"\\udc00\\ud800\"")), 0, "kernels=1"),
      Info("EscapedNulInName", "t.json", KinetoDoc(KernelEvent("\"a\\u0000b\"")), 0, "kernels=1"),
      Info("BadEscapeInName", "t.json", KinetoDoc(KernelEvent("\"a\\qb\"")), 2, "$DIR/t.json: offset "),
      Info("TenMegabyteName", "t.json", KinetoDoc(KernelEvent("\"" + std::string(10 << 20, 'n') + "\"")), 0,
           "kernels=1"),
      Info("TenMegabyteNumber", "t.json", KinetoDoc(KernelEvent("\"k\"", "1" + std::string(10 << 20, '0'))), 0,
           "ts beyond int64 ns"),
      Info("DuplicateKeys", "t.json",
           KinetoDoc("{\"ph\": \"X\", \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"name\": \"j\", \"pid\": "
                     "0, \"tid\": 7, \"ts\": 1, \"ts\": 2, \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7}}"),
           0, "kernels=1"),
      Info("DistributedRankNegative", "t.json", KinetoDoc(k, "\"distributedInfo\": {\"rank\": -3}, "), 0, "kernels=1"),
      Info("DistributedRankHuge", "t.json", KinetoDoc(k, "\"distributedInfo\": {\"rank\": 1e30}, "), 0, "kernels=1"),
      Info("DistributedInfoNotObject", "t.json", KinetoDoc(k, "\"distributedInfo\": \"rank 0\", "), 0, "kernels=1"),
      Info("BaseTimeHuge", "t.json", KinetoDoc(k, "\"baseTimeNanoseconds\": 9223372036854775807, "), 2,
           "$DIR/t.json: offset 44: baseTimeNanoseconds + ts beyond the supported range"),
      // Regression (issue 11): std::regex overflowed the stack on this name (`^void .*nccl`).
      Analyze("VoidNameOf40000Chars", KinetoDoc(KernelEvent("\"void " + std::string(40000, 'x') + "nccl\"")),
              "gate: PASS pid -1 (GPU 0): comm_ns>=5000", {"--require", "comm_ns>=5000"}),
      // ... and user rules with nested or repeated `.*` were quadratic (RE2: linear).
      Analyze("UserRegexOnMegabyteName", KinetoDoc(KernelEvent("\"" + std::string(1 << 20, 'a') + "\"")),
              "gate: PASS pid -1 (GPU 0): compute_ns>=5000",
              {"--comm-kernel", "(a*)*b", "--compute-kernel", ".*.*.*z", "--require", "compute_ns>=5000"}),
  };
  // gzip
  const std::string doc = KinetoDoc(k);
  const std::string gz = Gzip(doc);
  v.push_back(Info("GzipTruncated", "t.json.gz", gz.substr(0, gz.size() / 2), 2, "$DIR/t.json.gz: offset "));
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 6] ^= 0x55;
  v.push_back(Info("GzipBadCrc", "t.json.gz", bad_crc, 2, "$DIR/t.json.gz: offset "));
  std::string corrupt = gz;
  corrupt[gz.size() / 2] ^= 0xff;
  v.push_back(Info("GzipCorruptDeflate", "t.json.gz", corrupt, 2, "$DIR/t.json.gz: offset "));
  v.push_back(Info("GzipTrailingGarbage", "t.json.gz", gz + "garbage!", 2, "$DIR/t.json.gz: offset "));
  v.push_back(Info("GzipHeaderOnly", "t.json.gz", gz.substr(0, 10), 2, "$DIR/t.json.gz: offset 0: "));
  v.push_back(Info("GzipOfNotJson", "t.json.gz", Gzip("not json at all"), 2, "$DIR/t.json.gz: offset 0: "));
  v.push_back(Info("GzipTwoMembers", "t.json.gz", Gzip(doc.substr(0, 30)) + Gzip(doc.substr(30)), 0, "kernels=1"));
  v.push_back(Info("GzipContentNamedJson", "t.json", gz, 0, "kernels=1"));
  v.push_back(Info("PlainContentNamedGz", "t.json.gz", doc, 0, "kernels=1"));
  {
    CatalogueCase c;  // 256 MiB of whitespace in 256 KiB: streamed, never held
    c.name = "GzipBombOfWhitespace";
    c.setup = [](const std::string& dir) {
      WriteGzipBomb(dir + "/t.json.gz", "{\"traceEvents\": [", ' ', int64_t{256} << 20, "]}");
      return std::vector<std::string>{"info", dir + "/t.json.gz"};
    };
    c.exit_code = 0;  // an empty trace
    c.message = "time span   0.000 ms";
    c.in_stdout = true;
    c.timeout_s = 60;
    v.push_back(c);
  }
  {
    CatalogueCase c;  // one name of 512 MiB in 2 MiB: refused with a message, memory stays bounded
    c.name = "GzipBombOfOneHugeName";
    c.setup = [](const std::string& dir) {
      WriteGzipBomb(dir + "/t.json.gz", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"", 'n',
                    int64_t{1} << 29, "\", \"ts\": 1, \"dur\": 1}]}");
      return std::vector<std::string>{"info", dir + "/t.json.gz"};
    };
    c.exit_code = 2;
    c.message = "$DIR/t.json.gz: offset ";
    c.max_rss_mb = 400;
    c.timeout_s = 120;
    v.push_back(c);
  }
  return v;
}

}  // namespace overlapscope::testing
