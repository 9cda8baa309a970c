// tyche/samplers/smc/program.hpp — the two ways to write a program for forward inference,
// and the small densities and draws the paper's programs use.
//
// 1. A plain C++ callable (the fork engine; Paige & Wood's probabilistic C):
//
//      auto gaussian = [] {
//        using namespace tyche::smc;
//        const double mu = sample_normal(1, std::sqrt(5.0));
//        observe(normal_lpdf(9, mu, std::sqrt(2.0)));
//        observe(normal_lpdf(8, mu, std::sqrt(2.0)));
//        predict("mu", mu);
//      };
//
//    observe, predict and rng() are in <tyche/samplers/smc/fork.hpp>. Draw random choices
//    from rng() (the sample_* functions without a generator do): the engine gives every
//    particle its own stream after each observe. A generator of your own, copied by fork,
//    would make sibling particles draw the same numbers.
//
// 2. A stepwise program (both engines; the in-process engine needs this form): a copyable
//    state, the number of observes N, a step function that advances the state from observe
//    n − 1 to observe n and returns the log-likelihood observed there, and a predict function
//    of the final state:
//
//      auto gaussian = tyche::smc::stepwise(
//          0.0, 2,
//          [](double& mu, std::size_t n, tyche::counter_rng& g) {
//            if (n == 0) mu = sample_normal(g, 1, std::sqrt(5.0));
//            return normal_lpdf(n == 0 ? 9 : 8, mu, std::sqrt(2.0));
//          },
//          [](const double& mu, tyche::smc::predictions& p) { p("mu", mu); });
//
//    The fork engine runs a stepwise program as `state s = initial; for n: observe(step(s, n,
//    rng())); predict(s)`, with the same random streams as the in-process engine, so both
//    engines give identical results for it (tests/smc/engines_test.cpp). A step that takes
//    `auto& g` also runs in correlated PMMH's sweeps (samplers/smc/correlated.hpp).
#pragma once
#include <tyche/random/philox.hpp>
#include <tyche/samplers/smc/result.hpp>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tyche::smc {

/// The key of a stepwise program without one (stepwise(initial, n, step, predict)).
struct no_key {};

/// A copyable state, N observes, step(state&, n, counter_rng&) → log-likelihood at observe n,
/// predict(const state&, predictions&), and optionally key(const state&) → double, the order
/// in which correlated PMMH sorts the particles before it resamples them
/// (samplers/smc/correlated.hpp; a state that is a number is its own key).
template <class State, class Step, class Predict, class Key = no_key>
struct stepwise_program {
  using state_type = State;
  using key_type = Key;
  State initial;
  std::size_t observations;
  Step step;
  Predict predict;
  Key key{};
};

template <class T>
struct is_stepwise_program : std::false_type {};
template <class S, class St, class P, class K>
struct is_stepwise_program<stepwise_program<S, St, P, K>> : std::true_type {};

namespace detail {
/// Whether step(State&, n, counter_rng&) can be called but returns what is not a number: most
/// often a NUTS model expression, tyche::normal_lpdf picked over smc::normal_lpdf (below).
template <class Step, class State>
constexpr bool step_returns_non_number() {
  if constexpr (std::is_invocable_v<const Step&, State&, std::size_t, counter_rng&>)
    return !std::is_convertible_v<std::invoke_result_t<const Step&, State&, std::size_t, counter_rng&>, double>;
  else
    return false;
}
}  // namespace detail

/// The stepwise program (initial, observations, step, predict); see the top of this file.
template <class State, class Step, class Predict>
auto stepwise(State initial, std::size_t observations, Step step, Predict predict) {
  static_assert(std::is_copy_constructible_v<State> && std::is_copy_assignable_v<State>,
                "tyche::smc::stepwise(initial, ...) requires a copyable state: resampling copies it");
  constexpr bool returns_non_number = detail::step_returns_non_number<Step, State>();
  static_assert(!returns_non_number,
                "tyche::smc::stepwise(initial, n, step, predict): 'step' returns something that is not a "
                "number (a double log-likelihood). Often it is a NUTS model expression: under `using "
                "namespace tyche;` a call such as normal_lpdf(9, mu, sd), with an int argument, picks "
                "tyche::normal_lpdf (a term of a NUTS model) over tyche::smc::normal_lpdf(double, double, "
                "double); write tyche::smc::normal_lpdf(...) or pass 9.0");
  static_assert(returns_non_number || std::is_invocable_r_v<double, const Step&, State&, std::size_t, counter_rng&>,
                "tyche::smc::stepwise(initial, n, step, predict) requires 'step' callable as "
                "step(State&, std::size_t observe, tyche::counter_rng&) and returning the "
                "log-likelihood (double)");
  static_assert(std::is_invocable_v<const Predict&, const State&, predictions&>,
                "tyche::smc::stepwise(initial, n, step, predict) requires 'predict' callable as "
                "predict(const State&, tyche::smc::predictions&)");
  return stepwise_program<State, Step, Predict>{std::move(initial), observations, std::move(step),
                                                std::move(predict)};
}

