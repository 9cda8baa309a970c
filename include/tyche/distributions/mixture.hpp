// tyche/distributions/mixture.hpp — log_mix(theta, d1, d2), the mixture of two distributions, and
// log_mix(theta, d1, …, dK) of K ≥ 3 with a vector of weights.
//   p(y) = θ p₁(y) + (1 − θ) p₂(y),  0 ≤ θ ≤ 1,  for any two families d₁, d₂.
//   Observing a vector mixes each observation separately (Stan: a loop over n of
//   target += log_mix(theta, normal_lpdf(y[n] | …), normal_lpdf(y[n] | …))):
//     log_mix(theta, normal(mu[0], sigma[0]), normal(mu[1], sigma[1])).observe(data(y))
//   is Σₙ log(θ N(yₙ | μ₁, σ₁) + (1 − θ) N(yₙ | μ₂, σ₂)), each term by the stable log_mix of
//   log_mix.hpp. pointwise_log_density(d, y) is the vector of one family's log densities.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/log_mix.hpp>

#include <array>
#include <concepts>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tyche {

namespace detail {
/// The log density of distribution d at each element of x: a vector expression for a vector x
/// (a family's log_prob is the sum of these), a scalar one for a scalar x. A mixture's component,
/// so without pointwise_log_density's checks (the mixture's observe makes them) and −∞ outside a
/// support bounded by arguments.
template <class Dist, class X>
  requires std::derived_from<Dist, distribution<Dist>>
auto pointwise_log_prob(const Dist& d, const X& x) {
  const auto node = detail::as_node(x);
  // −∞ outside a support bounded by arguments (a uniform component), for any bounds: a mixture's
  // observation may lie outside one component.
  const auto lp = [&] {
    if constexpr (requires { d.template observed_log_prob<true>(node); }) return d.template observed_log_prob<true>(node);
    else return d.log_prob(node);
  }();
  if constexpr (is_vector_v<decltype(node)>) {
    static_assert(kind_of<decltype(lp)> == node_kind::sum,
                  "tyche::log_mix(theta, d1, ...): a component's log density is not a plain sum "
                  "of one term per element of y");
    return lp.a;
  } else {
    return lp;
  }
}
}  // namespace detail

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
    return detail::total(log_mix(theta, detail::pointwise_log_prob(first, x), detail::pointwise_log_prob(second, x)));
  }
  auto arguments() const { return std::tuple_cat(std::tuple{theta}, first.arguments(), second.arguments()); }
  /// The components' argument checks (interval/support.hpp); θ is checked by log_mix.
  auto check_supports() const {
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

/// Σₖ θₖ dₖ for K ≥ 3 components and a vector θ of K weights (a simplex parameter, or data):
/// log p(x) = log Σₖ exp(log θₖ + log pₖ(x)), per observation, as K − 1 stable log_add_exp.
template <class Theta, class... Ds>
struct mixture_n_distribution : distribution<mixture_n_distribution<Theta, Ds...>> {
  static constexpr const char* family = "log_mix";
  static constexpr std::size_t K = sizeof...(Ds);
  Theta theta;
  std::tuple<Ds...> components;

  template <std::size_t I, class X>
  auto term(const X& x) const {
    return log(at(theta, I)) + detail::pointwise_log_prob(std::get<I>(components), x);
  }
  template <std::size_t I, class Acc, class X>
  auto mix_from(const Acc& acc, const X& x) const {
    if constexpr (I == K) return acc;
    else return mix_from<I + 1>(log_add_exp(acc, term<I>(x)), x);
  }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(mix_from<1>(term<0>(x), x));
  }
  auto arguments() const {
    return std::apply([&](const auto&... d) { return std::tuple_cat(std::tuple{theta}, d.arguments()...); },
                      components);
  }
  /// The components' argument checks (interval/support.hpp); θ's size and values are checked when
  /// the mixture is made (log_mix).
  auto check_supports() const {
    std::apply([](const auto&... d) {
      auto one = [](const auto& c) {
        if constexpr (requires { c.check_supports(); }) c.check_supports();
      };
      (one(d), ...);
    }, components);
  }

  /// Draws: θ is one vector for every draw, so the arguments come whole (model.hpp).
  static constexpr bool whole_arguments = true;
  template <class G, class... A>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& t, const A&... a) const {
    const std::array<const std::vector<double>*, sizeof...(A)> args{&a...};
    constexpr std::array<std::size_t, K> arity{
        std::tuple_size_v<decltype(std::declval<Ds>().arguments())>...};
    std::vector<double> out(n);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
      double total = 0;
      for (double w : t) total += w;
      double r = u(rng) * total;
      std::size_t k = 0;
      while (k + 1 < K && r >= t[k]) r -= t[k++];
      meta::static_for<K>([&](auto c) {
        constexpr std::size_t C = decltype(c)::value;
        if (C != k) return;
        constexpr std::size_t offset = [&] {
          std::size_t o = 0;
          for (std::size_t j = 0; j < C; ++j) o += arity[j];
          return o;
        }();
        using D = std::tuple_element_t<C, std::tuple<Ds...>>;
        out[i] = [&]<std::size_t... J>(std::index_sequence<J...>) {
          return D::draw(rng, (args[offset + J]->size() == 1 ? (*args[offset + J])[0] : (*args[offset + J])[i])...);
        }(std::make_index_sequence<arity[C]>{});
      });
    }
    return out;
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

/// The mixture Σₖ θₖ dₖ of K ≥ 3 distributions with a vector θ of K weights in [0, 1] (a
/// simplex parameter, or data): `log_mix(theta, normal(m1, s1), normal(m2, s2), normal(m3, s3))
/// .observe(data(y))`, Stan's `log_mix(theta, {normal_lpdf(y | m1, s1), …})` per observation.
/// Observe it; as a named prior, use two components or write the density out.
template <detail::operand Theta, class D1, class D2, class D3, class... Ds>
  requires(std::derived_from<D1, distribution<D1>> && std::derived_from<D2, distribution<D2>> &&
           std::derived_from<D3, distribution<D3>> && (std::derived_from<Ds, distribution<Ds>> && ...))
auto log_mix(const Theta& theta, const D1& d1, const D2& d2, const D3& d3, const Ds&... ds) {
  using T = detail::node_t<Theta>;
  static_assert(is_vector_v<T>, "tyche::log_mix(theta, d1, d2, d3, ...): theta must be a vector of one "
                                "weight per component (e.g. a simplex parameter)");
  const T t = detail::as_node(theta);
  constexpr std::size_t k = 3 + sizeof...(Ds);
  if (t.size() != k)
    throw std::invalid_argument("tyche::log_mix(theta, d1, ..., dK): theta has size " + std::to_string(t.size()) +
                                " but there are " + std::to_string(k) + " components");
  if constexpr (kind_of<T> == node_kind::data_vector) {
    for (std::size_t i = 0; i < k; ++i)
      if (!(t.ptr[i] >= 0 && t.ptr[i] <= 1))
        throw std::invalid_argument("tyche::log_mix(theta, d1, ..., dK): theta must be in [0, 1], but theta[" +
                                    std::to_string(i + 1) + "] = " + std::to_string(t.ptr[i]) + " (data)");
  }
  return mixture_n_distribution<T, D1, D2, D3, Ds...>{{}, t, std::tuple{d1, d2, d3, ds...}};
}

}  // namespace tyche
