// The JSON report reader (report/read_json.h): every golden report reads back into a Report that
// renders to the same bytes; malformed input is an error naming the source and where.
#include "report/read_json.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "report/render.h"

namespace overlapscope::report {
namespace {

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ReadJson, RoundTripsEveryGoldenReport) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(OVERLAPSCOPE_TEST_DATA) + "/golden")) {
    const std::string name = e.path().filename().string();
    if (name.size() < 13 || name.substr(name.size() - 13) != ".analyze.json") continue;
    const std::string text = Slurp(e.path());
    ASSERT_TRUE(LooksLikeReportJson(text)) << name;
    std::string version;
    absl::StatusOr<Report> r = ReadReportJson(text, name, &version);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status();
    EXPECT_EQ(version, kSchemaVersion) << name;
    const std::string again = RenderJson(*r);
    size_t at = 0;
    while (at < again.size() && at < text.size() && again[at] == text[at]) ++at;
    EXPECT_TRUE(again == text) << name << ": differs from the golden at byte " << at << ": golden \""
                               << text.substr(at > 80 ? at - 80 : 0, 160) << "\" read back \""
                               << again.substr(at > 80 ? at - 80 : 0, 160) << "\"";
    ++n;
  }
  EXPECT_GE(n, 12);  // tests/data/golden/inputs.txt lists 12 inputs
}

TEST(ReadJson, ErrorsNameSourceAndPlace) {
  absl::StatusOr<Report> r = ReadReportJson("{\"schema\": \"overlapscope.report/1\", ", "x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("x.json: offset"), std::string::npos) << r.status();
  r = ReadReportJson("{\"schema\": \"something else\"}", "y.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("y.json: not an overlapscope report"), std::string::npos);
  // A wrong type deep inside names its path.
  r = ReadReportJson(
      "{\"schema\": \"overlapscope.report/1\", \"tool\": \"t\", \"time_span\": {\"start_ns\": 0, \"end_ns\": 1}, "
      "\"options\": {\"iteration_marker\": \"P\", \"min_gap_ns\": 1, \"runtime_cutoff_ns\": 1, "
      "\"launch_delay_cutoff_ns\": 1, \"top_n\": 10}, \"iterations\": {\"marker\": \"P\", \"count\": 0, "
      "\"assigned_by_launch_call\": 0, \"assigned_by_own_start\": 0, \"outside_iterations\": 0}, \"classes\": {}, "
      "\"ranks\": [{\"label\": \"rank 0\", \"rank\": \"zero\"}]}",
      "z.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("z.json: ranks[0].rank: expected an integer"), std::string::npos)
      << r.status();
  EXPECT_FALSE(LooksLikeReportJson("[1, 2]"));
}

}  // namespace
}  // namespace overlapscope::report
