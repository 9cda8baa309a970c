# cmake -DCASE_FILE=<file> -P tyche_compile_fail.cmake
# CASE_FILE sets SOURCE, REGEX, COMPILER, INCLUDE_DIRS, DEFINES (see TycheCompileFail.cmake).
# Succeeds only if compiling SOURCE fails and the compiler's stderr matches REGEX.
cmake_minimum_required(VERSION 3.25)
include(${CASE_FILE})

set(args -std=c++20 -fsyntax-only)
# Like CMake itself, do not pass the compiler's own system directories (e.g. /usr/include, where
# the Debian Boost/xtensor/xsimd live) as -I: that can break `#include_next` in the C++ library.
list(REMOVE_DUPLICATES INCLUDE_DIRS)
if(IMPLICIT_INCLUDE_DIRS)
    list(REMOVE_ITEM INCLUDE_DIRS ${IMPLICIT_INCLUDE_DIRS})
endif()
foreach(dir IN LISTS INCLUDE_DIRS)
    list(APPEND args -I${dir})
endforeach()
foreach(def IN LISTS DEFINES)
    list(APPEND args -D${def})
endforeach()

# LC_ALL=C: plain ASCII quotes in diagnostics, so regexes do not depend on the locale.
execute_process(
    COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${COMPILER} ${args} ${SOURCE}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)

string(JOIN " " cmdline ${COMPILER} ${args} ${SOURCE})
if(rc EQUAL 0)
    message(FATAL_ERROR "compile-fail test: ${SOURCE} COMPILED, but it must not.\n"
                        "command: ${cmdline}\nexpected an error matching: ${REGEX}")
endif()
if(NOT err MATCHES "${REGEX}")
    string(SUBSTRING "${err}" 0 4000 err_head)
    message(FATAL_ERROR "compile-fail test: ${SOURCE} failed to compile (as expected), but its "
                        "diagnostics do not match the regex\n  ${REGEX}\n"
                        "command: ${cmdline}\n--- compiler stderr (head) ---\n${err_head}")
endif()
message(STATUS "compile-fail test: ${SOURCE} failed to compile as expected (matched: ${REGEX})")
