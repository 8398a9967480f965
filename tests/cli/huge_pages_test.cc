// When the front end runs itself again with malloc's huge pages on (cli/huge_pages.h): only
// where the kernel gives them on request and glibc can ask, never over the caller's own
// GLIBC_TUNABLES or OVERLAPSCOPE_HUGEPAGES=0. (Results never change: the goldens run the
// re-executed binary, tools/threads_check.sh both.)
#include "cli/huge_pages.h"

#include "gtest/gtest.h"

namespace overlapscope::cli {
namespace {

constexpr char kMadvise[] = "always [madvise] never\n";

TEST(HugePages, RestartsOnlyWhereItHelps) {
  EXPECT_TRUE(WantHugePageRestart(nullptr, nullptr, kMadvise, "2.36"));
  EXPECT_TRUE(WantHugePageRestart(nullptr, "1", kMadvise, "2.35"));
  EXPECT_TRUE(WantHugePageRestart(nullptr, nullptr, kMadvise, "3.0"));
  EXPECT_FALSE(WantHugePageRestart("glibc.malloc.arena_max=2", nullptr, kMadvise, "2.36"));  // the caller's
  EXPECT_FALSE(WantHugePageRestart(nullptr, "0", kMadvise, "2.36"));                         // opted out
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, "[always] madvise never\n", "2.36"));   // already on
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, "always madvise [never]\n", "2.36"));   // none to have
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, "", "2.36"));                           // no THP
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, kMadvise, "2.34"));                     // no tunable
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, kMadvise, ""));                         // not glibc
}

}  // namespace
}  // namespace overlapscope::cli
