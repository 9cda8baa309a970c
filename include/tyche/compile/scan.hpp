// tyche/compile/scan.hpp — scan(step, init, sequences...): a loop over a latent state written as
// a lambda. step(state, x_t...) returns the next state from the current one and the sequences'
// values at step t; scan returns the state after the last step, a vector of K values (a scalar
// state: K = 1). The forward algorithm of a hidden Markov model, a Kalman filter with its
// log-likelihood carried in the state, an ARMA error recursion: each is one step.
//
// The lambda is called once, on placeholder expressions (the state, one scalar per sequence),
// when the model is built; what it returns is the step's graph, a type. That graph is compiled
// once into a program of the step's vector–Jacobian product,
//     F(a, s, x, p) = Σₖ aₖ · stepₖ(s, x, p),
// where p are the model's parameters the lambda uses (captured random variables): in the reverse
// pass its gradient gives the adjoint of the state before (∂F/∂s) and the parameters' share
// (∂F/∂p). The forward pass evaluates a second program, the next state's K values by value only
// (the same θ; no reverse sweep). The scan is a vector_op (docs/design/vector-ops.md) whose
// operands are the initial state and those parameters; it runs the value program N times
// forwards, keeping the N + 1 states in its scratch space, and F's gradient N times backwards.
// Compile time does not depend on N. See docs/design/scan.md.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/compile/program.hpp>
#include <tyche/compile/relocate.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/scalar/format.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tyche {

namespace detail {
inline constexpr fixed_string scan_state_name = "__scan_state";
inline constexpr fixed_string scan_adjoint_name = "__scan_adjoint";
/// The placeholder of sequence I's value at a step: "__scan_x0", "__scan_x1", …
template <std::size_t I>
constexpr fixed_string<10> scan_sequence_name() {
  static_assert(I < 10, "tyche::scan: at most 10 sequences");
  const char s[10] = {'_', '_', 's', 'c', 'a', 'n', '_', 'x', static_cast<char>('0' + I), '\0'};
  return fixed_string<10>(s);
}
template <class P>
inline constexpr bool is_scan_placeholder_v = P::name.starts_with("__scan_");

/// The parameters of list L that are not a scan's placeholders.
template <class L>
struct outer_params;
template <class... Ps>
struct outer_params<meta::list<Ps...>> {
  using type = meta::concat<std::conditional_t<is_scan_placeholder_v<Ps>, meta::list<>, meta::list<Ps>>...>;
};

template <class T>
struct is_std_tuple : std::false_type {};
template <class... Ts>
struct is_std_tuple<std::tuple<Ts...>> : std::true_type {};
}  // namespace detail

/// The state of a scan with K > 1 values, as the step lambda receives it: s[k] (0-based) is
/// a scalar expression; s itself is a vector expression of size K. Name: the placeholder's (an
/// ODE's or an algebraic equation's state has its own, compile/ode.hpp, so that a solve inside a
/// scan's step tells the two apart).
template <std::size_t K, auto Name = detail::scan_state_name>
struct scan_state : expr<scan_state<K, Name>> {
  using vector_type = vector_param<Name, K>;
  vector_type v{};
  auto value_expression() const { return v; }
  auto operator[](std::size_t k) const { return at(v, k); }
};

