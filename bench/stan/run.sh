#!/usr/bin/env bash
# bench/stan/run.sh [--quick] — tyche against Stan 2.21 (rstan / StanHeaders from Debian) on the
# same machine in the same run; `bash bench/run.sh stan [--quick]` calls it. CSV on stdout:
#
#   suite,model,n,chains,tyche,stan,unit,ratio
#   gradient,<model>,<n>,1,<ns>,<ns>,ns,<ratio>          one log density + gradient (harness.cpp)
#   nuts,<model>,<n>,4,<ESS/s>,<ESS/s>,ess_per_s,<ratio> NUTS, min bulk ESS per second of sampling
#   nuts_total,...                                       the same, warm-up included
#   compile,<model>,<n>,,<s>,<s>,s,<ratio>               source to runnable binary
#
# The ratio is oriented so that > 1 favours tyche: stan / tyche for times (ns, s), tyche / stan
# for rates (ess_per_s).
#
# n is the number of observations in the data file. Everything else (installation, stanc, builds,
# agreement figures, spread of the repetitions) goes to stderr. Steps:
#   1. bench/stan/setup.sh installs r-cran-rstan (and StanHeaders, RcppEigen, BH, posterior) if
#      missing; tools/setup.sh what tyche needs.
#   2. bench/stan/write_data.py (and write_logistic_data.cpp, for bench/synthetic.hpp's logistic
#      regression data) writes one CmdStan JSON file per model and n into build/bench-stan/data;
#      both systems read those files.
#   3. rstan::stanc translates bench/stan/models/<model>.stan into build/bench-stan/<model>.hpp
#      (generated at bench time, never committed), and harness.cpp is compiled once per model
#      with that code and the tyche twin in one translation unit. Binaries are cached in
#      build/bench-stan and rebuilt only when a source, a tyche header or the flags change.
#   4. Gradient rows: the harness checks that both gradients agree (1e-8 relative) and refuses
#      the row otherwise; then median ns per call over alternating repetitions.
#   5. NUTS rows (nuts_harness.cpp, one process per model, one thread per system): tyche::nuts
#      against Stan's hmc_nuts_diag_e_adapt service, 4 chains of 1000 warm-up + 1000 draws, both
#      ESS computed by tyche::ess_bulk; refused unless all posterior means agree within 4
#      combined MCSE (the largest z is printed on stderr).
#   6. Compile rows: CPU time (user + system; on an idle machine the wall time of these
#      single-threaded steps) of g++ on compile_tyche.cpp (tyche: the model, its data, tyche::nuts)
#      against rstan::stanc's (measured inside R, without R's start-up) plus g++ on
#      compile_stan.cpp (Stan: the generated model, its data, Stan's NUTS service); the two
#      programs are run and must print the same gradient (to 1e-8 of its largest component).
#
# --quick: 5 repetitions of 0.05 s per gradient row (15 of 0.2 s without), no logistic_regression
# NUTS row, one compile of eight_schools_noncentered's programs only (without: the median of 3,
# every model). About 2 minutes once the binaries are built (the first run builds 9 gradient and
# 5 NUTS harnesses, a minute or two each); the full run about 15 minutes. Flags: TYCHE_BENCH_FLAGS (default -O3 -march=native), for
# both sides. TYCHE_SOURCE: the tyche checkout whose include/ and examples/ are measured (default:
# this one). Exit status 1 if any row was refused.
set -euo pipefail

quick=0
for a in "$@"; do
    case $a in
        --quick) quick=1 ;;
        *) echo "usage: bash bench/run.sh stan [--quick]" >&2; exit 2 ;;
    esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build/bench-stan
mkdir -p "$build"

[ -f "$root/tools/setup.sh" ] && bash "$root/tools/setup.sh" >&2
bash "$here/setup.sh"

python3 "$here/write_data.py" "$build/data"
if [ ! -f "$build/data/logistic_regression.json" ] ||
    [ -n "$(find "$here/write_logistic_data.cpp" "$root/bench/synthetic.hpp" \
        -newer "$build/data/logistic_regression.json")" ]; then
    ${CXX:-g++} -std=gnu++20 -O2 "$here/write_logistic_data.cpp" -o "$build/write_logistic_data" >&2
    "$build/write_logistic_data" "$build/data/logistic_regression.json.tmp"
    mv "$build/data/logistic_regression.json.tmp" "$build/data/logistic_regression.json"
fi

