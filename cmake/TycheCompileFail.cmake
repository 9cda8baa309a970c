# tyche_add_compile_fail_test(<name> <source> <regex> [<extra flags>])
#
# Registers ctest test <name>: it compiles <source> with
#   ${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -I<tyche include/, Boost, xtensor, xtl, xsimd>
# and PASSES only if the compiler FAILS and its stderr matches <regex> (a CMake regex, searched
# anywhere in the output), with the ctest label compile_fail. The check itself is
# cmake/tyche_compile_fail.cmake, run with `cmake -P`.
#
# A source whose first include is <tyche/tyche.hpp> (all but one) is compiled with a precompiled
# <tyche/tyche.hpp> (g++: a .gch found beside the header; clang++: -include-pch), built once per
# build tree by the target tyche_compile_fail_pch from the same flags: about 2 s a case instead of
# 5-7 s. Where the precompiled header cannot be used (stale, other flags), the case is compiled
# without it.
#
# Batches: tyche_add_compile_fail_batches(<count>), called after the cases are registered, adds
# tests compile_fail_batch_<k> (ctest fixtures) that compile the cases without extra flags as a few
# translation units (tools/compile_fail_batch.py: each case in a namespace of its own; compilers
# go on after an error) and file each error under the one case whose file it names. A case then
# matches its regex against what its batch filed for it and is compiled alone, as without
# batches, only when that does not match (its error not reported, or not attributable to it:
# clang reports a function template's error without the case's line when it instantiated the
# function at the end of the unit). 2026-11-28, 2 cores: the compile-fail run 80.6 s -> 18.5 s
# with g++ (119 of 123 cases batched). `ctest -R <case>` runs the case's batch first (about half
# of the cases); `-FS compile_fail_batch_0 -FS compile_fail_batch_1` skips it (the case then
# uses what a batch filed before, if newer than the case and the precompiled header).
include_guard(GLOBAL)

set(_TYCHE_COMPILE_FAIL_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/tyche_compile_fail.cmake)