namespace ops {

/// What a scan or tabulate op holds of its compiled step: the program itself (shared) before the
/// model is folded, a plain pointer to it after (the model's fold_storage owns it then).
template <class Program, bool Owning>
using program_holder = std::conditional_t<Owning, std::shared_ptr<const Program>, const Program*>;
template <class Program>
const void* program_address(const std::shared_ptr<const Program>& p) {
  return p.get();
}
template <class Program>
TYCHE_HD const void* program_address(const Program* p) {
  return p;
}

/// A scan's compiled programs, owned together: the step's vector–Jacobian product F (the reverse
/// pass; also the forward pass where there is no Next) and Next, the next state's K values by
/// value only (the forward pass: no reverse sweep to read them from ∂F/∂a). Next = void: none (a
/// step whose next state could not be rewritten as F's was; the forward pass then reads ∂F/∂a).
template <class Step, class Next = void>
struct scan_programs {
  using step_type = Step;
  using next_type = Next;
  Step step;
  Next next;
};
template <class Step>
struct scan_programs<Step, void> {
  using step_type = Step;
  using next_type = void;
  Step step;
};
/// The view of a scan's Next program, or nothing.
struct no_next_view {};
template <class Next>
struct next_view_of {
  using type = typename Next::view_type;
};
template <>
struct next_view_of<void> {
  using type = no_next_view;
};
template <class Programs>
using next_view_t = typename next_view_of<typename Programs::next_type>::type;

/// The data sequences of a scan or tabulate: N pointers, read in device code too (std::array's
/// operator[] is host code for nvcc).
template <std::size_t N>
struct sequence_pointers {
  const double* values[N > 0 ? N : 1] = {};
  TYCHE_HD const double* const& operator[](std::size_t i) const { return values[i]; }
  TYCHE_HD const double*& operator[](std::size_t i) { return values[i]; }
  const double** begin() { return values; }
  const double** end() { return values + N; }
  bool operator==(const sequence_pointers& o) const {
    for (std::size_t i = 0; i < N; ++i)
      if (values[i] != o.values[i]) return false;
    return true;
  }
};

/// The op of a scan node: K state values, S sequences of `steps` values, Outer parameters as
/// operands after the initial state (operand 0) and the sequences that are expressions.
/// Exprs: bit s set when sequence s is an expression of the parameters (a latent innovation per
/// step, `sigma * z`), read from an operand (1 + the number of such sequences before it) and
/// given its adjoint there; a data sequence (bit clear) is read through its pointer. Programs:
/// scan_programs of the compiled F above, with θ laid out as (a: K, s: K, x: S, the Outer
/// parameters in operand order), and of the next state's values with the same θ. All = false: the result is the last state (K values); All = true (scan_states): every
/// state after a step, component by component (value k after step t at k·steps + t), K·steps
/// values.
///
/// Owning: made by scan(), the op holds the step's program (a shared_ptr); folding (compile/
/// fold.hpp) moves the program into the model's fold_storage and leaves the op with a plain
/// pointer to it (release_into), kept only to tell two scans apart: the folded op is values
/// and pointers, so a model's view with a scan can be copied to a GPU.
template <class Programs, std::size_t K, std::size_t S, std::size_t Outer, bool All = false, bool Owning = true,
          unsigned Exprs = 0>
struct scan_map {
  static constexpr const char* name = All ? "scan_states" : "scan";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;  // the sequences, and what the step reads
  template <class... Cs>
  static constexpr std::size_t extent = All ? dynamic_extent : K;
  using view_type = typename Programs::step_type::view_type;
  using next_view_type = next_view_t<Programs>;
  /// Whether the forward pass evaluates the next state by value only (Programs has Next).
  static constexpr bool value_forward = !std::is_same_v<next_view_type, no_next_view>;
  /// Whether sequence i is an expression, and its operand.
  TYCHE_HD static constexpr bool is_expression(std::size_t i) { return ((Exprs >> i) & 1u) != 0; }
  TYCHE_HD static constexpr std::size_t operand_of(std::size_t i) {
    std::size_t o = 1;
    for (std::size_t j = 0; j < i; ++j) o += is_expression(j) ? 1 : 0;
    return o;
  }
  static constexpr std::size_t first_outer = operand_of(S);

  program_holder<Programs, Owning> program;  // the step's programs: owned before folding
  view_type step;                            // F's evaluable part
  next_view_type next;                       // the next state's (value_forward)
  sequence_pointers<S> sequences{};
  std::size_t steps = 0;

  bool operator==(const scan_map& o) const {
    return program_address(program) == program_address(o.program) && sequences == o.sequences && steps == o.steps;
  }
  /// The op of the folded tree: the program kept by `storage`, this op a view of it.
  template <class Storage>
    requires Owning
  scan_map<Programs, K, S, Outer, All, false, Exprs> release_into(Storage& storage) const {
    storage.keep(program);
    return {program.get(), step, next, sequences, steps};
  }
  /// f(sequence, steps) for each data sequence, then every buffer of the step's view (compile/
  /// relocate.hpp). The shared program keeps its own view, which evaluations do not read.
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    for (auto& p : sequences)
      if (p != nullptr) f(p, steps);
    tyche::for_each_data_buffer(step, f);
    if constexpr (value_forward) tyche::for_each_data_buffer(next, f);
  }
  /// The N + 1 states, then θ, ∇F, the adjoint being carried, F's workspace and Next's.
  std::size_t scratch_size(std::size_t, const std::size_t*) const {
    std::size_t next_ws = 0;
    if constexpr (value_forward) next_ws = next.workspace_size;
    return (steps + 1) * K + 2 * step.dim() + K + step.workspace_size + next_ws;
  }

