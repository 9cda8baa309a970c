#!/usr/bin/env bash
# bench/stan/run.sh [--quick] — tyche against Stan 2.21 (rstan / StanHeaders from Debian) on the
# same machine in the same run; `bash bench/run.sh stan [--quick]` calls it. CSV on stdout:
#
#   suite,model,n,chains,tyche,stan,unit,ratio
#   gradient,<model>,<n>,1,<ns>,<ns>,ns,<ratio>          one log density + gradient (harness.cpp)
#   nuts,<model>,<n>,4,<ESS/s>,<ESS/s>,ess_per_s,<ratio> NUTS, min bulk ESS per second of sampling
#   nuts_total,...                                       the same, warm-up included
#   compile,<model>,<n>,,<s>,<s>,s,<ratio>               source to runnable binary
#   compile_separate,<model>,<n>,,<s>,<s>,s,<ratio>      the same with the model-independent code
#                                                        built beforehand (step 8)
#   edward2,covertype,<n>,<chains>,<ms>,<ms>,ms_per_leapfrog,<ratio>
#                                                        Edward2's workload: ms per leapfrog of NUTS,
#                                                        one chain both sides; tyche alone with 8
#                                                        and 32 chains (per chain; no Stan column)
#   machine,read_bandwidth,<bytes>,<threads>,<GB/s>,,GB_per_s,
#                                                        read bandwidth, 1 and 2 threads (bandwidth.cpp)
#   one_pass,<model>,<n>,1,<time>,,<ns|ms>,              one read of the model's design matrix
#                                                        (N·K doubles) at that bandwidth
#   x_one_pass,<model>,<n>,<chains>,<x>,<x>,x_one_pass,<ratio>
#                                                        a data-heavy row's time / one_pass
#
# The ratio is oriented so that > 1 favours tyche: stan / tyche for times (ns, s), tyche / stan
# for rates (ess_per_s).
#
# n is the number of observations in the data file (corr_gaussian_100: its dimension). Everything
# else (installation, stanc, builds, agreement figures, spread of the repetitions) goes to stderr.
# Steps:
#   1. bench/stan/setup.sh installs r-cran-rstan (and StanHeaders, RcppEigen, BH, posterior) if
#      missing, and gnuplot-nox if it can; tools/setup.sh what tyche needs.
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
#      timed by the process's CPU time (Stan's own clock), both ESS computed by tyche::ess_bulk;
#      refused unless all posterior means agree within 4 combined MCSE (the largest z is printed
#      on stderr).
#   6. Edward2's workload (leapfrog_harness.cpp): Bayesian logistic regression on 581,012 x 54
#      synthetic data of the covertype shape (write_covertype_data.cpp: bench/synthetic.hpp's
#      generator, written once as a binary file, build/bench-stan/data/covertype.bin, read by
#      both systems), 30 warm-up iterations, then the time of 10 draws over their leapfrogs;
#      gradients checked to agree first.
#   7. Machine: bandwidth.cpp measures the read bandwidth (best of 10 sums over 1 GiB) with one
#      thread and two; one_pass and x_one_pass rows relate the logistic-regression rows to the
#      one-thread figure.
#   8. Compile rows: CPU time (user + system; on an idle machine the wall time of these
#      single-threaded steps) of g++ on compile_tyche.cpp (tyche: the model, its data, tyche::nuts)
#      against rstan::stanc's (measured inside R, without R's start-up) plus g++ on
#      compile_stan.cpp (Stan: the generated model, its data, Stan's NUTS service); the two
#      programs are run and must print the same gradient (to 1e-8 of its largest component).
#      compile_tyche.cpp builds the one model it samples (-DBENCH_TYCHE_ONE, tyche_models.hpp),
#      as Stan's program does. compile_separate rows: each system's fastest documented rebuild
#      after an edit to the model — the model-independent code built once beforehand and not
#      counted, the model's translation unit compiled and linked: Stan as CmdStan builds it
#      (stanc's file alone with a precompiled stan/model/model_header.hpp, linked with
#      compile_stan_driver.cpp's object: the NUTS service for stan::model::model_base, as
#      CmdStan's main.o), tyche with tyche::separate_driver and a precompiled <tyche/tyche.hpp>
#      (docs/compile-time.md); the same gradient check.
#   9. Figures: stdout is copied to build/bench-stan/stan.csv (--quick: stan-quick.csv), and
#      plot.sh draws docs/stan_ratios.png and docs/stan_covertype.png from it (--quick: into
#      build/bench-stan/) when gnuplot is installed; without gnuplot the rows are unaffected.
#
# --quick: 5 repetitions of 0.05 s per gradient row (15 of 0.2 s without), no logistic_regression
# NUTS row, Edward2's workload on the first 58,101 rows (n = 58101 in its rows), one compile of
# eight_schools_noncentered's programs only (without: the median of 3, every model). About 4
# minutes once the binaries are built (the first run builds 13 gradient, 7 NUTS and 1 leapfrog
# harness, a minute or two each); the full run about 27 minutes of CPU (40 on the shared 2-vCPU
# machine), about 20 of them the compile rows and 9 Edward2's workload. Flags: TYCHE_BENCH_FLAGS
# (default -O3 -march=native), for
# both sides. TYCHE_SOURCE: the tyche checkout whose include/ and examples/ are measured (default:
# this one). Exit status 1 if any row was refused.
#
# --only=SUITES (comma-separated: machine, gradient, nuts, edward2, compile, compile_separate) runs those suites
# alone (for re-measuring one part after a change); its CSV goes to build/bench-stan/stan-only.csv
# and no figures are drawn. The machine rows come with gradient and edward2 (their one_pass rows
# need the bandwidth).
set -euo pipefail

