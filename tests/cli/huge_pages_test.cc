// When the front end runs itself again with malloc's huge pages on (cli/huge_pages.h): only on
// OVERLAPSCOPE_HUGEPAGES=1, where the kernel gives them on request and glibc can ask, never over
// the caller's own GLIBC_TUNABLES or under an LD_PRELOAD. (Results never change: tools/threads_check.sh runs
// its 16-thread runs with them.)
#include "cli/huge_pages.h"

#include "gtest/gtest.h"

namespace overlapscope::cli {
namespace {

constexpr char kMadvise[] = "always [madvise] never\n";

TEST(HugePages, RestartsOnlyOnRequestWhereItCanHelp) {
  EXPECT_TRUE(WantHugePageRestart(nullptr, "1", nullptr, kMadvise, "2.36"));
  EXPECT_TRUE(WantHugePageRestart(nullptr, "1", nullptr, kMadvise, "2.35"));
  EXPECT_TRUE(WantHugePageRestart(nullptr, "1", nullptr, kMadvise, "3.0"));
  EXPECT_TRUE(WantHugePageRestart(nullptr, "1", "", kMadvise, "2.36"));            // LD_PRELOAD set but empty
  EXPECT_FALSE(WantHugePageRestart(nullptr, nullptr, nullptr, kMadvise, "2.36"));  // not asked for (the default)
  EXPECT_FALSE(WantHugePageRestart(nullptr, "0", nullptr, kMadvise, "2.36"));
  EXPECT_FALSE(WantHugePageRestart(nullptr, "yes", nullptr, kMadvise, "2.36"));
  EXPECT_FALSE(WantHugePageRestart("glibc.malloc.arena_max=2", "1", nullptr, kMadvise, "2.36"));  // the caller's
  EXPECT_FALSE(WantHugePageRestart(nullptr, "1", nullptr, "[always] madvise never\n", "2.36"));   // already on
  EXPECT_FALSE(WantHugePageRestart(nullptr, "1", nullptr, "always madvise [never]\n", "2.36"));   // none to have
  EXPECT_FALSE(WantHugePageRestart(nullptr, "1", nullptr, "", "2.36"));                           // no THP
  EXPECT_FALSE(WantHugePageRestart(nullptr, "1", nullptr, kMadvise, "2.34"));                     // no tunable
  EXPECT_FALSE(WantHugePageRestart(nullptr, "1", nullptr, kMadvise, ""));                         // not glibc
  EXPECT_FALSE(WantHugePageRestart(nullptr, "1", "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so", kMadvise,
                                   "2.36"));  // a preload: valgrind would not follow the exec
}

}  // namespace
}  // namespace overlapscope::cli
