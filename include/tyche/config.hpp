// tyche/config.hpp — macros shared by every header, nothing else.
#pragma once

#define TYCHE_VERSION_MAJOR 0
#define TYCHE_VERSION_MINOR 1
#define TYCHE_VERSION_PATCH 0

// TYCHE_HD marks functions callable from host and CUDA device code. Outside nvcc it is empty.
#if defined(__CUDACC__)
#define TYCHE_HD __host__ __device__
#define TYCHE_CUDA_COMPILER 1
#else
#define TYCHE_HD
#define TYCHE_CUDA_COMPILER 0
#endif

#if defined(__CUDA_ARCH__)
#define TYCHE_DEVICE_CODE 1
#else
#define TYCHE_DEVICE_CODE 0
#endif

// TYCHE_EXEC_CHECK_DISABLE lets a __host__ __device__ template call a host-only callable when
// it is instantiated for the host (nvcc otherwise warns; Thrust does the same).
#if defined(__CUDACC__)
#define TYCHE_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define TYCHE_EXEC_CHECK_DISABLE
#endif

// TYCHE_RESTRICT marks pointers that do not overlap (θ, gradient and workspace of an
// evaluation), so loops over them need no run-time overlap checks.
#if defined(__CUDACC__) || defined(__GNUC__) || defined(__clang__)
#define TYCHE_RESTRICT __restrict__
#else
#define TYCHE_RESTRICT
#endif

// TYCHE_NOINLINE keeps cold paths (error reporting) out of the hot code.
#if defined(__GNUC__) || defined(__clang__)
#define TYCHE_NOINLINE __attribute__((noinline))
#else
#define TYCHE_NOINLINE
#endif

// TYCHE_DRIVER_INLINE and TYCHE_DRIVER_BODIES: with TYCHE_SEPARATE_DRIVER (docs/compile-time.md)
// a few non-template functions (summary, the configuration checks, the stuck-chain restart, the
// JSON data reader's entry points) are declared in every translation unit and defined, not
// inline, in the one source file that defines TYCHE_NUTS_DRIVER_SOURCE before including tyche
// (src/tyche_nuts_driver.cpp); in a header-only build they are inline functions, as everything
// else.
#if defined(TYCHE_SEPARATE_DRIVER)
#define TYCHE_DRIVER_INLINE
#if defined(TYCHE_NUTS_DRIVER_SOURCE)
#define TYCHE_DRIVER_BODIES 1
#else
#define TYCHE_DRIVER_BODIES 0
#endif
#else
#define TYCHE_DRIVER_INLINE inline
#define TYCHE_DRIVER_BODIES 1
#endif

// TYCHE_CUDA_SEPARATE_CONTROLLERS=1 compiles cuda::separate_controllers' two kernels per model
// (backends/cuda/nuts.cuh): an experimental whole_device mode, measured no faster than the
// default one cooperative launch (docs/gpu.md), whose kernels would otherwise cost every
// whole_device model's CUDA compile a second copy of the NUTS code. Define it the same in every
// translation unit of a program.
#ifndef TYCHE_CUDA_SEPARATE_CONTROLLERS
#define TYCHE_CUDA_SEPARATE_CONTROLLERS 0
#endif

// TYCHE_DEVICE_EMULATION: whether nuts() can run tyche::cuda{.emulate = true} (the device
// executor's code on the host's threads, docs/gpu.md). Its code is the device chain compiled for
// the host: in a header-only build, about 3 s of g++ -O2 for every translation unit that calls
// nuts() (examples/quickstart.cpp, docs/compile-time.md), paid by every program although only a
// program that tests its GPU runs on a machine without one uses it. So it is compiled where it
// costs a program nothing more: in the separate driver's file (TYCHE_SEPARATE_DRIVER: the other
// files only declare it) and in translation units compiled by nvcc (which compile the device chain
// anyway). Elsewhere nuts() with .emulate = true throws std::invalid_argument that names this
// macro; define it to 1 before including tyche (or link tyche::separate_driver) to have it. A
// template argument of nuts() (as Nvcc), so files built with and without it may share a program.
#ifndef TYCHE_DEVICE_EMULATION
#if defined(TYCHE_SEPARATE_DRIVER) || defined(__CUDACC__)
#define TYCHE_DEVICE_EMULATION 1
#else
#define TYCHE_DEVICE_EMULATION 0
#endif
#endif

// TYCHE_CPU_COMPARISON_MODES: whether nuts() can run the CPU executor's two modes kept for
// comparison, cpu::schedule = trajectory_sync (the autobatching paper's baseline: every chain waits
// for the longest trajectory of each iteration) and cpu::lane_kernel = batch (a batch of chains as
// the lanes of one kernel, its bookkeeping in SIMD with masks; slower than the default on the
// models measured). Neither is ever chosen by default, and their code — two more schedules, and
// the whole NUTS kernel for each SIMD batch type — cost every translation unit that calls nuts()
// about a fifth of its compile time (examples/quickstart.cpp, g++ 12 -O2 -march=native on
// AVX-512: 20.7 -> 15.4 s, medians of three; docs/compile-time.md). So they are compiled where
// that costs a program nothing more: in the separate driver's file (TYCHE_SEPARATE_DRIVER, unless
// this is defined to 0) and wherever this is defined to 1 before tyche is included; elsewhere
// nuts() with either mode throws std::invalid_argument that names this macro. A template argument
// of nuts() and mpi::nuts and part of the driver's type (erased_target_for), so header-only files
// built with and without it may share a program (tests/headers/comparison_modes_a.cpp); with
// tyche::separate_driver define it the same in every file (the program does not link otherwise).
// In a target that precompiles <tyche/tyche.hpp>, define it on the command line (CMake:
// target_compile_definitions), not by a #define in a file, which the precompiled header precedes.
#ifndef TYCHE_CPU_COMPARISON_MODES
#if defined(TYCHE_SEPARATE_DRIVER)
#define TYCHE_CPU_COMPARISON_MODES 1
#else
#define TYCHE_CPU_COMPARISON_MODES 0
#endif
#endif