function(tyche_add_compile_fail_test name source regex)
    set(extra_flags "${ARGV3}")  # optional: extra compiler flags (a string, split at spaces)
    get_filename_component(source ${source} ABSOLUTE)
    set(dir ${CMAKE_CURRENT_BINARY_DIR}/compile_fail)
    # Include directories and definitions of tyche::simd, transitively, evaluated at generate time.
    set(flags_file ${dir}/flags.cmake)
    get_property(flags_done DIRECTORY PROPERTY _TYCHE_COMPILE_FAIL_FLAGS_DONE)
    if(NOT flags_done)
        set_property(DIRECTORY PROPERTY _TYCHE_COMPILE_FAIL_FLAGS_DONE TRUE)
        file(GENERATE OUTPUT ${flags_file} CONTENT
"set(INCLUDE_DIRS [==[$<TARGET_PROPERTY:tyche_simd,INTERFACE_INCLUDE_DIRECTORIES>]==])
set(DEFINES [==[$<TARGET_PROPERTY:tyche_simd,INTERFACE_COMPILE_DEFINITIONS>]==])
")
    endif()
    # The precompiled umbrella header, once per directory (see above).
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
        set(pch ${dir}/pch/tyche.hpp.pch)
    else()
        set(pch ${dir}/pch/tyche/tyche.hpp.gch)
    endif()
    get_property(pch_done DIRECTORY PROPERTY _TYCHE_COMPILE_FAIL_PCH_DONE)
    if(NOT pch_done)
        set_property(DIRECTORY PROPERTY _TYCHE_COMPILE_FAIL_PCH_DONE TRUE)
        set(pch_case ${dir}/pch.cmake)
        file(WRITE ${pch_case}
"set(MODE pch)
set(SOURCE [==[${PROJECT_SOURCE_DIR}/include/tyche/tyche.hpp]==])
set(PCH [==[${pch}]==])
set(COMPILER [==[${CMAKE_CXX_COMPILER}]==])
set(COMPILER_ID [==[${CMAKE_CXX_COMPILER_ID}]==])
set(IMPLICIT_INCLUDE_DIRS [==[${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES}]==])
include([==[${flags_file}]==])
")
        file(GLOB_RECURSE tyche_headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/tyche/*.hpp)
        add_custom_command(OUTPUT ${pch}
            COMMAND ${CMAKE_COMMAND} -DCASE_FILE=${pch_case} -P ${_TYCHE_COMPILE_FAIL_SCRIPT}
            DEPENDS ${tyche_headers} ${_TYCHE_COMPILE_FAIL_SCRIPT}
            COMMENT "Precompiling tyche/tyche.hpp for the compile-fail tests")
        add_custom_target(tyche_compile_fail_pch ALL DEPENDS ${pch})
    endif()
    # The regex goes through a file, so that any character (`;`, quotes, `$`) survives.
    set(case_file ${dir}/${name}.cmake)
    file(WRITE ${case_file}
"set(SOURCE [==[${source}]==])
set(REGEX [==[${regex}]==])
set(EXTRA_FLAGS [==[${extra_flags}]==])
set(PCH [==[${pch}]==])
set(COMPILER [==[${CMAKE_CXX_COMPILER}]==])
set(COMPILER_ID [==[${CMAKE_CXX_COMPILER_ID}]==])
set(IMPLICIT_INCLUDE_DIRS [==[${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES}]==])
include([==[${flags_file}]==])
")
    add_test(NAME ${name}
        COMMAND ${CMAKE_COMMAND} -DCASE_FILE=${case_file} -P ${_TYCHE_COMPILE_FAIL_SCRIPT})
    # `ctest -L compile_fail` runs them all.
    set_tests_properties(${name} PROPERTIES LABELS compile_fail)
    if(NOT extra_flags)
        set_property(DIRECTORY APPEND PROPERTY _TYCHE_COMPILE_FAIL_BATCHABLE "${name}|${source}")
    endif()
endfunction()

# tyche_add_compile_fail_batches(<count>): see the top of this file. Needs Python3_EXECUTABLE.
function(tyche_add_compile_fail_batches count)
    get_property(cases DIRECTORY PROPERTY _TYCHE_COMPILE_FAIL_BATCHABLE)
    list(LENGTH cases n)
    if(n EQUAL 0 OR NOT Python3_EXECUTABLE)
        return()
    endif()
    set(dir ${CMAKE_CURRENT_BINARY_DIR}/compile_fail)
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
        set(pch ${dir}/pch/tyche.hpp.pch)
    else()
        set(pch ${dir}/pch/tyche/tyche.hpp.gch)
    endif()
    math(EXPR last "${count} - 1")
    foreach(k RANGE ${last})
        set(list_${k} "")
    endforeach()
    set(i 0)
    foreach(entry IN LISTS cases)  # round robin: the batches take about as long
        string(REPLACE "|" ";" parts "${entry}")
        list(GET parts 0 name)
        list(GET parts 1 source)
        math(EXPR k "${i} % ${count}")
        string(APPEND list_${k} "${name}\t${source}\n")
        set_property(TEST ${name} APPEND PROPERTY FIXTURES_REQUIRED compile_fail_batch_${k})
        file(APPEND ${dir}/${name}.cmake "set(BATCH_DIAG [==[${dir}/batch/${name}.diag]==])\n")
        math(EXPR i "${i} + 1")
    endforeach()
    foreach(k RANGE ${last})
        set(cases_file ${dir}/batch_${k}.txt)
        file(WRITE ${cases_file} "${list_${k}}")
        set(case_file ${dir}/batch_${k}.cmake)
        file(WRITE ${case_file}
"set(MODE batch)
set(CASES [==[${cases_file}]==])
set(OUT [==[${dir}/batch]==])
set(PYTHON [==[${Python3_EXECUTABLE}]==])
set(BATCH_SCRIPT [==[${PROJECT_SOURCE_DIR}/tools/compile_fail_batch.py]==])
set(PCH [==[${pch}]==])
set(COMPILER [==[${CMAKE_CXX_COMPILER}]==])
set(COMPILER_ID [==[${CMAKE_CXX_COMPILER_ID}]==])
set(IMPLICIT_INCLUDE_DIRS [==[${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES}]==])
include([==[${dir}/flags.cmake]==])
")
        add_test(NAME compile_fail_batch_${k}
            COMMAND ${CMAKE_COMMAND} -DCASE_FILE=${case_file} -P ${_TYCHE_COMPILE_FAIL_SCRIPT})
        set_tests_properties(compile_fail_batch_${k} PROPERTIES LABELS compile_fail
                             FIXTURES_SETUP compile_fail_batch_${k})
    endforeach()
endfunction()
