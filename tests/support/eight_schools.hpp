// tests/support/eight_schools.hpp — the eight-schools (non-centred) log density written with
// core operations, shared by the host test and the CUDA device test so both evaluate the very
// same expression type.
#pragma once
#include <tyche/tyche.hpp>

namespace tyche_test {

inline constexpr double eight_schools_y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
inline constexpr double eight_schools_sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};
inline constexpr double eight_schools_inv_sigma[8] = {1.0 / 15, 1.0 / 10, 1.0 / 16, 1.0 / 11,
                                                      1.0 / 9,  1.0 / 11, 1.0 / 10, 1.0 / 18};

/// θ = (mu, log_tau, theta_raw[0..7]); y and inv_sigma (1/σ) are views of 8 doubles, host or
/// device. The expression has no data-only subexpression, so compile() reads no data: that is
/// what lets the same program run on a device (folding happens on the host; see
/// docs/design/expression-core.md, CUDA).
inline auto eight_schools_noncentered(const double* y, const double* inv_sigma) {
  using namespace tyche;
  param<"mu"> mu;
  param<"log_tau"> log_tau;
  vector_param<"theta_raw", 8> theta_raw;
  auto tau = exp(log_tau);
  auto theta = mu + tau * theta_raw;
  auto lp = sum(lit<-1, 2> * square(theta_raw)) +
            sum(lit<-1, 2> * square((data(y, 8) - theta) * data(inv_sigma, 8))) -
            square(mu) / lit<50> - log1p(square(tau / lit<5>)) + log_tau;
  return compile(lp, mu, log_tau, theta_raw);
}

/// The per-chain body a device kernel runs: value and gradient at θ for one chain.
template <class View>
TYCHE_HD double eight_schools_chain(const View& view, const double* theta, double* grad) {
  return view.value_and_gradient(theta, grad);
}

}  // namespace tyche_test