// TYCHE_COLD marks functions that run only to explain an error (model_t::log_prob_terms): out
// of line and optimised for size, which also keeps their compile time small.
#if defined(__GNUC__) || defined(__clang__)
#define TYCHE_COLD __attribute__((cold, noinline))
#else
#define TYCHE_COLD
#endif

// TYCHE_EVALUATION_ENTRY marks the entry points of an evaluation (program_view::value and
// value_and_gradient) on the host: compiled out of line, with everything below them inlined.
// Out of line, their __restrict__ parameters are the roots of every θ / gradient access, which
// is what lets GCC drop run-time overlap checks (restrict on the parameters of an inlined
// function is not kept once the pointers pass through the evaluation's state). On the device
// they are ordinary inline functions.
#if defined(__CUDA_ARCH__)
#define TYCHE_EVALUATION_ENTRY TYCHE_HD
#elif defined(__GNUC__) || defined(__clang__)
#define TYCHE_EVALUATION_ENTRY TYCHE_HD __attribute__((noinline, flatten))
#else
#define TYCHE_EVALUATION_ENTRY TYCHE_HD
#endif

// TYCHE_INLINE forces inlining of the small per-node evaluation functions, so that a model's
// forward and reverse pass become one straight-line function.
#if defined(__CUDACC__)
#define TYCHE_INLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define TYCHE_INLINE inline __attribute__((always_inline))
#else
#define TYCHE_INLINE inline
#endif

// TYCHE_LAMBDA_INLINE, written after a lambda's parameter list: forces the lambda inline (GCC,
// clang; empty with nvcc). TYCHE_EVALUATION_ENTRY's flatten did not inline the reduction loop's
// element lambda once it took its state by reference (86b1f2c): eight schools' gradient went
// from 22 to 46 ns (compile/evaluate.hpp, sum's `element`; 22.4 ns with the lambda forced inline,
// g++ 12 -O3 -march=native, docs/benchmarks.md).
#if defined(__CUDACC__)
#define TYCHE_LAMBDA_INLINE
#elif defined(__GNUC__) || defined(__clang__)
#define TYCHE_LAMBDA_INLINE __attribute__((always_inline))
#else
#define TYCHE_LAMBDA_INLINE
#endif

// TYCHE_SUPPORT_HINT: the end of every support message ("sigma must be > 0, but its support …
// is not inside (0, inf)"): the escape hatch for a value that is inside by construction where
// interval arithmetic cannot follow it (a scan's state, b − a with b > a).
#define TYCHE_SUPPORT_HINT                                                                          \
  "; if it is inside by construction in a way the types cannot follow (a scan's state, b - a "      \
  "with b > a), say so: assume_positive(x), assume_probability(x) or "                             \
  "assume_support<tyche::supports::...>(x) (docs/errors.md)"

// TYCHE_PREFETCH_BATCHES: how many observation batches (or tiles of rows) ahead a streamed
// matvec asks for the rows of its matrix, into L2 (compile/evaluate.hpp, row_product,
// tile_forward); 0 turns the hints off. 2 measured best of 1, 2, 3, 4, 6, 8 (covertype, Zen 4).
#ifndef TYCHE_PREFETCH_BATCHES
#define TYCHE_PREFETCH_BATCHES 2
#endif
// TYCHE_PREFETCH_MIN_BYTES: the hints above are given only for a matrix of at least this many
// bytes. A matrix that stays in the last-level cache gains nothing from them and loses to their
// instructions (one per cache line): logistic regression 10,000 x 100 (8 MB), one gradient 186
// against 207 us with them; covertype (251 MB) 10.8 against 17.4 ms without them (AMD EPYC, 32 MiB
// L3, 2026-12-02; 16 MB already gained, 441 against 493 us; docs/benchmarks.md). 12 MiB lies
// between the two; machines with a larger share of cache per core may set it higher.
#ifndef TYCHE_PREFETCH_MIN_BYTES
#define TYCHE_PREFETCH_MIN_BYTES (12u * 1024u * 1024u)
#endif
// TYCHE_TILE_ROW_PAIRS: with 4 chains in the lanes of an AVX-512 build, a streamed matvec's
// loop body (the likelihood term and its adjoint) runs on two rows at once in the 8-lane batch
// (compile/evaluate.hpp, "rows in tiles"; backends/simd/batch.hpp, column_pair_tiles). 0 takes
// the rows one at a time in the 4-lane batch. The same sums in the same order unless the body
// reads a scalar twice (then that scalar's adjoint is summed in another order); the last bits can
// differ where the compiler fuses products into sums differently for the two widths.
#ifndef TYCHE_TILE_ROW_PAIRS
#define TYCHE_TILE_ROW_PAIRS 1
#endif
