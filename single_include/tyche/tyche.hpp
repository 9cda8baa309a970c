// ================================================================================================
// tyche 0.1.0 — single-header distribution.
//
// GENERATED FILE — DO NOT EDIT. Produced by tools/amalgamate.py from include/tyche/tyche.hpp;
// edit the headers under include/tyche/ and run `python3 tools/amalgamate.py` instead.
// ================================================================================================
#pragma once

// ----- begin tyche/tyche.hpp -----
// tyche/tyche.hpp — the umbrella header: everything except backends/cuda.
// ----- begin tyche/config.hpp -----
// tyche/config.hpp — macros shared by every header, nothing else.

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

// TYCHE_INLINE forces inlining of the small per-node evaluation functions, so that a model's
// forward and reverse pass become one straight-line function.
#if defined(__CUDACC__)
#define TYCHE_INLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define TYCHE_INLINE inline __attribute__((always_inline))
#else
#define TYCHE_INLINE inline
#endif
// ----- end tyche/config.hpp -----
// ----- end tyche/tyche.hpp -----
