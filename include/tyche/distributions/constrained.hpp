// tyche/distributions/constrained.hpp — ordered<"x">(dist, shape) and positive_ordered<"x">(dist, shape).
//   A vector random variable with the prior dist on each element, restricted to increasing
//   (and, for positive_ordered, positive) vectors, as Stan's `ordered[2] mu; mu ~ normal(0, 2);`:
//   the prior density is dist's, unnormalised on the narrower support (Stan's convention).
//   θ: u₀ = x₀ (positive_ordered: log x₀), uₖ = log(xₖ − xₖ₋₁); log|J| = Σ_{k≥1} uₖ (+ u₀).
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/transforms/ordered.hpp>

#include <concepts>

namespace tyche {

/// Distribution Dist with the transform Transform in place of Dist's own.
template <class Dist, class Transform>
struct constrained_distribution : distribution<constrained_distribution<Dist, Transform>> {
  static constexpr const char* family = Dist::family;
  Dist base;
  [[no_unique_address]] Transform support;
  auto transform() const { return support; }
  template <class X>
  auto log_prob(const X& x) const { return base.log_prob(x); }
  auto arguments() const { return base.arguments(); }
  /// The same constraint on Dist with other arguments (do_ substitutes into them).
  template <class... A>
  auto with_arguments(const A&... a) const {
    auto b = detail::with_arguments(base, a...);
    return constrained_distribution<decltype(b), Transform>{{}, b, support};
  }
  template <class G, class... A>
  static double draw(G& rng, A... a) { return Dist::draw(rng, a...); }
  /// The family's own argument checks (interval/support.hpp).
  auto check_supports() const {
    if constexpr (requires { base.check_supports(); }) base.check_supports();
  }
};

namespace detail {
template <class D>
concept unnamed_distribution = std::derived_from<D, distribution<D>>;
}

/// Name ~ dist on increasing vectors: `ordered<"mu">(normal(0.0, 2.0), shape<2>)` (Stan:
/// `ordered[2] mu; mu ~ normal(0, 2);`). θ: u₀ = x₀, uₖ = log(xₖ − xₖ₋₁).
template <fixed_string Name, detail::unnamed_distribution Dist, shape_tag Shape>
auto ordered(const Dist& d, Shape shape) {
  static_assert(!std::is_same_v<Shape, scalar_shape>,
                "tyche::ordered<\"name\">(dist, shape): an ordered variable is a vector; give it a "
                "shape, e.g. shape<2> or shape_of(k)");
  return detail::make_random_variable<Name>(
      constrained_distribution<Dist, transforms::ordered>{{}, d, {}}, shape);
}

/// Name ~ dist on positive increasing vectors: `positive_ordered<"c">(exponential(1.0), shape<3>)`
/// (Stan: `positive_ordered[3] c;`). θ: u₀ = log x₀, uₖ = log(xₖ − xₖ₋₁).
template <fixed_string Name, detail::unnamed_distribution Dist, shape_tag Shape>
auto positive_ordered(const Dist& d, Shape shape) {
  static_assert(!std::is_same_v<Shape, scalar_shape>,
                "tyche::positive_ordered<\"name\">(dist, shape): a positive_ordered variable is a "
                "vector; give it a shape, e.g. shape<3> or shape_of(k)");
  return detail::make_random_variable<Name>(
      constrained_distribution<Dist, transforms::positive_ordered>{{}, d, {}}, shape);
}

}  // namespace tyche