quick=0
only=""
for a in "$@"; do
    case $a in
        --quick) quick=1 ;;
        --only=*) only=${a#--only=} ;;
        *) echo "usage: bash bench/run.sh stan [--quick] [--only=machine,gradient,nuts,edward2,compile,compile_separate]" >&2; exit 2 ;;
    esac
done
for s in ${only//,/ }; do
    case $s in
        machine|gradient|nuts|edward2|compile|compile_separate) ;;
        *) echo "bench/stan: --only: unknown suite '$s' (machine, gradient, nuts, edward2, compile, compile_separate)" >&2; exit 2 ;;
    esac
done
want() {  # want SUITE: is SUITE measured in this run?
    [ -z "$only" ] && return 0
    case ",$only," in
        *",$1,"*) return 0 ;;
        *) [ "$1" = machine ] && { want gradient || want edward2; } && return 0; return 1 ;;
    esac
}

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
# Edward2's workload: 581,012 x 54 doubles (256 MB), binary, read by both systems.
if [ ! -f "$build/data/covertype.bin" ] ||
    [ -n "$(find "$here/write_covertype_data.cpp" "$root/bench/synthetic.hpp" \
        -newer "$build/data/covertype.bin")" ]; then
    ${CXX:-g++} -std=gnu++20 -O2 "$here/write_covertype_data.cpp" -o "$build/write_covertype_data" >&2
    "$build/write_covertype_data" "$build/data/covertype.bin.tmp"
    mv "$build/data/covertype.bin.tmp" "$build/data/covertype.bin"
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
# StanHeaders' library: SUNDIALS' CVODES, which Stan's integrate_ode_bdf calls (pk_stiff); a static
# library, so a program links only what it uses.
stan_libs=(-L"$(dirname "$stan_headers")/lib" -lStanHeaders)
tyche_src=${TYCHE_SOURCE:-$root}
tyche_flags=(-I"$tyche_src/include" -I"$tyche_src/examples" -I"$here" -DTYCHE_USE_XSIMD=1)
stamp="$($cxx --version | head -1) | ${common[*]} | ${stan_flags[*]} | ${tyche_flags[*]} | StanHeaders $stan_version"
if [ "$(cat "$build/flags.txt" 2>/dev/null)" != "$stamp" ]; then
    rm -f "$build"/harness_* "$build"/*.hpp "$build"/bandwidth
    echo "$stamp" > "$build/flags.txt"
fi
echo "bench/stan: $stamp" >&2

# The Stan twins: <m>.stan is written as an experienced Stan user writes it for speed (normal_id_glm,
# poisson_log_glm, bernoulli_logit_glm where they apply, a vectorised mixture, a triangular solve
# with the Cholesky factor from transformed data); <m>_plain.stan, an extra row, is the plain
# formulation (the plain vectorised likelihood; log_mix in a loop; multi_normal_cholesky). Both are
# compared with the same tyche twin, tyche_bench::<m>.
models=(eight_schools_noncentered arK arK_plain low_dim_gauss_mix low_dim_gauss_mix_plain kidiq
        kidiq_plain glmm_poisson glmm_poisson_plain logistic_regression logistic_regression_plain
        corr_gaussian_100 corr_gaussian_100_plain pk_ode pk_stiff steady_state)
# Every main model has a gradient row, NUTS rows and a compile row.
main_models=(eight_schools_noncentered arK low_dim_gauss_mix kidiq glmm_poisson logistic_regression
             corr_gaussian_100 pk_ode pk_stiff steady_state)

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

tyche_deps=("$tyche_src/include/tyche" "$tyche_src/examples/posteriordb.hpp" "$tyche_src/examples/posteriordb"
            "$here/tyche_models.hpp")
for m in "${models[@]}"; do
    want gradient || break
    out=$build/harness_$m
    if needs_build "$out" "$here/harness.cpp" "$here/json_var_context.hpp" "$build/$m.hpp" \
        "${tyche_deps[@]}"; then
        echo "bench/stan: building $out (tyche + Stan, one translation unit; about a minute)" >&2
        "$cxx" "${common[@]}" "${stan_flags[@]}" "${tyche_flags[@]}" \
            -DBENCH_STAN_MODEL="\"$build/$m.hpp\"" -DBENCH_TYCHE_TWIN="${m%_plain}" \
            -DBENCH_TYCHE_ONE=1 -DBENCH_TYCHE_ONE_"${m%_plain}"=1 \
            "$here/harness.cpp" -o "$out.tmp" "${stan_libs[@]}" >&2
        mv "$out.tmp" "$out"
    fi
done
for m in "${main_models[@]}"; do
    want nuts || break
    out=$build/nuts_$m
    if needs_build "$out" "$here/nuts_harness.cpp" "$here/json_var_context.hpp" "$build/$m.hpp" \
        "${tyche_deps[@]}"; then
        echo "bench/stan: building $out (tyche::nuts + Stan's NUTS service; about two minutes)" >&2
        "$cxx" "${common[@]}" "${stan_flags[@]}" "${tyche_flags[@]}" \
            -DBENCH_STAN_MODEL="\"$build/$m.hpp\"" -DBENCH_TYCHE_TWIN="$m" \
            -DBENCH_TYCHE_ONE=1 -DBENCH_TYCHE_ONE_"$m"=1 \
            "$here/nuts_harness.cpp" -o "$out.tmp" "${stan_libs[@]}" >&2
        mv "$out.tmp" "$out"
    fi
done

out=$build/leapfrog_covertype
if want edward2 && needs_build "$out" "$here/leapfrog_harness.cpp" "$here/binary_data.hpp" \
    "$build/logistic_regression.hpp" "${tyche_deps[@]}"; then
    echo "bench/stan: building $out (Edward2's workload, tyche::nuts + Stan's NUTS service)" >&2
    "$cxx" "${common[@]}" "${stan_flags[@]}" "${tyche_flags[@]}" \
        -DBENCH_STAN_MODEL="\"$build/logistic_regression.hpp\"" \
        -DBENCH_TYCHE_ONE=1 -DBENCH_TYCHE_ONE_logistic_regression=1 \
        "$here/leapfrog_harness.cpp" -o "$out.tmp" >&2
    mv "$out.tmp" "$out"
fi
if needs_build "$build/bandwidth" "$here/bandwidth.cpp"; then
    "$cxx" "${common[@]}" "$here/bandwidth.cpp" -o "$build/bandwidth.tmp" >&2
    mv "$build/bandwidth.tmp" "$build/bandwidth"
fi

if [ $quick -eq 1 ]; then
    reps=5 min_time=0.05 compile_reps=1 covertype_n=58101 csv=$build/stan-quick.csv plots=$build
else
    reps=15 min_time=0.2 compile_reps=3 covertype_n=581012 csv=$build/stan.csv plots=$root/docs
fi
[ -n "$only" ] && csv=$build/stan-only.csv plots=

# stdout is also copied to $csv, which bench/stan/plot.sh turns into figures at the end.
exec 3>&1
exec > >(tee "$csv")
tee_pid=$!

refused=0
echo "suite,model,n,chains,tyche,stan,unit,ratio"

# ---- the machine's read bandwidth ------------------------------------------------------------------
# One thread (a chain's gradient runs on one thread; the one_pass rows use this figure) and two.
gbs=""
if want machine; then
    bandwidth_rows=$("$build/bandwidth" --mib 1024 --reps 10 --threads 1,2)
    echo "$bandwidth_rows"
    gbs=$(echo "$bandwidth_rows" | awk -F, '$4 == 1 {print $5}')
fi

# one_pass / x_one_pass rows: model n K unit chains tyche-time stan-time (in unit; stan may be "").
# One pass = N·K·8 bytes at the measured bandwidth; x_one_pass = time / one pass.
one_pass_rows() {
    awk -v m="$1" -v n="$2" -v k="$3" -v unit="$4" -v c="$5" -v t="$6" -v s="$7" -v gbs="$gbs" \
        -v first="$8" 'BEGIN {
        scale = unit == "ns" ? 1e9 : 1e3
        pass = n * k * 8 / (gbs * 1e9) * scale
        if (first) printf(unit == "ns" ? "one_pass,%s,%d,1,%.1f,,%s,\n" : "one_pass,%s,%d,1,%.2f,,%s,\n", m, n, pass, unit)
        if (s == "") printf "x_one_pass,%s,%d,%s,%.2f,,x_one_pass,\n", m, n, c, t / pass
        else printf "x_one_pass,%s,%d,%s,%.2f,%.2f,x_one_pass,%.2f\n", m, n, c, t / pass, s / pass, s / t
    }'
}

# ---- gradient rows -------------------------------------------------------------------------------
declare -A gradient_of=()  # the gradient rows, kept for the one_pass rows
gradient_row() {  # model n data-file [harness options]
    local row
    if row=$("$build/harness_$1" --data "$3" --name "$1" --n "$2" --reps $reps \
        --min-time $min_time "${@:4}"); then
        echo "$row"
        gradient_of[$1]=$row
    else
        echo "bench/stan: $1 n=$2: no row (see above)" >&2
        refused=1
    fi
}
if want gradient; then
gradient_row eight_schools_noncentered 8 "$build/data/eight_schools_noncentered.json"
gradient_row arK 200 "$build/data/arK.json"
gradient_row low_dim_gauss_mix 1000 "$build/data/low_dim_gauss_mix.json"
for n in 100 200 400 434; do
    gradient_row kidiq $n "$build/data/kidiq_$n.json"
done
gradient_row glmm_poisson 500 "$build/data/glmm_poisson.json"
# At θ ~ uniform(−0.1, 0.1), the scale of the posterior: with ±2, η = α + Xβ would be saturated.
gradient_row logistic_regression 10000 "$build/data/logistic_regression.json" --radius 0.1
# n = 100: the dimension (no observations; mu and Sigma are the data).
gradient_row corr_gaussian_100 100 "$build/data/corr_gaussian_100.json"
# n = 12: the observation times (an ODE solved to 1e-10 by both; bench/stan/models/pk_ode.stan).
gradient_row pk_ode 12 "$build/data/pk_ode.json"
# The stiff variant: Stan's integrate_ode_bdf against tyche's ode_stiff at Stan's defaults
# (rel_tol = abs_tol = 1e-6): two methods whose errors differ, so their gradients agree to ~1e-3
# relative there (at the first point Stan's gradient is 1.1e-3 from the closed form's, tyche's
# 4.6e-5; the log densities 0.60 and 0.056 from it: docs/benchmarks.md): agreement asked to 2e-3.
gradient_row pk_stiff 12 "$build/data/pk_stiff.json" --agree 2e-3
# Steady states by Powell's method (Stan 2.21's algebra_solver, tyche's solve_powell), both to a
# relative step of 1e-10.
gradient_row steady_state 4 "$build/data/steady_state.json"
gradient_row arK_plain 200 "$build/data/arK.json"
gradient_row low_dim_gauss_mix_plain 1000 "$build/data/low_dim_gauss_mix.json"
for n in 100 200 400 434; do
    gradient_row kidiq_plain $n "$build/data/kidiq_$n.json"
done
gradient_row glmm_poisson_plain 500 "$build/data/glmm_poisson.json"
gradient_row logistic_regression_plain 10000 "$build/data/logistic_regression.json" --radius 0.1
gradient_row corr_gaussian_100_plain 100 "$build/data/corr_gaussian_100.json"
# The logistic regressions against one pass over their 10,000 x 100 design matrix (8 MB: it fits
# in this machine's 32 MB L3, so a pass from DRAM is not a hard floor for it).
first=1
for m in logistic_regression logistic_regression_plain; do
    [ -n "${gradient_of[$m]:-}" ] || continue
    IFS=, read -r _ _ _ _ t s _ _ <<< "${gradient_of[$m]}"
    one_pass_rows "$m" 10000 100 ns 1 "$t" "$s" $first
    first=0
done
fi

# ---- NUTS rows -----------------------------------------------------------------------------------
declare -A n_of=([eight_schools_noncentered]=8 [arK]=200 [low_dim_gauss_mix]=1000 [kidiq]=434
                 [glmm_poisson]=500 [logistic_regression]=10000 [corr_gaussian_100]=100 [pk_ode]=12 [pk_stiff]=12 [steady_state]=4)
declare -A data_of=([eight_schools_noncentered]=eight_schools_noncentered [arK]=arK
                    [low_dim_gauss_mix]=low_dim_gauss_mix [kidiq]=kidiq_434
                    [glmm_poisson]=glmm_poisson [logistic_regression]=logistic_regression
                    [corr_gaussian_100]=corr_gaussian_100 [pk_ode]=pk_ode [pk_stiff]=pk_stiff
                    [steady_state]=steady_state)
want nuts && for m in "${main_models[@]}"; do
    # logistic_regression takes minutes (about 60,000 gradients of ~1 ms per system): not in --quick.
    [ $quick -eq 1 ] && [ "$m" = logistic_regression ] && continue
    if ! "$build/nuts_$m" --data "$build/data/${data_of[$m]}.json" --name "$m" --n "${n_of[$m]}" \
        --chains 4 --warmup 1000 --draws 1000 --seed 20261121; then
        echo "bench/stan: nuts $m: no rows (see above)" >&2
        refused=1
    fi
done

# ---- Edward2's workload ----------------------------------------------------------------------------
if ! want edward2; then
    :
elif rows=$("$build/leapfrog_covertype" --data "$build/data/covertype.bin" --n $covertype_n \
    --warmup 30 --draws 10 --chains 8,32); then
    echo "$rows"
    first=1
    while IFS=, read -r _ _ n c t s _ _; do
        one_pass_rows covertype "$n" 54 ms "$c" "$t" "$s" $first
        first=0
    done <<< "$rows"
else
    echo "bench/stan: edward2 covertype: no rows (see above)" >&2
    refused=1
fi

# ---- compile rows --------------------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tyche-stan-compile-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

seconds() {  # CPU seconds (user + system) of "$@"; its output goes to stderr
    local TIMEFORMAT='%3U %3S' t
    t=$( { time "$@" >&3 2>&3; } 3>&2 2>&1 ) || return 1
    echo "$t" | awk '{printf "%.3f", $1 + $2}'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# stanc_seconds STAN OUT.hpp MODEL: rstan::stanc of STAN into OUT.hpp; prints its CPU seconds, timed
# inside R (R's and rstan's start-up, about 1.5 s, are not counted).
stanc_seconds() {
    Rscript -e 'args <- commandArgs(TRUE); suppressPackageStartupMessages(library(rstan))
        t <- system.time(x <- rstan::stanc(file = args[1], model_name = args[3]))
        writeLines(x$cppcode, args[2]); cat(t[["user.self"]] + t[["sys.self"]])' "$1" "$2" "$3"
}
# compile_row SUITE MODEL TYCHE_PROGRAM STAN_PROGRAM: runs both programs on the model's data; when
# they print the same gradient (normwise to 1e-8: at θ ~ uniform(−2, 2) some logistic_regression
# components cancel to 1e-3 of the largest), prints the row from the medians of t_times and
# s_times; else says why and sets refused.
compile_row() {
    local suite=$1 m=$2 data t_out s_out t s
    data=$build/data/${data_of[$m]}.json
    if ! t_out=$("$3" "$data" 2>/dev/null) || ! s_out=$("$4" "$data" 2>/dev/null); then
        echo "bench/stan: $suite,$m: a compiled program failed; no row" >&2
        refused=1
        return 0
    fi
    if ! python3 - "$t_out" "$s_out" <<'PY'
import sys
t, s = ([float(v) for v in a.split()] for a in sys.argv[1:3])
scale = max(abs(v) for v in t[1:] + s[1:])
ok = len(t) == len(s) and all(abs(a - b) <= 1e-8 * scale for a, b in zip(t[1:], s[1:]))
sys.exit(0 if ok else 1)
PY
    then
        echo "bench/stan: $suite,$m: the two programs print different gradients; no row" >&2
        refused=1
        return 0
    fi
    t=$(median "${t_times[@]}")
    s=$(median "${s_times[@]}")
    awk -v suite="$suite" -v m="$m" -v n="${n_of[$m]}" -v t="$t" -v s="$s" \
        'BEGIN {printf "%s,%s,%s,,%.2f,%.2f,s,%.2f\n", suite, m, n, t, s, s / t}'
}

compile_models=("${main_models[@]}")
[ $quick -eq 1 ] && compile_models=(eight_schools_noncentered)
want compile || compile_models=()
for m in "${compile_models[@]}"; do
    t_times=() s_times=()
    for _ in $(seq $compile_reps); do
        t_s=$(seconds "$cxx" "${common[@]}" "${tyche_flags[@]}" -DBENCH_TYCHE_TWIN="$m" \
            -DBENCH_TYCHE_ONE=1 -DBENCH_TYCHE_ONE_"$m"=1 \
            "$here/compile_tyche.cpp" -o "$tmp/tyche_$m")
        t_times+=("$t_s")
        stanc_s=$(stanc_seconds "$here/models/$m.stan" "$tmp/$m.hpp" "$m")
        cxx_s=$(seconds "$cxx" "${common[@]}" "${stan_flags[@]}" -I"$here" \
            -DBENCH_STAN_MODEL="\"$tmp/$m.hpp\"" "$here/compile_stan.cpp" -o "$tmp/stan_$m" "${stan_libs[@]}")
        s_times+=("$(awk -v a="$stanc_s" -v b="$cxx_s" 'BEGIN {printf "%.3f", a + b}')")
        echo "compile,$m: tyche $t_s s; stan: stanc $stanc_s s + g++ $cxx_s s (CPU seconds)" >&2
    done
    compile_row compile "$m" "$tmp/tyche_$m" "$tmp/stan_$m"
done

# ---- compile_separate rows -----------------------------------------------------------------------
# Each system's fastest documented rebuild of one model: the model-independent code built once
# beforehand and not counted (a precompiled header and a driver object each), then the model's own
# translation unit compiled and linked. Stan as CmdStan builds it: stanc's file compiled alone
# with a precompiled stan/model/model_header.hpp, linked with compile_stan_driver.cpp (Stan's NUTS
# service instantiated once for stan::model::model_base, as CmdStan's main.o). tyche as
# docs/compile-time.md says: compile_tyche.cpp with TYCHE_SEPARATE_DRIVER and a precompiled
# <tyche/tyche.hpp>, linked with src/tyche_nuts_driver.cpp's object (tyche::separate_driver).
# Same flags, same check of the two programs' gradients.
separate_models=("${main_models[@]}")
[ $quick -eq 1 ] && separate_models=(eight_schools_noncentered)
want compile_separate || separate_models=()
sep=$tmp/separate
# uses_pch HEADER COMPILE...: does this compile read HEADER's precompiled .gch? (g++ -H marks it
# with "!"; -Winvalid-pch would say so, but the flags' -w silences it.)
uses_pch() {
    local gch=$1
    shift
    "$@" -H -fsyntax-only > "$sep/includes.txt" 2>&1 || return 1
    grep -qF "! $gch" "$sep/includes.txt"
}
if [ ${#separate_models[@]} -gt 0 ]; then
    mkdir -p "$sep/stan/stan/model" "$sep/tyche/tyche"
    printf '#include <stan/model/model_header.hpp>\n' > "$sep/stan/stan/model/model_header.hpp"
    # The JSON reader's header too: its entry points are compiled in the driver's file, and Stan's
    # reader is in its driver object.
    printf '#include <tyche/tyche.hpp>\n#include <tyche/io/json_data.hpp>\n' > "$sep/tyche/tyche/pch.hpp"
    echo "bench/stan: compile_separate: the precompiled headers and driver objects (once, not counted)" >&2
    m=${separate_models[0]}
    if ! { "$cxx" "${common[@]}" "${stan_flags[@]}" -x c++-header "$sep/stan/stan/model/model_header.hpp" \
               -o "$sep/stan/stan/model/model_header.hpp.gch" &&
           "$cxx" "${common[@]}" "${stan_flags[@]}" -I"$here" -c "$here/compile_stan_driver.cpp" \
               -o "$sep/stan_driver.o" &&
           "$cxx" "${common[@]}" "${tyche_flags[@]}" -DTYCHE_SEPARATE_DRIVER -x c++-header \
               "$sep/tyche/tyche/pch.hpp" -o "$sep/tyche/tyche/pch.hpp.gch" &&
           "$cxx" "${common[@]}" "${tyche_flags[@]}" -DTYCHE_SEPARATE_DRIVER \
               -c "$tyche_src/src/tyche_nuts_driver.cpp" -o "$sep/tyche_driver.o" &&
           stanc_seconds "$here/models/$m.stan" "$sep/$m.hpp" "$m" >/dev/null 2>&1; }; then
        echo "bench/stan: compile_separate: building the precompiled headers or drivers failed; no rows" >&2
        refused=1
        separate_models=()
    elif ! uses_pch "$sep/tyche/tyche/pch.hpp.gch" "$cxx" "${common[@]}" "${tyche_flags[@]}" \
             -DTYCHE_SEPARATE_DRIVER -include "$sep/tyche/tyche/pch.hpp" -DBENCH_TYCHE_TWIN="$m" \
             -DBENCH_TYCHE_ONE=1 -DBENCH_TYCHE_ONE_"$m"=1 "$here/compile_tyche.cpp" ||
         ! uses_pch "$sep/stan/stan/model/model_header.hpp.gch" "$cxx" "${common[@]}" "${stan_flags[@]}" \
             -include "$sep/stan/stan/model/model_header.hpp" -x c++ "$sep/$m.hpp"; then
        echo "bench/stan: compile_separate: a precompiled header is not used (g++ -H); no rows" >&2
        refused=1
        separate_models=()
    fi
fi
for m in "${separate_models[@]}"; do
    t_times=() s_times=()
    for _ in $(seq $compile_reps); do
        t_c=$(seconds "$cxx" "${common[@]}" "${tyche_flags[@]}" -DTYCHE_SEPARATE_DRIVER \
            -include "$sep/tyche/tyche/pch.hpp" -DBENCH_TYCHE_TWIN="$m" -DBENCH_TYCHE_ONE=1 \
            -DBENCH_TYCHE_ONE_"$m"=1 -c "$here/compile_tyche.cpp" -o "$sep/tyche_$m.o")
        t_l=$(seconds "$cxx" "${common[@]}" "$sep/tyche_$m.o" "$sep/tyche_driver.o" -pthread -o "$sep/tyche_$m")
        t_times+=("$(awk -v a="$t_c" -v b="$t_l" 'BEGIN {printf "%.3f", a + b}')")
        stanc_s=$(stanc_seconds "$here/models/$m.stan" "$sep/$m.hpp" "$m")
        s_c=$(seconds "$cxx" "${common[@]}" "${stan_flags[@]}" \
            -include "$sep/stan/stan/model/model_header.hpp" -x c++ -c "$sep/$m.hpp" -o "$sep/stan_$m.o")
        s_l=$(seconds "$cxx" "${common[@]}" "$sep/stan_$m.o" "$sep/stan_driver.o" -o "$sep/stan_$m" "${stan_libs[@]}")
        s_times+=("$(awk -v a="$stanc_s" -v b="$s_c" -v c="$s_l" 'BEGIN {printf "%.3f", a + b + c}')")
        echo "compile_separate,$m: tyche g++ $t_c s + link $t_l s; stan: stanc $stanc_s s + g++ $s_c s + link $s_l s" >&2
    done
    compile_row compile_separate "$m" "$sep/tyche_$m" "$sep/stan_$m"
done

# ---- figures -------------------------------------------------------------------------------------
exec >&3 3>&-
wait "$tee_pid" 2>/dev/null || true
[ -z "$plots" ] ||
    bash "$here/plot.sh" "$csv" "$plots" >&2 || echo "bench/stan: the figures failed (the rows stand)" >&2

exit $refused
