#!/usr/bin/env bash
# bench/run.sh SUITE [--quick] — builds the benchmarks in Release and prints a CSV to stdout.
#
#   gradients   one value_and_gradient of a tyche program vs a hand-written twin:
#               model,n,tyche_ns,handwritten_ns,ratio   (medians over repetitions; ratio = tyche/handwritten)
#   compile     compile times of code that uses tyche (bench/compile_times.sh):
#               target,compiler,flags,user_s,max_rss_mb
#   batching    the lockstep NUTS driver's gradient throughput and lane utilisation against the
#               number of chains, program_counter vs trajectory_sync (bench/batching.cpp):
#               target,mode,chains,grads_per_second,utilization; plots docs/batching_*.png
#               when gnuplot is installed
#   nuts        NUTS end to end, 4 chains of 1000 warm-up + 1000 draws (--quick: 200 + 200) per
#               model (bench/nuts.cpp): model,chains,draws,seconds,grad_evals,min_bulk_ess,
#               min_tail_ess,ess_per_second,divergences,max_rhat
#   nuts_step   CPU per NUTS leapfrog step against the gradient alone, eight schools, arK, kidiq,
#               4 chains of 1000 + 1000 on one thread, lanes 0 and 1 (--quick: 1 repetition, else
#               3) (bench/nuts_step.cpp): model,lanes,lanes_used,cpu_s,grad_evals,ns_per_step,
#               ns_per_gradient,step_over_gradient,utilisation,min_bulk_ess
#   lanes       the CPU executor's default lanes (cpu::lanes = 0) against lanes 1, half and full
#               SIMD width, 1-8 chains on one thread, five models from eight schools to a logistic
#               regression 10,000 x 100 (bench/lanes.cpp): model,data_values,chains,lanes,
#               lanes_used,cpu_s,gradients,ns_per_gradient,vs_best
#   chains_pass the gradient of C = 1 … 64 chains of the logistic regression 10,000 x 100 and of
#               Edward2's covertype shape (581,012 x 54): tyche (chains in SIMD lanes, rows in
#               tiles) against a BLAS twin (two GEMVs / GEMMs, one thread) where a BLAS with
#               cblas.h is installed (bench/chains_pass.cpp; --quick: 2 repetitions, up to 16
#               chains): shape,rows,cols,impl,chains,ms_per_evaluation,ms_per_chain_gradient,
#               reads_of_x_per_chain; plots docs/chains_pass.png (full run) with gnuplot
#   iid_normal  the gradient of normal(mu, sigma).observe(data(y)) against n, reduced to
#               sufficient statistics and as a loop (bench/iid_normal.cpp): n,data_values,
#               reduced_ns,loop_ns
#   stan        tyche against Stan 2.21 (rstan, installed if missing) on the same machine in one
#               run (bench/stan/run.sh): suite,model,n,chains,tyche,stan,unit,ratio; gradient
#               rows (ns, ratio = stan/tyche), NUTS rows (ess_per_s), Edward2's workload
#               (ms_per_leapfrog), the machine's read bandwidth and one-pass rows, compile-time
#               rows (s); --only=gradient,nuts,... runs some of these suites alone
#   cuda        nuts() with the executor tyche::cuda (one chain per GPU thread) against the CPU
#               executor on the same machine, eight schools (1 to 131,072 chains) and a logistic
#               regression 10,000 x 100 (bench/cuda_executor.cu; needs nvcc; without a GPU only
#               the CPU rows): suite,model,n,chains,executor,value,unit (docs/gpu.md)
#   adapt       warm-up's metrics and estimators: Stan's diagonal (draws) against nutpie's diagonal
#               (gradients) and, with --schemes=draws,gradients,low_rank,dense, nutpie's low-rank
#               and Stan's dense; min bulk-ESS per gradient (warm-up included) on the nine shared
#               posteriors and a 100-d AR(1) Gaussian (or the posteriors named), 4 x (1000 + 1000)
#               and 4 x (300 + 1000), 10 seeds (--quick: 3; --seeds=n; --chains=n chains, not 4);
#               with --schemes=...,draws_pooled,nutpie_pooled,... the pooled metric too (bench/adapt.cpp):
#               posterior,warmup,scheme,seeds,median_ess_per_gradient,median_gradients,
#               median_min_ess,median_seconds,median_ess_per_second,median_divergent (the fraction of
#               the draws' transitions that diverged: a gain in ESS per gradient with more of them
#               is suspect),median_max_z,median_max_sd_error,seeds_off_reference (each run against
#               the reference posterior, as the tests compare: the largest z and sd error over the
#               parameters, and the runs outside the tests' limits z < 4, sd within 10 %),
#               total_seconds (the nuts() calls' wall-clock seconds summed), and ratio rows
#   arma_trap   chains trapped in an ARMA(1,1)'s non-invertible region, 60 seeds x 4 chains
#               (bench/arma_trap.cpp; Stan's side: bench/stan/arma_trap.R): one line per trapped
#               chain and the count
#   inference   optimize + laplace, pathfinder and advi (CmdStan's defaults) against NUTS on the
#               nine shared posteriors, 10 seeds (--quick: 2; --seeds=N) (bench/inference.cpp): posterior,
#               method,seeds,seconds,gradients,max_z,median_sd_ratio,pareto_k,typical,reached
#   smc         forward inference (SMC, PIMH, PG; fork and in-process engines) on the HMM and
#               CRP programs against exact posteriors, 60 s per row (--quick: 3 s) (bench/smc.sh):
#               model,engine,algorithm,particles,seconds,kl,sweeps,seconds_to_kl_0.01; plots
#               docs/smc_kl_time.png (full run) when gnuplot is installed
#   pmmh        particle marginal Metropolis-Hastings on a 100-step state-space model: seconds with
#               the chains on one thread, on threads of their own (chain_threads, the default) and
#               with each sweep's particles on two threads instead (bench/pmmh.cpp):
#               rows,chain_threads,threads,seconds,speedup,same_draws; --correlated: correlated
#               PMMH against plain PMMH at 100 and 400 observations (ESS per second)
#   json_rows   a logistic regression's JSON data file (581,012 x 54; --quick: 100,000 rows)
#               read whole, then block 0 of 2, 4 and 8 of its rows (tyche::json_rows), each in a
#               process of its own (bench/json_rows.cpp): mode,part,parts,seconds,max_rss_mb,rows
#   low_rank_memory  a chain's peak memory and seconds with metric = diagonal, low_rank and
#               low_rank with low_rank_max_rank = 20 in d = 1,000, 2,000 and 4,000 (--quick: 1,000),
#               one fit per process (bench/low_rank_memory.cpp): d,metric,kmax,k,seconds,max_rss_mb
#
# --quick: fewer repetitions and a shorter minimum time (under a minute in all).
# Build output and Google Benchmark's console output go to stderr. See docs/benchmarks.md.
set -euo pipefail

