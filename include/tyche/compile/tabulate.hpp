// tyche/compile/tabulate.hpp — tabulate(n, f, sequences...): a vector of n values whose element i
// is f(i, x₀[i], x₁[i], …), written as a lambda. The element may be any scalar expression of the
// model's random variables and data, including vector-valued parts reduced inside it (a sum over
// all observations that depends on i: the change point's log p(y, s) for every s is
// tabulate(T, [&](auto s) { return sum(...); })), so a double loop is written without unrolling.
//
// As with scan (compile/scan.hpp, docs/design/scan.md), the lambda is called once, on
// placeholder expressions (i, and one scalar per sequence), when the model is built; what it
// returns is the element's graph, a type, compiled once into a program with
// θ = (i, x, p), p the model's parameters the lambda uses. The result is a vector_op
// (docs/design/vector-ops.md) whose operands are those parameters. Without a gradient its forward
// pass runs the element program's value n times; before a reverse pass it runs the element's value
// and gradient n times and keeps ∂fᵢ/∂p, which the reverse pass weighs by the adjoint of element i
// (above ops::kept_derivatives_limit kept values it evaluates the values forwards and the
// gradients again backwards). Compile time does not depend on n.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/compile/program.hpp>
#include <tyche/compile/scan.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>
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
/// The placeholder of the index i (0-based) of the element being computed.
inline constexpr fixed_string tabulate_index_name = "__scan_index";
}  // namespace detail

namespace ops {

/// The most derivatives a tabulate keeps from its forward pass for its reverse pass (in values of
/// the evaluation's scalar: 64 KB in double). They live in the model's workspace, which a run
/// holds once per chain, SIMD block of chains, part of a split gradient or GPU worker (tens of
/// thousands on a GPU evaluating one chain with many threads), so the bound is per evaluation and
/// small; above it the elements are evaluated twice, as before they kept any.
inline constexpr std::size_t kept_derivatives_limit = std::size_t{1} << 13;

/// The op of a tabulate node: n elements, S sequences of n values, Outer parameters as operands
/// 0 … Outer − 1. Program: the element, θ laid out as (i, x: S, the Outer parameters in operand
/// order).
/// Owning: as scan_map's (the element's program moves into the model's fold_storage when the
/// model is folded).
template <class Program, std::size_t S, std::size_t Outer, bool Owning = true>
struct tabulate_map {
  static constexpr const char* name = "tabulate";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;  // the sequences, and what the element reads
  template <class... Cs>
  static constexpr std::size_t extent = dynamic_extent;
  using view_type = typename Program::view_type;

  program_holder<Program, Owning> program;  // the element's program: owned before folding
  view_type element;                        // its evaluable part
  sequence_pointers<S> sequences{};

  bool operator==(const tabulate_map& o) const {
    return program_address(program) == program_address(o.program) && sequences == o.sequences;
  }
  /// The op of the folded tree: the program kept by `storage`, this op a view of it.
  template <class Storage>
    requires Owning
  tabulate_map<Program, S, Outer, false> release_into(Storage& storage) const {
    storage.keep(program);
    return {program.get(), element, sequences};
  }
  /// f(sequence, m) for each sequence (m: the number of elements), then every buffer of the
  /// element's view (compile/relocate.hpp). The shared program keeps its own view, which
  /// evaluations do not read.
  template <class F>
  void for_each_data_buffer(std::size_t m, F&& f) {
    for (auto& p : sequences)
      if (p != nullptr) f(p, m);
    tyche::for_each_data_buffer(element, f);
  }
  /// The outer parameters' part of θ: what each element's gradient keeps (below).
  TYCHE_HD std::size_t outer_dim() const { return element.dim() - 1 - S; }
  /// Whether a gradient evaluation keeps every element's gradient (∂fᵢ/∂p, m × outer_dim values)
  /// from its forward pass for the reverse pass, which then only weighs them by the adjoints;
  /// above kept_derivatives_limit values it evaluates each element twice
  /// instead: its value forwards, its value and gradient backwards.
  TYCHE_HD bool keeps_gradients(std::size_t m) const { return m * outer_dim() <= kept_derivatives_limit; }
  /// θ, its gradient and the element's workspace, then the elements' gradients where kept.
  std::size_t scratch_size(std::size_t m, const std::size_t*) const {
    return 2 * element.dim() + element.workspace_size + (keeps_gradients(m) ? m * outer_dim() : 0);
  }

