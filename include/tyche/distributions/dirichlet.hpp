// tyche/distributions/dirichlet.hpp — dirichlet(alpha) on the simplex.
//   log p(x | α) = log Γ(Σₖ αₖ) − Σₖ log Γ(αₖ) + Σₖ (αₖ − 1) log xₖ,   x ∈ simplex, αₖ > 0.
// alpha is a vector of K concentrations, or a scalar (the symmetric Dirichlet; then give the
// variable a shape). A named variable takes the simplex transform (transforms/simplex.hpp):
// `dirichlet<"theta">(data(alpha))`, `dirichlet<"p">(1.0, shape<4>)`.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/transforms/simplex.hpp>

#include <random>
#include <tuple>
#include <vector>

namespace tyche {

template <class Alpha>
struct dirichlet_distribution : distribution<dirichlet_distribution<Alpha>> {
  static constexpr const char* family = "dirichlet";
  Alpha alpha;
  auto transform() const { return transforms::simplex{}; }
  template <class X>
  auto log_prob(const X& x) const {
    static_assert(is_vector_v<X>, "tyche::dirichlet(alpha): the variable must be a vector");
    if constexpr (is_vector_v<Alpha>) {
      return sum((alpha - lit<1>) * log(x)) + lgamma(sum(alpha)) - sum(lgamma(alpha));
    } else {
      const constant k{static_cast<double>(x.size())};
      return (alpha - lit<1>) * sum(log(x)) + lgamma(k * alpha) - k * lgamma(alpha);
    }
  }
  auto arguments() const { return std::tuple{alpha}; }
  static constexpr bool whole_arguments = true;
  /// One draw of K values (normalised Gamma(αₖ, 1) draws); α of size 1 is symmetric.
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t k, const std::vector<double>& a) {
    std::vector<double> x(k);
    double total = 0;
    for (std::size_t i = 0; i < k; ++i) {
      x[i] = std::gamma_distribution<double>(a.size() == 1 ? a[0] : a[i], 1.0)(rng);
      total += x[i];
    }
    for (auto& v : x) v /= total;
    return x;
  }
};

/// Name ~ dirichlet(alpha): `dirichlet<"theta">(data(alpha))` (the shape of alpha), or with a
/// scalar alpha and a shape, `dirichlet<"p">(1.0, shape<4>)`.
template <fixed_string Name, detail::operand Alpha, shape_tag Shape = scalar_shape>
auto dirichlet(const Alpha& alpha, Shape shape = {}) {
  static_assert(is_vector_v<detail::node_t<Alpha>> || !std::is_same_v<Shape, scalar_shape>,
                "tyche::dirichlet<\"name\">(alpha, shape): with a scalar alpha give the number of "
                "categories as a shape, e.g. shape<4>");
  return detail::make_named<Name, dirichlet_distribution>(shape, alpha);
}
/// The distribution dirichlet(alpha), e.g. to observe proportions.
template <detail::operand Alpha>
auto dirichlet(const Alpha& alpha) {
  return detail::make_distribution<dirichlet_distribution>(alpha);
}

}  // namespace tyche
