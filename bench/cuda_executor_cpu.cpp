// bench/cuda_executor_cpu.cpp — the CPU executor's rows of bench/cuda_executor.cu, compiled by the
// host compiler with tyche::simd (chains in SIMD lanes, as users build CPU code).
#include "cuda_executor.hpp"

void cpu_rows_eight_schools(int chains, int warmup, int draws) {
  const auto es = tyche_test::eight_schools_model();
  measure("eight_schools_noncentered", 8, es, chains, tyche::cpu{}, warmup, draws);
}

void cpu_rows_logistic_regression(int chains, int warmup, int draws) {
  const regression_data rd;
  const auto lr = logistic_regression(rd);
  measure("logistic_regression", rd.n, lr, chains, tyche::cpu{}, warmup, draws);
}

void cpu_rows_corr_gaussian(int chains, int warmup, int draws) {
  const corr_gaussian_data cg;
  const auto m = corr_gaussian(cg);
  measure("corr_gaussian_100", cg.d, m, chains, tyche::cpu{}, warmup, draws, nullptr, tyche::samplers::metric_kind::dense);
}

void cpu_rows_covertype(int chains, int warmup, int draws) {
  const covertype_data cd;
  const auto m = covertype(cd);
  measure("covertype", cd.d.n, m, chains, tyche::cpu{}, warmup, draws);
}