/// The stepwise program with a key: key(const State&) → double orders the particles for
/// correlated PMMH's resampling (pmmh_config::correlation; a 1-D summary of the state, such as
/// its first coordinate or a projection on the direction the state varies most).
template <class State, class Step, class Predict, class Key>
auto stepwise(State initial, std::size_t observations, Step step, Predict predict, Key key) {
  static_assert(std::is_invocable_r_v<double, const Key&, const State&>,
                "tyche::smc::stepwise(initial, n, step, predict, key) requires 'key' callable as "
                "key(const State&) and returning a double (the order in which correlated PMMH sorts "
                "the particles)");
  auto p = stepwise(std::move(initial), observations, std::move(step), std::move(predict));
  return stepwise_program<State, Step, Predict, Key>{std::move(p.initial), p.observations, std::move(p.step),
                                                     std::move(p.predict), std::move(key)};
}

// --- densities on plain doubles -------------------------------------------------------------------

namespace detail {
/// Throws std::domain_error "tyche::smc::<call>: <name> must be <domain>, but it is <v>" unless
/// ok (the support check of the forward-inference densities and samplers). domain_error, as
/// Stan's: run_pmmh rejects a proposal whose sweep throws it.
inline void check_smc_argument(bool ok, const char* call, const char* name, const char* domain, double v) {
  if (ok) return;
  char value[32];
  std::snprintf(value, sizeof value, "%.17g", v);
  throw std::domain_error(std::string("tyche::smc::") + call + ": " + name + " must be " + domain +
                              ", but it is " + value);
}
}  // namespace detail

/// log N(x | mean, sd²). sd must be > 0; x and mean must not be NaN (a NaN log-likelihood is
/// reported by observe with the particle and the observation).
inline double normal_lpdf(double x, double mean, double sd) {
  detail::check_smc_argument(sd > 0 && sd < HUGE_VAL, "normal_lpdf(x, mean, sd)", "sd", "> 0 and finite", sd);
  constexpr double half_log_two_pi = 0.91893853320467274178;
  const double z = (x - mean) / sd;
  return -0.5 * z * z - std::log(sd) - half_log_two_pi;
}

// --- draws from a generator -----------------------------------------------------------------------

/// A generator the draws below take: tyche::counter_rng, or the correlated sweep's
/// tyche::smc::correlated_rng (a step written with `auto& g` takes either).
template <class G>
concept smc_generator = requires(G& g) {
  { g.normal() } -> std::convertible_to<double>;
  { g.uniform01() } -> std::convertible_to<double>;
};

/// N(mean, sd²): one normal of g.
template <smc_generator G>
double sample_normal(G& g, double mean, double sd) {
  detail::check_smc_argument(sd >= 0 && sd < HUGE_VAL, "sample_normal(g, mean, sd)", "sd", ">= 0 and finite", sd);
  return mean + sd * g.normal();
}
/// Uniform on (0, 1).
template <smc_generator G>
double sample_uniform(G& g) {
  return g.uniform01();
}
/// Gamma(shape, rate) (Marsaglia & Tsang 2000; shape < 1 by the u^(1/shape) boost).
template <smc_generator G>
double sample_gamma(G& g, double shape, double rate) {
  detail::check_smc_argument(shape > 0 && shape < HUGE_VAL, "sample_gamma(g, shape, rate)", "shape", "> 0 and finite", shape);
  detail::check_smc_argument(rate > 0 && rate < HUGE_VAL, "sample_gamma(g, shape, rate)", "rate", "> 0 and finite", rate);
  if (shape < 1) return sample_gamma(g, shape + 1, rate) * std::pow(g.uniform01(), 1 / shape);
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9 * d);
  for (;;) {
    double x, v;
    do {
      x = g.normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = g.uniform01();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v / rate;
  }
}
/// An index drawn with probability proportional to weights[i] (need not sum to 1).
template <smc_generator G, class Weights>
std::size_t sample_discrete(G& g, const Weights& weights) {
  double total = 0;
  for (double w : weights) total += w;
  double u = g.uniform01() * total;
  std::size_t i = 0, last = 0;
  for (double w : weights) {
    if (w > 0) last = i;
    if (u < w) return i;
    u -= w;
    ++i;
  }
  return last;  // rounding
}

}  // namespace tyche::smc