  /// θ's sequence values at step t.
  template <class T>
  TYCHE_HD void read_sequences(T* theta, const T* const* in, std::size_t t) const {
    for (std::size_t s = 0; s < S; ++s)
      theta[2 * K + s] = is_expression(s) ? in[operand_of(s)][t] : lift<T>(sequences[s][t]);
  }

  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n, T* scratch) const {
    T* states = scratch;
    T* theta = states + (steps + 1) * K;
    T* grad = theta + step.dim();
    T* ws = grad + step.dim() + K;
    for (std::size_t k = 0; k < K; ++k) {
      states[k] = in[0][k];
      theta[k] = lift<T>(0.0);  // a: any value; ∂F/∂aₖ is the next state's value k
    }
    std::size_t o = 2 * K + S;
    for (std::size_t j = first_outer; j < first_outer + Outer; ++j)
      for (std::size_t i = 0; i < in_n[j]; ++i) theta[o++] = in[j][i];
    for (std::size_t t = 0; t < steps; ++t) {
      for (std::size_t k = 0; k < K; ++k) theta[K + k] = states[t * K + k];
      read_sequences(theta, in, t);
      if constexpr (value_forward) {
        // The next state by value only: its K values are Next's elements (a scalar for K = 1).
        using NE = typename next_view_type::expression_type;
        T* next_ws = ws + step.workspace_size;
        detail::evaluation<NE, typename next_view_type::layout_type, T, false> ev{
            next.expr, next.layout, next.ws_offsets, next.aliased, theta, nullptr,
            next.workspace_size > 0 ? next_ws : nullptr};
        if constexpr (detail::scalar_stack_v<NE>) {
          ev.stacked_values(states + (t + 1) * K);
        } else if constexpr (is_vector_v<NE>) {
          ev.prepare();
          for (std::size_t k = 0; k < K; ++k) states[(t + 1) * K + k] = ev.element(k);
        } else {
          states[t + 1] = ev.run();
        }
      } else {
        step.template value_and_gradient<T>(theta, grad, step.workspace_size > 0 ? ws : nullptr);
        for (std::size_t k = 0; k < K; ++k) states[(t + 1) * K + k] = grad[k];
      }
    }
    if constexpr (All) {
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t t = 0; t < steps; ++t) out[k * steps + t] = states[(t + 1) * K + k];
    } else {
      for (std::size_t k = 0; k < m; ++k) out[k] = states[steps * K + k];
    }
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* scratch) const {
    T* states = scratch;
    T* theta = states + (steps + 1) * K;
    T* grad = theta + step.dim();
    T* carried = grad + step.dim();
    T* ws = carried + K;
    for (std::size_t k = 0; k < K; ++k) carried[k] = All ? adj[k * steps + steps - 1] : adj[k];
    // The outer parameters' part of ∇F accumulates over the steps in place (each step's
    // evaluation adds to it), and is added to their adjoints once, after the loop; the part of
    // a, s and the sequences is zeroed before each step.
    const std::size_t outer_at = 2 * K + S, dim = step.dim();
    for (std::size_t i = outer_at; i < dim; ++i) grad[i] = lift<T>(0.0);
    for (std::size_t t = steps; t-- > 0;) {
      // With every state an output, the adjoint of the state after step t − 1 (s_t) is what its
      // own use adds to what flows back from step t (added below, once ∂F/∂s is known).
      for (std::size_t k = 0; k < K; ++k) {
        theta[k] = carried[k];
        theta[K + k] = states[t * K + k];
      }
      read_sequences(theta, in, t);
      for (std::size_t i = 0; i < outer_at; ++i) grad[i] = lift<T>(0.0);
      step.template value_and_add_gradient<T>(theta, grad, step.workspace_size > 0 ? ws : nullptr);
      for (std::size_t k = 0; k < K; ++k) carried[k] = grad[K + k];
      if constexpr (All) {
        if (t > 0)
          for (std::size_t k = 0; k < K; ++k) carried[k] += adj[k * steps + t - 1];
      }
      if constexpr (Exprs != 0) {
        for (std::size_t s = 0; s < S; ++s)
          if (is_expression(s)) in_adj[operand_of(s)][t] += grad[2 * K + s];
      }
    }
    std::size_t o = outer_at;
    for (std::size_t j = first_outer; j < first_outer + Outer; ++j)
      for (std::size_t i = 0; i < in_n[j]; ++i) in_adj[j][i] += grad[o++];
    for (std::size_t k = 0; k < K; ++k) in_adj[0][k] += carried[k];
  }
};

}  // namespace ops

