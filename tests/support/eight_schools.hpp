// tests/support/eight_schools.hpp — the eight-schools (non-centred) log density written with
// core operations, shared by the host test and the CUDA device test so both evaluate the very
// same expression type; and the same model written with the model API (eight_schools_model),
// for the executor tests and the GPU benchmark.
#pragma once
#include <tyche/tyche.hpp>

#include <vector>

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

namespace tyche_test {

/// Eight schools' data as a model takes them.
struct schools_data {
  std::vector<double> y, sigma;
};
inline const schools_data& eight_schools_data() {
  static const schools_data d{{28, 8, -3, 7, -1, 1, 18, 12}, {15, 10, 16, 11, 9, 11, 10, 18}};
  return d;
}

/// Eight schools (non-centred) written with the model API, as examples/quickstart.cpp writes it:
/// θ = (mu, log tau, theta_raw[8]); reported mu, tau, theta_raw.
inline auto eight_schools_model() {
  using namespace tyche;
  return model(
      [](const schools_data& d) {
        auto mu = normal<"mu">(0.0, 5.0);
        auto tau = half_cauchy<"tau">(5.0);
        auto theta_raw = std_normal<"theta_raw">(shape<8>);
        auto theta = mu + tau * theta_raw;
        return joint(mu, tau, theta_raw, normal(theta, data(d.sigma)).observe(data(d.y)));
      },
      eight_schools_data());
}

}  // namespace tyche_test
