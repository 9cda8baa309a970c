// Shared by the libFuzzer harnesses of tests/fuzz: what counts as a finding.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

/// A broken promise: abort, so that libFuzzer saves the input (as it does for a crash).
#define fuzz_require(condition)                                                              \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      std::fprintf(stderr, "%s:%d: fuzz_require(%s) failed\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

/// Runs f; std::invalid_argument is an expected answer to bad input, anything else escapes
/// (an uncaught exception aborts: a finding).
template <class F>
void fuzz_expected(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument&) {
  }
}