namespace detail {

/// The initial state as a node, and K: a scalar (K = 1), a vector expression of a size known at
/// compile time, or a std::tuple of scalar expressions (stacked into a vector).
template <class Init>
auto scan_initial_node(const Init& init) {
  if constexpr (is_std_tuple<Init>::value) {
    return std::apply(
        [](const auto&... e) {
          static_assert((!is_vector_v<node_t<decltype(e)>> && ...),
                        "tyche::scan(step, init, ...): a tuple 'init' must hold scalar expressions");
          return make_vector_op(ops::stack_map{}, sizeof...(e), as_node(e)...);
        },
        init);
  } else {
    return as_node(init);
  }
}

/// Instantiated when the step returns a tuple of Returned values for a state of State: the
/// diagnostic shows both numbers ("[with ... Returned = 1; ... State = 2]").
template <std::size_t Returned, std::size_t State>
constexpr bool scan_step_size_mismatch() {
  static_assert(Returned == State,
                "tyche::scan(step, init, ...): the step returns a tuple whose size is not the "
                "state's size (that of 'init'); the two sizes are Returned and State in this diagnostic");
  return false;
}

/// Instantiated when the step's next value Component (0-based) depends on nothing that changes:
/// not the state, no sequence, no random variable (a literal such as the 0.0 of
/// `std::tuple{m, P, 0.0}` where `st[2] + …` was meant): that state value would be the constant
/// after the first step, and whatever it was to accumulate is silently lost.
template <std::size_t Component>
constexpr bool scan_step_returns_constant() {
  static_assert(Component != Component,
                "tyche::scan(step, init, ...): the step returns a value that depends on nothing that changes "
                "(not the state, no sequence, no random variable) for the state's value Component (0-based) in "
                "this diagnostic, so that value is a constant after the first step; carry it instead, e.g. "
                "st[k] + (what the step adds)");
  return false;
}
template <std::size_t Component, class N>
constexpr void check_step_value() {
  if constexpr (params_of<N>::size == 0) (void)scan_step_returns_constant<Component>();
}

/// Instantiated when step(state, x...) cannot be called with the state and S scalars (one per
/// sequence): one error, with S in this diagnostic.
template <std::size_t Sequences>
constexpr bool scan_step_arity_mismatch() {
  static_assert(Sequences != Sequences,
                "tyche::scan(step, init, sequences...) requires step(state, x...) to take the state and one "
                "scalar per sequence; the number of sequences is Sequences in this diagnostic");
  return false;
}

/// Σₖ aₖ · nextₖ for what the step returned: a scalar (K = 1), a std::tuple of K scalars, or a
/// vector expression of K values.
template <std::size_t K, class Next>
auto scan_objective(const Next& next) {
  const vector_param<scan_adjoint_name, K> a{};
  if constexpr (is_std_tuple<Next>::value) {
    if constexpr (std::tuple_size_v<Next> != K) {
      (void)scan_step_size_mismatch<std::tuple_size_v<Next>, K>();
      return at(a, 0);  // an objective of the right type: no further errors
    } else {
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        static_assert((!is_vector_v<node_t<std::tuple_element_t<I, Next>>> && ...),
                      "tyche::scan(step, init, ...): a tuple returned by the step must hold scalar "
                      "expressions");
        (check_step_value<I, node_t<std::tuple_element_t<I, Next>>>(), ...);
        return ((at(a, I) * std::get<I>(next)) + ...);
      }(std::make_index_sequence<K>{});
    }
  } else if constexpr (!is_vector_v<node_t<Next>>) {
    static_assert(K == 1,
                  "tyche::scan(step, init, ...): the step returns a scalar but the state has more "
                  "than one value; return a std::tuple of them");
    check_step_value<0, node_t<Next>>();
    return at(a, 0) * next;
  } else {
    check_step_value<0, node_t<Next>>();
    const auto n = as_node(next);
    if (n.size() != K)
      throw std::invalid_argument("tyche::scan(step, init, ...): the step returns a vector of size " +
                                  std::to_string(n.size()) + ", the state has size " + std::to_string(K));
    return sum(a * n);
  }
}

// ---- loop-invariant hoisting ----------------------------------------------------------------
// A step's graph is rewritten before it is compiled: every maximal scalar subexpression that
// uses the model's parameters and no placeholder (q = exp(θ_q), its square, log(g[0]), …) becomes
// a placeholder parameter "__hoist_NNN" of the step, wrapped in assume_support with the
// subexpression's support, and the subexpression itself an operand of the scan: evaluated once
// per evaluation of the model (its adjoint: the sum over steps), not once per step.

/// "__hoist_000", "__hoist_001", …
template <std::size_t I>
constexpr fixed_string<12> hoist_name() {
  static_assert(I < 1000, "tyche::scan: at most 1000 loop-invariant subexpressions in a step");
  const char s[12] = {'_', '_', 'h', 'o', 'i', 's', 't', '_', static_cast<char>('0' + I / 100),
                      static_cast<char>('0' + I / 10 % 10), static_cast<char>('0' + I % 10), '\0'};
  return fixed_string<12>(s);
}
template <class P>
inline constexpr bool is_hoist_placeholder_v = P::name.starts_with("__hoist_");
template <class P>
constexpr std::size_t hoist_index() {
  constexpr auto v = P::name;
  return std::size_t(v[8] - '0') * 100 + std::size_t(v[9] - '0') * 10 + std::size_t(v[10] - '0');
}

template <class L>
struct uses_placeholder;
template <class... Ps>
struct uses_placeholder<meta::list<Ps...>> : std::bool_constant<(is_scan_placeholder_v<Ps> || ...)> {};

