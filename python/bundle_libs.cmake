# cmake -DLIB=<libovscope.so> -DDEST=<dir> -P bundle_libs.cmake
# Copies LIB into DEST together with the Abseil and RE2 shared libraries it loads (directly or
# through each other), so that the package works on machines without them or with another
# soname (Debian 12's libre2.so.9; Ubuntu 24.04 has libre2.so.10): LIB finds them through its
# DT_RPATH $ORIGIN. Everything else it needs (libc, libstdc++, zlib, CUDA's libcupti) is the
# system's.
file(GET_RUNTIME_DEPENDENCIES LIBRARIES ${LIB} RESOLVED_DEPENDENCIES_VAR _deps
  UNRESOLVED_DEPENDENCIES_VAR _missing PRE_INCLUDE_REGEXES "^libabsl_" "^libre2\\." PRE_EXCLUDE_REGEXES ".*")
if(_missing)
  message(FATAL_ERROR "bundle_libs: ${LIB} needs libraries that are not found: ${_missing}")
endif()
# Each under the name the loader asks for (its soname), as a plain file (wheels carry no links).
foreach(f IN LISTS LIB _deps)
  get_filename_component(_name ${f} NAME)
  configure_file(${f} ${DEST}/${_name} COPYONLY)
endforeach()
