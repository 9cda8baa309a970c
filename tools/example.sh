#!/usr/bin/env bash
# Builds and runs the quick-start example (examples/quickstart.cpp) with g++ in build/gcc.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

run() { printf '+ %s\n' "$*"; "$@"; }

run bash tools/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
run cmake -S . -B build/gcc -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2" \
    -DCMAKE_CXX_COMPILER="$(command -v g++)"
run cmake --build build/gcc -j "$jobs" --target quickstart
run build/gcc/examples/quickstart