  /// θ = (i, x[i], p) for element i (p already in place from `first`).
  template <class T>
  TYCHE_HD void set_theta(T* theta, std::size_t i) const {
    theta[0] = lift<T>(static_cast<double>(i));
    for (std::size_t s = 0; s < S; ++s) theta[1 + s] = lift<T>(sequences[s][i]);
  }
  template <class T>
  TYCHE_HD void set_outer(T* theta, const T* const* in, const std::size_t* in_n) const {
    std::size_t o = 1 + S;
    for (std::size_t j = 0; j < Outer; ++j)
      for (std::size_t k = 0; k < in_n[j]; ++k) theta[o++] = in[j][k];
  }

  /// The elements' values (an evaluation without a gradient): f's value program, m times.
  template <class T>
  TYCHE_HD void forward_value(std::size_t m, T* out, const T* const* in, const std::size_t* in_n, T* scratch) const {
    T* theta = scratch;
    T* ws = theta + 2 * element.dim();
    set_outer(theta, in, in_n);
    for (std::size_t i = 0; i < m; ++i) {
      set_theta(theta, i);
      out[i] = element.template value<T>(theta, element.workspace_size > 0 ? ws : nullptr);
    }
  }

  /// The elements' values before a reverse pass: each element's value and gradient at once, the
  /// gradient's outer part kept (keeps_gradients), so that no element is evaluated twice.
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n, T* scratch) const {
    if (!keeps_gradients(m)) {
      forward_value(m, out, in, in_n, scratch);
      return;
    }
    T* theta = scratch;
    T* grad = theta + element.dim();
    T* ws = grad + element.dim();
    T* kept = ws + element.workspace_size;
    const std::size_t first = 1 + S, outer = outer_dim();
    set_outer(theta, in, in_n);
    for (std::size_t i = 0; i < m; ++i) {
      set_theta(theta, i);
      out[i] = element.template value_and_gradient<T>(theta, grad, element.workspace_size > 0 ? ws : nullptr);
      for (std::size_t k = 0; k < outer; ++k) kept[i * outer + k] = grad[first + k];
    }
  }

  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* scratch) const {
    T* theta = scratch;
    T* grad = theta + element.dim();
    T* ws = grad + element.dim();
    const bool kept = keeps_gradients(m);
    if (!kept) set_outer(theta, in, in_n);
    const std::size_t outer = outer_dim();
    for (std::size_t i = 0; i < m; ++i) {
      // ∂fᵢ/∂p: kept by the forward pass, or evaluated again here.
      const T* gi = grad + 1 + S;
      if (kept) {
        gi = ws + element.workspace_size + i * outer;
      } else {
        set_theta(theta, i);
        element.template value_and_gradient<T>(theta, grad, element.workspace_size > 0 ? ws : nullptr);
      }
      std::size_t o = 0;
      for (std::size_t j = 0; j < Outer; ++j)
        for (std::size_t k = 0; k < in_n[j]; ++k) in_adj[j][k] += adj[i] * gi[o++];
    }
  }
};

}  // namespace ops

