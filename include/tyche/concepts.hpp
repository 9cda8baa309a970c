// tyche/concepts.hpp — the contracts of tyche's extension points, in one place: what the library
// requires of a type it accepts from a user (or from another part of itself) where one of these
// is expected. Each concept is checked where the library takes such a value, with a
// static_assert whose message names the call, the argument and what is missing
// (tests/compile_fail/ holds one case per message).
//
//   distribution_family<D>     a family of distributions: normal_distribution<Mu, Sigma>, …
//   continuous_family<D>       … that can be a parameter's prior (it chooses a transform)
//   transform_of<Tr, U>        a constraining bijection applied to an unconstrained U
//   log_density_target<T>      what a sampler needs from a model (an executor's input)
//   sampleable_model<M>        what nuts() needs from the object it is given (tyche::model(...))
//   nuts_executor_type<E>      where nuts() runs the chains: tyche::cpu{…}
//   lane_generator<R, Real>    the random streams of a NUTS kernel's lanes
//   smc_program<P>             a program for forward inference (SMC, PIMH, particle Gibbs)
//
// The requirements are syntactic; the semantics are written beside each (and in
// docs/design/model-api.md and docs/design/nuts-kernel.md). This header depends on the C++
// standard library and random/philox.hpp only, so any layer may include it.
#pragma once
#include <tyche/config.hpp>
#include <tyche/random/philox.hpp>

#include <concepts>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tyche {

/// A family of distributions (one struct per family, holding its argument expressions):
/// `D::family` names it ("normal"); `arguments()` gives the argument expressions as a tuple;
/// `log_prob(x)` (a core expression of x and the arguments: not checked here, it needs an x)
/// is the log density with every normalising constant. Optional members, which
/// distribution<D>::observe(y) uses where a family has them (distributions/distribution.hpp):
/// `static const char* observation_problem(double v)` (what is wrong with one observed value, or
/// nullptr), `check_observed(y)` (checks of y against the arguments, throwing
/// std::invalid_argument: binomial's y ≤ n, uniform's bounds, wishart's matrix) and
/// `observing(y)` (a copy holding a setting read from y: multinomial's total). And
/// `static constexpr const char* non_finite_hint`: what makes the family's log density NaN that
/// its arguments' supports cannot show (ordered_logistic's cutpoints that do not increase),
/// said beside the term by model::non_finite_terms.
template <class D>
concept distribution_family = requires(const D& d) {
  { D::family } -> std::convertible_to<const char*>;
  d.arguments();
};

/// A family whose support is continuous: `transform()` is the bijection from the real line (or
/// ℝⁿ) onto the support, which a random variable with this prior is sampled through.
template <class D>
concept continuous_family = distribution_family<D> && requires(const D& d) { d.transform(); };

/// A transform: `Tr::name`; `constrain(u)`, the constrained value as a core expression of the
/// unconstrained u; `log_jacobian(u)`, log |dx/du| summed over the elements.
template <class Tr, class U>
concept transform_of = requires(const Tr& t, const U& u) {
  { Tr::name } -> std::convertible_to<const char*>;
  t.constrain(u);
  t.log_jacobian(u);
};

/// What a sampler needs from a model: the dimension of θ (unconstrained), log p and its gradient
/// at θ with a caller-owned workspace of workspace_size() values (no allocation per call), Stan's
/// random initialisation, and the constrained values of θ (constrained_dim() of them, appended).
/// Executors also evaluate log p for their lane types (SIMD batches), which a target provides
/// as the same template.
template <class T>
concept log_density_target = requires(const T& t, const double* q, double* g, double* ws, counter_rng& rng,
                                      std::vector<double>& out) {
  { t.dim() } -> std::convertible_to<std::size_t>;
  { t.constrained_dim() } -> std::convertible_to<std::size_t>;
  { t.workspace_size() } -> std::convertible_to<std::size_t>;
  { t.value_and_gradient(q, g, ws) } -> std::convertible_to<double>;
  { t.initial_point(rng, 2.0) } -> std::convertible_to<std::vector<double>>;
  t.constrain(q, out);
};

/// What nuts() needs from the object it is given — a tyche::model(...): its dimension and
/// names, its compiled log density (program(): a view to evaluate, and the workspace it needs),
/// Stan's random initialisation, and constrain.
template <class M>
concept sampleable_model = requires(const M& m, counter_rng& rng, std::span<const double> q) {
  { m.dim() } -> std::convertible_to<std::size_t>;
  { m.constrained_dim() } -> std::convertible_to<std::size_t>;
  { m.parameter_names() } -> std::convertible_to<std::vector<std::string>>;
  m.program().view();
  { m.program().workspace_size() } -> std::convertible_to<std::size_t>;
  { m.initial_point(rng, 2.0) } -> std::convertible_to<std::vector<double>>;
  { m.constrain(q) } -> std::convertible_to<std::vector<double>>;
};

/// An executor: a value that says where chains run and with what resources. Each executor type
/// names itself (`executor_name`) and is one of the alternatives of nuts_executor
/// (samplers/nuts/config.hpp).
template <class E>
concept nuts_executor_type = requires {
  { E::executor_name } -> std::convertible_to<const char*>;
};

/// The random streams of W chains in the lanes of a NUTS kernel (samplers/nuts/kernel.hpp):
/// `uniforms(out, take)` writes out[l], a uniform on (0, 1), for the lanes with take[l];
/// `normals(out, n, take)` writes n standard normals out[i·W + l] for those lanes. A lane's
/// draws must depend on its own chain only (samplers/nuts/chain_streams.hpp: Philox streams).
template <class R, class Real>
concept lane_generator = requires(R& r, Real* out, const bool* take, std::size_t n) {
  r.uniforms(out, take);
  r.normals(out, n, take);
};

/// A program for forward inference (samplers/smc/): either a stepwise program
/// (tyche::smc::stepwise(initial, observations, step, predict): a copyable state, a step that
/// returns the log-likelihood of observation n, a predict that records values), or a callable
/// taking no arguments that calls tyche::smc::observe and tyche::smc::predict (the fork engine).
template <class P>
concept smc_program = std::is_invocable_v<const P&> || requires(const P& p) {
  typename P::state_type;
  p.initial;
  { p.observations } -> std::convertible_to<std::size_t>;
  p.step;
  p.predict;
};

}  // namespace tyche
