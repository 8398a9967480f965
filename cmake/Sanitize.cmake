# OVERLAPSCOPE_SANITIZE: every target compiled and linked with AddressSanitizer and
# UndefinedBehaviorSanitizer; any report aborts the process (-fno-sanitize-recover), so a test
# or a fuzz run that triggers one fails. OVERLAPSCOPE_FUZZ adds libFuzzer's coverage
# instrumentation (-fsanitize=fuzzer-no-link) to all code and builds the fuzz_* binaries
# (fuzz/CMakeLists.txt); the tests of such a build run with the instrumentation too.
if(OVERLAPSCOPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "OVERLAPSCOPE_FUZZ needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++")
  endif()
  set(OVERLAPSCOPE_SANITIZE ON)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(OVERLAPSCOPE_SANITIZE)
  # CUDA code (nvcc, CUPTI callbacks in a profiled process) is not built under sanitizers: the
  # capture and workloads are checked on the GPU machine instead.
  set(OVERLAPSCOPE_CUDA OFF)
  # Line tables are all the sanitizers' stack traces need (full -g makes the build slower).
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
    $<IF:$<CXX_COMPILER_ID:Clang>,-gline-tables-only,-g1>)
  add_link_options(-fsanitize=address,undefined)
endif()
# OVERLAPSCOPE_TSAN: ThreadSanitizer instead (tools/tsan_check.sh: the parallel parse, inflate
# and analyses at 16 threads); excludes the other sanitizers and CUDA. Any report fails (halt_on_error
# in TSAN_OPTIONS, set by the script).
if(OVERLAPSCOPE_TSAN)
  if(OVERLAPSCOPE_SANITIZE)
    message(FATAL_ERROR "OVERLAPSCOPE_TSAN excludes OVERLAPSCOPE_SANITIZE / OVERLAPSCOPE_FUZZ")
  endif()
  set(OVERLAPSCOPE_CUDA OFF)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer $<IF:$<CXX_COMPILER_ID:Clang>,-gline-tables-only,-g1>)
  add_link_options(-fsanitize=thread)
endif()
