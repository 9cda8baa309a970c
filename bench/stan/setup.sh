#!/usr/bin/env bash
# bench/stan/setup.sh — installs what the Stan comparison needs, when missing: rstan (Debian
# r-cran-rstan, Stan 2.21 through r-cran-stanheaders) and posterior (r-cran-posterior); and, if it
# can, gnuplot (gnuplot-nox) for the figures, which the bench does without if that fails.
# Idempotent: apt-get runs only if something is missing. Messages go to stderr.
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
optional=()
command -v gnuplot >/dev/null 2>&1 || optional+=(gnuplot-nox)
[ ${#missing[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    elif [ ${#missing[@]} -eq 0 ]; then
        echo "bench/stan/setup.sh: gnuplot missing (no figures), not root and no sudo" >&2
        exit 0
    else
        echo "bench/stan/setup.sh: missing packages (${missing[*]}), not root and no sudo" >&2
        exit 1
    fi
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
if [ ${#missing[@]} -gt 0 ]; then
    echo "bench/stan/setup.sh: installing ${missing[*]}" >&2
    "${apt[@]}" update >&2
    "${apt[@]}" install -y --no-install-recommends "${missing[@]}" >&2
fi
if [ ${#optional[@]} -gt 0 ]; then
    echo "bench/stan/setup.sh: installing ${optional[*]} (for the figures; optional)" >&2
    { [ ${#missing[@]} -gt 0 ] || "${apt[@]}" update >&2; } &&
        "${apt[@]}" install -y --no-install-recommends "${optional[@]}" >&2 ||
        echo "bench/stan/setup.sh: could not install ${optional[*]}; the bench runs without figures" >&2
fi
