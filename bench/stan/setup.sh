#!/usr/bin/env bash
# bench/stan/setup.sh — installs what the Stan comparison needs, when missing: rstan (Debian
# r-cran-rstan, Stan 2.21 through r-cran-stanheaders) and posterior (r-cran-posterior).
# Idempotent: apt-get runs only if a package is missing. Messages go to stderr.
set -euo pipefail

packages=(r-cran-rstan r-cran-stanheaders r-cran-rcppeigen r-cran-bh r-cran-posterior)

if ! command -v dpkg >/dev/null 2>&1; then
    echo "bench/stan/setup.sh: dpkg not found (not a Debian system?); install rstan yourself" >&2
    exit 0
fi
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "bench/stan/setup.sh: missing packages (${missing[*]}), not root and no sudo" >&2
        exit 1
    fi
fi
echo "bench/stan/setup.sh: installing ${missing[*]}" >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}" >&2
