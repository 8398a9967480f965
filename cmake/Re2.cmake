# RE2 (Debian libre2-dev): the linear-time regex engine of the classification rules
# (analyze/classify.h). Debian ships no CMake package for it, so this makes the imported target
# re2::re2. With OVERLAPSCOPE_STATIC the archive is linked (the GPU machine has no libre2).
find_path(OVERLAPSCOPE_RE2_INCLUDE re2/re2.h)
if(OVERLAPSCOPE_STATIC)
  find_library(OVERLAPSCOPE_RE2_LIBRARY NAMES libre2.a re2)
else()
  find_library(OVERLAPSCOPE_RE2_LIBRARY NAMES re2)
endif()
if(NOT OVERLAPSCOPE_RE2_INCLUDE OR NOT OVERLAPSCOPE_RE2_LIBRARY)
  message(FATAL_ERROR "RE2 not found: install libre2-dev (tools/install_deps.sh does)")
endif()
add_library(re2::re2 UNKNOWN IMPORTED)
set_target_properties(re2::re2 PROPERTIES IMPORTED_LOCATION ${OVERLAPSCOPE_RE2_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${OVERLAPSCOPE_RE2_INCLUDE} INTERFACE_LINK_LIBRARIES Threads::Threads)