usage() {
    echo "usage: bash bench/run.sh gradients|compile|batching|nuts|nuts_step|lanes|chains_pass|iid_normal|adapt|arma_trap|inference|json_rows|low_rank_memory|scale|stan|smc|pmmh|cuda [--quick]" >&2
    exit 2
}

[ $# -ge 1 ] || usage
suite=$1
shift
quick=0
only=()
passed=()  # adapt: --schemes=…, --seeds=…, posterior names, given to the program
for a in "$@"; do
    case $a in
        --quick) quick=1 ;;
        --only=*) [ "$suite" = stan ] || usage; only=("$a") ;;
        --schemes=*|--seeds=*|--chains=*)
            case $suite in
                adapt) passed+=("${a%%=*}" "${a#*=}") ;;
                inference) case $a in --seeds=*) passed+=("$a") ;; *) usage ;; esac ;;
                *) usage ;;
            esac ;;
        --correlated) [ "$suite" = pmmh ] || usage; passed+=("$a") ;;
        -*) usage ;;
        *) [ "$suite" = adapt ] || usage; passed+=("$a") ;;
    esac
done
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/bench-release
# Builds the given targets in build/bench-release (-O3 -march=native, the README's tyche::simd),
# configured there the first time; installs missing packages first.
bench_release() {
    if [ -f "$root/tools/setup.sh" ]; then bash "$root/tools/setup.sh" >&2; fi
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTYCHE_BUILD_TESTS=OFF \
            -DTYCHE_BUILD_EXAMPLES=OFF -DTYCHE_BUILD_BENCH=ON >&2
    fi
    cmake --build "$build" --target "$@" -j "$(nproc)" >&2
}

