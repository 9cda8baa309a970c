# cmake -DPROGRAM=<exe> -DEXPECTED=<file> [-DARGS=<arguments>] -P tyche_run_and_compare.cmake
# Runs PROGRAM (with the arguments ARGS, a ;-list: written $<SEMICOLON> inside add_test, whose
# arguments a plain ; would split); fails if it exits non-zero or, when EXPECTED
# exists, if its stdout differs from EXPECTED's content (byte for byte). Without an EXPECTED file
# only the exit code is checked.
cmake_minimum_required(VERSION 3.25)

execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
if(EXISTS ${EXPECTED})
    file(READ ${EXPECTED} expected)
    if(NOT out STREQUAL expected)
        get_filename_component(name ${PROGRAM} NAME)
        set(actual_file ${CMAKE_CURRENT_BINARY_DIR}/${name}.actual)
        file(WRITE ${actual_file} "${out}")
        execute_process(COMMAND diff -u ${EXPECTED} ${actual_file} OUTPUT_VARIABLE d ERROR_QUIET)
        message(FATAL_ERROR "stdout of ${PROGRAM} differs from ${EXPECTED} "
                            "(actual output saved to ${actual_file}):\n${d}")
    endif()
    message(STATUS "stdout matches ${EXPECTED}")
endif()
