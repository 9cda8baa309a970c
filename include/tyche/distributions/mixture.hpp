// tyche/distributions/mixture.hpp — log_mix(theta, d1, d2), the mixture of two distributions.
//   p(y) = θ p₁(y) + (1 − θ) p₂(y),  0 ≤ θ ≤ 1,  for any two families d₁, d₂.
//   Observing a vector mixes each observation separately (Stan: a loop over n of
//   target += log_mix(theta, normal_lpdf(y[n] | …), normal_lpdf(y[n] | …))):
//     log_mix(theta, normal(mu[0], sigma[0]), normal(mu[1], sigma[1])).observe(data(y))
//   is Σₙ log(θ N(yₙ | μ₁, σ₁) + (1 − θ) N(yₙ | μ₂, σ₂)), each term by the stable log_mix of
//   log_mix.hpp. pointwise_log_prob(d, y) is the vector of one family's log densities.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/log_mix.hpp>

#include <concepts>
#include <random>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tyche {

/// The log density of distribution d at each element of x: a vector expression for a vector x
/// (a family's log_prob is the sum of these), a scalar one for a scalar x.
template <class Dist, class X>
  requires std::derived_from<Dist, distribution<Dist>>
auto pointwise_log_prob(const Dist& d, const X& x) {
  const auto node = detail::as_node(x);
  const auto lp = d.log_prob(node);
  if constexpr (is_vector_v<decltype(node)>) {
    static_assert(kind_of<decltype(lp)> == node_kind::sum,
                  "tyche::pointwise_log_prob(d, y): this family's log density is not a plain sum "
                  "of one term per element of y");
    return lp.a;
  } else {
    return lp;
  }
}

/// θ d₁ + (1 − θ) d₂.
template <class Theta, class D1, class D2>
struct mixture_distribution : distribution<mixture_distribution<Theta, D1, D2>> {
  static constexpr const char* family = "log_mix";
  Theta theta;
  D1 first;
  D2 second;
  auto transform() const {
    static_assert(std::is_same_v<decltype(first.transform()), decltype(second.transform())>,
                  "tyche::log_mix(theta, d1, d2) as a prior: d1 and d2 must have the same support");
    return first.transform();
  }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(log_mix(theta, pointwise_log_prob(first, x), pointwise_log_prob(second, x)));
  }
  auto arguments() const { return std::tuple_cat(std::tuple{theta}, first.arguments(), second.arguments()); }
  /// The components' argument checks (core/support.hpp); θ is checked by log_mix.
  void check_supports() const {
    if constexpr (requires { first.check_supports(); }) first.check_supports();
    if constexpr (requires { second.check_supports(); }) second.check_supports();
  }

  static constexpr std::size_t arity1 = std::tuple_size_v<decltype(std::declval<D1>().arguments())>;
  /// A draw: component 1 with probability θ, else component 2.
  template <class G, class... A>
  static double draw(G& rng, double t, A... a) {
    const std::tuple<A...> args{a...};
    const bool first_component = std::uniform_real_distribution<double>(0.0, 1.0)(rng) < t;
    return [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
      return first_component ? D1::draw(rng, std::get<I>(args)...)
                             : D2::draw(rng, std::get<arity1 + J>(args)...);
    }(std::make_index_sequence<arity1>{}, std::make_index_sequence<sizeof...(A) - arity1>{});
  }
};

/// The mixture θ d₁ + (1 − θ) d₂ of two distributions: observe it, or name it as a prior
/// (`log_mix<"x">(theta, d1, d2)`, when d1 and d2 have the same support).
template <detail::operand Theta, class D1, class D2>
  requires(std::derived_from<D1, distribution<D1>> && std::derived_from<D2, distribution<D2>>)
auto log_mix(const Theta& theta, const D1& d1, const D2& d2) {
  return mixture_distribution<detail::node_t<Theta>, D1, D2>{{}, detail::as_node(theta), d1, d2};
}
template <fixed_string Name, detail::operand Theta, class D1, class D2, shape_tag Shape = scalar_shape>
  requires(std::derived_from<D1, distribution<D1>> && std::derived_from<D2, distribution<D2>>)
auto log_mix(const Theta& theta, const D1& d1, const D2& d2, Shape shape = {}) {
  return detail::make_random_variable<Name>(log_mix(theta, d1, d2), shape);
}

}  // namespace tyche
