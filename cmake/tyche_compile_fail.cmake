# cmake -DCASE_FILE=<file> -P tyche_compile_fail.cmake
# CASE_FILE sets SOURCE, REGEX, COMPILER, INCLUDE_DIRS, DEFINES (see TycheCompileFail.cmake).
# Succeeds only if compiling SOURCE fails and the compiler's stderr matches REGEX — or REGEX
# matches BATCH_DIAG, what the case's batch filed for it (below). With MODE pch it precompiles
# <tyche/tyche.hpp> for the cases; with MODE batch it runs tools/compile_fail_batch.py on a batch.
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
if(EXTRA_FLAGS)
    separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
    list(APPEND args ${extra})
endif()

# MODE pch: precompile SOURCE (the umbrella header) into PCH with the cases' flags, then stop.
if(MODE STREQUAL "pch")
    get_filename_component(pch_dir ${PCH} DIRECTORY)
    file(MAKE_DIRECTORY ${pch_dir})
    list(REMOVE_ITEM args -fsyntax-only)
    if(COMPILER_ID MATCHES "Clang")
        list(APPEND args -Wno-pragma-once-outside-header)  # the header is the main file here
    endif()
    execute_process(
        COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${COMPILER} ${args} -x c++-header ${SOURCE} -o ${PCH}
        RESULT_VARIABLE rc
        ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        file(REMOVE ${PCH})  # the cases then compile without it
        message(WARNING "compile-fail tests: could not precompile ${SOURCE}; the cases run without it\n${err}")
    endif()
    return()
endif()

if(MODE STREQUAL "batch")
    # Several cases as one translation unit (tools/compile_fail_batch.py, TycheCompileFail.cmake).
    set(pch_args "")
    if(PCH AND EXISTS "${PCH}")
        get_filename_component(pch_dir "${PCH}" DIRECTORY)
        if(COMPILER_ID MATCHES "Clang")
            set(pch_args -include-pch "${PCH}")
        else()
            get_filename_component(pch_dir "${pch_dir}" DIRECTORY)
            set(pch_args "-I${pch_dir}")
        endif()
    endif()
    if(COMPILER_ID MATCHES "Clang")
        list(APPEND args -ferror-limit=0)  # every case's errors, not the first 20
    else()
        list(APPEND args -fmax-errors=0)
    endif()
    execute_process(
        COMMAND ${PYTHON} ${BATCH_SCRIPT} --out ${OUT} --cases ${CASES} -- ${COMPILER} ${pch_args} ${args}
        RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)  # the batch only saves time: its cases then compile alone
        message(WARNING "compile-fail batch: ${BATCH_SCRIPT} failed (${rc}); its cases compile alone")
    endif()
    return()
endif()

# What this case's batch filed for it, when it is newer than the case and the precompiled header:
# a match there is this case's error, reported by the compiler on this case's own lines.
if(BATCH_DIAG AND EXISTS "${BATCH_DIAG}" AND "${BATCH_DIAG}" IS_NEWER_THAN "${SOURCE}"
   AND (NOT PCH OR NOT EXISTS "${PCH}" OR "${BATCH_DIAG}" IS_NEWER_THAN "${PCH}"))
    file(READ "${BATCH_DIAG}" err)
    if(err MATCHES "${REGEX}")
        message(STATUS "compile-fail test: ${SOURCE} failed to compile as expected, in its batch's "
                       "translation unit (matched: ${REGEX}); errors filed for it: ${BATCH_DIAG}")
        return()
    endif()
endif()

# The precompiled umbrella header, when the source includes it first (see TycheCompileFail.cmake).
set(pch_args "")
# Not with a #define before it (a macro that changes what the header declares, e.g.
# TYCHE_SMC_FORK_ENGINE 0): the precompiled header was built without it.
file(STRINGS ${SOURCE} includes REGEX "^#include")
list(GET includes 0 first_include)
file(STRINGS ${SOURCE} defines REGEX "^#define")
if(PCH AND EXISTS ${PCH} AND first_include STREQUAL "#include <tyche/tyche.hpp>" AND NOT defines)
    get_filename_component(pch_dir ${PCH} DIRECTORY)
    if(COMPILER_ID MATCHES "Clang")
        set(pch_args -include-pch ${PCH})
    else()
        get_filename_component(pch_dir ${pch_dir} DIRECTORY)  # <dir>/tyche/tyche.hpp.gch: -I<dir>
        set(pch_args -I${pch_dir})
    endif()
endif()

# LC_ALL=C: plain ASCII quotes in diagnostics, so regexes do not depend on the locale.
execute_process(
    COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${COMPILER} ${pch_args} ${args} ${SOURCE}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
# A precompiled header that no longer matches (headers changed since it was built, other flags):
# compile again without it.
if(pch_args AND (err MATCHES "precompiled header|PCH file"))
    set(pch_args "")
    execute_process(
        COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${COMPILER} ${args} ${SOURCE}
        RESULT_VARIABLE rc
        OUTPUT_VARIABLE out
        ERROR_VARIABLE err)
endif()

string(JOIN " " cmdline ${COMPILER} ${pch_args} ${args} ${SOURCE})
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
