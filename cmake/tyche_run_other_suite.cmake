# cmake -DCTEST=<ctest> -DTREE=<build tree> -P tyche_run_other_suite.cmake
#
# The test clang_suite: the other compiler's tree's whole ctest run, in two parts — the
# compile-fail tests (label compile_fail: -fsyntax-only compiles, most cases in two batches;
# tests/compile_fail/README.md),
# then everything else, both on every core at once, as the rest of the suite runs (the SMC fork
# engine's error tests, smc_fork, are RUN_SERIAL: they count their executable's processes and time
# a failing run). Fails when either part fails.
cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
execute_process(COMMAND ${CTEST} --test-dir ${TREE} --output-on-failure -L compile_fail -j ${cores}
                RESULT_VARIABLE compile_fail_result)
execute_process(COMMAND ${CTEST} --test-dir ${TREE} --output-on-failure -LE compile_fail -j ${cores}
                RESULT_VARIABLE rest_result)
if(NOT compile_fail_result EQUAL 0 OR NOT rest_result EQUAL 0)
  message(FATAL_ERROR "clang_suite: compile-fail tests ${compile_fail_result}, other tests ${rest_result} (0 = passed)")
endif()
