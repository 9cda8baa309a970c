// tyche/distributions/normal.hpp — normal(mu, sigma) and std_normal().
//   log p(x | μ, σ) = −½ ((x − μ)/σ)² − log σ − ½ log 2π,   x ∈ ℝ, σ > 0.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct normal_distribution : distribution<normal_distribution<Mu, Sigma>> {
  static constexpr const char* family = "normal";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(lit<-1, 2> * square((x - mu) / sigma) - log(sigma) -
                         detail::half_log_two_pi);
  }
  /// log P(X ≤ x) and log P(X > x), summed over x: the *_lcdf and *_lccdf functions
  /// (log_densities.hpp), e.g. censored observations.
  template <class X>
  auto log_cdf(const X& x) const {
    return detail::total(log_Phi((x - mu) / sigma));
  }
  template <class X>
  auto log_ccdf(const X& x) const {
    return detail::total(log_Phi((mu - x) / sigma));
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  /// The arguments' domains, checked when a model is built (joint): at compile time where the
  /// types decide, else against the data (docs/design/partial-evaluation.md, "Supports and checks").
  auto check_supports() const {
    static_assert(argument_support_t<Sigma, domains::positive>::ok,
                  "tyche::normal(mu, sigma): sigma must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("normal(mu, sigma)", "sigma", sigma);
  }
  template <class G>
  static double draw(G& rng, double m, double s) { return std::normal_distribution<double>(m, s)(rng); }
  static double mean(double m, double) { return m; }
  static double variance(double, double s) { return s * s; }
};

struct std_normal_distribution : distribution<std_normal_distribution> {
  static constexpr const char* family = "std_normal";
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(lit<-1, 2> * square(x) - detail::half_log_two_pi);
  }
  auto arguments() const { return std::tuple{}; }
  template <class G>
  static double draw(G& rng) { return std::normal_distribution<double>(0.0, 1.0)(rng); }
  static double mean() { return 0.0; }
  static double variance() { return 1.0; }
};

/// The named random variable Name ~ normal(mu, sigma): `normal<"mu">(0.0, 5.0)`.
template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto normal(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, normal_distribution>(shape, mu, sigma);
}
/// The distribution normal(mu, sigma), e.g. to observe data: `normal(theta, sigma).observe(y)`.
template <detail::operand Mu, detail::operand Sigma>
auto normal(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<normal_distribution>(mu, sigma);
}

/// Name ~ normal(0, 1): `std_normal<"z">(shape<8>)`.
template <fixed_string Name, shape_tag Shape = scalar_shape>
auto std_normal(Shape shape = {}) {
  return detail::make_random_variable<Name>(std_normal_distribution{}, shape);
}
inline auto std_normal() { return std_normal_distribution{}; }

}  // namespace tyche
