// tyche/compile/program.hpp — compile(expr): binds an expression to a parameter layout, folds
// what depends on data only, and evaluates value and gradient for any scalar type.
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/evaluate.hpp>
#include <tyche/compile/fold.hpp>
#include <tyche/compile/stream.hpp>

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche {

/// A contiguous range (std::vector, std::span, std::array, …): what evaluations take.
template <class R>
concept contiguous_range = requires(R& r) {
  std::data(r);
  std::size(r);
};
template <class R>
using range_value_t = std::remove_cv_t<std::remove_pointer_t<decltype(std::data(std::declval<R&>()))>>;

namespace detail {

/// Every parameter occurrence in N, duplicates kept (for the shape-consistency check).
template <class N>
struct all_params {
  template <class L>
  struct from;
  template <class... Cs>
  struct from<meta::list<Cs...>> {
    using type = meta::concat<typename all_params<Cs>::type...>;
  };
  using type = std::conditional_t<
      kind_of<N> == node_kind::param || kind_of<N> == node_kind::vector_param, meta::list<N>,
      typename from<children_t<N>>::type>;
};
template <class V>
struct all_params<param_element<V>> {
  using type = meta::list<V>;
};

/// True when every occurrence Os is in Layout (by name) with exactly the same type.
template <class Layout, class O>
constexpr bool consistent_param() {
  constexpr std::size_t i = meta::find_if_equal<same_param_name, O, Layout>::value;
  if constexpr (i == Layout::size) return false;
  else return std::is_same_v<meta::at<i, Layout>, O>;
}
/// True when every occurrence Os is named in Layout, whatever its type.
template <class Layout, class Occurrences>
inline constexpr bool params_named_in_v = []<class... Os>(meta::list<Os...>) {
  return ((meta::find_if_equal<same_param_name, Os, Layout>::value != Layout::size) && ...);
}(Occurrences{});
template <class Layout, class Occurrences>
inline constexpr bool consistent_params_v = [] {
  return []<class... Os>(meta::list<Os...>) {
    return (consistent_param<Layout, Os>() && ...);
  }(Occurrences{});
}();

/// Records the run-time size of every vector parameter, and checks that each name has one size.
template <class Layout, class N>
void record_sizes(const N& n, param_offsets<Layout>& layout, std::vector<bool>& seen) {
  if constexpr (kind_of<N> == node_kind::vector_param) {
    constexpr std::size_t k = layout_index_v<Layout, N>;
    if (seen[k] && layout.size[k] != n.size())
      throw std::invalid_argument("tyche: vector parameter '" + N::name.str() +
                                  "' is used with sizes " + std::to_string(layout.size[k]) +
                                  " and " + std::to_string(n.size()));
    layout.size[k] = n.size();
    seen[k] = true;
  } else if constexpr (kind_of<N> == node_kind::param) {
    constexpr std::size_t k = layout_index_v<Layout, N>;
    layout.size[k] = 1;
    seen[k] = true;
  } else if constexpr (kind_of<N> == node_kind::param_element) {
    record_sizes<Layout>(n.vector, layout, seen);
    if (n.index >= n.vector.size())
      throw std::invalid_argument("tyche: element " + std::to_string(n.index + 1) + " of '" +
                                  N::name.str() + "', which has size " +
                                  std::to_string(n.vector.size()));
  } else if constexpr (children_t<N>::size > 0) {
    meta::static_for<children_t<N>::size>(
        [&](auto i) { record_sizes<Layout>(n.template child<i>(), layout, seen); });
  }
}

/// Decides, for every outer slot with an alias candidate, whether the two nodes are equal.
template <class Root, class Entries = outer_entries_t<Root>>
void find_aliases(const Root& root, bool* aliased) {
  meta::static_for<Entries::size>([&](auto k) {
    constexpr std::size_t K = decltype(k)::value;
    constexpr std::size_t A = alias_candidate_v<Entries, K>;
    using E = meta::at<K, Entries>;
    if constexpr (A != K) {
      using EA = meta::at<A, Entries>;
      aliased[K] = same_value(at_path(root, typename E::path{}), at_path(root, typename EA::path{}));
    }
  });
}


/// Whether a scalar node is made of run-time constants and literals only, through unary and
/// binary rules (no parameter, no data, no loop): its value is known without θ.
template <class E>
constexpr bool closed_scalar() {
  if constexpr (E::is_vector) return false;
  else if constexpr (kind_of<E> == node_kind::constant || kind_of<E> == node_kind::literal) return true;
  else if constexpr (kind_of<E> == node_kind::unary) return closed_scalar<meta::at<0, children_t<E>>>();
  else if constexpr (kind_of<E> == node_kind::binary)
    return closed_scalar<meta::at<0, children_t<E>>>() && closed_scalar<meta::at<1, children_t<E>>>();
  else return false;
}

/// The value of a closed_scalar node.
template <class E>
double closed_value(const E& e) {
  if constexpr (kind_of<E> == node_kind::constant) return e.value;
  else if constexpr (kind_of<E> == node_kind::literal) return E::value;
  else if constexpr (kind_of<E> == node_kind::unary) return e.rule.value(closed_value(e.a));
  else return e.rule.value(closed_value(e.a), closed_value(e.b));
}

/// The parameter-free additive part of a folded scalar expression: closed terms reached from
/// the root through sums, differences, negations and products or quotients by closed factors.
/// Folding gathers a log density's parameter-free terms there (a normal's −½·log 2π per
/// observation, a prior's normalising constant; for a known σ, what is left of −½Σ(y − μ)²/σ²
/// once the square is completed around the data's mean), so f minus it is f up to a constant,
/// as Stan's log_prob_propto. A term the folding left elsewhere counts as part
/// of the rest (a smaller constant, never a changed derivative).
template <class E>
double additive_constant(const E& e) {
  if constexpr (E::is_vector) {
    return 0.0;
  } else if constexpr (closed_scalar<E>()) {
    return closed_value(e);
  } else if constexpr (kind_of<E> == node_kind::binary) {
    using R = typename E::rule_type;
    using A = meta::at<0, children_t<E>>;
    using B = meta::at<1, children_t<E>>;
    if constexpr (std::is_same_v<R, rules::add>) return additive_constant(e.a) + additive_constant(e.b);
    else if constexpr (std::is_same_v<R, rules::subtract>) return additive_constant(e.a) - additive_constant(e.b);
    else if constexpr (std::is_same_v<R, rules::multiply> && closed_scalar<A>()) return closed_value(e.a) * additive_constant(e.b);
    else if constexpr (std::is_same_v<R, rules::multiply> && closed_scalar<B>()) return additive_constant(e.a) * closed_value(e.b);
    else if constexpr (std::is_same_v<R, rules::divide> && closed_scalar<B>()) return additive_constant(e.a) / closed_value(e.b);
    else return 0.0;
  } else if constexpr (kind_of<E> == node_kind::unary) {
    if constexpr (std::is_same_v<typename E::rule_type, rules::negate>) return -additive_constant(e.a);
    else return 0.0;
  } else {
    return 0.0;
  }
}

}  // namespace detail

/// The part of a program needed to evaluate it: the (folded) expression, where each parameter
/// sits in θ, and the workspace layout. Trivially copyable, so it can be passed to a CUDA
/// kernel by value; the data it views must live where the evaluation runs.
template <class Expr, class Layout>
struct program_view {
  using expression_type = Expr;
  using layout_type = Layout;
  static constexpr std::size_t n_slots = detail::outer_entries_t<Expr>::size;

  Expr expr;
  detail::param_offsets<Layout> layout;
  std::size_t ws_offsets[n_slots > 0 ? n_slots : 1] = {};
  bool aliased[n_slots > 0 ? n_slots : 1] = {};
  std::size_t workspace_size = 0;

  /// Number of parameters (length of θ).
  TYCHE_HD std::size_t dim() const { return layout.dim; }

  /// f(θ). `workspace` must hold workspace_size values (none for most models); θ and the
  /// workspace must not overlap.
  template <class T>
  TYCHE_EVALUATION_ENTRY T value(const T* TYCHE_RESTRICT theta,
                                 T* TYCHE_RESTRICT workspace = nullptr) const {
    detail::evaluation<Expr, Layout, T, false> ev{expr,  layout,  ws_offsets, aliased,
                                                  theta, nullptr, workspace};
    return ev.run();
  }

  /// f(θ), and ∇f(θ) written to grad[0 .. dim()). θ, grad and the workspace must not overlap.
  /// The whole evaluation is value_and_gradient_part's one part of one: a single compiled body
  /// per scalar type serves both (each entry is a flattened copy of the whole evaluation), for
  /// the price of a run-time part count where the compiler knew it was 1.
  template <class T>
  TYCHE_HD TYCHE_INLINE T value_and_gradient(const T* TYCHE_RESTRICT theta, T* TYCHE_RESTRICT grad,
                                             T* TYCHE_RESTRICT workspace = nullptr) const {
    return value_and_gradient_part(theta, grad, workspace, 0, 1);
  }

  /// f(θ), and ∇f(θ) added to grad[0 .. dim()) (not zeroed first): a loop that evaluates the
  /// program many times accumulates the gradient of the parameters it shares in place (a scan's
  /// reverse pass, compile/scan.hpp).
  template <class T>
  TYCHE_EVALUATION_ENTRY T value_and_add_gradient(const T* TYCHE_RESTRICT theta, T* TYCHE_RESTRICT grad,
                                                  T* TYCHE_RESTRICT workspace = nullptr) const {
    detail::evaluation<Expr, Layout, T, true> ev{expr, layout, ws_offsets, aliased, theta, grad, workspace};
    return ev.run();
  }

  /// Part `part` of `parts` (0 ≤ part < parts) of f(θ) and ∇f(θ): the values and gradients of
  /// the parts add up to value_and_gradient's. Each sum reached from the log density by sums
  /// only (a likelihood's loop over observations, a vector prior) runs over its share of the
  /// elements, [len·part/parts, len·(part+1)/parts); part 0 also evaluates the rest of the log
  /// density (other parts repeat the model's other loops and buffered operations, with a zero
  /// adjoint, but do not count them). What a GPU's threads each compute for one chain
  /// (backends/cuda/nuts.cuh, cuda_gradient::whole_device), then add up.
  template <class T>
  TYCHE_EVALUATION_ENTRY T value_and_gradient_part(const T* TYCHE_RESTRICT theta, T* TYCHE_RESTRICT grad,
                                                   T* TYCHE_RESTRICT workspace, std::size_t part,
                                                   std::size_t parts) const {
    constexpr std::size_t static_dim = detail::static_dim_v<Layout>;
    const std::size_t dim = static_dim != dynamic_extent ? static_dim : layout.dim;
    for (std::size_t i = 0; i < dim; ++i) grad[i] = lift<T>(0.0);
    detail::evaluation<Expr, Layout, T, true> ev{expr, layout, ws_offsets, aliased,
                                                 theta, grad, workspace};
    ev.set_part(part, parts);
    return ev.run();
  }
};

/// A compiled expression: the evaluable view plus the storage of data folded at construction.
template <class Expr, class Layout>
class program {
 public:
  using view_type = program_view<Expr, Layout>;
  using layout_type = Layout;

  program(view_type view, std::shared_ptr<const detail::fold_storage> storage)
      : view_(view), storage_(std::move(storage)) {}

  /// Number of parameters (length of θ).
  [[nodiscard]] std::size_t dim() const { return view_.dim(); }
  /// Number of scalars of scratch space an evaluation needs (matvec buffers).
  [[nodiscard]] std::size_t workspace_size() const { return view_.workspace_size; }
  /// The evaluable part, e.g. to copy to a device. It points into storage this program owns:
  /// it must not outlive the program (hence no view() of a temporary program).
  [[nodiscard]] const view_type& view() const& { return view_; }
  const view_type& view() const&& = delete;

  /// The constant terms the folded log density adds at its root (detail::additive_constant):
  /// value(θ) − constant_term() is f up to a constant, what Stan's optimiser measures its
  /// relative convergence tests on.
  [[nodiscard]] double constant_term() const { return detail::additive_constant(view_.expr); }
  /// Parameter names in layout order, with their sizes.
  [[nodiscard]] std::vector<std::pair<std::string, std::size_t>> parameters() const {
    std::vector<std::pair<std::string, std::size_t>> out;
    meta::static_for<Layout::size>([&](auto k) {
      out.emplace_back(meta::at<k, Layout>::name.str(), view_.layout.size[k]);
    });
    return out;
  }
  /// Offset of parameter number k (layout order) in θ.
  [[nodiscard]] std::size_t offset(std::size_t k) const { return view_.layout.offset[k]; }

  // Evaluation. θ, grad and workspace are contiguous ranges of one scalar type T (std::vector,
  // std::span, std::array, …; T any scalar type of the core). The overloads with a workspace
  // never allocate; those without allocate one only when workspace_size() > 0.

  /// f(θ).
  template <contiguous_range Theta>
  auto value(const Theta& theta) const {
    using T = range_value_t<Theta>;
    std::vector<T> ws(workspace_size());
    return value(theta, ws);
  }
  template <contiguous_range Theta, contiguous_range Workspace>
  auto value(const Theta& theta, Workspace&& workspace) const {
    using T = range_value_t<Theta>;
    static_assert(std::is_same_v<range_value_t<Workspace>, T>,
                  "tyche::program::value(theta, workspace) requires 'workspace' to hold the "
                  "scalar type of 'theta'");
    check(std::size(theta), std::size(workspace), "value");
    return view_.value(static_cast<const T*>(std::data(theta)), std::data(workspace));
  }
  /// f(θ), and ∇f(θ) written to grad.
  template <contiguous_range Theta, contiguous_range Grad>
  auto value_and_gradient(const Theta& theta, Grad&& grad) const {
    using T = range_value_t<Theta>;
    std::vector<T> ws(workspace_size());
    return value_and_gradient(theta, grad, ws);
  }
  template <contiguous_range Theta, contiguous_range Grad, contiguous_range Workspace>
  auto value_and_gradient(const Theta& theta, Grad&& grad, Workspace&& workspace) const {
    using T = range_value_t<Theta>;
    static_assert(std::is_same_v<range_value_t<Grad>, T> && std::is_same_v<range_value_t<Workspace>, T>,
                  "tyche::program::value_and_gradient(theta, grad, workspace) requires 'grad' "
                  "and 'workspace' to hold the scalar type of 'theta'");
    check(std::size(theta), std::size(workspace), "value_and_gradient");
    if (std::size(grad) != dim())
      throw std::invalid_argument("tyche::program::value_and_gradient: grad has size " +
                                  std::to_string(std::size(grad)) + ", expected " +
                                  std::to_string(dim()));
    return view_.value_and_gradient(static_cast<const T*>(std::data(theta)), std::data(grad),
                                    std::data(workspace));
  }

 private:
  void check(std::size_t theta_size, std::size_t ws_size, const char* fn) const {
    if (theta_size != dim() || ws_size < workspace_size()) [[unlikely]]
      fail(theta_size, ws_size, fn);
  }
  [[noreturn]] TYCHE_NOINLINE void fail(std::size_t theta_size, std::size_t ws_size,
                                        const char* fn) const {
    if (theta_size != dim())
      throw std::invalid_argument(std::string("tyche::program::") + fn + ": theta has size " +
                                  std::to_string(theta_size) + ", expected " +
                                  std::to_string(dim()));
    throw std::invalid_argument(std::string("tyche::program::") + fn + ": workspace has size " +
                                std::to_string(ws_size) + ", expected at least " +
                                std::to_string(workspace_size()));
  }

  view_type view_;
  std::shared_ptr<const detail::fold_storage> storage_;
};

namespace detail {

/// Evaluates expression e (scalar or vector, not folded) at θ with the given layout, writing
/// its value(s) to out[0 .. size). For conversions outside the hot path: constrain(), bounds,
/// distribution arguments when sampling.
template <class Layout, class E>
void evaluate_at(const E& e, const param_offsets<Layout>& layout, const double* theta, double* out) {
  using N = node_t<E>;
  const N n = as_node(e);
  bool not_aliased[outer_entries_t<N>::size + 1] = {};
  std::vector<double> workspace(assign_workspace(n, not_aliased, nullptr));
  std::size_t ws_offsets[outer_entries_t<N>::size + 1] = {};
  assign_workspace(n, not_aliased, ws_offsets);
  evaluation<N, Layout, double, false> ev{n,     layout,  ws_offsets,        not_aliased,
                                          theta, nullptr, workspace.data()};
  if constexpr (is_vector_v<N>) {
    ev.prepare();
    for (std::size_t i = 0; i < n.size(); ++i) out[i] = ev.element(i);
  } else {
    out[0] = ev.run();
  }
}

/// Number of values of a (possibly wrapped) expression: its size, or 1 for a scalar.
template <class E>
std::size_t value_count(const E& e) {
  using N = node_t<E>;
  if constexpr (is_vector_v<N>) return as_node(e).size();
  else return 1;
}

/// Vector: whether the expression may be a vector, for a program evaluated by value only,
/// element by element (a scan's next state, compile/scan.hpp); with Reduce its sums are
/// rewritten where they are, but the root's loops are not merged or streamed (those rewrites are
/// for a log density's sum).
template <class Layout, bool Reduce = true, bool Vector = false, class Wrapped, class... Listed>
auto compile_with_layout(const Wrapped& wrapped, const Listed&... listed) {
  using Expr = node_t<Wrapped>;
  const Expr e = as_node(wrapped);
  static_assert(Vector || !is_vector_v<Expr>,
                "tyche::compile(f) requires 'f' to be a scalar expression; reduce vectors with "
                "tyche::sum(...)");
  // A parameter missing from the layout has been named by the caller's own check (joint's
  // every_variable_listed, compile's list): no second error here.
  using occurrences = typename all_params<Expr>::type;
  static_assert(consistent_params_v<Layout, occurrences> || !params_named_in_v<Layout, occurrences>,
                "tyche::compile(f): a parameter name is used for two different parameters "
                "(scalar and vector, or two sizes fixed at compile time)");
  auto storage = std::make_shared<fold_storage>();
  auto folded = [&] {
    if constexpr (Reduce && !is_vector_v<Expr>) return stream_matvecs(merge_loops(fold<true>(e, *storage)));
    else return fold<Reduce>(e, *storage);
  }();
  using F = decltype(folded);
  program_view<F, Layout> view{folded, {}, {}, {}, 0};
  std::vector<bool> seen(Layout::size, false);
  record_sizes<Layout>(e, view.layout, seen);
  (record_sizes<Layout>(listed, view.layout, seen), ...);  // a listed size must match the use
  std::size_t dim = 0;
  for (std::size_t k = 0; k < Layout::size; ++k) {
    if (!seen[k]) {
      std::string name;
      meta::static_for<Layout::size>([&](auto j) {
        if (decltype(j)::value == k) name = meta::at<decltype(j)::value, Layout>::name.str();
      });
      throw std::invalid_argument("tyche::compile: parameter '" + name +
                                  "' is in the layout but neither in the expression nor listed");
    }
    view.layout.offset[k] = dim;
    dim += view.layout.size[k];
  }
  view.layout.dim = dim;
  find_aliases(view.expr, view.aliased);
  view.workspace_size = assign_workspace(view.expr, view.aliased, view.ws_offsets);
  return program<F, Layout>(view, std::move(storage));
}
}  // namespace detail

/// Compiles f like compile(f, params...), but without the rewrites of sums that partial
/// evaluation makes (compile/reduce_sum.hpp): data-only subexpressions are still folded.
/// For checking those rewrites, and as an escape hatch should one ever be wrong for a model.
template <expression Expr, expression... Params>
auto compile_without_rewrites(const Expr& f, const Params&... params) {
  if constexpr (sizeof...(Params) == 0)
    return detail::compile_with_layout<params_of<detail::node_t<Expr>>, false>(f);
  else
    return detail::compile_with_layout<meta::list<Params...>, false>(f, params...);
}

/// Compiles f, with its parameters laid out in θ in order of first appearance.
template <expression Expr>
auto compile(const Expr& f) {
  return detail::compile_with_layout<params_of<detail::node_t<Expr>>>(f);
}

/// Compiles f, with its parameters laid out in θ in the order given.
template <expression Expr, expression... Params>
  requires(sizeof...(Params) > 0)
auto compile(const Expr& f, const Params&... params) {
  constexpr bool all_params =
      ((kind_of<Params> == node_kind::param || kind_of<Params> == node_kind::vector_param) && ...);
  static_assert(all_params,
                "tyche::compile(f, params...) requires every 'params' argument to be a parameter");
  if constexpr (all_params) {
    using layout = meta::list<Params...>;
    constexpr bool unique = meta::unique<detail::same_param_name, layout>::size == layout::size;
    static_assert(unique, "tyche::compile(f, params...): a parameter is listed twice");
    using used = params_of<detail::node_t<Expr>>;
    constexpr bool complete =
        used::size == layout::size && detail::consistent_params_v<layout, used>;
    static_assert(!unique || complete,
                  "tyche::compile(f, params...) requires the list to name every parameter of "
                  "'f' exactly once");
    if constexpr (unique && complete) return detail::compile_with_layout<layout>(f, params...);
  }
}

}  // namespace tyche