/// A scalar unary or binary node whose parameters are all the model's (none a placeholder).
template <class N, bool OfOneParameter = true>
constexpr bool hoistable() {
  if constexpr (is_vector_v<N>) {
    return false;
  } else if constexpr (kind_of<N> != node_kind::unary && kind_of<N> != node_kind::binary) {
    return false;
  } else {
    using Ps = params_of<N>;
    if constexpr (Ps::size == 0 || uses_placeholder<Ps>::value) return false;
    // A function of one scalar parameter: hoisted right above the parameter (exp(θ) of
    // −exp(θ)), so that every use of a random variable is the same subexpression (ode_rk45 then
    // gives them one sensitivity column: compile/ode.hpp).
    else if constexpr (!OfOneParameter && Ps::size == 1 && kind_of<meta::at<0, Ps>> == node_kind::param) {
      if constexpr (kind_of<N> == node_kind::unary) return kind_of<meta::at<0, children_t<N>>> == node_kind::param;
      else
        return kind_of<meta::at<0, children_t<N>>> == node_kind::param ||
               kind_of<meta::at<1, children_t<N>>> == node_kind::param;
    } else return true;
  }
}

template <class N>
struct hoisted_support {
  static constexpr interval value = support_of<N>;
};

template <class N, bool OfOneParameter = true>
constexpr std::size_t hoist_count() {
  if constexpr (hoistable<N, OfOneParameter>()) {
    return 1;
  } else if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::sum ||
                       kind_of<N> == node_kind::log_sum_exp) {
    return hoist_count<meta::at<0, children_t<N>>, OfOneParameter>();
  } else if constexpr (kind_of<N> == node_kind::binary) {
    return hoist_count<meta::at<0, children_t<N>>, OfOneParameter>() +
           hoist_count<meta::at<1, children_t<N>>, OfOneParameter>();
  } else if constexpr (kind_of<N> == node_kind::vector_op || kind_of<N> == node_kind::element) {
    return []<class... Cs>(meta::list<Cs...>) {
      return (std::size_t{0} + ... + hoist_count<Cs, OfOneParameter>());
    }(children_t<N>{});
  } else {
    return 0;
  }
}

/// The node with its hoistable subexpressions replaced by placeholders numbered from I, and the
/// subexpressions (a std::tuple, in the placeholders' order). OfOneParameter = false: a function
/// of one scalar parameter is hoisted only right above it (the exp(θ) of −exp(θ)).
template <std::size_t I, bool OfOneParameter = true, class N>
auto hoist_rewrite(const N& n) {
  if constexpr (hoistable<N, OfOneParameter>()) {
    using P = param<hoist_name<I>()>;
    using R = rules::assume_support<hoisted_support<N>>;
    return std::pair{unary_node<R, P>{{}, R{}, P{}}, std::tuple<N>{n}};
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto [a, h] = hoist_rewrite<I, OfOneParameter>(n.a);
    return std::pair{unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a}, h};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto [a, ha] = hoist_rewrite<I, OfOneParameter>(n.a);
    auto [b, hb] = hoist_rewrite<I + hoist_count<meta::at<0, children_t<N>>, OfOneParameter>(), OfOneParameter>(n.b);
    return std::pair{binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b},
                     std::tuple_cat(ha, hb)};
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto [a, h] = hoist_rewrite<I, OfOneParameter>(n.a);
    return std::pair{sum_node<decltype(a)>{{}, a}, h};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto [a, h] = hoist_rewrite<I, OfOneParameter>(n.a);
    return std::pair{log_sum_exp_node<decltype(a)>{{}, a}, h};
  } else if constexpr (kind_of<N> == node_kind::element && hoist_count<N, OfOneParameter>() > 0) {
    auto [v, h] = hoist_rewrite<I, OfOneParameter>(n.v);
    using V = decltype(v);
    if constexpr (is_buffered_v<V>) return std::pair{element_node<V>{{}, v, n.index}, h};
    else return std::pair{at(v, n.index), h};
  } else if constexpr (kind_of<N> == node_kind::vector_op && hoist_count<N, OfOneParameter>() > 0) {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
      using Cs = children_t<N>;
      constexpr std::array<std::size_t, sizeof...(J) + 1> first = [] {
        std::array<std::size_t, sizeof...(J) + 1> f{};
        std::size_t k = 0;
        ((f[J] = k, k += hoist_count<meta::at<J, Cs>, OfOneParameter>()), ...);
        f[sizeof...(J)] = k;
        return f;
      }();
      auto parts = std::tuple{hoist_rewrite<I + first[J], OfOneParameter>(n.template child<J>())...};
      return std::pair{make_vector_op(n.op, n.m, std::get<J>(parts).first...),
                       std::tuple_cat(std::get<J>(parts).second...)};
    }(std::make_index_sequence<children_t<N>::size>{});
  } else {
    return std::pair{n, std::tuple<>{}};
  }
}

