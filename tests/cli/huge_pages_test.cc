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
  EXPECT_TRUE(WantHugePageRestart(nullptr, nullptr, nullptr, kMadvise, "2.36"));
  EXPECT_TRUE(WantHugePageRestart(nullptr, "1", nullptr, kMadvise, "2.35"));
  EXPECT_TRUE(WantHugePageRestart(nullptr, nullptr, nullptr, kMadvise, "3.0"));
  EXPECT_FALSE(WantHugePageRestart("glibc.malloc.arena_max=2", nullptr, nullptr, kMadvise, "2.36"));  // the caller's
  EXPECT_FALSE(WantHugePageRestart(nullptr, "0", nullptr, kMadvise, "2.36"));                         // opted out
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, nullptr, "[always] madvise never\n", "2.36"));   // already on
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, nullptr, "always madvise [never]\n", "2.36"));   // none to have
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, nullptr, "", "2.36"));                           // no THP
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, nullptr, kMadvise, "2.34"));                     // no tunable
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, nullptr, kMadvise, ""));                         // not glibc
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so", kMadvise,
                                   "2.36"));  // a preload: valgrind would not follow the exec
  EXPECT_TRUE(WantHugePageRestart(nullptr, nullptr, "", kMadvise, "2.36"));  // set but empty
}

}  // namespace
}  // namespace overlapscope::cli
