#!/usr/bin/env bash
# Installs the Debian packages tyche's build, tests and examples need. Idempotent: only missing
# packages are installed (and `apt-get update` runs only if something is missing).
set -euo pipefail

# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (the clang tree of tools/test.sh
# is built with ASan and UBSan; tests/fuzz links libFuzzer); Debian's clang only recommends it.
# libopenmpi-dev, openmpi-bin: the optional target tyche::mpi (<tyche/mpi.hpp>) and its test (mpirun).
# make: GNU make, which builds tools/test.sh's two trees under one jobserver (tools/build_trees.mk).
# lld: LLVM's linker, which tools/test.sh links the test trees' executables with (-DTYCHE_LINKER=lld:
# several times faster than GNU ld on the sanitized test executables; CMakeLists.txt).
packages=(cmake make g++ clang libclang-rt-14-dev libboost-dev libxtensor-dev libxsimd-dev catch2 libbenchmark-dev
          python3 nlohmann-json3-dev libopenmpi-dev openmpi-bin lld)

missing=()
if command -v dpkg >/dev/null 2>&1; then
    for p in "${packages[@]}"; do
        if ! dpkg -s "$p" >/dev/null 2>&1; then
            missing+=("$p")
        fi
    done
else
    echo "setup.sh: dpkg not found (not a Debian system?); not installing anything" >&2
    exit 0
fi

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup.sh: all required packages are installed"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "setup.sh: missing packages (${missing[*]}) and not root and no sudo" >&2
        exit 1
    fi
fi

echo "setup.sh: installing missing packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