# ---- flags ---------------------------------------------------------------------------------------
IFS=$'\t' read -r stan_headers rcpp_eigen stan_version < <(Rscript -e 'cat(system.file("include", package = "StanHeaders"), system.file("include", package = "RcppEigen"), as.character(packageVersion("StanHeaders")), sep = "\t"); cat("\n")')
cxx=${CXX:-g++}
read -r -a opt_flags <<< "${TYCHE_BENCH_FLAGS:--O3 -march=native}"
common=(-std=gnu++20 "${opt_flags[@]}" -DNDEBUG -w)
# Stan: its headers; Boost's asserts off as in CmdStan; no STAN_THREADS (CmdStan's default; rstan
# turns it on, which makes the autodiff stack thread-local). tyche: the SIMD backend on, as the
# examples build it (tyche::simd).
stan_flags=(-I"$stan_headers" -I"$stan_headers/src" -I"$rcpp_eigen" -DBOOST_DISABLE_ASSERTS)
tyche_src=${TYCHE_SOURCE:-$root}
tyche_flags=(-I"$tyche_src/include" -I"$tyche_src/examples" -I"$here" -DTYCHE_USE_XSIMD=1)
stamp="$($cxx --version | head -1) | ${common[*]} | ${stan_flags[*]} | ${tyche_flags[*]} | StanHeaders $stan_version"
if [ "$(cat "$build/flags.txt" 2>/dev/null)" != "$stamp" ]; then
    rm -f "$build"/harness_* "$build"/*.hpp
    echo "$stamp" > "$build/flags.txt"
fi
echo "bench/stan: $stamp" >&2

# The Stan twins: <m>.stan is written as an experienced Stan user writes it for speed (normal_id_glm,
# poisson_log_glm where they apply); <m>_plain.stan, an extra row, is the plain vectorised
# formulation. Both are compared with the same tyche twin, tyche_bench::<m>.
models=(eight_schools_noncentered arK arK_plain kidiq kidiq_plain glmm_poisson glmm_poisson_plain
        logistic_regression logistic_regression_plain)
main_models=(eight_schools_noncentered arK kidiq glmm_poisson logistic_regression)

# stanc: models/<m>.stan -> build/bench-stan/<m>.hpp when the .stan file is newer.
stale=()
for m in "${models[@]}"; do
    [ "$build/$m.hpp" -nt "$here/models/$m.stan" ] || stale+=("$m")
done
if [ ${#stale[@]} -gt 0 ]; then
    echo "bench/stan: stanc ${stale[*]}" >&2
    Rscript -e 'args <- commandArgs(TRUE); for (m in args[-(1:2)]) {
        x <- rstan::stanc(file = file.path(args[1], "models", paste0(m, ".stan")), model_name = m)
        writeLines(x$cppcode, file.path(args[2], paste0(m, ".hpp"))) }' \
        "$here" "$build" "${stale[@]}" >&2
fi

# Rebuild $1 when it is missing or older than any of the other arguments (files or folders).
needs_build() {
    local out=$1
    shift
    [ -f "$out" ] || return 0
    [ -n "$(find "$@" -newer "$out" -print -quit)" ]
}

tyche_deps=("$tyche_src/include/tyche" "$tyche_src/examples/posteriordb.hpp" "$here/tyche_models.hpp")
for m in "${models[@]}"; do
    out=$build/harness_$m
    if needs_build "$out" "$here/harness.cpp" "$here/json_var_context.hpp" "$build/$m.hpp" \
        "${tyche_deps[@]}"; then
        echo "bench/stan: building $out (tyche + Stan, one translation unit; about a minute)" >&2
        "$cxx" "${common[@]}" "${stan_flags[@]}" "${tyche_flags[@]}" \
            -DBENCH_STAN_MODEL="\"$build/$m.hpp\"" -DBENCH_TYCHE_TWIN="${m%_plain}" \
            "$here/harness.cpp" -o "$out.tmp" >&2
        mv "$out.tmp" "$out"
    fi
done
for m in "${main_models[@]}"; do
    out=$build/nuts_$m
    if needs_build "$out" "$here/nuts_harness.cpp" "$here/json_var_context.hpp" "$build/$m.hpp" \
        "${tyche_deps[@]}"; then
        echo "bench/stan: building $out (tyche::nuts + Stan's NUTS service; about two minutes)" >&2
        "$cxx" "${common[@]}" "${stan_flags[@]}" "${tyche_flags[@]}" \
            -DBENCH_STAN_MODEL="\"$build/$m.hpp\"" -DBENCH_TYCHE_TWIN="$m" \
            "$here/nuts_harness.cpp" -o "$out.tmp" >&2
        mv "$out.tmp" "$out"
    fi
done

if [ $quick -eq 1 ]; then
    reps=5 min_time=0.05 compile_reps=1
else
    reps=15 min_time=0.2 compile_reps=3
fi

refused=0
echo "suite,model,n,chains,tyche,stan,unit,ratio"

# ---- gradient rows -------------------------------------------------------------------------------
gradient_row() {  # model n data-file [harness options]
    if ! "$build/harness_$1" --data "$3" --name "$1" --n "$2" --reps $reps --min-time $min_time \
        "${@:4}"; then
        echo "bench/stan: $1 n=$2: no row (see above)" >&2
        refused=1
    fi
}
gradient_row eight_schools_noncentered 8 "$build/data/eight_schools_noncentered.json"
gradient_row arK 200 "$build/data/arK.json"
for n in 100 200 400 434; do
    gradient_row kidiq $n "$build/data/kidiq_$n.json"
done
gradient_row glmm_poisson 500 "$build/data/glmm_poisson.json"
# At θ ~ uniform(−0.1, 0.1), the scale of the posterior: with ±2, η = α + Xβ would be saturated.
gradient_row logistic_regression 10000 "$build/data/logistic_regression.json" --radius 0.1
gradient_row arK_plain 200 "$build/data/arK.json"
for n in 100 200 400 434; do
    gradient_row kidiq_plain $n "$build/data/kidiq_$n.json"
done
gradient_row glmm_poisson_plain 500 "$build/data/glmm_poisson.json"
gradient_row logistic_regression_plain 10000 "$build/data/logistic_regression.json" --radius 0.1

# ---- NUTS rows -----------------------------------------------------------------------------------
declare -A n_of=([eight_schools_noncentered]=8 [arK]=200 [kidiq]=434 [glmm_poisson]=500
                 [logistic_regression]=10000)
declare -A data_of=([eight_schools_noncentered]=eight_schools_noncentered [arK]=arK
                    [kidiq]=kidiq_434 [glmm_poisson]=glmm_poisson
                    [logistic_regression]=logistic_regression)
for m in "${main_models[@]}"; do
    # logistic_regression takes minutes (about 60,000 gradients of ~1 ms per system): not in --quick.
    [ $quick -eq 1 ] && [ "$m" = logistic_regression ] && continue
    if ! "$build/nuts_$m" --data "$build/data/${data_of[$m]}.json" --name "$m" --n "${n_of[$m]}" \
        --chains 4 --warmup 1000 --draws 1000 --seed 20261121; then
        echo "bench/stan: nuts $m: no rows (see above)" >&2
        refused=1
    fi
done

# ---- compile rows --------------------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tyche-stan-compile-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

seconds() {  # CPU seconds (user + system) of "$@"; its output goes to stderr
    local TIMEFORMAT='%3U %3S' t
    t=$( { time "$@" >&3 2>&3; } 3>&2 2>&1 ) || return 1
    echo "$t" | awk '{printf "%.3f", $1 + $2}'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

compile_models=("${main_models[@]}")
[ $quick -eq 1 ] && compile_models=(eight_schools_noncentered)
for m in "${compile_models[@]}"; do
    t_times=() s_times=()
    for _ in $(seq $compile_reps); do
        t_s=$(seconds "$cxx" "${common[@]}" "${tyche_flags[@]}" -DBENCH_TYCHE_TWIN="$m" \
            "$here/compile_tyche.cpp" -o "$tmp/tyche_$m")
        t_times+=("$t_s")
        # stanc, timed inside R (R's and rstan's start-up, about 1.5 s, are not counted).
        stanc_s=$(Rscript -e 'args <- commandArgs(TRUE); suppressPackageStartupMessages(library(rstan))
            t <- system.time(x <- rstan::stanc(file = args[1], model_name = args[2]))
            writeLines(x$cppcode, args[3]); cat(t[["user.self"]] + t[["sys.self"]])' \
            "$here/models/$m.stan" "$m" "$tmp/$m.hpp")
        cxx_s=$(seconds "$cxx" "${common[@]}" "${stan_flags[@]}" -I"$here" \
            -DBENCH_STAN_MODEL="\"$tmp/$m.hpp\"" "$here/compile_stan.cpp" -o "$tmp/stan_$m")
        s_times+=("$(awk -v a="$stanc_s" -v b="$cxx_s" 'BEGIN {printf "%.3f", a + b}')")
        echo "compile,$m: tyche $t_s s; stan: stanc $stanc_s s + g++ $cxx_s s (CPU seconds)" >&2
    done
    data=$build/data/${data_of[$m]}.json
    t_out=$("$tmp/tyche_$m" "$data" 2>/dev/null) && s_out=$("$tmp/stan_$m" "$data" 2>/dev/null) ||
        { echo "bench/stan: compile,$m: a compiled program failed; no row" >&2; refused=1; continue; }
    if ! python3 - "$t_out" "$s_out" <<'PY'
import sys
t, s = ([float(v) for v in a.split()] for a in sys.argv[1:3])
# Normwise: at θ ~ uniform(−2, 2) some logistic_regression components cancel to 1e-3 of the largest.
scale = max(abs(v) for v in t[1:] + s[1:])
ok = len(t) == len(s) and all(abs(a - b) <= 1e-8 * scale for a, b in zip(t[1:], s[1:]))
sys.exit(0 if ok else 1)
PY
    then
        echo "bench/stan: compile,$m: the two programs print different gradients; no row" >&2
        refused=1
        continue
    fi
    t=$(median "${t_times[@]}")
    s=$(median "${s_times[@]}")
    awk -v m="$m" -v n="${n_of[$m]}" -v t="$t" -v s="$s" \
        'BEGIN {printf "compile,%s,%s,,%.2f,%.2f,s,%.2f\n", m, n, t, s, s / t}'
done

exit $refused
