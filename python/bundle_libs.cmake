# cmake -DLIB=<libovscope.so> -DDEST=<dir> -P bundle_libs.cmake
# Copies LIB into DEST together with the Abseil shared libraries it loads (directly or through
# each other), so that the package works on machines without Abseil (LIB finds them through its
# DT_RPATH $ORIGIN). Everything else it needs (libc, libstdc++, zlib, CUDA's libcupti) is the
# system's.
file(GET_RUNTIME_DEPENDENCIES LIBRARIES ${LIB} RESOLVED_DEPENDENCIES_VAR _deps
  UNRESOLVED_DEPENDENCIES_VAR _missing PRE_INCLUDE_REGEXES "^libabsl_" PRE_EXCLUDE_REGEXES ".*")
if(_missing)
  message(FATAL_ERROR "bundle_libs: ${LIB} needs libraries that are not found: ${_missing}")
endif()
# Each under the name the loader asks for (its soname), as a plain file (wheels carry no links).
foreach(f IN LISTS LIB _deps)
  get_filename_component(_name ${f} NAME)
  configure_file(${f} ${DEST}/${_name} COPYONLY)
endforeach()
