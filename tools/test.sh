#!/usr/bin/env bash
# Builds and runs the whole tyche test suite with g++ (build/gcc) and, if installed, clang++
# (build/clang). `ctest --test-dir build/gcc` runs everything: its test `clang_suite` runs the
# clang tree's ctest; the compile-fail tests run in parallel first (see the end of this script).
# Tests labelled `long` (the full simulation-based calibration) are left out; run them with
# `ctest --test-dir build/gcc -L long`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

say() { printf '\n==> %s\n' "$*"; }
run() { printf '+ %s\n' "$*"; "$@"; }

say "installing missing packages"
run bash tools/setup.sh

jobs=$(nproc 2>/dev/null || echo 2)
# Optimised, but with assertions on (no -DNDEBUG).
common=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2")
# The test folders that check values and compile-time transformations, not long sampler runs:
# compiled at -O0 in the clang tree; the g++ tree compiles them and the sampler folders at -O1
# (see each tree below).
value_folders="autodiff;backends;compile;core;diagnostics;distributions;interval;io;model;operations;random;transforms"
# Both trees link their executables with lld where it is installed (tools/setup.sh installs it):
# TYCHE_LINKER, CMakeLists.txt. GNU ld took 17.7-18.9 s for each of the clang tree's largest
# sanitized test executables, lld 2.5-3.4 s.
linker="-DTYCHE_LINKER="
if command -v ld.lld >/dev/null 2>&1; then linker="-DTYCHE_LINKER=lld"; fi

# A tree configured before with another compiler: CMake would delete its cache and configure
# again WITHOUT the -D options given here (a Release build silently became an unoptimised one
# without the clang_suite test). Start such a tree afresh instead.
fresh_if_other_compiler() {  # fresh_if_other_compiler TREE COMPILER
    local cache="$1/CMakeCache.txt" was
    [ -f "$cache" ] || return 0
    was=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache")
    if [ -n "$was" ] && [ "$was" != "$2" ]; then
        say "$1 was configured with $was: removing its CMake cache"
        rm -rf "$1/CMakeCache.txt" "$1/CMakeFiles"
    fi
}

clangxx=""
for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null 2>&1; then clangxx=$(command -v "$c"); break; fi
done

other=""
if [ -n "$clangxx" ]; then
    other="$root/build/clang"
    say "configuring build/clang with $clangxx"
    # TYCHE_OTHER_BUILD_DIR empty: the clang tree gets no clang_suite test of its own.
    # CUDA (nvcc) is built in the gcc tree only.
    # TYCHE_LONG_TESTS=OFF: the long tests (label long) run in neither tree by default.
    fresh_if_other_compiler build/clang "$clangxx"
    # The benchmarks, the header self-containment TUs and the second builds of test folders
    # against single_include/ are built in the gcc tree only, and the compiler-independent checks
    # (single header, include order, README quotes, CMake consumers) run there only (they test
    # what one compiler finds as well as two; CI time).
    # TYCHE_SANITIZE: every test and example of the clang tree runs under AddressSanitizer and
    # UndefinedBehaviorSanitizer (suppressions, each with its reason: tests/sanitizers/); the
    # libFuzzer harnesses of tests/fuzz (label fuzz, 10 s each) are built here too.
    # TYCHE_TEST_O0_FOLDERS: the test folders that check values and compile-time transformations,
    # not long sampler runs, are compiled at -O0 here (2.5x faster with clang under the sanitizers,
    # which check the unoptimised code as well; tests/CMakeLists.txt), and inference and smc (clang
    # under the sanitizers, 2026-12-07: inference's one unity file 140-166 s at -O2, 41 s at -O0,
    # its run 2.6 -> 49 s alone and 87 s in a CI run beside the other tests, three cases: a 300-d
    # optimisation and ADVI's runs to CmdStan's defaults; smc's two 147 -> 31 s, their in-process
    # run 14 -> 51 s alone and 65 s in CI, the fork engine's as before: the forks' cost, not the
    # code's). samplers (-O0: 235 against 470 compile seconds,
    # but its run 46 -> 745 s) and the examples stay at -O2 (their runs are long).
    # TYCHE_EXAMPLES_O0: likewise the examples that run for a fraction of a second
    # (examples/CMakeLists.txt).
    run cmake -S . -B build/clang "${common[@]}" -DCMAKE_CXX_COMPILER="$clangxx" "$linker" \
        "-DTYCHE_TEST_O0_FOLDERS=$value_folders;inference;smc" \
        -DTYCHE_EXAMPLES_O0=ON \
        -DTYCHE_OTHER_BUILD_DIR= -DTYCHE_ENABLE_CUDA=OFF -DTYCHE_LONG_TESTS=OFF \
        -DTYCHE_BUILD_BENCH=OFF -DTYCHE_HEADER_TESTS=OFF -DTYCHE_SINGLE_HEADER_TESTS=OFF \
        -DTYCHE_REPOSITORY_TESTS=OFF -DTYCHE_MPI_TESTS=OFF \
        -DTYCHE_SANITIZE=address,undefined
else
    say "clang++ not found: testing with g++ only"
fi

