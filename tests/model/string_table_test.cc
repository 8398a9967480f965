#include "model/string_table.h"

#include <string>

#include "gtest/gtest.h"

namespace overlapscope::model {
namespace {

TEST(StringTable, EmptyStringIsIdZero) {
  StringTable t;
  EXPECT_EQ(t.Intern(""), 0);
  EXPECT_EQ(t.Get(0), "");
  EXPECT_EQ(t.size(), 1u);
}

TEST(StringTable, InternIsIdempotentAndDense) {
  StringTable t;
  StringId a = t.Intern("ncclDevKernel_AllGather_RING_LL");
  StringId b = t.Intern("ampere_fp16_gemm");
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
  EXPECT_EQ(t.Intern(std::string("ncclDevKernel_AllGather_RING_LL")), a);
  EXPECT_EQ(t.Find("ampere_fp16_gemm"), b);
  EXPECT_EQ(t.Find("missing"), kNone);
}

TEST(StringTable, ViewsStayValidAcrossGrowthAndLongStrings) {
  StringTable t;
  std::string long_name(100000, 'x');  // larger than a block: stored on its own
  StringId first = t.Intern("first");
  StringId big = t.Intern(long_name);
  std::vector<StringId> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(t.Intern("name_" + std::to_string(i)));
  EXPECT_EQ(t.Get(first), "first");
  EXPECT_EQ(t.Get(big), long_name);
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(t.Get(ids[i]), "name_" + std::to_string(i));
  EXPECT_EQ(t.Intern("name_19999"), ids.back());
}

}  // namespace
}  // namespace overlapscope::model
