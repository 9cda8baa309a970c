// Runs tests/headers/avx512_tiles_test.cpp (compiled for AVX-512, tests/CMakeLists.txt) when this
// CPU has AVX-512F; otherwise reports the test skipped (exit 77). This file is compiled for the
// baseline target, so nothing runs an AVX-512 instruction before the check.
#include <cstdio>

int avx512_tiles_test();

int main() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return avx512_tiles_test();
#endif
  std::puts("avx512_tiles: this CPU has no AVX-512F: skipped");
  return 77;
}