template <class Outer>
struct scan_outer_nodes;
template <class... Ps>
struct scan_outer_nodes<meta::list<Ps...>> {
  // The operands for the step's outer parameters: a model parameter as its leaf (a vector of
  // run-time size takes its size from the step's layout), a hoisted placeholder as the
  // subexpression it stands for.
  template <class Program, class Hoisted>
  static auto make(const Program& program, std::size_t first, const Hoisted& hoisted) {
    std::size_t k = first;
    auto one = [&]<class P>(std::type_identity<P>) {
      const std::size_t size = program.view().layout.size[k++];
      if constexpr (is_hoist_placeholder_v<P>) {
        (void)size;
        return std::get<hoist_index<P>()>(hoisted);
      } else if constexpr (kind_of<P> == node_kind::vector_param && P::extent == dynamic_extent) {
        return P(size);
      } else {
        (void)size;
        return P{};
      }
    };
    return std::tuple{one(std::type_identity<Ps>{})...};
  }
};

}  // namespace detail

namespace detail {
/// A scan's sequence: a data vector (read through its pointer) or a vector expression of the
/// model's parameters (an operand of the scan).
template <class Seq>
inline constexpr bool is_data_sequence_v = kind_of<detail::node_t<Seq>> == node_kind::data_vector;

/// The next state's K values as one node, for a forward pass by value only (scan_map's Next):
/// the tuple's values stacked, or what the step returned (a scalar for K = 1, a vector of K
/// values), with its loop invariants hoisted as F's are (scan_objective's Σₖ aₖ · nextₖ visits
/// the same subexpressions in the same order). std::tuple<> where the step's result is
/// malformed (its errors are F's).
template <std::size_t K, class Next>
auto scan_next_rewritten(const Next& next) {
  if constexpr (is_std_tuple<Next>::value) {
    if constexpr (std::tuple_size_v<Next> != K) {
      return std::tuple<>{};
    } else if constexpr ([]<std::size_t... J>(std::index_sequence<J...>) {
                           return (!is_vector_v<node_t<std::tuple_element_t<J, Next>>> && ...);
                         }(std::make_index_sequence<K>{})) {
      return hoist_rewrite<0>(
          std::apply([](const auto&... e) { return make_vector_op(ops::stack_map{}, K, as_node(e)...); }, next));
    } else {
      return std::tuple<>{};
    }
  } else if constexpr (K == 1 || is_vector_v<node_t<Next>>) {
    return hoist_rewrite<0>(as_node(next));
  } else {
    return std::tuple<>{};
  }
}
/// Whether the next state's program may read F's θ: its hoisted subexpressions have the types of
/// F's, in order (the values are the same by the order of the traversal, not by this check;
/// otherwise the forward pass reads ∂F/∂a, as without it).
template <class NextRewritten, class Hoisted>
constexpr bool scan_value_forward() {
  if constexpr (std::is_same_v<NextRewritten, std::tuple<>>) return false;
  else return std::is_same_v<std::remove_cvref_t<decltype(std::declval<NextRewritten>().second)>, Hoisted>;
}

/// ValueForward = false: the forward pass reads the next state from ∂F/∂a even where Next could
/// be compiled (what a step whose hoisted subexpressions differ gets; for the tests).
template <bool All, bool ValueForward = true, class Step, class Init, class... Sequences>
auto scan_impl(Step&& step, const Init& init, const Sequences&... sequences) {
  constexpr std::size_t S = sizeof...(Sequences);
  static_assert(S > 0, "tyche::scan(step, init, sequences...) requires at least one sequence (data(y), or a "
                       "vector expression such as a latent innovation z)");
  static_assert(((is_data_sequence_v<Sequences> || (expression<Sequences> && is_vector_v<detail::node_t<Sequences>>)) &&
                 ...),
                "tyche::scan(step, init, sequences...) requires every sequence to be a data vector (data(y)) or a "
                "vector expression (a vector random variable, sigma * z, …)");
  constexpr unsigned exprs = [] {
    unsigned mask = 0, bit = 1;
    ((mask |= is_data_sequence_v<Sequences> ? 0u : bit, bit <<= 1), ...);
    return mask;
  }();
  const auto init_node = detail::scan_initial_node(init);
  using InitNode = std::remove_cvref_t<decltype(init_node)>;
  constexpr std::size_t K = is_vector_v<InitNode> ? InitNode::extent : 1;
  static_assert(K != dynamic_extent,
                "tyche::scan(step, init, ...) requires the state's size to be known at compile "
                "time: make 'init' with shape<K>, or a std::tuple of scalars");

  // The sequences: one length, finite data values.
  auto data_pointer = []<class Seq>(const Seq& seq) -> const double* {
    if constexpr (is_data_sequence_v<Seq>) return detail::as_node(seq).ptr;
    else return nullptr;
  };
  const ops::sequence_pointers<S> ptrs{{data_pointer(sequences)...}};
  const std::array<std::size_t, S> lengths{detail::as_node(sequences).size()...};
  const std::size_t steps = lengths[0];
  if (All && steps == 0)
    throw std::invalid_argument("tyche::scan_states(step, init, sequences...): the sequences are empty; there "
                                "is no state after a step to return");
  // "sequence 2 ('y')", "sequence 1 (uses z, sigma)": what sequence s is, for messages (built
  // only for one: operand_reads is cold code).
  auto sequence = [&](std::size_t s) {
    std::string reads;
    std::size_t k = 0;
    ((k++ == s ? (void)(reads = detail::operand_reads(detail::as_node(sequences))) : (void)0), ...);
    if (reads.rfind("data '", 0) == 0 && reads.find(" with ") == std::string::npos) reads = reads.substr(5);
    return "sequence " + std::to_string(s + 1) + " (" + reads + ")";
  };
  const std::string fn = All ? "tyche::scan_states(step, init, sequences...): " : "tyche::scan(step, init, sequences...): ";
  for (std::size_t s = 0; s < S; ++s) {
    if (lengths[s] != steps)
      throw std::invalid_argument(fn + sequence(s) + " has " +
                                  std::to_string(lengths[s]) + " values, " + sequence(0) + " has " +
                                  std::to_string(steps));
    if (ptrs[s] == nullptr) continue;
    for (std::size_t t = 0; t < steps; ++t)
      if (!std::isfinite(ptrs[s][t]))
        throw std::invalid_argument(fn + sequence(s) + " has value " +
                                    tyche::detail::format_number(ptrs[s][t]) + " at index " + std::to_string(t + 1) +
                                    " (1-based); sequences must be finite (for missing observations, see "
                                    "docs/tutorial.md, \"Missing observations\")");
  }

  // The step's graph, from placeholders.
  using state_param = vector_param<detail::scan_state_name, K>;
  auto next = [&]<std::size_t... I>(std::index_sequence<I...>) {
    if constexpr (!std::is_invocable_v<Step&, std::conditional_t<K == 1, param_element<state_param>, scan_state<K>>,
                                       param<detail::scan_sequence_name<I>()>...>) {
      (void)detail::scan_step_arity_mismatch<S + 0 * sizeof...(I)>();  // dependent: only in this branch
      if constexpr (K == 1) return at(state_param{}, 0) + 0.0;  // a step of the right form: no further errors
      else return state_param{} + 0.0;
    } else if constexpr (K == 1) {
      return step(at(state_param{}, 0), param<detail::scan_sequence_name<I>()>{}...);
    } else {
      return step(scan_state<K>{}, param<detail::scan_sequence_name<I>()>{}...);
    }
  }(std::make_index_sequence<S>{});
  const auto rewritten = detail::hoist_rewrite<0>(detail::as_node(detail::scan_objective<K>(next)));
  const auto& objective = rewritten.first;
  using F = detail::node_t<decltype(objective)>;
  using outer = typename detail::outer_params<params_of<F>>::type;
  // θ of the step's program: a, s, the sequences' placeholders, then the model's parameters.
  auto build = [&]<std::size_t... I>(std::index_sequence<I...>) {
    using full_layout = meta::concat<meta::list<vector_param<detail::scan_adjoint_name, K>, state_param>,
                                     meta::list<param<detail::scan_sequence_name<I>()>...>, outer>;
    return detail::compile_with_layout<full_layout>(objective, vector_param<detail::scan_adjoint_name, K>{},
                                                    state_param{}, param<detail::scan_sequence_name<I>()>{}...);
  };
  using Program = decltype(build(std::make_index_sequence<S>{}));
  // The next state's K values as one node, for a forward pass by value only: the tuple's values
  // stacked, or what the step returned (a scalar for K = 1, a vector of K values), its loop
  // invariants hoisted as F's were — the same subexpressions in the same order (hoist_rewrite
  // visits F's Σₖ aₖ · nextₖ and the stacked nextₖ alike), so both programs read the same θ. The
  // hoisted lists' types are compared too: where they differ (a product form that rewrote F's
  // tree), and where the step's result is malformed (its errors are F's), there is no such
  // program and the forward pass reads the state from ∂F/∂a.
  const auto next_rewritten = detail::scan_next_rewritten<K>(next);
  using NextRewritten = std::remove_const_t<decltype(next_rewritten)>;
  constexpr bool value_forward =
      ValueForward && detail::scan_value_forward<NextRewritten, decltype(rewritten.second)>();
  auto build_next = [&]<std::size_t... I>(const auto& node, std::index_sequence<I...>) {
    using full_layout = meta::concat<meta::list<vector_param<detail::scan_adjoint_name, K>, state_param>,
                                     meta::list<param<detail::scan_sequence_name<I>()>...>, outer>;
    return detail::compile_with_layout<full_layout, false, true>(
        node, vector_param<detail::scan_adjoint_name, K>{}, state_param{}, param<detail::scan_sequence_name<I>()>{}...);
  };
  auto programs = [&] {
    if constexpr (value_forward) {
      using NextProgram = decltype(build_next(next_rewritten.first, std::make_index_sequence<S>{}));
      using Programs = ops::scan_programs<Program, NextProgram>;
      return std::make_shared<const Programs>(
          Programs{build(std::make_index_sequence<S>{}), build_next(next_rewritten.first, std::make_index_sequence<S>{})});
    } else {
      using Programs = ops::scan_programs<Program>;
      return std::make_shared<const Programs>(Programs{build(std::make_index_sequence<S>{})});
    }
  }();
  using Programs = std::remove_const_t<typename decltype(programs)::element_type>;
  auto outer_nodes = detail::scan_outer_nodes<outer>::make(programs->step, 2 + S, rewritten.second);
  using Op = ops::scan_map<Programs, K, S, outer::size, All, true, exprs>;
  const Op op = [&] {
    if constexpr (value_forward) return Op{programs, programs->step.view(), programs->next.view(), ptrs, steps};
    else return Op{programs, programs->step.view(), {}, ptrs, steps};
  }();
  const std::size_t m = All ? K * steps : K;
  // The operands: the initial state, the sequences that are expressions, the outer parameters.
  auto expression_sequences = std::tuple_cat([]<class Seq>(const Seq& seq) {
    if constexpr (is_data_sequence_v<Seq>) return std::tuple<>{};
    else return std::tuple{detail::as_node(seq)};
  }(sequences)...);
  return std::apply([&](const auto&... p) { return make_vector_op(op, m, init_node, p...); },
                    std::tuple_cat(std::move(expression_sequences), outer_nodes));
}
}  // namespace detail