/// A vector of n values, element i (0-based) being f(i, x₀[i], x₁[i], …): f receives i as a
/// scalar expression (its value is the index, 0 … n − 1) and one scalar expression per
/// sequence (data vectors of n values each, `data(y)`), and returns a scalar expression. f may
/// use any random variable or data of the model (capture them), vector expressions reduced to a
/// scalar (sum, log_sum_exp, dot products), any elementwise function and the families' log
/// densities (normal_lpdf, …). The result is a vector expression of n values.
///
/// Example, the change point's log p(y, s | e, l) for every s (y: T counts, t: 0 … T − 1), a
/// double loop written as one:
///     auto lp = tabulate(T, [&](const auto& s) {
///       auto early = step(s - data(t) - 0.5);                    // 1 where t < s
///       return poisson_log_lpmf(data(y), log(l) + (log(e) - log(l)) * early);
///     });
///     target(log_sum_exp(lp))
template <class F, class... Sequences>
auto tabulate(std::size_t n, F&& f, const Sequences&... sequences) {
  constexpr std::size_t S = sizeof...(Sequences);
  static_assert(((kind_of<detail::node_t<Sequences>> == node_kind::data_vector) && ...),
                "tyche::tabulate(n, f, sequences...) requires every sequence to be a data vector (data(y))");
  if (n == 0) throw std::invalid_argument("tyche::tabulate(n, f, ...): n is 0; the vector would be empty");
  const ops::sequence_pointers<S> ptrs{{detail::as_node(sequences).ptr...}};
  const std::array<std::size_t, S> lengths{detail::as_node(sequences).size()...};
  // "sequence 2 ('y')" for data(y, "y"), as scan's messages name it.
  const std::array<const char*, S> names{detail::as_node(sequences).name...};
  const auto sequence = [&](std::size_t s) {
    return "sequence " + std::to_string(s + 1) + (names[s] != nullptr ? " ('" + std::string(names[s]) + "')" : "");
  };
  for (std::size_t s = 0; s < S; ++s) {
    if (lengths[s] != n)
      throw std::invalid_argument("tyche::tabulate(n, f, sequences...): " + sequence(s) + " has " +
                                  std::to_string(lengths[s]) + " values, n is " + std::to_string(n));
    for (std::size_t t = 0; t < n; ++t)
      if (!std::isfinite(ptrs[s][t]))
        throw std::invalid_argument("tyche::tabulate(n, f, sequences...): " + sequence(s) + " has value " +
                                    tyche::detail::format_number(ptrs[s][t]) + " at index " +
                                    std::to_string(t + 1) + " (1-based); sequences must be finite");
  }

  using index_param = param<detail::tabulate_index_name>;
  auto element = [&]<std::size_t... I>(std::index_sequence<I...>) {
    static_assert(std::is_invocable_v<F&, index_param, param<detail::scan_sequence_name<I>()>...>,
                  "tyche::tabulate(n, f, sequences...) requires f(i, x...) to take the index and one "
                  "scalar per sequence");
    return f(index_param{}, param<detail::scan_sequence_name<I>()>{}...);
  }(std::make_index_sequence<S>{});
  const auto rewritten = detail::hoist_rewrite<0>(detail::as_node(element));  // loop invariants out
  using E = detail::node_t<decltype(rewritten.first)>;
  static_assert(!is_vector_v<E>,
                "tyche::tabulate(n, f, ...): f must return a scalar expression (one element); reduce "
                "a vector with sum(...) or log_sum_exp(...)");
  using outer = typename detail::outer_params<params_of<E>>::type;
  static_assert(outer::size > 0,
                "tyche::tabulate(n, f, ...): the element uses no random variable; compute the "
                "vector in C++ and use it as data(v)");
  auto build = [&]<std::size_t... I>(std::index_sequence<I...>) {
    using full_layout = meta::concat<meta::list<index_param>, meta::list<param<detail::scan_sequence_name<I>()>...>,
                                     outer>;
    return detail::compile_with_layout<full_layout>(rewritten.first, index_param{},
                                                    param<detail::scan_sequence_name<I>()>{}...);
  };
  using Program = decltype(build(std::make_index_sequence<S>{}));
  auto program = std::make_shared<const Program>(build(std::make_index_sequence<S>{}));
  auto outer_nodes = detail::scan_outer_nodes<outer>::make(*program, 1 + S, rewritten.second);
  using Op = ops::tabulate_map<Program, S, outer::size>;
  Op op{program, program->view(), ptrs};
  return std::apply([&](const auto&... p) { return make_vector_op(op, n, p...); }, outer_nodes);
}

}  // namespace tyche
