# OVERLAPSCOPE_STATIC: binaries that run on the GPU machine, which has no Abseil or GoogleTest.
# Debian's Abseil package imports its shared libraries; point every imported absl target at
# the static archive beside it instead, and link libstdc++/libgcc statically too.
if(OVERLAPSCOPE_STATIC)
  get_property(_targets DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY IMPORTED_TARGETS)
  foreach(t IN LISTS _targets)
    if(t MATCHES "^absl::")
      foreach(prop IMPORTED_LOCATION_NONE IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION)
        get_target_property(loc ${t} ${prop})
        if(loc AND loc MATCHES "\\.so")
          string(REGEX REPLACE "\\.so.*$" ".a" static_loc "${loc}")
          if(EXISTS ${static_loc})
            set_target_properties(${t} PROPERTIES ${prop} ${static_loc})
          endif()
        endif()
      endforeach()
    endif()
  endforeach()
  add_link_options(-static-libstdc++ -static-libgcc)
  set(GTEST_LIBS GTest::gtest)  # Debian ships only libgtest.a: already static
endif()
