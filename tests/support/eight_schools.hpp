// tests/support/eight_schools.hpp — the eight-schools (non-centred) log density written with
// core operations, shared by the host test and the CUDA device test so both evaluate the very
// same expression type.
#pragma once
#include <tyche/tyche.hpp>

namespace tyche_test {

inline constexpr double eight_schools_y[8] = {28, 8, -3, 7, -1, 1, 18, 12};
inline constexpr double eight_schools_sigma[8] = {15, 10, 16, 11, 9, 11, 10, 18};

/// θ = (mu, log_tau, theta_raw[0..7]); y and sigma are views of 8 doubles (host or device).
inline auto eight_schools_noncentered(const double* y, const double* sigma) {
  using namespace tyche;
  param<"mu"> mu;
  param<"log_tau"> log_tau;
  vector_param<"theta_raw", 8> theta_raw;
  auto tau = exp(log_tau);
  auto theta = mu + tau * theta_raw;
  auto lp = sum(lit<-1, 2> * square(theta_raw)) +
            sum(lit<-1, 2> * square((data(y, 8) - theta) / data(sigma, 8))) -
            square(mu) / lit<50> - log1p(square(tau / lit<5>)) + log_tau;
  return compile(lp, mu, log_tau, theta_raw);
}

/// The per-chain body a device kernel runs: value and gradient at θ for one chain.
template <class View>
TYCHE_HD double eight_schools_chain(const View& view, const double* theta, double* grad) {
  return view.value_and_gradient(theta, grad);
}

}  // namespace tyche_test
