# Enforces the layering of DESIGN.md at compile time.
#
# No target gets the source root on its include path. Instead each library gets a private
# "view" directory holding symlinks to exactly the source directories it may include
# (itself plus the arrows of DESIGN.md). Views propagate through PUBLIC links, so a target
# sees its own directory and those of what it links, and a forbidden `#include "x/..."`
# fails with "No such file or directory".
set(OVERLAPSCOPE_VIEWS ${CMAKE_BINARY_DIR}/include_views)

# overlapscope_view(<target> <dir>...): make <target> see the listed source dirs.
function(overlapscope_view target)
  set(view ${OVERLAPSCOPE_VIEWS}/${target})
  foreach(dir IN LISTS ARGN)
    get_filename_component(parent ${view}/${dir} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    if(NOT EXISTS ${view}/${dir})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${dir} ${view}/${dir} SYMBOLIC)
    endif()
  endforeach()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${view})
  else()
    target_include_directories(${target} PUBLIC ${view})
  endif()
endfunction()
