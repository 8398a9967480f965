// known_work [normal|abort|segv|thread_exit|fork|loop N|loop_spin N]: see known_work.h.
#include <cstdio>
#include <cstdlib>

#include "known_work.h"

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "normal";
  const int n = argc > 2 ? std::atoi(argv[2]) : 0;
  const int rc = overlapscope::testing::RunKnownWork(mode, n);
  std::printf("known_work %s: rc=%d\n", mode, rc);
  return rc;
}