/// The state after a loop over the sequences' values: s₀ = init, sₜ₊₁ = step(sₜ, x₀[t], x₁[t], …)
/// for t = 0 … N − 1, where the sequences hold N values each: data vectors (`data(y)`) or
/// vector expressions of the model's parameters (`z`, `sigma * tail(z, T - 1)`: read step by
/// step, with their gradient).
/// init is a scalar (the state is one value), a vector expression of a size fixed at compile
/// time, or a std::tuple of scalar expressions. step receives the state — a scalar expression,
/// or for K > 1 values an expression s whose s[k] are its values — and one scalar expression
/// per sequence, and returns the next state in the same form: a scalar, a std::tuple of K
/// scalars, or a vector expression of K values. It may use any random variable or data of the
/// model (capture them), any elementwise function, log_sum_exp, and the families' log densities
/// (normal_lpdf, …). The result is a vector expression of K values (use at(r, k), sum, …).
///
/// Example, the forward algorithm of a 2-state HMM in log space (lg: log transition matrix):
///     auto alpha = scan([&](const auto& a, const auto& y) {
///         return std::tuple{log_sum_exp(a[0] + lg00, a[1] + lg10) + normal_lpdf(y, mu[0], sigma), …};
///       }, init, data(y_rest));
///     target(log_sum_exp(alpha))
template <class Step, class Init, class... Sequences>
auto scan(Step&& step, const Init& init, const Sequences&... sequences) {
  return detail::scan_impl<false>(std::forward<Step>(step), init, sequences...);
}

/// Every state of the loop scan(step, init, sequences...) runs, not only the last: a vector of
/// K·N values, component by component — value k of the state after step t (t = 0 … N − 1) at
/// index k·N + t (0-based), so segment(r, k·N + 1, N) is component k's path (1-based, as Stan's
/// segment). For a state of one value it is the path s₁ … s_N itself. The same loop and cost as
/// scan; the adjoint of each state joins the reverse pass at its step.
///
/// Example, GARCH(1,1) variances (y: returns, err_t = y_t − mu):
///     auto var = scan_states([&](const auto& v, const auto& e_prev) {
///         return omega + alpha * square(e_prev - mu) + beta * v; }, sigma1_sq, data(y_before));
///     normal(mu, sqrt(assume_positive(var))).observe(data(y_after))
template <class Step, class Init, class... Sequences>
auto scan_states(Step&& step, const Init& init, const Sequences&... sequences) {
  return detail::scan_impl<true>(std::forward<Step>(step), init, sequences...);
}

}  // namespace tyche
