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
endfunction()