say "configuring build/gcc with g++"
fresh_if_other_compiler build/gcc "$(command -v g++)"
# The benchmarks are compiled here to check that they compile (none runs in the suite):
# -fsyntax-only (TYCHE_BENCH_SYNTAX_ONLY, bench/CMakeLists.txt), which instantiates every template
# and generates no code: 40 % of the time of the -O1 build it replaced (bench/run.sh builds them at
# -O3 in their own tree, build/bench-release).
# The CUDA tests likewise: without a GPU (CI has none) they only have to compile, so their device
# code is compiled to unoptimised PTX only (90-virtual: no ptxas, a GPU would JIT it; -Xcicc -O0:
# NVVM does not optimise) and their host code at -O0 — tests/cuda/nuts_executor_test.cu in 68 s
# (cicc 24 s) instead of 165 s (cicc 122 s) with optimised PTX, and 5m58s for sm_90 code at -O3
# (tests/cuda/README.md). A tree for a GPU run is configured without these settings.
# TYCHE_TEST_O1_FOLDERS: every Catch2 test folder that the g++ tree builds (below) at -O1: with g++ a third less compile time than -O2
# (the value-checking folders 1,012 -> 716 user s, samplers, inference and smc 361 -> 233); the
# sampler tests took 40 s alone at -O1 (63 s at -O2 in a CI run beside clang_suite); -O1 keeps g++'s optimisation-dependent
# warnings (-Werror) and optimised test code; and the MPI test (tests/mpi, 63.7 -> 47.4 s). The
# examples stay at -O2, as the sanitized clang tree's samplers and long examples
# do (tests/CMakeLists.txt).
# TYCHE_TEST_SYNTAX_ONLY_FOLDERS: where the clang tree compiles and runs the value-checking folders
# (at -O0, under the sanitizers), the g++ tree only compiles them, with -fsyntax-only: every test
# still has to compile with g++ and -Werror, and runs once, from clang's code (tests/CMakeLists.txt;
# 42 % of -O1's compile time, about 800 of the 3,200 compile seconds of a CI run before
# 2026-12-03). Likewise, since 2026-12-06, the sampler, inference and SMC folders, which the clang
# tree compiles at -O2 and runs under the sanitizers: g++ -O1 took 225 compile seconds for them in a
# CI run (samplers 172, inference 43, smc 43 less the PCH) and their runs about 60 s (samplers 45 s
# alone); the g++ tree's examples (at -O2, run) and the MPI test (NUTS on two ranks) still run
# g++'s code of the sampler. Without clang the g++ tree builds and runs them.
syntax_only=""
if [ -n "$other" ]; then syntax_only="$value_folders;inference;samplers;smc"; fi
run cmake -S . -B build/gcc "${common[@]}" -DCMAKE_CXX_COMPILER="$(command -v g++)" "$linker" \
    "-DTYCHE_TEST_O1_FOLDERS=$value_folders;inference;samplers;smc;mpi" \
    "-DTYCHE_TEST_SYNTAX_ONLY_FOLDERS=$syntax_only" \
    -DTYCHE_OTHER_BUILD_DIR="$other" "-DTYCHE_BENCH_FLAGS=-O1;-march=native" -DTYCHE_BENCH_SYNTAX_ONLY=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90-virtual "-DCMAKE_CUDA_FLAGS_RELEASE=-O0 -Xcicc -O0"

# Both trees are built at once, under one GNU make jobserver ($jobs compiles at a time between
# them; tools/build_trees.mk): one tree after the other left a core idle while each tree's last
# long objects compiled (`cmake --build build/<tree>` builds one alone, as before).
trees="build/gcc"
if [ -n "$other" ]; then trees="build/clang build/gcc"; fi
say "building $trees, $jobs compiles at a time between them"
makefiles=1
for t in $trees; do [ -f "$t/Makefile" ] || makefiles=0; done
if [ "$makefiles" = 1 ]; then
    run make -j "$jobs" -f tools/build_trees.mk "TREES=$trees"
else  # a tree configured with another generator (CMAKE_GENERATOR=Ninja, say): one after the other
    for t in $trees; do run cmake --build "$t" -j "$jobs"; done
fi

# The compile-fail tests (label compile_fail: ~120 cases, most compiled together in two batches,
# tests compile_fail_batch_0/1, the rest alone; tests/compile_fail/README.md) run on every core
# at once; then everything else, also on every core, except the tests marked RUN_SERIAL, which
# run alone: clang_suite (which runs the clang tree the same two ways, on every core itself)
# and the SMC fork engine's error tests (smc_fork: they count their executable's processes and time
# a failing run; its other tests run beside the rest as smc_fork_beside). The exit code is 0 only
# when both runs pass.
say "running the compile-fail tests of the g++ tree, $jobs at a time"
status=0
run ctest --test-dir build/gcc --output-on-failure -L compile_fail -j "$jobs" || status=$?
say "running the rest of the test suite (g++ tree; clang tree as test clang_suite; without label long)"
run ctest --test-dir build/gcc --output-on-failure -LE 'long|compile_fail' -j "$jobs" || status=$?
exit "$status"