case $suite in
    gradients) ;;
    stan)
        args=()
        [ $quick -eq 1 ] && args=(--quick)
        exec bash "$(dirname "${BASH_SOURCE[0]}")/stan/run.sh" "${args[@]}" "${only[@]}" ;;
    smc)
        exec bash "$(dirname "${BASH_SOURCE[0]}")/smc.sh" "$@" ;;
    batching)
        root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
        exec bash "$root/bench/batching.sh" "$@" ;;
    nuts|nuts_step|lanes|iid_normal|adapt|arma_trap|inference|pmmh)
        # One CPU benchmark of build/bench-release (-O3 -march=native, the README's tyche::simd).
        bench_release "bench_$suite"
        args=()
        case $suite in
            nuts|lanes|adapt|inference|pmmh) [ $quick -eq 1 ] && args=(--quick) ;;
            nuts_step) args=(--reps=3); [ $quick -eq 1 ] && args=(--reps=1) ;;
        esac
        exec "$build/bench/$suite" "${args[@]}" "${passed[@]}" ;;
    chains_pass)
        bench_release bench_chains_pass
        args=()
        [ $quick -eq 1 ] && args=(--reps 2 --max-chains 16)
        out=$("$build/bench/chains_pass" "${args[@]}" "${passed[@]}")
        echo "$out"
        if [ $quick -eq 0 ] && command -v gnuplot >/dev/null 2>&1; then
            csv=$(mktemp)
            echo "$out" > "$csv"
            gnuplot -e "csv='$csv'; out='$root/docs/chains_pass.png'" "$root/bench/chains_pass.gp"
            rm -f "$csv"
            echo "chains_pass: plotted docs/chains_pass.png" >&2
        fi
        exit 0 ;;
    json_rows)
        # A data file of rows × 54 numbers (--quick: 100,000 rows, else 581,012: covertype's shape)
        # read whole, then block 0 of 2, 4 and 8 (tyche::json_rows), each reading in a process of
        # its own (its peak memory).
        bench_release bench_json_rows
        rows=581012
        [ $quick -eq 1 ] && rows=100000
        file=$(mktemp --suffix=.json)
        trap 'rm -f "$file"' EXIT
        "$build/bench/json_rows" --write "$file" --rows "$rows"
        echo "mode,part,parts,seconds,max_rss_mb,rows"
        "$build/bench/json_rows" --read "$file"
        for parts in 2 4 8; do "$build/bench/json_rows" --read "$file" --part 0 --parts "$parts"; done
        exit 0 ;;
    low_rank_memory)
        bench_release bench_low_rank_memory
        dims=(1000 2000 4000)
        [ $quick -eq 1 ] && dims=(1000)
        echo "d,metric,kmax,k,seconds,max_rss_mb"
        for d in "${dims[@]}"; do
            for m in diagonal low_rank low_rank_20; do "$build/bench/low_rank_memory" "$d" "$m"; done
        done
        exit 0 ;;
    scale)
        # One chain on two cores (bench/split.cpp), then tyche::mpi with 1 and 2 ranks
        # (bench/mpi_scale.cpp), build/bench-release as above.
        # A tree configured before MPI was installed finds it when configured again.
        if [ -f "$build/CMakeCache.txt" ]; then cmake -S "$root" -B "$build" >/dev/null; fi
        bench_release bench_split
        args=()
        [ $quick -eq 1 ] && args=(--quick)
        "$build/bench/split" "${args[@]}"
        if ! command -v mpirun >/dev/null 2>&1; then echo "scale: mpirun not found: the MPI rows are skipped" >&2; exit 0; fi
        bench_release bench_mpi_scale
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
            OMPI_MCA_btl_vader_single_copy_mechanism=none
        out=$(for r in 1 2; do mpirun -np "$r" --oversubscribe --bind-to none "$build/bench/mpi_scale" "${args[@]}"; done)
        echo "$out"
        echo "$out" | awk -F, '{v[$2","$4","$3]=$5} END {
            for (k in v) { split(k, p, ","); if (p[3] == 1 && ((p[1]","p[2]",2") in v))
                printf "ratio,%s,%s,1_over_2_ranks,%.3f\n", p[1], p[2], v[k] / v[p[1]","p[2]",2"] } }'
        exit 0 ;;
    cuda)
        root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
        build=$root/build/cuda-bench
        if [ -f "$root/tools/setup.sh" ]; then bash "$root/tools/setup.sh" >&2; fi
        if [ ! -f "$build/CMakeCache.txt" ]; then
            # The CUDA targets are defined with the tests (tests/CMakeLists.txt); only the
            # benchmark is built.
            cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTYCHE_BUILD_EXAMPLES=OFF \
                -DTYCHE_BUILD_BENCH=OFF >&2
        fi
        cmake --build "$build" --target bench_cuda_executor -j "$(nproc)" >&2
        args=()
        [ $quick -eq 1 ] && args=(--quick)
        exec "$build/bench/cuda_executor" "${args[@]}" ;;
    compile)
        args=()
        [ $quick -eq 1 ] && args=(--quick)
        exec bash "$(dirname "${BASH_SOURCE[0]}")/compile_times.sh" "${args[@]}" ;;
    *) usage ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/bench-release

