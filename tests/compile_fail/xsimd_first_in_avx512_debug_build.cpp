// expect: needs <tyche/...> included before <xsimd/xsimd.hpp>
// compiler: GNU
// flags: -O0 -march=skylake-avx512
// An unoptimised g++ build for AVX-512 that includes xsimd before tyche: xsimd's templates have
// already taken in GCC's -O0 macro _mm512_mask_blend_epi8, which cannot cast an xsimd batch, so
// tyche's workaround (backends/simd/batch.hpp) comes too late; tyche says which order works.
#include <xsimd/xsimd.hpp>
#include <tyche/tyche.hpp>

int main() { return 0; }
