# cmake -DBUILD_DIR=... -DTARGET=... -DEXPECT=regex -P ExpectBuildFailure.cmake
# Passes when building TARGET fails AND the compiler output matches EXPECT (so an unrelated
# failure does not count as the layering check passing).
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} built, but it includes a header its layer may not use")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${TARGET} failed for another reason:\n${out}${err}")
endif()
message(STATUS "forbidden include rejected as expected")