if [ -f "$root/tools/setup.sh" ]; then
    bash "$root/tools/setup.sh" >&2
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTYCHE_BUILD_TESTS=OFF \
        -DTYCHE_BUILD_EXAMPLES=OFF -DTYCHE_BUILD_BENCH=ON >&2
fi
cmake --build "$build" --target bench_gradients -j "$(nproc)" >&2

if [ $quick -eq 1 ]; then
    reps=3 min_time=0.05
else
    reps=15 min_time=0.5
fi

json=$(mktemp "${TMPDIR:-/tmp}/tyche-bench-XXXXXX.json")
trap 'rm -f "$json"' EXIT
"$build/bench/gradients" \
    --benchmark_repetitions=$reps \
    --benchmark_min_time=$min_time \
    --benchmark_report_aggregates_only=true \
    --benchmark_out="$json" --benchmark_out_format=json >&2

python3 - "$json" <<'PY'
import json, sys

with open(sys.argv[1]) as f:
    runs = json.load(f)["benchmarks"]

# n: the number of observations (iid_normal_100: the dimension of θ).
n_of = {"iid_normal_100": 100, "eight_schools_noncentered": 8, "logistic_regression": 10000,
        "arK": 195, "low_dim_gauss_mix": 1000, "glmm_poisson": 500, "hmm_scan": 1000,
        "hmm_marginal": 1000, "arma11_scan": 1000}
order = ["iid_normal_100", "eight_schools_noncentered", "logistic_regression", "arK",
         "low_dim_gauss_mix", "glmm_poisson", "hmm_scan", "hmm_marginal", "arma11_scan"]

scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
median = {}
for r in runs:
    if r.get("aggregate_name") != "median":
        continue
    case, impl = r["run_name"].split("/")
    median[(case, impl)] = r["real_time"] * scale[r["time_unit"]]

# kidiq_<n>: the kidiq model on its first n rows (10000: resampled), printed as model kidiq;
# kidiq_elementwise_<n>: the same model with its predictor written elementwise (Rainier's form).
for prefix in ("kidiq_", "kidiq_elementwise_"):
    cases = [c for c, _ in median if c.startswith(prefix) and c[len(prefix):].isdigit()]
    for case in sorted(set(cases), key=lambda c: int(c[len(prefix):])):
        order.append(case)
        n_of[case] = int(case[len(prefix):])

print("model,n,tyche_ns,handwritten_ns,ratio")
for case in order:
    t, h = median[(case, "tyche")], median[(case, "handwritten")]
    name = case.rsplit("_", 1)[0] if case.startswith("kidiq_") else case
    print(f"{name},{n_of[case]},{t:.1f},{h:.1f},{t / h:.3f}")
PY
