# cmake -DMODE=<find_package|add_subdirectory|single_header> -DTYCHE_SOURCE_DIR=... -DTYCHE_BINARY_DIR=...
#       -DWORK_DIR=... -DCXX_COMPILER=... -DGENERATOR=... [-DBUILD_TYPE=...] [-DCOMPONENTS=io,mpi]
#       -P run_consumer.cmake
#
# Configures, builds and runs the tiny consumer project tests/cmake/<MODE>/ with the same C++
# compiler as the outer build:
#   find_package     : `cmake --install` the outer build tree into WORK_DIR/install_prefix, then
#                      find_package(tyche CONFIG) with CMAKE_PREFIX_PATH pointing there;
#   add_subdirectory : add_subdirectory(${TYCHE_SOURCE_DIR} tyche);
#   single_header    : only single_include/ (plus Boost/xtensor/xsimd) on the include path.
cmake_minimum_required(VERSION 3.25)

foreach(var MODE TYCHE_SOURCE_DIR TYCHE_BINARY_DIR WORK_DIR CXX_COMPILER GENERATOR)
    if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
        message(FATAL_ERROR "run_consumer.cmake: -D${var}=... is required")
    endif()
endforeach()
if(NOT BUILD_TYPE)
    set(BUILD_TYPE Release)
endif()

function(run)
    string(JOIN " " pretty ${ARGN})
    message(STATUS "+ ${pretty}")
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "command failed (${rc}): ${pretty}")
    endif()
endfunction()

set(project_dir ${TYCHE_SOURCE_DIR}/tests/cmake/${MODE})
set(build_dir ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

set(extra "")
if(MODE STREQUAL "find_package")
    set(prefix ${WORK_DIR}/install_prefix)
    run(${CMAKE_COMMAND} --install ${TYCHE_BINARY_DIR} --prefix ${prefix} --config ${BUILD_TYPE})
    list(APPEND extra -DCMAKE_PREFIX_PATH=${prefix})
    # The optional components the outer tree has (io, mpi; -DCOMPONENTS=io,mpi): the consumer asks
    # for them and builds a program with each.
    # (Passed on with commas: a list's semicolons would split the argument.)
    if(COMPONENTS)
        list(APPEND extra "-DTYCHE_EXPECT_COMPONENTS=${COMPONENTS}")
    endif()
elseif(MODE STREQUAL "add_subdirectory")
    list(APPEND extra -DTYCHE_SOURCE_DIR=${TYCHE_SOURCE_DIR})
elseif(MODE STREQUAL "single_header")
    list(APPEND extra -DTYCHE_SINGLE_INCLUDE_DIR=${TYCHE_SOURCE_DIR}/single_include)
else()
    message(FATAL_ERROR "run_consumer.cmake: unknown MODE '${MODE}'")
endif()

# The consumers check packaging (targets, install, include paths), not speed: -O1 compiles their
# NUTS driver in about half the time of a Release build's -O3 (CI time).
if(BUILD_TYPE STREQUAL "Release")
    list(APPEND extra "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG")
endif()
run(${CMAKE_COMMAND} -S ${project_dir} -B ${build_dir} -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE} ${extra})
run(${CMAKE_COMMAND} --build ${build_dir} --config ${BUILD_TYPE})

# Locate the executable (multi-config generators put it in a per-config folder).
if(EXISTS ${build_dir}/consumer)
    set(exe ${build_dir}/consumer)
elseif(EXISTS ${build_dir}/${BUILD_TYPE}/consumer)
    set(exe ${build_dir}/${BUILD_TYPE}/consumer)
else()
    message(FATAL_ERROR "consumer executable not found under ${build_dir}")
endif()
run(${exe})
# A consumer of tyche::separate_driver, and of the components io and mpi, where the project has
# them (find_package). consumer_mpi runs as one process (an MPI singleton, no mpirun).
get_filename_component(exe_dir ${exe} DIRECTORY)
foreach(name IN ITEMS consumer_driver consumer_io consumer_mpi)
    if(EXISTS ${exe_dir}/${name})
        run(${exe_dir}/${name})
    endif()
endforeach()
if(MODE STREQUAL "find_package" AND COMPONENTS)
    # Without the component's dependency the components io and mpi are refused with a reason;
    # a name that is no component always is: find_package must fail and say so.
    set(bad_dir ${WORK_DIR}/build_bad_component)
    execute_process(COMMAND ${CMAKE_COMMAND} -S ${project_dir} -B ${bad_dir} -G ${GENERATOR}
                            -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
                            -DTYCHE_ASK_COMPONENT=nonsense
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    string(REGEX REPLACE "[ \t\r\n]+" " " all "${out} ${err}")
    if(rc EQUAL 0 OR NOT all MATCHES "'nonsense' is not a component of tyche \\(the components are io and mpi\\)")
        message(FATAL_ERROR "find_package(tyche COMPONENTS nonsense): exit ${rc}, expected a failure naming the "
                            "component; output:\n${out}\n${err}")
    endif()
    message(STATUS "find_package(tyche COMPONENTS nonsense) refused, as expected")
endif()
message(STATUS "consumer (${MODE}) OK")
