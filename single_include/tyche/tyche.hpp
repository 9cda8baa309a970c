// ================================================================================================
// tyche 0.1.0 — single-header distribution.
//
// GENERATED FILE — DO NOT EDIT. Produced by tools/amalgamate.py from include/tyche/tyche.hpp;
// edit the headers under include/tyche/ and run `python3 tools/amalgamate.py` instead.
// ================================================================================================
#pragma once

// ----- begin tyche/tyche.hpp -----
// tyche/tyche.hpp — the umbrella header: everything except backends/cuda.
// ----- begin tyche/config.hpp -----
// tyche/config.hpp — macros shared by every header, nothing else.

#define TYCHE_VERSION_MAJOR 0
#define TYCHE_VERSION_MINOR 1
#define TYCHE_VERSION_PATCH 0

// TYCHE_HD marks functions callable from host and CUDA device code. Outside nvcc it is empty.
#if defined(__CUDACC__)
#define TYCHE_HD __host__ __device__
#define TYCHE_CUDA_COMPILER 1
#else
#define TYCHE_HD
#define TYCHE_CUDA_COMPILER 0
#endif

#if defined(__CUDA_ARCH__)
#define TYCHE_DEVICE_CODE 1
#else
#define TYCHE_DEVICE_CODE 0
#endif

// TYCHE_EXEC_CHECK_DISABLE lets a __host__ __device__ template call a host-only callable when
// it is instantiated for the host (nvcc otherwise warns; Thrust does the same).
#if defined(__CUDACC__)
#define TYCHE_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define TYCHE_EXEC_CHECK_DISABLE
#endif

// TYCHE_RESTRICT marks pointers that do not overlap (θ, gradient and workspace of an
// evaluation), so loops over them need no run-time overlap checks.
#if defined(__CUDACC__) || defined(__GNUC__) || defined(__clang__)
#define TYCHE_RESTRICT __restrict__
#else
#define TYCHE_RESTRICT
#endif

// TYCHE_NOINLINE keeps cold paths (error reporting) out of the hot code.
#if defined(__GNUC__) || defined(__clang__)
#define TYCHE_NOINLINE __attribute__((noinline))
#else
#define TYCHE_NOINLINE
#endif

// TYCHE_EVALUATION_ENTRY marks the entry points of an evaluation (program_view::value and
// value_and_gradient) on the host: compiled out of line, with everything below them inlined.
// Out of line, their __restrict__ parameters are the roots of every θ / gradient access, which
// is what lets GCC drop run-time overlap checks (restrict on the parameters of an inlined
// function is not kept once the pointers pass through the evaluation's state). On the device
// they are ordinary inline functions.
#if defined(__CUDA_ARCH__)
#define TYCHE_EVALUATION_ENTRY TYCHE_HD
#elif defined(__GNUC__) || defined(__clang__)
#define TYCHE_EVALUATION_ENTRY TYCHE_HD __attribute__((noinline, flatten))
#else
#define TYCHE_EVALUATION_ENTRY TYCHE_HD
#endif

// TYCHE_INLINE forces inlining of the small per-node evaluation functions, so that a model's
// forward and reverse pass become one straight-line function.
#if defined(__CUDACC__)
#define TYCHE_INLINE __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define TYCHE_INLINE inline __attribute__((always_inline))
#else
#define TYCHE_INLINE inline
#endif
// ----- end tyche/config.hpp -----
// ----- begin tyche/core/expr.hpp -----
// tyche/core/expr.hpp — the expression base class, the node kinds and the compile-time
// properties every node has: its shape, the parameters it depends on, and whether it can be
// shared (see docs/design/expression-core.md).
// ----- begin tyche/core/meta.hpp -----
// tyche/core/meta.hpp — the small compile-time vocabulary the expression core is built from:
// compile-time strings (parameter names), type lists, and paths into an expression tree.

#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tyche {

/// A string usable as a template argument: `param<"mu">`.
template <std::size_t N>
struct fixed_string {
  char chars[N]{};
  constexpr fixed_string(const char (&s)[N]) {  // NOLINT: implicit by design
    for (std::size_t i = 0; i < N; ++i) chars[i] = s[i];
  }
  [[nodiscard]] constexpr std::string_view view() const { return {chars, N - 1}; }
  [[nodiscard]] static constexpr std::size_t size() { return N - 1; }
  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& other) const {
    return view() == other.view();
  }
};

namespace meta {

template <class... Ts>
struct list {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class... Ls>
struct concat_impl;
template <>
struct concat_impl<> {
  using type = list<>;
};
template <class... As>
struct concat_impl<list<As...>> {
  using type = list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat_impl<list<As...>, list<Bs...>, Rest...> {
  using type = typename concat_impl<list<As..., Bs...>, Rest...>::type;
};
/// Concatenation of type lists.
template <class... Ls>
using concat = typename concat_impl<Ls...>::type;

template <std::size_t I, class L>
struct at_impl;
template <std::size_t I, class T, class... Ts>
struct at_impl<I, list<T, Ts...>> : at_impl<I - 1, list<Ts...>> {};
template <class T, class... Ts>
struct at_impl<0, list<T, Ts...>> {
  using type = T;
};
/// The I-th element of a type list.
template <std::size_t I, class L>
using at = typename at_impl<I, L>::type;

/// Index of the first element E of L with Eq<E, T>::value, or L::size when there is none.
template <template <class, class> class Eq, class T, class L>
struct find_if_equal;
template <template <class, class> class Eq, class T, class... Ts>
struct find_if_equal<Eq, T, list<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool hits[] = {Eq<Ts, T>::value..., true};  // the sentinel stops the search
    std::size_t i = 0;
    while (!hits[i]) ++i;
    return i;
  }();
};

/// Number of elements E of L with Eq<E, T>::value.
template <template <class, class> class Eq, class T, class L>
struct count_equal;
template <template <class, class> class Eq, class T, class... Ts>
struct count_equal<Eq, T, list<Ts...>> {
  static constexpr std::size_t value = (std::size_t{0} + ... + (Eq<Ts, T>::value ? 1 : 0));
};

/// L without later duplicates (under Eq), first occurrences kept in order.
template <template <class, class> class Eq, class Done, class Todo>
struct unique_impl;
template <template <class, class> class Eq, class Done>
struct unique_impl<Eq, Done, list<>> {
  using type = Done;
};
template <template <class, class> class Eq, class... Ds, class T, class... Ts>
struct unique_impl<Eq, list<Ds...>, list<T, Ts...>> {
  using type = typename unique_impl<
      Eq,
      std::conditional_t<(find_if_equal<Eq, T, list<Ds...>>::value < sizeof...(Ds)), list<Ds...>,
                         list<Ds..., T>>,
      list<Ts...>>::type;
};
template <template <class, class> class Eq, class L>
using unique = typename unique_impl<Eq, list<>, L>::type;

template <class A, class B>
using same = std::is_same<A, B>;

TYCHE_EXEC_CHECK_DISABLE
template <class F, std::size_t... I>
TYCHE_HD TYCHE_INLINE constexpr void static_for_impl(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F, std::size_t... I>
TYCHE_HD TYCHE_INLINE constexpr void static_for_reverse_impl(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, N - 1 - I>{}), ...);
}

/// Calls f(std::integral_constant<std::size_t, I>{}) for I = 0 .. N-1, in order.
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F>
TYCHE_HD TYCHE_INLINE constexpr void static_for(F&& f) {
  static_for_impl(f, std::make_index_sequence<N>{});
}
/// Calls f(std::integral_constant<std::size_t, I>{}) for I = N-1 down to 0.
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F>
TYCHE_HD TYCHE_INLINE constexpr void static_for_reverse(F&& f) {
  static_for_reverse_impl<N>(f, std::make_index_sequence<N>{});
}

}  // namespace meta

/// A path from the root of an expression to one node: the child index taken at each level.
template <std::size_t... I>
struct path {};

namespace meta {
template <class P, std::size_t J>
struct push_impl;
template <std::size_t... I, std::size_t J>
struct push_impl<path<I...>, J> {
  using type = path<I..., J>;
};
template <class P, std::size_t J>
using push = typename push_impl<P, J>::type;
}  // namespace meta

}  // namespace tyche
// ----- end tyche/core/meta.hpp -----

#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>

namespace tyche {

/// CRTP base of every expression node. A node is an ordinary value type: it owns its operands
/// by value and holds no evaluation state, so one model can be evaluated by many threads.
template <class Derived>
struct expr {
  TYCHE_HD constexpr const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

/// The kinds of node; the evaluator dispatches on them at compile time.
enum class node_kind {
  literal,       // a rational constant in the type: lit<1, 2>
  constant,      // a run-time constant (a double in the node)
  param,         // a scalar parameter, by name
  vector_param,  // a vector parameter, by name, static or run-time size
  data_vector,   // a view of a vector of data
  data_matrix,   // a view of a row-major matrix of data (only as the left operand of matvec)
  unary,         // an elementwise function of one operand
  binary,        // an elementwise function of two operands (with scalar broadcasting)
  sum,           // sum over the elements of a vector expression
  log_sum_exp,   // log Σ exp over the elements of a vector expression
  matvec         // data matrix × parameter vector: a vector held in a buffer
};

inline constexpr std::size_t dynamic_extent = std::dynamic_extent;

template <class T>
concept expression = std::derived_from<std::remove_cvref_t<T>, expr<std::remove_cvref_t<T>>>;

/// A wrapper stands for an expression without being a node: a random variable is used as its
/// value. Every operation unwraps it (detail::as_node), so wrappers never sit in a tree.
template <class T>
concept wraps_expression = requires(const std::remove_cvref_t<T>& x) { x.value_expression(); };

/// Plain numbers a user may write next to expressions (they become run-time constants).
template <class T>
concept arithmetic = std::is_arithmetic_v<std::remove_cvref_t<T>> &&
                     !std::is_same_v<std::remove_cvref_t<T>, bool>;

template <class N>
inline constexpr node_kind kind_of = std::remove_cvref_t<N>::kind;

/// True for nodes whose value is a vector (elementwise expressions and vector leaves).
template <class N>
inline constexpr bool is_vector_v = std::remove_cvref_t<N>::is_vector;

/// Compile-time size of a vector node, or dynamic_extent when known only at run time.
template <class N>
inline constexpr std::size_t extent_v = std::remove_cvref_t<N>::extent;

template <class N>
inline constexpr bool is_leaf_v =
    kind_of<N> == node_kind::literal || kind_of<N> == node_kind::constant ||
    kind_of<N> == node_kind::param || kind_of<N> == node_kind::vector_param ||
    kind_of<N> == node_kind::data_vector || kind_of<N> == node_kind::data_matrix;

/// Elementwise vector nodes are fused into the loop of the reduction that consumes them.
template <class N>
inline constexpr bool is_elementwise_v =
    (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) && is_vector_v<N>;

namespace detail {
template <class N>
struct children_of {
  using type = typename N::children;
};
}  // namespace detail
template <class N>
using children_t = typename std::remove_cvref_t<N>::children;

// ---- parameter dependencies ---------------------------------------------------------------

namespace detail {
template <class A, class B>
struct same_param_name : std::bool_constant<A::name == B::name> {};

template <class N>
struct params_of_impl;
template <class... Cs>
struct params_of_list {
  using type = meta::unique<same_param_name, meta::concat<typename params_of_impl<Cs>::type...>>;
};
template <class N>
struct params_of_impl {
  template <class L>
  struct from;
  template <class... Cs>
  struct from<meta::list<Cs...>> {
    using type = typename params_of_list<Cs...>::type;
  };
  using type = std::conditional_t<kind_of<N> == node_kind::param ||
                                      kind_of<N> == node_kind::vector_param,
                                  meta::list<N>, typename from<children_t<N>>::type>;
};
}  // namespace detail

/// The parameters (leaf types) that node N depends on, each once, in order of first appearance.
template <class N>
using params_of = typename detail::params_of_impl<std::remove_cvref_t<N>>::type;

/// True when N's value changes with some parameter.
template <class N>
inline constexpr bool depends_on_params_v = params_of<N>::size > 0;

/// True when N's value depends on the parameter called Name.
template <class N, fixed_string Name>
inline constexpr bool depends_on_v = [] {
  return []<class... Ps>(meta::list<Ps...>) { return ((Ps::name == Name) || ...); }(params_of<N>{});
}();

// ---- sharing --------------------------------------------------------------------------------

namespace detail {
template <class N>
struct shareable_impl {
  template <class L>
  struct all;
  template <class... Cs>
  struct all<meta::list<Cs...>> : std::bool_constant<(shareable_impl<Cs>::value && ...)> {};
  static constexpr bool value = !std::remove_cvref_t<N>::has_payload && all<children_t<N>>::value;
};
}  // namespace detail

/// A node is shareable when its type alone determines its value: no run-time payload
/// (constants, data views, non-type operation arguments) anywhere below it. Two occurrences of
/// a shareable type in one model are the same value and are evaluated once.
template <class N>
inline constexpr bool shareable_v = detail::shareable_impl<std::remove_cvref_t<N>>::value;

}  // namespace tyche
// ----- end tyche/core/expr.hpp -----
// ----- begin tyche/core/leaves.hpp -----
// tyche/core/leaves.hpp — the leaves of an expression: literal and run-time constants,
// parameters (scalar and vector, by name) and views of data.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tyche {

/// A rational constant carried in the type: `lit<2>`, `lit<1, 2>`. Costs nothing to store,
/// and keeps the subexpressions it appears in shareable.
template <std::intmax_t Num, std::intmax_t Den = 1>
struct literal : expr<literal<Num, Den>> {
  static_assert(Den != 0, "tyche::lit<Num, Den> requires a non-zero denominator 'Den'");
  static constexpr node_kind kind = node_kind::literal;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  using children = meta::list<>;
  static constexpr double value = static_cast<double>(Num) / static_cast<double>(Den);
};

template <std::intmax_t Num, std::intmax_t Den = 1>
inline constexpr literal<Num, Den> lit{};

/// A constant known when the model is built (a plain number in the user's code, or a scalar
/// of data).
struct constant : expr<constant> {
  static constexpr node_kind kind = node_kind::constant;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = true;
  using children = meta::list<>;
  double value = 0.0;
  TYCHE_HD constexpr explicit constant(double v) : value(v) {}
};

/// A scalar parameter. Two `param<"mu">` anywhere in a model are the same parameter.
template <fixed_string Name>
struct param : expr<param<Name>> {
  static constexpr node_kind kind = node_kind::param;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  static constexpr auto name = Name;
  using children = meta::list<>;
};

/// A vector parameter of compile-time size Extent, or of run-time size when Extent is
/// dynamic_extent (then the size is given on construction).
template <fixed_string Name, std::size_t Extent = dynamic_extent>
struct vector_param : expr<vector_param<Name, Extent>> {
  static constexpr node_kind kind = node_kind::vector_param;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = Extent;
  static constexpr bool has_payload = false;
  static constexpr auto name = Name;
  using children = meta::list<>;
  TYCHE_HD constexpr std::size_t size() const { return Extent; }
};

template <fixed_string Name>
struct vector_param<Name, dynamic_extent> : expr<vector_param<Name, dynamic_extent>> {
  static constexpr node_kind kind = node_kind::vector_param;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = false;  // identity is the name; the size is checked
  static constexpr auto name = Name;
  using children = meta::list<>;
  std::size_t n = 0;
  TYCHE_HD constexpr explicit vector_param(std::size_t size) : n(size) {}
  TYCHE_HD constexpr std::size_t size() const { return n; }
};

/// A view of a vector of data (double). The storage must outlive the model, as with std::span.
template <std::size_t Extent = dynamic_extent>
struct data_vector : expr<data_vector<Extent>> {
  static constexpr node_kind kind = node_kind::data_vector;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = Extent;
  static constexpr bool has_payload = true;
  using children = meta::list<>;
  const double* ptr = nullptr;
  std::size_t n = 0;
  TYCHE_HD constexpr std::size_t size() const { return Extent == dynamic_extent ? n : Extent; }
  TYCHE_HD constexpr double operator[](std::size_t i) const { return ptr[i]; }
};

/// A view of a row-major matrix of data; it appears only as the left operand of matvec.
struct data_matrix : expr<data_matrix> {
  static constexpr node_kind kind = node_kind::data_matrix;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = true;
  using children = meta::list<>;
  const double* ptr = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
};

// ---- making leaves ---------------------------------------------------------------------------

namespace detail {
/// xtensor-like: has shape(), strides(), dimension() and data() (duck-typed, so the core does
/// not include xtensor).
template <class X>
concept xtensor_like = requires(const X& x) {
  x.shape();
  x.strides();
  { x.dimension() } -> std::convertible_to<std::size_t>;
  { x.data() } -> std::convertible_to<const double*>;
};
template <class Container>
concept contiguous_doubles = !xtensor_like<Container> && requires(const Container& c) {
  { std::data(c) } -> std::convertible_to<const double*>;
  { std::size(c) } -> std::convertible_to<std::size_t>;
};

/// tyche::data is a function object, not a function, so that `data(v)` for a std::vector v
/// finds it and not std::data through argument-dependent lookup.
struct data_fn {
  /// A scalar of data: a run-time constant.
  constant operator()(double x) const { return constant{x}; }

  /// A view of data from anything contiguous that holds doubles: std::vector, std::array,
  /// std::span. The storage must outlive the model.
  template <contiguous_doubles Container>
  auto operator()(const Container& c) const {
    if constexpr (requires { std::tuple_size<Container>::value; }) {
      return data_vector<std::tuple_size<Container>::value>{{}, std::data(c), std::size(c)};
    } else {
      return data_vector<>{{}, std::data(c), static_cast<std::size_t>(std::size(c))};
    }
  }

  /// A view of a one-dimensional xtensor container (xt::xtensor<double, 1>, xt::xarray<double>).
  template <xtensor_like X>
  data_vector<> operator()(const X& x) const {
    if (x.dimension() != 1 || (x.size() > 1 && x.strides()[0] != 1))
      throw std::invalid_argument(
          "tyche::data(x) requires a contiguous one-dimensional array; got " +
          std::to_string(x.dimension()) + " dimensions (use tyche::matrix(x) for a matrix)");
    return {{}, x.data(), static_cast<std::size_t>(x.size())};
  }

  /// Forbidden: data(temporary) would keep a view of storage destroyed at the end of the line.
  template <class Container>
    requires(!std::is_lvalue_reference_v<Container> && !std::is_arithmetic_v<Container>)
  data_vector<> operator()(Container&&) const {
    static_assert(sizeof(Container) == 0,
                  "tyche::data(x) keeps a view of 'x', not a copy: pass a named container that "
                  "outlives the model, not a temporary");
    return {};  // a node, so that the expression around the call raises no further errors
  }

  /// A view of n doubles starting at ptr (host or, for device evaluation, device memory).
  data_vector<> operator()(const double* ptr, std::size_t n) const { return {{}, ptr, n}; }
};
}  // namespace detail

inline constexpr detail::data_fn data{};

/// A view of a row-major rows × cols matrix starting at ptr.
inline data_matrix matrix(const double* ptr, std::size_t rows, std::size_t cols) {
  return {{}, ptr, rows, cols};
}

/// A view of a two-dimensional row-major xtensor container (xt::xtensor<double, 2>).
template <detail::xtensor_like X>
data_matrix matrix(const X& x) {
  if (x.dimension() != 2)
    throw std::invalid_argument("tyche::matrix(x) requires a two-dimensional array; got " +
                                std::to_string(x.dimension()) + " dimensions");
  const auto rows = static_cast<std::size_t>(x.shape()[0]);
  const auto cols = static_cast<std::size_t>(x.shape()[1]);
  if (rows * cols > 0 && ((cols > 1 && x.strides()[1] != 1) ||
                          (rows > 1 && static_cast<std::size_t>(x.strides()[0]) != cols)))
    throw std::invalid_argument(
        "tyche::matrix(x) requires a contiguous row-major array (xt::layout_type::row_major)");
  return {{}, x.data(), rows, cols};
}

}  // namespace tyche
// ----- end tyche/core/leaves.hpp -----
// ----- begin tyche/core/operations.hpp -----
// tyche/core/operations.hpp — operation nodes (unary and binary, elementwise with scalar
// broadcasting), reductions (sum, dot, log_sum_exp) and matrix × vector, with the functions
// and operators that build them.
// ----- begin tyche/autodiff/arithmetic.hpp -----
// tyche/autodiff/arithmetic.hpp — value and derivative rules for arithmetic: negation, the
// four operations, square, inverse, sqrt, abs and powers.
//
// A unary rule R has `R::value(x)` and `R::value(x, dx)`, the second also setting dy/dx; a
// binary rule has `value(a, b)` and `value(a, b, da, db)`. The evaluator stores the partial
// derivatives in the forward pass and multiplies them by the adjoint in the reverse pass, so
// every rule computes its derivative from quantities it already has (often y itself).
// ----- begin tyche/core/math.hpp -----
// tyche/core/math.hpp — scalar math for every scalar type the core evaluates with: float and
// double on the host and in CUDA device code, and (through backends/simd/batch.hpp)
// xsimd::batch. Operation rules in autodiff/ call these and nothing else, so a new scalar
// type needs only overloads here.
// ----- begin tyche/core/scalar.hpp -----
// tyche/core/scalar.hpp — what the expression core needs to know about a scalar type T:
// its element type (double for xsimd::batch<double>), its lane count, and how data (always
// stored as double) becomes a T.

#include <cstddef>
#include <type_traits>

namespace tyche {

/// Traits of a scalar type: element_type and lanes. Specialised for xsimd::batch in
/// backends/simd/batch.hpp.
template <class T>
struct scalar_traits {
  static_assert(std::is_floating_point_v<T>,
                "tyche: a scalar type must be float, double or an xsimd::batch of them");
  using element_type = T;
  static constexpr std::size_t lanes = 1;
};

template <class T>
using element_type_t = typename scalar_traits<T>::element_type;

/// Converts a data value (double) to the scalar type T, broadcasting it to every lane.
template <class T>
TYCHE_HD TYCHE_INLINE T lift(double x) {
  return T(static_cast<element_type_t<T>>(x));
}

}  // namespace tyche

// ----- begin tyche/backends/simd/batch.hpp -----
// tyche/backends/simd/batch.hpp — the only header that includes xsimd. It teaches tyche's
// scalar vocabulary (core/scalar.hpp, core/math.hpp) about xsimd::batch, so that a model
// evaluates one chain per SIMD lane. Compiled only when TYCHE_USE_XSIMD is set (the
// tyche::simd CMake target sets it).

#if defined(TYCHE_USE_XSIMD) && TYCHE_USE_XSIMD && !TYCHE_DEVICE_CODE && !defined(__CUDACC__)
#define TYCHE_HAS_XSIMD 1
#include <xsimd/xsimd.hpp>

#include <array>
#include <cstddef>
#include <math.h>

namespace tyche {

template <class T>
struct scalar_traits;

template <class E, class A>
struct scalar_traits<xsimd::batch<E, A>> {
  using element_type = E;
  static constexpr std::size_t lanes = xsimd::batch<E, A>::size;
};

namespace math {

// Functions xsimd provides for whole batches.
template <class E, class A>
xsimd::batch<E, A> exp(const xsimd::batch<E, A>& x) { return xsimd::exp(x); }
template <class E, class A>
xsimd::batch<E, A> log(const xsimd::batch<E, A>& x) { return xsimd::log(x); }
template <class E, class A>
xsimd::batch<E, A> log1p(const xsimd::batch<E, A>& x) { return xsimd::log1p(x); }
template <class E, class A>
xsimd::batch<E, A> expm1(const xsimd::batch<E, A>& x) { return xsimd::expm1(x); }
template <class E, class A>
xsimd::batch<E, A> sqrt(const xsimd::batch<E, A>& x) { return xsimd::sqrt(x); }
template <class E, class A>
xsimd::batch<E, A> tanh(const xsimd::batch<E, A>& x) { return xsimd::tanh(x); }
template <class E, class A>
xsimd::batch<E, A> erf(const xsimd::batch<E, A>& x) { return xsimd::erf(x); }
template <class E, class A>
xsimd::batch<E, A> erfc(const xsimd::batch<E, A>& x) { return xsimd::erfc(x); }
template <class A>
xsimd::batch<double, A> lgamma(const xsimd::batch<double, A>& x) { return xsimd::lgamma(x); }
template <class E, class A>
xsimd::batch<E, A> abs(const xsimd::batch<E, A>& x) { return xsimd::abs(x); }
template <class E, class A>
xsimd::batch<E, A> pow(const xsimd::batch<E, A>& x, const xsimd::batch<E, A>& y) {
  return xsimd::pow(x, y);
}
template <class E, class A>
xsimd::batch<E, A> max(const xsimd::batch<E, A>& x, const xsimd::batch<E, A>& y) {
  return xsimd::max(x, y);
}
template <class E, class A>
xsimd::batch<E, A> select(const xsimd::batch_bool<E, A>& c, const xsimd::batch<E, A>& a,
                          const xsimd::batch<E, A>& b) {
  return xsimd::select(c, a, b);
}
template <class E, class A>
xsimd::batch<E, A> sign_of(const xsimd::batch<E, A>& x) {
  using B = xsimd::batch<E, A>;
  return xsimd::select(x > B(E(0)), B(E(1)), xsimd::select(x < B(E(0)), B(E(-1)), B(E(0))));
}

/// Applies a scalar function lane by lane, for what xsimd does not vectorise (digamma).
template <class F, class E, class A>
xsimd::batch<E, A> per_lane(F f, const xsimd::batch<E, A>& x) {
  alignas(A::alignment()) std::array<E, xsimd::batch<E, A>::size> lanes{};
  x.store_aligned(lanes.data());
  for (auto& v : lanes) v = f(v);
  return xsimd::batch<E, A>::load_aligned(lanes.data());
}

/// xsimd 8.1's lgamma for batch<float> returns wrong values when the lanes hold different
/// arguments (e.g. lanes {5.437, 0.827, 2.426, 7.524} give 339.8 for lgamma(5.437); tested in
/// tests/backends/simd_test.cpp), so float batches go lane by lane through lgammaf.
template <class A>
xsimd::batch<float, A> lgamma(const xsimd::batch<float, A>& x) {
  return per_lane([](float v) { return ::lgammaf(v); }, x);
}

}  // namespace math
}  // namespace tyche

#else
#define TYCHE_HAS_XSIMD 0
#endif
// ----- end tyche/backends/simd/batch.hpp -----
// ----- end tyche/core/scalar.hpp -----

#include <cmath>
#include <math.h>  // global-namespace overloads, which CUDA device code also provides

namespace tyche::math {

// clang-format off
TYCHE_HD inline double exp(double x) { return ::exp(x); }
TYCHE_HD inline float  exp(float x) { return ::expf(x); }
TYCHE_HD inline double log(double x) { return ::log(x); }
TYCHE_HD inline float  log(float x) { return ::logf(x); }
TYCHE_HD inline double log1p(double x) { return ::log1p(x); }
TYCHE_HD inline float  log1p(float x) { return ::log1pf(x); }
TYCHE_HD inline double expm1(double x) { return ::expm1(x); }
TYCHE_HD inline float  expm1(float x) { return ::expm1f(x); }
TYCHE_HD inline double sqrt(double x) { return ::sqrt(x); }
TYCHE_HD inline float  sqrt(float x) { return ::sqrtf(x); }
TYCHE_HD inline double tanh(double x) { return ::tanh(x); }
TYCHE_HD inline float  tanh(float x) { return ::tanhf(x); }
TYCHE_HD inline double erf(double x) { return ::erf(x); }
TYCHE_HD inline float  erf(float x) { return ::erff(x); }
TYCHE_HD inline double erfc(double x) { return ::erfc(x); }
TYCHE_HD inline float  erfc(float x) { return ::erfcf(x); }
TYCHE_HD inline double lgamma(double x) { return ::lgamma(x); }
TYCHE_HD inline float  lgamma(float x) { return ::lgammaf(x); }
TYCHE_HD inline double abs(double x) { return ::fabs(x); }
TYCHE_HD inline float  abs(float x) { return ::fabsf(x); }
TYCHE_HD inline double pow(double x, double y) { return ::pow(x, y); }
TYCHE_HD inline float  pow(float x, float y) { return ::powf(x, y); }
TYCHE_HD inline double max(double x, double y) { return x > y ? x : y; }
TYCHE_HD inline float  max(float x, float y) { return x > y ? x : y; }
TYCHE_HD inline double select(bool c, double a, double b) { return c ? a : b; }
TYCHE_HD inline float  select(bool c, float a, float b) { return c ? a : b; }
TYCHE_HD inline double sign_of(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }
TYCHE_HD inline float  sign_of(float x) { return x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f); }
// clang-format on

inline constexpr double pi = 3.14159265358979323846;
inline constexpr double inv_sqrt_two = 0.70710678118654752440;
inline constexpr double inv_sqrt_two_pi = 0.39894228040143267794;
inline constexpr double two_over_sqrt_pi = 1.12837916709551257390;

/// Digamma ψ(x) = d/dx log Γ(x): upward recurrence to x ≥ 10, then the asymptotic series
/// ψ(x) ~ log x − 1/(2x) − Σ B₂ₖ/(2k x²ᵏ) (Abramowitz & Stegun 6.3.18); reflection
/// ψ(1−x) − ψ(x) = π cot(πx) for x < 0. Relative error below 1e-14 away from the poles.
TYCHE_HD inline double digamma(double x) {
  double shift = 0.0;
  if (x <= 0.0) {
    if (x == ::floor(x)) return ::nan("");  // pole
    return digamma(1.0 - x) - pi / ::tan(pi * x);
  }
  while (x < 10.0) {
    shift -= 1.0 / x;
    x += 1.0;
  }
  const double r = 1.0 / (x * x);
  const double series =
      r * (1.0 / 12 -
           r * (1.0 / 120 -
                r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132 - r * (691.0 / 32760))))));
  return shift + ::log(x) - 0.5 / x - series;
}
TYCHE_HD inline float digamma(float x) { return static_cast<float>(digamma(double(x))); }

/// Trigamma ψ₁(x) = d/dx ψ(x): recurrence ψ₁(x) = ψ₁(x+1) + 1/x² to x ≥ 10, then
/// ψ₁(x) ~ 1/x + 1/(2x²) + Σ B₂ₖ/x²ᵏ⁺¹ (A&S 6.4.12); reflection ψ₁(1−x) + ψ₁(x) = π²/sin²(πx).
TYCHE_HD inline double trigamma(double x) {
  double shift = 0.0;
  if (x <= 0.0) {
    if (x == ::floor(x)) return ::nan("");
    const double s = ::sin(pi * x);
    return -trigamma(1.0 - x) + pi * pi / (s * s);
  }
  while (x < 10.0) {
    shift += 1.0 / (x * x);
    x += 1.0;
  }
  const double r = 1.0 / (x * x);
  const double series =
      1.0 / x + 0.5 * r +
      r / x *
          (1.0 / 6 -
           r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30 - r * (5.0 / 66 - r * (691.0 / 2730))))));
  return shift + series;
}
TYCHE_HD inline float trigamma(float x) { return static_cast<float>(trigamma(double(x))); }

#if TYCHE_HAS_XSIMD
template <class E, class A>
xsimd::batch<E, A> digamma(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return digamma(v); }, x);
}
template <class E, class A>
xsimd::batch<E, A> trigamma(const xsimd::batch<E, A>& x) {
  return per_lane([](E v) { return trigamma(v); }, x);
}
#endif

}  // namespace tyche::math
// ----- end tyche/core/math.hpp -----

namespace tyche::rules {

struct negate {
  static constexpr const char* name = "negate";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return -x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(-1.0);
    return -x;
  }
};

struct square {
  static constexpr const char* name = "square";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return x * x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = x + x;
    return x * x;
  }
};

struct inverse {
  static constexpr const char* name = "inverse";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return lift<T>(1.0) / x; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = lift<T>(1.0) / x;
    dx = -(y * y);
    return y;
  }
};

struct sqrt {
  static constexpr const char* name = "sqrt";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::sqrt(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::sqrt(x);
    dx = lift<T>(0.5) / y;
    return y;
  }
};

struct abs {
  static constexpr const char* name = "abs";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::abs(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::sign_of(x);  // 0 at 0: the subgradient Stan uses
    return math::abs(x);
  }
};

/// x^c for a constant exponent c known when the model is built.
struct pow_constant {
  static constexpr const char* name = "pow";
  static constexpr bool has_payload = true;
  double exponent = 1.0;
  TYCHE_HD constexpr bool operator==(const pow_constant& other) const {
    return exponent == other.exponent;
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    return math::pow(x, lift<T>(exponent));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T c = lift<T>(exponent);
    dx = c * math::pow(x, c - lift<T>(1.0));
    return math::pow(x, c);
  }
};

struct add {
  static constexpr const char* name = "add";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a + b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = lift<T>(1.0);
    db = lift<T>(1.0);
    return a + b;
  }
};

struct subtract {
  static constexpr const char* name = "subtract";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a - b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = lift<T>(1.0);
    db = lift<T>(-1.0);
    return a - b;
  }
};

struct multiply {
  static constexpr const char* name = "multiply";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a * b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    da = b;
    db = a;
    return a * b;
  }
};

struct divide {
  static constexpr const char* name = "divide";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const { return a / b; }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const T inv = lift<T>(1.0) / b;
    const T y = a * inv;
    da = inv;
    db = -(y * inv);
    return y;
  }
};

/// a^b with both operands variable: d/da = b a^(b-1), d/db = a^b log a.
struct pow {
  static constexpr const char* name = "pow";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b) const {
    return math::pow(a, b);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& a, const T& b, T& da, T& db) const {
    const T y = math::pow(a, b);
    da = b * math::pow(a, b - lift<T>(1.0));
    db = y * math::log(a);
    return y;
  }
};

}  // namespace tyche::rules
// ----- end tyche/autodiff/arithmetic.hpp -----
// ----- begin tyche/autodiff/exp_log.hpp -----
// tyche/autodiff/exp_log.hpp — value and derivative rules for the exponential family of
// functions: exp, log, log1p, expm1, log1p_exp (softplus).

namespace tyche::rules {

struct exp {
  static constexpr const char* name = "exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::exp(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::exp(x);
    dx = y;
    return y;
  }
};

struct log {
  static constexpr const char* name = "log";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / x;
    return math::log(x);
  }
};

struct log1p {
  static constexpr const char* name = "log1p";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::log1p(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(1.0) / (lift<T>(1.0) + x);
    return math::log1p(x);
  }
};

struct expm1 {
  static constexpr const char* name = "expm1";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::expm1(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::expm1(x);
    dx = y + lift<T>(1.0);
    return y;
  }
};

/// log(1 + eˣ) computed as max(x, 0) + log1p(e^−|x|), which neither overflows nor loses
/// precision; its derivative is the logistic function, from the same e^−|x|.
struct log1p_exp {
  static constexpr const char* name = "log1p_exp";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T zero = lift<T>(0.0);
    return math::max(x, zero) + math::log1p(math::exp(-math::abs(x)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T zero = lift<T>(0.0);
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    dx = math::select(x >= zero, r, e * r);
    return math::max(x, zero) + math::log1p(e);
  }
};

}  // namespace tyche::rules
// ----- end tyche/autodiff/exp_log.hpp -----
// ----- begin tyche/autodiff/logistic.hpp -----
// tyche/autodiff/logistic.hpp — value and derivative rules for the sigmoid family: logistic
// (inverse logit), log_logistic (log inv-logit), log1m_logistic (log(1 − inv-logit)), tanh.
// All are computed from e^−|x| so that no intermediate overflows.

namespace tyche::rules {

struct logistic {
  static constexpr const char* name = "logistic";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    return math::select(x >= lift<T>(0.0), r, e * r);
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    dx = e * r * r;  // σ(x) σ(−x), without cancellation
    return math::select(x >= lift<T>(0.0), r, e * r);
  }
};

/// log σ(x) = −log(1 + e^−x).
struct log_logistic {
  static constexpr const char* name = "log_logistic";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T zero = lift<T>(0.0);
    return math::select(x >= zero, zero, x) - math::log1p(math::exp(-math::abs(x)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T zero = lift<T>(0.0);
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    dx = math::select(x >= zero, e * r, r);  // σ(−x)
    return math::select(x >= zero, zero, x) - math::log1p(e);
  }
};

/// log(1 − σ(x)) = log σ(−x) = −log(1 + eˣ).
struct log1m_logistic {
  static constexpr const char* name = "log1m_logistic";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    const T zero = lift<T>(0.0);
    return math::select(x >= zero, -x, zero) - math::log1p(math::exp(-math::abs(x)));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T zero = lift<T>(0.0);
    const T one = lift<T>(1.0);
    const T e = math::exp(-math::abs(x));
    const T r = one / (one + e);
    dx = -math::select(x >= zero, r, e * r);  // −σ(x)
    return math::select(x >= zero, -x, zero) - math::log1p(e);
  }
};

struct tanh {
  static constexpr const char* name = "tanh";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::tanh(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    const T y = math::tanh(x);
    dx = lift<T>(1.0) - y * y;
    return y;
  }
};

}  // namespace tyche::rules
// ----- end tyche/autodiff/logistic.hpp -----
// ----- begin tyche/autodiff/special.hpp -----
// tyche/autodiff/special.hpp — value and derivative rules for special functions: lgamma,
// digamma, erf and Phi (the standard normal CDF).

namespace tyche::rules {

struct lgamma {
  static constexpr const char* name = "lgamma";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::lgamma(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::digamma(x);
    return math::lgamma(x);
  }
};

struct digamma {
  static constexpr const char* name = "digamma";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::digamma(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = math::trigamma(x);
    return math::digamma(x);
  }
};

struct erf {
  static constexpr const char* name = "erf";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const { return math::erf(x); }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(math::two_over_sqrt_pi) * math::exp(-(x * x));
    return math::erf(x);
  }
};

/// Φ(x) = erfc(−x/√2)/2, accurate in the lower tail; Φ'(x) = e^(−x²/2)/√(2π).
struct Phi {
  static constexpr const char* name = "Phi";
  static constexpr bool has_payload = false;
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x) const {
    return lift<T>(0.5) * math::erfc(-x * lift<T>(math::inv_sqrt_two));
  }
  template <class T> TYCHE_HD TYCHE_INLINE T value(const T& x, T& dx) const {
    dx = lift<T>(math::inv_sqrt_two_pi) * math::exp(lift<T>(-0.5) * x * x);
    return lift<T>(0.5) * math::erfc(-x * lift<T>(math::inv_sqrt_two));
  }
};

}  // namespace tyche::rules
// ----- end tyche/autodiff/special.hpp -----

#include <stdexcept>
#include <string>
#include <type_traits>

namespace tyche {

/// f(a) elementwise, for a rule f from tyche/autodiff/.
template <class Rule, class A>
struct unary_node : expr<unary_node<Rule, A>> {
  static constexpr node_kind kind = node_kind::unary;
  static constexpr bool is_vector = A::is_vector;
  static constexpr std::size_t extent = A::extent;
  static constexpr bool has_payload = Rule::has_payload;
  using children = meta::list<A>;
  using rule_type = Rule;
  [[no_unique_address]] Rule rule;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
  TYCHE_HD constexpr std::size_t size() const {
    if constexpr (extent != dynamic_extent) return extent; else return a.size();
  }
};

/// f(a, b) elementwise; a scalar operand is broadcast against a vector one.
template <class Rule, class A, class B>
struct binary_node : expr<binary_node<Rule, A, B>> {
  static constexpr node_kind kind = node_kind::binary;
  static constexpr bool is_vector = A::is_vector || B::is_vector;
  static constexpr std::size_t extent =
      !A::is_vector   ? (B::is_vector ? B::extent : 1)
      : !B::is_vector ? A::extent
                      : (A::extent != dynamic_extent ? A::extent : B::extent);
  static constexpr bool has_payload = Rule::has_payload;
  using children = meta::list<A, B>;
  using rule_type = Rule;
  [[no_unique_address]] Rule rule;
  A a;
  B b;
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    if constexpr (I == 0) return a; else return b;
  }
  TYCHE_HD constexpr std::size_t size() const {  // static when either operand's size is
    if constexpr (extent != dynamic_extent) return extent;
    else if constexpr (A::is_vector) return a.size();
    else return b.size();
  }
};

/// Σᵢ aᵢ over a vector expression.
template <class A>
struct sum_node : expr<sum_node<A>> {
  static constexpr node_kind kind = node_kind::sum;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  using children = meta::list<A>;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
};

/// log Σᵢ exp(aᵢ) over a vector expression, computed in one stable pass.
template <class A>
struct log_sum_exp_node : expr<log_sum_exp_node<A>> {
  static constexpr node_kind kind = node_kind::log_sum_exp;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = false;
  using children = meta::list<A>;
  A a;
  template <std::size_t I>
  TYCHE_HD constexpr const A& child() const { return a; }
};

/// X v for a data matrix X and a vector parameter v: the one vector node whose values are held
/// in a buffer (the workspace), because every element needs all of v.
template <class V>
struct matvec_node : expr<matvec_node<V>> {
  static constexpr node_kind kind = node_kind::matvec;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = true;
  using children = meta::list<data_matrix, V>;
  data_matrix x;
  V v;
  template <std::size_t I>
  TYCHE_HD constexpr const auto& child() const {
    if constexpr (I == 0) return x; else return v;
  }
  TYCHE_HD constexpr std::size_t size() const { return x.rows; }
};

// ---- building nodes ------------------------------------------------------------------------

namespace detail {

/// What may stand as an operand of an elementwise operation: an expression other than a
/// matrix, or a plain number.
template <class T>
concept operand = (expression<T> && (wraps_expression<T> || kind_of<T> != node_kind::data_matrix)) ||
                  arithmetic<T>;

/// The core node an operand stands for: a number becomes a constant; a wrapper (a random
/// variable, see tyche/model) becomes the expression of its value; a node is itself.
template <class T>
TYCHE_HD constexpr auto as_node(const T& x) {
  if constexpr (arithmetic<T>) return constant{static_cast<double>(x)};
  else if constexpr (wraps_expression<T>) return as_node(x.value_expression());
  else return x;
}
template <class T>
using node_t = decltype(as_node(std::declval<T>()));

inline void check_same_size(const char* op, std::size_t a, std::size_t b) {
  if (a != b)
    throw std::invalid_argument(std::string("tyche::") + op + ": vector operands have sizes " +
                                std::to_string(a) + " and " + std::to_string(b));
}

template <class Rule, class A>
auto make_unary(const A& a, Rule rule = {}) {
  using N = node_t<A>;
  return unary_node<Rule, N>{{}, rule, as_node(a)};
}

template <class Rule, class A, class B>
auto make_binary(const A& a, const B& b) {
  using NA = node_t<A>;
  using NB = node_t<B>;
  if constexpr (NA::is_vector && NB::is_vector) {
    static_assert(NA::extent == dynamic_extent || NB::extent == dynamic_extent ||
                      NA::extent == NB::extent,
                  "tyche: an elementwise operation on two vectors requires equal sizes");
  }
  binary_node<Rule, NA, NB> n{{}, {}, as_node(a), as_node(b)};
  if constexpr (NA::is_vector && NB::is_vector) check_same_size(Rule::name, n.a.size(), n.b.size());
  return n;
}

}  // namespace detail

// clang-format off
template <detail::operand A> requires expression<A> auto operator-(const A& a) { return detail::make_unary<rules::negate>(a); }
template <detail::operand A> requires expression<A> auto exp(const A& a) { return detail::make_unary<rules::exp>(a); }
template <detail::operand A> requires expression<A> auto log(const A& a) { return detail::make_unary<rules::log>(a); }
template <detail::operand A> requires expression<A> auto log1p(const A& a) { return detail::make_unary<rules::log1p>(a); }
template <detail::operand A> requires expression<A> auto expm1(const A& a) { return detail::make_unary<rules::expm1>(a); }
template <detail::operand A> requires expression<A> auto sqrt(const A& a) { return detail::make_unary<rules::sqrt>(a); }
template <detail::operand A> requires expression<A> auto square(const A& a) { return detail::make_unary<rules::square>(a); }
template <detail::operand A> requires expression<A> auto inverse(const A& a) { return detail::make_unary<rules::inverse>(a); }
template <detail::operand A> requires expression<A> auto lgamma(const A& a) { return detail::make_unary<rules::lgamma>(a); }
template <detail::operand A> requires expression<A> auto digamma(const A& a) { return detail::make_unary<rules::digamma>(a); }
template <detail::operand A> requires expression<A> auto logistic(const A& a) { return detail::make_unary<rules::logistic>(a); }
template <detail::operand A> requires expression<A> auto inv_logit(const A& a) { return detail::make_unary<rules::logistic>(a); }
template <detail::operand A> requires expression<A> auto log_logistic(const A& a) { return detail::make_unary<rules::log_logistic>(a); }
template <detail::operand A> requires expression<A> auto log1m_logistic(const A& a) { return detail::make_unary<rules::log1m_logistic>(a); }
template <detail::operand A> requires expression<A> auto log1p_exp(const A& a) { return detail::make_unary<rules::log1p_exp>(a); }
template <detail::operand A> requires expression<A> auto tanh(const A& a) { return detail::make_unary<rules::tanh>(a); }
template <detail::operand A> requires expression<A> auto erf(const A& a) { return detail::make_unary<rules::erf>(a); }
template <detail::operand A> requires expression<A> auto Phi(const A& a) { return detail::make_unary<rules::Phi>(a); }
template <detail::operand A> requires expression<A> auto abs(const A& a) { return detail::make_unary<rules::abs>(a); }

template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator+(const A& a, const B& b) { return detail::make_binary<rules::add>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator-(const A& a, const B& b) { return detail::make_binary<rules::subtract>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator*(const A& a, const B& b) { return detail::make_binary<rules::multiply>(a, b); }
template <detail::operand A, detail::operand B> requires (expression<A> || expression<B>)
auto operator/(const A& a, const B& b) { return detail::make_binary<rules::divide>(a, b); }
// clang-format on

/// aᵇ. A plain-number exponent makes the cheaper one-operand node x^c.
template <detail::operand A, detail::operand B>
  requires(expression<A> || expression<B>)
auto pow(const A& a, const B& b) {
  if constexpr (arithmetic<B>) {
    return detail::make_unary(a, rules::pow_constant{static_cast<double>(b)});
  } else {
    return detail::make_binary<rules::pow>(a, b);
  }
}

/// Σᵢ aᵢ.
template <expression A>
auto sum(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>,
                "tyche::sum(a) requires 'a' to be a vector expression; it is a scalar");
  return sum_node<N>{{}, detail::as_node(a)};
}

/// Σᵢ aᵢ bᵢ.
template <detail::operand A, detail::operand B>
  requires(expression<A> && expression<B>)
auto dot(const A& a, const B& b) {
  static_assert(is_vector_v<detail::node_t<A>> && is_vector_v<detail::node_t<B>>,
                "tyche::dot(a, b) requires 'a' and 'b' to be vector expressions");
  return sum(a * b);
}

/// log Σᵢ exp(aᵢ).
template <expression A>
auto log_sum_exp(const A& a) {
  using N = detail::node_t<A>;
  static_assert(is_vector_v<N>,
                "tyche::log_sum_exp(a) requires 'a' to be a vector expression; it is a scalar");
  return log_sum_exp_node<N>{{}, detail::as_node(a)};
}

/// X v: a data matrix times a vector parameter.
template <expression V>
auto matvec(const data_matrix& x, const V& v) {
  using N = detail::node_t<V>;
  static_assert(kind_of<N> == node_kind::vector_param,
                "tyche::matvec(X, v) requires 'v' to be a vector parameter (vector_param)");
  const N node = detail::as_node(v);
  if (x.cols != node.size())
    throw std::invalid_argument("tyche::matvec(X, v): X has " + std::to_string(x.cols) +
                                " columns but v has size " + std::to_string(node.size()));
  return matvec_node<N>{{}, x, node};
}
template <expression V>
auto operator*(const data_matrix& x, const V& v) {
  return matvec(x, v);
}

}  // namespace tyche
// ----- end tyche/core/operations.hpp -----
// ----- begin tyche/core/program.hpp -----
// tyche/core/program.hpp — compile(expr): binds an expression to a parameter layout, folds
// what depends on data only, and evaluates value and gradient for any scalar type.
// ----- begin tyche/core/evaluate.hpp -----
// tyche/core/evaluate.hpp — the forward and reverse passes, generated from an expression's
// type. No tape, no virtual call, no allocation: the slots of one evaluation are a struct on
// the stack (plus, for matvec, a caller-supplied workspace), and each node's step is an
// inlined function chosen at compile time. See docs/design/expression-core.md.
// ----- begin tyche/core/graph.hpp -----
// tyche/core/graph.hpp — the compile-time shape of an evaluation: which nodes get a slot, in
// which order they are evaluated, which occurrences are shared, and which reductions can fold
// their reverse pass into the forward pass. All of it is computed from the expression's type.
// See docs/design/expression-core.md.

#include <type_traits>
#include <utility>

namespace tyche::detail {

/// One occurrence of node type N at path P in the expression tree.
template <class N, class P>
struct entry {
  using node = N;
  using path = P;
};

/// Two occurrences share one slot when they are the same node: the same type, and either the
/// type is shareable (no run-time payload below it) or it is the very same occurrence.
template <class E1, class E2>
struct same_slot
    : std::bool_constant<std::is_same_v<typename E1::node, typename E2::node> &&
                         (shareable_v<typename E1::node> ||
                          std::is_same_v<typename E1::path, typename E2::path>)> {};

/// Nodes evaluated once per evaluation: scalar operations, reductions, matvec. Leaves need no
/// slot (they are read in place) and elementwise nodes live in their reduction's loop.
template <class N>
inline constexpr bool has_outer_slot_v = !is_leaf_v<N> && !is_elementwise_v<N>;

template <class N, class P, class Seq = std::make_index_sequence<children_t<N>::size>>
struct outer_occurrences;
template <class N, class P, std::size_t... I>
struct outer_occurrences<N, P, std::index_sequence<I...>> {
  using below =
      meta::concat<typename outer_occurrences<meta::at<I, children_t<N>>, meta::push<P, I>>::type...>;
  using type = std::conditional_t<has_outer_slot_v<N>, meta::concat<below, meta::list<entry<N, P>>>,
                                  below>;
};

/// Every occurrence of a slot-owning node, children before parents (post-order).
template <class Root>
using outer_occurrences_t = typename outer_occurrences<Root, path<>>::type;
/// The outer slots: occurrences with shared ones merged, in evaluation order.
template <class Root>
using outer_entries_t = meta::unique<same_slot, outer_occurrences_t<Root>>;

template <class N, class P, bool Elementwise = is_elementwise_v<N>,
          class Seq = std::make_index_sequence<children_t<N>::size>>
struct kernel_occurrences {
  using type = meta::list<>;  // a boundary: scalar node, materialised vector or leaf
};
template <class N, class P, std::size_t... I>
struct kernel_occurrences<N, P, true, std::index_sequence<I...>> {
  using type = meta::concat<
      typename kernel_occurrences<meta::at<I, children_t<N>>, meta::push<P, I>>::type...,
      meta::list<entry<N, P>>>;
};

/// The slots of the loop body of a reduction whose operand A sits at path P: the elementwise
/// nodes of A, children first, shared ones merged.
template <class A, class P>
using kernel_entries_t = meta::unique<same_slot, typename kernel_occurrences<A, P>::type>;

// ---- reductions whose adjoint is known before the reverse pass ---------------------------------

template <class E, int Sign>
struct signed_entry {
  using type = E;
  static constexpr int sign = Sign;
};

/// Reductions reached from the root through +, − and negation only: their adjoint is ±1 before
/// anything is evaluated, so their loop can propagate adjoints while it computes values.
template <class N, class P, int S>
struct signed_sums {
  using type = meta::list<>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::sum)
struct signed_sums<N, P, S> {
  using type = meta::list<signed_entry<entry<N, P>, S>>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::binary && !is_vector_v<N> &&
           (std::is_same_v<typename N::rule_type, rules::add> ||
            std::is_same_v<typename N::rule_type, rules::subtract>))
struct signed_sums<N, P, S> {
  static constexpr int sb = std::is_same_v<typename N::rule_type, rules::add> ? S : -S;
  using type = meta::concat<typename signed_sums<meta::at<0, children_t<N>>, meta::push<P, 0>, S>::type,
                            typename signed_sums<meta::at<1, children_t<N>>, meta::push<P, 1>, sb>::type>;
};
template <class N, class P, int S>
  requires(kind_of<N> == node_kind::unary && !is_vector_v<N> &&
           std::is_same_v<typename N::rule_type, rules::negate>)
struct signed_sums<N, P, S> {
  using type = typename signed_sums<meta::at<0, children_t<N>>, meta::push<P, 0>, -S>::type;
};

template <class A, class B>
struct same_signed_slot : same_slot<typename A::type, typename B::type> {};

// ---- run-time-verified sharing of nodes with payloads ----------------------------------------

template <class E1, class E2>
struct same_node_type : std::is_same<typename E1::node, typename E2::node> {};

/// For outer slot K: the first slot whose node has the same type. When that is another slot
/// (the type has a payload, so the types alone could not merge them), the program compares the
/// two nodes' payloads at construction and, when they are equal, slot K aliases that slot.
template <class Entries, std::size_t K>
inline constexpr std::size_t alias_candidate_v =
    meta::find_if_equal<same_node_type, meta::at<K, Entries>, Entries>::value;

/// Number of outer slots whose node has the same type as E's.
template <class Entries, class E>
inline constexpr std::size_t same_type_slots_v = meta::count_equal<same_node_type, E, Entries>::value;

/// Equal payloads everywhere below: the same data views, constants and operation arguments.
template <class N>
bool same_value(const N& a, const N& b) {
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::constant) {
    return a.value == b.value;
  } else if constexpr (k == node_kind::data_vector) {
    return a.ptr == b.ptr && a.size() == b.size();
  } else if constexpr (k == node_kind::data_matrix) {
    return a.ptr == b.ptr && a.rows == b.rows && a.cols == b.cols;
  } else if constexpr (k == node_kind::vector_param) {
    return a.size() == b.size();
  } else if constexpr (is_leaf_v<N>) {
    return true;
  } else {
    bool equal = true;
    if constexpr (requires { a.rule; }) {
      if constexpr (N::rule_type::has_payload) equal = a.rule == b.rule;
    }
    meta::static_for<children_t<N>::size>([&](auto i) {
      equal = equal && same_value(a.template child<decltype(i)::value>(),
                                  b.template child<decltype(i)::value>());
    });
    return equal;
  }
}

/// +1 or −1 when the reduction occurrence E is used once and reached from the root by sums
/// only; 0 otherwise (its adjoint is then known only in the reverse pass).
template <class Root, class E>
inline constexpr int fused_sign_v = [] {
  using occurrences = outer_occurrences_t<Root>;
  using signed_list = typename signed_sums<Root, path<>, 1>::type;
  if constexpr (meta::count_equal<same_slot, E, occurrences>::value != 1 ||
                same_type_slots_v<outer_entries_t<Root>, E> != 1) {
    return 0;  // used twice, or possibly aliased at run time: adjoint known only in reverse
  } else {
    constexpr std::size_t i =
        meta::find_if_equal<same_signed_slot, signed_entry<E, 0>, signed_list>::value;
    if constexpr (i == signed_list::size) return 0;
    else return meta::at<i, signed_list>::sign;
  }
}();

// ---- navigating the tree ------------------------------------------------------------------------

template <class N>
TYCHE_HD TYCHE_INLINE constexpr const N& at_path(const N& n, path<>) {
  return n;
}
template <class N, std::size_t I, std::size_t... Rest>
TYCHE_HD TYCHE_INLINE constexpr const auto& at_path(const N& n, path<I, Rest...>) {
  return at_path(n.template child<I>(), path<Rest...>{});
}

}  // namespace tyche::detail
// ----- end tyche/core/graph.hpp -----

#include <cstddef>
#include <utility>

namespace tyche::detail {

// ---- slots ---------------------------------------------------------------------------------------

template <class N, class T, node_kind K = kind_of<N>>
struct slot {  // unary: value, dy/dx, adjoint
  T v;
  T d;
  T adj = lift<T>(0.0);
};
template <class N, class T>
struct slot<N, T, node_kind::binary> {
  T v;
  T d0;
  T d1;
  T adj = lift<T>(0.0);
};
template <class N, class T>
struct slot<N, T, node_kind::sum> {
  T v;
  T adj = lift<T>(0.0);
};
template <class N, class T>
struct slot<N, T, node_kind::log_sum_exp> {
  T v;
  T adj = lift<T>(0.0);
};
template <class N, class T>
struct slot<N, T, node_kind::matvec> {
  T* val = nullptr;  // rows values, then rows adjoints, in the workspace
  T* adj = nullptr;
};

template <std::size_t I, class S>
struct slot_holder {
  S s;
};
template <class Seq, class... S>
struct slot_tuple_impl;
template <std::size_t... I, class... S>
struct slot_tuple_impl<std::index_sequence<I...>, S...> : slot_holder<I, S>... {};

/// The slots of a list of entries, as one struct.
template <class Entries, class T>
struct slots;
template <class... E, class T>
struct slots<meta::list<E...>, T>
    : slot_tuple_impl<std::index_sequence_for<E...>, slot<typename E::node, T>...> {
  using entries = meta::list<E...>;
};

template <std::size_t I, class S>
TYCHE_HD TYCHE_INLINE S& get(slot_holder<I, S>& h) {
  return h.s;
}

template <class Entries, class N, class P>
inline constexpr std::size_t index_in_v = meta::find_if_equal<same_slot, entry<N, P>, Entries>::value;

struct no_kernel {
  using entries = meta::list<>;
};

// ---- the evaluation --------------------------------------------------------------------------

/// Where the parameters live: the index of each parameter of Layout in the θ vector.
template <class Layout>
struct param_offsets {
  std::size_t offset[Layout::size > 0 ? Layout::size : 1] = {};
  std::size_t size[Layout::size > 0 ? Layout::size : 1] = {};
  std::size_t dim = 0;
};

template <class P>
inline constexpr std::size_t param_extent_v =
    kind_of<P> == node_kind::param ? 1 : extent_v<P>;

/// The length of θ when every parameter's size is known at compile time, else dynamic_extent.
template <class Layout>
inline constexpr std::size_t static_dim_v = []<class... Ps>(meta::list<Ps...>) {
  if constexpr (((param_extent_v<Ps> == dynamic_extent) || ...)) return dynamic_extent;
  else return (std::size_t{0} + ... + param_extent_v<Ps>);
}(Layout{});

/// Offset of parameter K in θ when it and every parameter before it have static sizes.
template <class Layout, std::size_t K>
inline constexpr std::size_t static_offset_v = [] {
  std::size_t offset = 0;
  bool known = true;
  meta::static_for<K>([&](auto k) {
    constexpr std::size_t e = param_extent_v<meta::at<decltype(k)::value, Layout>>;
    if (e == dynamic_extent) known = false;
    else offset += e;
  });
  return known ? offset : dynamic_extent;
}();

template <class Layout, class P>
inline constexpr std::size_t layout_index_v = [] {
  return []<class... Ps>(meta::list<Ps...>) {
    constexpr bool hit[] = {(Ps::name == P::name)..., true};  // the sentinel stops the search
    std::size_t i = 0;
    while (!hit[i]) ++i;
    return i;
  }(Layout{});
}();

/// One evaluation of Root at one point θ, with scalar type T. Grad selects value-only or
/// value-and-gradient. Constructed, run once, discarded.
template <class Root, class Layout, class T, bool Grad>
struct evaluation {
  using outer_entries = outer_entries_t<Root>;
  using outer_state = slots<outer_entries, T>;

  // Copies, not references: grad may point anywhere, but not into this local object, so the
  // compiler can keep payloads (constants, data pointers, offsets) in registers.
  Root root;
  param_offsets<Layout> layout;
  const std::size_t* ws_offsets;
  const bool* aliased;  // per outer slot: equal to its alias candidate (graph.hpp)
  const T* TYCHE_RESTRICT theta;
  T* TYCHE_RESTRICT grad;
  T* TYCHE_RESTRICT workspace;
  outer_state state{};
  // Adjoints of scalar parameters, kept here (in registers, once inlined) and added to grad at
  // the end: grad may alias anything, these cannot.
  T param_adj[Layout::size > 0 ? Layout::size : 1] = {};

  template <class C>
  TYCHE_HD TYCHE_INLINE std::size_t offset_of() const {
    constexpr std::size_t k = layout_index_v<Layout, C>;
    static_assert(k < Layout::size, "tyche: a parameter of the expression is missing from the layout");
    if constexpr (static_offset_v<Layout, k> != dynamic_extent) return static_offset_v<Layout, k>;
    else return layout.offset[k];
  }

  // The value of child C (at path CP) at element i, wherever it lives.
  template <class C, class CP, class K>
  TYCHE_HD TYCHE_INLINE T value_of(const C& c, K& ks, std::size_t i) {
    constexpr node_kind k = kind_of<C>;
    if constexpr (k == node_kind::literal) {
      return lift<T>(C::value);
    } else if constexpr (k == node_kind::constant) {
      return lift<T>(c.value);
    } else if constexpr (k == node_kind::param) {
      return theta[offset_of<C>()];
    } else if constexpr (k == node_kind::vector_param) {
      return theta[offset_of<C>() + i];
    } else if constexpr (k == node_kind::data_vector) {
      return lift<T>(c.ptr[i]);
    } else if constexpr (is_elementwise_v<C>) {
      return get<index_in_v<typename K::entries, C, CP>>(ks).v;
    } else if constexpr (k == node_kind::matvec) {
      return get<index_in_v<outer_entries, C, CP>>(state).val[i];
    } else {
      return get<index_in_v<outer_entries, C, CP>>(state).v;
    }
  }

  // Adds a to the adjoint of child C (at path CP) at element i.
  template <class C, class CP, class K>
  TYCHE_HD TYCHE_INLINE void push_adjoint(K& ks, std::size_t i, const T& a) {
    constexpr node_kind k = kind_of<C>;
    if constexpr (k == node_kind::param) {
      param_adj[layout_index_v<Layout, C>] += a;
    } else if constexpr (k == node_kind::vector_param) {
      grad[offset_of<C>() + i] += a;
    } else if constexpr (is_elementwise_v<C>) {
      get<index_in_v<typename K::entries, C, CP>>(ks).adj += a;
    } else if constexpr (k == node_kind::matvec) {
      get<index_in_v<outer_entries, C, CP>>(state).adj[i] += a;
    } else if constexpr (has_outer_slot_v<C>) {
      get<index_in_v<outer_entries, C, CP>>(state).adj += a;
    }
    // constants and data: no adjoint
  }

  // Forward step of a unary or binary node into slot s; G: also the partial derivatives.
  template <bool G, class N, class P, class S, class K>
  TYCHE_HD TYCHE_INLINE void forward_elementary(const N& n, S& s, K& ks, std::size_t i) {
    if constexpr (kind_of<N> == node_kind::unary) {
      const T x = value_of<meta::at<0, children_t<N>>, meta::push<P, 0>>(n.a, ks, i);
      if constexpr (G) s.v = n.rule.value(x, s.d);
      else s.v = n.rule.value(x);
    } else {
      const T a = value_of<meta::at<0, children_t<N>>, meta::push<P, 0>>(n.a, ks, i);
      const T b = value_of<meta::at<1, children_t<N>>, meta::push<P, 1>>(n.b, ks, i);
      if constexpr (G) s.v = n.rule.value(a, b, s.d0, s.d1);
      else s.v = n.rule.value(a, b);
    }
  }

  // Reverse step of a unary or binary node from slot s.
  template <class N, class P, class S, class K>
  TYCHE_HD TYCHE_INLINE void reverse_elementary(const S& s, K& ks, std::size_t i) {
    if constexpr (kind_of<N> == node_kind::unary) {
      push_adjoint<meta::at<0, children_t<N>>, meta::push<P, 0>>(ks, i, s.adj * s.d);
    } else {
      push_adjoint<meta::at<0, children_t<N>>, meta::push<P, 0>>(ks, i, s.adj * s.d0);
      push_adjoint<meta::at<1, children_t<N>>, meta::push<P, 1>>(ks, i, s.adj * s.d1);
    }
  }

  // ---- the loop body of a reduction: element i of operand A at path AP ----

  template <class A, class AP>
  using kernel_state = slots<kernel_entries_t<A, AP>, T>;

  template <bool G, class A, class AP, class K>
  TYCHE_HD TYCHE_INLINE T kernel_forward(const A& a, K& ks, std::size_t i) {
    using entries = typename K::entries;
    meta::static_for<entries::size>([&](auto j) {
      constexpr std::size_t J = decltype(j)::value;
      using E = meta::at<J, entries>;
      forward_elementary<G, typename E::node, typename E::path>(
          at_path(a, relative_path<AP, typename E::path>()), get<J>(ks), ks, i);
    });
    return value_of<A, AP>(a, ks, i);
  }

  template <class A, class AP, class K>
  TYCHE_HD TYCHE_INLINE void kernel_reverse(K& ks, std::size_t i, const T& seed) {
    using entries = typename K::entries;
    push_adjoint<A, AP>(ks, i, seed);
    meta::static_for_reverse<entries::size>([&](auto j) {
      constexpr std::size_t J = decltype(j)::value;
      using E = meta::at<J, entries>;
      reverse_elementary<typename E::node, typename E::path>(get<J>(ks), ks, i);
    });
  }

  // Path of Full relative to its prefix Prefix (kernel entries carry absolute paths; the loop
  // body navigates from the reduction's operand).
  template <class Prefix, class Full>
  TYCHE_HD static constexpr auto relative_path() {
    return strip_prefix(Prefix{}, Full{});
  }
  template <std::size_t... Rest>
  TYCHE_HD static constexpr auto strip_prefix(path<>, path<Rest...>) {
    return path<Rest...>{};
  }
  template <std::size_t I, std::size_t... Is, std::size_t... Rest>
  TYCHE_HD static constexpr auto strip_prefix(path<I, Is...>, path<I, Rest...>) {
    return strip_prefix(path<Is...>{}, path<Rest...>{});
  }

  // ---- outer slots ----

  template <class E>
  TYCHE_HD TYCHE_INLINE void forward_outer() {
    using N = typename E::node;
    using P = typename E::path;
    constexpr std::size_t idx = index_in_v<outer_entries, N, P>;
    const N& n = at_path(root, P{});
    auto& s = get<idx>(state);
    no_kernel none;
    constexpr std::size_t alias = alias_candidate_v<outer_entries, idx>;
    if constexpr (alias != idx) {
      if (aliased[idx]) {  // the same node as slot `alias`: take its value (or its buffers)
        const auto& a = get<alias>(state);
        if constexpr (kind_of<N> == node_kind::matvec) {
          s.val = a.val;
          s.adj = a.adj;
        } else {
          s.v = a.v;
        }
        return;
      }
    }
    if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) {
      forward_elementary<Grad, N, P>(n, s, none, 0);
    } else if constexpr (kind_of<N> == node_kind::sum) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      constexpr int sign = Grad ? fused_sign_v<Root, E> : 0;
      const std::size_t len = n.a.size();
      auto element = [&](std::size_t i) {
        kernel_state<A, AP> ks{};
        if constexpr (sign != 0) {
          const T v = kernel_forward<true, A, AP>(n.a, ks, i);
          kernel_reverse<A, AP>(ks, i, lift<T>(static_cast<double>(sign)));
          return v;
        } else {
          return kernel_forward<false, A, AP>(n.a, ks, i);
        }
      };
      // Eight partial sums, partial sum j taking the elements i ≡ j (mod 8): eight independent
      // dependency chains, laid out so that SIMD code adds whole vectors (no shuffles).
      constexpr std::size_t width = 8;
      T t[width];
      for (auto& tj : t) tj = lift<T>(0.0);
      const std::size_t full = len - len % width;
      std::size_t i = 0;
      for (; i < full; i += width) {
        for (std::size_t j = 0; j < width; ++j) t[j] += element(i + j);
      }
      for (; i < len; ++i) t[0] += element(i);
      s.v = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
    } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      const std::size_t len = n.a.size();
      T m = lift<T>(0.0);
      T acc = lift<T>(0.0);
      for (std::size_t i = 0; i < len; ++i) {
        kernel_state<A, AP> ks{};
        const T v = kernel_forward<false, A, AP>(n.a, ks, i);
        if (i == 0) {
          m = v;
          acc = lift<T>(1.0);
        } else {
          const T m_new = math::max(m, v);
          acc = acc * math::exp(m - m_new) + math::exp(v - m_new);
          m = m_new;
        }
      }
      s.v = m + math::log(acc);
    } else if constexpr (kind_of<N> == node_kind::matvec) {
      const std::size_t rows = n.x.rows;
      const std::size_t cols = n.x.cols;
      s.val = workspace + ws_offsets[idx];
      s.adj = s.val + rows;
      const T* v = theta + offset_of<meta::at<1, children_t<N>>>();
      for (std::size_t r = 0; r < rows; ++r) {
        const double* row = n.x.ptr + r * cols;
        // Four accumulators: the loop vectorises without reassociating a single sum.
        T a0 = lift<T>(0.0), a1 = lift<T>(0.0), a2 = lift<T>(0.0), a3 = lift<T>(0.0);
        std::size_t c = 0;
        for (; c + 4 <= cols; c += 4) {
          a0 += lift<T>(row[c]) * v[c];
          a1 += lift<T>(row[c + 1]) * v[c + 1];
          a2 += lift<T>(row[c + 2]) * v[c + 2];
          a3 += lift<T>(row[c + 3]) * v[c + 3];
        }
        for (; c < cols; ++c) a0 += lift<T>(row[c]) * v[c];
        s.val[r] = (a0 + a1) + (a2 + a3);
        if constexpr (Grad) s.adj[r] = lift<T>(0.0);
      }
    }
  }

  template <class E>
  TYCHE_HD TYCHE_INLINE void reverse_outer() {
    using N = typename E::node;
    using P = typename E::path;
    constexpr std::size_t idx = index_in_v<outer_entries, N, P>;
    const N& n = at_path(root, P{});
    auto& s = get<idx>(state);
    no_kernel none;
    constexpr std::size_t alias = alias_candidate_v<outer_entries, idx>;
    if constexpr (alias != idx) {
      if (aliased[idx]) {  // hand the adjoint to the slot it aliases (buffers are shared)
        if constexpr (kind_of<N> != node_kind::matvec) get<alias>(state).adj += s.adj;
        return;
      }
    }
    if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) {
      reverse_elementary<N, P>(s, none, 0);
    } else if constexpr (kind_of<N> == node_kind::sum) {
      if constexpr (fused_sign_v<Root, E> == 0) {
        using A = meta::at<0, children_t<N>>;
        using AP = meta::push<P, 0>;
        const std::size_t len = n.a.size();
        for (std::size_t i = 0; i < len; ++i) {
          kernel_state<A, AP> ks{};
          kernel_forward<true, A, AP>(n.a, ks, i);
          kernel_reverse<A, AP>(ks, i, s.adj);
        }
      }
    } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      const std::size_t len = n.a.size();
      for (std::size_t i = 0; i < len; ++i) {
        kernel_state<A, AP> ks{};
        const T v = kernel_forward<true, A, AP>(n.a, ks, i);
        kernel_reverse<A, AP>(ks, i, s.adj * math::exp(v - s.v));
      }
    } else if constexpr (kind_of<N> == node_kind::matvec) {
      const std::size_t rows = n.x.rows;
      const std::size_t cols = n.x.cols;
      T* g = grad + offset_of<meta::at<1, children_t<N>>>();
      for (std::size_t r = 0; r < rows; ++r) {
        const double* row = n.x.ptr + r * cols;
        const T a = s.adj[r];
        for (std::size_t c = 0; c < cols; ++c) g[c] += lift<T>(row[c]) * a;
      }
    }
  }

  /// For a vector root: evaluates the scalar slots, after which element(i) gives element i.
  TYCHE_HD TYCHE_INLINE void prepare() {
    meta::static_for<outer_entries::size>(
        [&](auto k) { forward_outer<meta::at<decltype(k)::value, outer_entries>>(); });
  }
  TYCHE_HD TYCHE_INLINE T element(std::size_t i) {
    kernel_state<Root, path<>> ks{};
    return kernel_forward<false, Root, path<>>(root, ks, i);
  }

  TYCHE_HD TYCHE_INLINE T run() {
    if constexpr (Grad) {
      for (auto& a : param_adj) a = lift<T>(0.0);
    }
    static_assert(!is_vector_v<Root>,
                  "tyche: a model's log density must be a scalar; reduce vectors with "
                  "tyche::sum(...)");
    meta::static_for<outer_entries::size>(
        [&](auto k) { forward_outer<meta::at<decltype(k)::value, outer_entries>>(); });
    no_kernel none;
    const T result = value_of<Root, path<>>(root, none, 0);
    if constexpr (Grad) {
      push_adjoint<Root, path<>>(none, 0, lift<T>(1.0));
      meta::static_for_reverse<outer_entries::size>(
          [&](auto k) { reverse_outer<meta::at<decltype(k)::value, outer_entries>>(); });
      meta::static_for<Layout::size>([&](auto k) {
        constexpr std::size_t K = decltype(k)::value;
        using P = meta::at<K, Layout>;
        if constexpr (kind_of<P> == node_kind::param) grad[offset_of<P>()] += param_adj[K];
      });
    }
    return result;
  }
};

}  // namespace tyche::detail
// ----- end tyche/core/evaluate.hpp -----
// ----- begin tyche/core/fold.hpp -----
// tyche/core/fold.hpp — evaluates, once at model construction, every subexpression that depends
// on data and constants only, and replaces it by its value: a run-time constant for a scalar, a
// data vector (stored in a fold_storage owned by the program) for a vector. Evaluations then
// never recompute them.

#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

namespace tyche::detail {

/// Owns the values of folded vector subexpressions.
struct fold_storage {
  std::vector<std::unique_ptr<double[]>> buffers;
  double* allocate(std::size_t n) {
    buffers.push_back(std::make_unique<double[]>(n > 0 ? n : 1));
    return buffers.back().get();
  }
};

/// The value of a scalar expression that depends on no parameter.
template <class N>
double evaluate_constant(const N& n) {
  param_offsets<meta::list<>> none{};
  bool not_aliased[outer_entries_t<N>::size + 1] = {};
  evaluation<N, meta::list<>, double, false> ev{n,       none,    nullptr, not_aliased,
                                                nullptr, nullptr, nullptr};
  return ev.run();
}

/// The values of a vector expression that depends on no parameter, written to out[0 .. size).
template <class N>
void evaluate_constant_vector(const N& n, double* out) {
  param_offsets<meta::list<>> none{};
  bool not_aliased[outer_entries_t<N>::size + 1] = {};
  evaluation<N, meta::list<>, double, false> ev{n,       none,    nullptr, not_aliased,
                                                nullptr, nullptr, nullptr};
  ev.prepare();
  for (std::size_t i = 0; i < n.size(); ++i) out[i] = ev.element(i);
}

/// a / d where d depends on no parameter.
template <class N>
inline constexpr bool divides_by_constant_v = [] {
  if constexpr (kind_of<N> == node_kind::binary) {
    return std::is_same_v<typename N::rule_type, rules::divide> &&
           !depends_on_params_v<meta::at<1, children_t<N>>>;
  } else {
    return false;
  }
}();

template <class N>
auto fold(const N& n, fold_storage& storage) {
  if constexpr (is_leaf_v<N>) {
    return n;
  } else if constexpr (!depends_on_params_v<N>) {
    if constexpr (is_vector_v<N>) {
      double* values = storage.allocate(n.size());
      evaluate_constant_vector(n, values);
      return data_vector<>{{}, values, n.size()};
    } else {
      return constant{evaluate_constant(n)};
    }
  } else if constexpr (kind_of<N> == node_kind::unary) {
    auto a = fold(n.a, storage);
    return unary_node<typename N::rule_type, decltype(a)>{{}, n.rule, a};
  } else if constexpr (divides_by_constant_v<N>) {
    // a / d for d free of parameters: a × (1/d), with 1/d computed here, once. A multiply is
    // several times cheaper than a divide in every evaluation.
    auto a = fold(n.a, storage);
    auto inv = fold(detail::make_unary<rules::inverse>(n.b), storage);
    return binary_node<rules::multiply, decltype(a), decltype(inv)>{{}, {}, a, inv};
  } else if constexpr (kind_of<N> == node_kind::binary) {
    auto a = fold(n.a, storage);
    auto b = fold(n.b, storage);
    return binary_node<typename N::rule_type, decltype(a), decltype(b)>{{}, n.rule, a, b};
  } else if constexpr (kind_of<N> == node_kind::sum) {
    auto a = fold(n.a, storage);
    return sum_node<decltype(a)>{{}, a};
  } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
    auto a = fold(n.a, storage);
    return log_sum_exp_node<decltype(a)>{{}, a};
  } else {
    return n;  // matvec: a data matrix and a parameter vector, nothing to fold
  }
}

}  // namespace tyche::detail
// ----- end tyche/core/fold.hpp -----

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tyche {

namespace detail {

template <class A, class B>
struct same_name : std::bool_constant<A::name == B::name> {};

/// Every parameter occurrence in N, duplicates kept (for the shape-consistency check).
template <class N>
struct all_params {
  template <class L>
  struct from;
  template <class... Cs>
  struct from<meta::list<Cs...>> {
    using type = meta::concat<typename all_params<Cs>::type...>;
  };
  using type =
      std::conditional_t<kind_of<N> == node_kind::param || kind_of<N> == node_kind::vector_param,
                         meta::list<N>, typename from<children_t<N>>::type>;
};

/// True when every occurrence Os is in Layout (by name) with exactly the same type.
template <class Layout, class O>
constexpr bool consistent_param() {
  constexpr std::size_t i = meta::find_if_equal<same_name, O, Layout>::value;
  if constexpr (i == Layout::size) return false;
  else return std::is_same_v<meta::at<i, Layout>, O>;
}
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
      throw std::invalid_argument("tyche: vector parameter '" + std::string(N::name.view()) +
                                  "' is used with sizes " + std::to_string(layout.size[k]) +
                                  " and " + std::to_string(n.size()));
    layout.size[k] = n.size();
    seen[k] = true;
  } else if constexpr (kind_of<N> == node_kind::param) {
    constexpr std::size_t k = layout_index_v<Layout, N>;
    layout.size[k] = 1;
    seen[k] = true;
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

/// Workspace offsets for the matvec slots of an expression (none for aliased slots); with
/// ws_offsets null, only the total.
template <class Root, class Entries = outer_entries_t<Root>>
std::size_t assign_workspace(const Root& root, const bool* aliased, std::size_t* ws_offsets) {
  std::size_t total = 0;
  meta::static_for<Entries::size>([&](auto k) {
    constexpr std::size_t K = decltype(k)::value;
    using E = meta::at<K, Entries>;
    if constexpr (kind_of<typename E::node> == node_kind::matvec) {
      if (!aliased[K]) {
        if (ws_offsets) ws_offsets[K] = total;
        total += 2 * at_path(root, typename E::path{}).x.rows;
      }
    }
  });
  return total;
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
  template <class T>
  TYCHE_EVALUATION_ENTRY T value_and_gradient(const T* TYCHE_RESTRICT theta,
                                              T* TYCHE_RESTRICT grad,
                                              T* TYCHE_RESTRICT workspace = nullptr) const {
    constexpr std::size_t static_dim = detail::static_dim_v<Layout>;
    const std::size_t dim = static_dim != dynamic_extent ? static_dim : layout.dim;
    for (std::size_t i = 0; i < dim; ++i) grad[i] = lift<T>(0.0);
    detail::evaluation<Expr, Layout, T, true> ev{expr, layout, ws_offsets, aliased,
                                                 theta, grad, workspace};
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
  /// The evaluable part, e.g. to copy to a device.
  [[nodiscard]] const view_type& view() const { return view_; }

  /// Parameter names in layout order, with their sizes.
  [[nodiscard]] std::vector<std::pair<std::string, std::size_t>> parameters() const {
    std::vector<std::pair<std::string, std::size_t>> out;
    meta::static_for<Layout::size>([&](auto k) {
      out.emplace_back(std::string(meta::at<k, Layout>::name.view()), view_.layout.size[k]);
    });
    return out;
  }
  /// Offset of parameter number k (layout order) in θ.
  [[nodiscard]] std::size_t offset(std::size_t k) const { return view_.layout.offset[k]; }

  template <class T>
  T value(std::span<const T> theta, std::span<T> workspace = {}) const {
    check(theta.size(), workspace.size(), "value");
    return view_.value(theta.data(), workspace.data());
  }
  template <class T>
  T value_and_gradient(std::span<const T> theta, std::span<T> grad,
                       std::span<T> workspace = {}) const {
    check(theta.size(), workspace.size(), "value_and_gradient");
    if (grad.size() != dim())
      throw std::invalid_argument("tyche::program::value_and_gradient: grad has size " +
                                  std::to_string(grad.size()) + ", expected " +
                                  std::to_string(dim()));
    return view_.value_and_gradient(theta.data(), grad.data(), workspace.data());
  }
  // Convenience overloads for std::vector<double>. Without a workspace argument they allocate
  // one when the model needs it; the span overloads never allocate.
  double value(const std::vector<double>& theta, std::vector<double>& workspace) const {
    return value(std::span<const double>(theta), std::span<double>(workspace));
  }
  double value(const std::vector<double>& theta) const {
    std::vector<double> workspace(workspace_size());
    return value(std::span<const double>(theta), std::span<double>(workspace));
  }
  double value_and_gradient(const std::vector<double>& theta, std::vector<double>& grad,
                            std::vector<double>& workspace) const {
    return value_and_gradient(std::span<const double>(theta), std::span<double>(grad),
                              std::span<double>(workspace));
  }
  double value_and_gradient(const std::vector<double>& theta, std::vector<double>& grad) const {
    std::vector<double> workspace(workspace_size());
    return value_and_gradient(std::span<const double>(theta), std::span<double>(grad),
                              std::span<double>(workspace));
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

template <class Layout, class Wrapped>
auto compile_with_layout(const Wrapped& wrapped) {
  using Expr = node_t<Wrapped>;
  const Expr e = as_node(wrapped);
  static_assert(!is_vector_v<Expr>,
                "tyche::compile(f) requires 'f' to be a scalar expression; reduce vectors with "
                "tyche::sum(...)");
  static_assert(consistent_params_v<Layout, typename all_params<Expr>::type>,
                "tyche::compile(f): a parameter name is used for two different parameters "
                "(scalar and vector, or two sizes fixed at compile time)");
  auto storage = std::make_shared<fold_storage>();
  auto folded = fold(e, *storage);
  using F = decltype(folded);
  program_view<F, Layout> view{folded, {}, {}, {}, 0};
  std::vector<bool> seen(Layout::size, false);
  record_sizes<Layout>(e, view.layout, seen);
  std::size_t dim = 0;
  for (std::size_t k = 0; k < Layout::size; ++k) {
    if (!seen[k])
      throw std::invalid_argument("tyche::compile: a parameter given in the layout does not occur "
                                  "in the expression");
    view.layout.offset[k] = dim;
    dim += view.layout.size[k];
  }
  view.layout.dim = dim;
  find_aliases(view.expr, view.aliased);
  view.workspace_size = assign_workspace(view.expr, view.aliased, view.ws_offsets);
  return program<F, Layout>(view, std::move(storage));
}
}  // namespace detail

/// Compiles f, with its parameters laid out in θ in order of first appearance.
template <expression Expr>
auto compile(const Expr& f) {
  return detail::compile_with_layout<params_of<detail::node_t<Expr>>>(f);
}

/// Compiles f, with its parameters laid out in θ in the order given.
template <expression Expr, expression... Params>
  requires(sizeof...(Params) > 0)
auto compile(const Expr& f, const Params&...) {
  constexpr bool all_params =
      ((kind_of<Params> == node_kind::param || kind_of<Params> == node_kind::vector_param) && ...);
  static_assert(all_params,
                "tyche::compile(f, params...) requires every 'params' argument to be a parameter");
  if constexpr (all_params) {
    using layout = meta::list<Params...>;
    constexpr bool unique = meta::unique<detail::same_name, layout>::size == layout::size;
    static_assert(unique, "tyche::compile(f, params...): a parameter is listed twice");
    using used = params_of<detail::node_t<Expr>>;
    constexpr bool complete =
        used::size == layout::size && detail::consistent_params_v<layout, used>;
    static_assert(!unique || complete,
                  "tyche::compile(f, params...) requires the list to name every parameter of "
                  "'f' exactly once");
    if constexpr (unique && complete) return detail::compile_with_layout<layout>(f);
  }
}

}  // namespace tyche
// ----- end tyche/core/program.hpp -----
// ----- begin tyche/distributions.hpp -----
// tyche/distributions.hpp — every distribution family.
// ----- begin tyche/distributions/cauchy.hpp -----
// tyche/distributions/cauchy.hpp — cauchy(mu, sigma) and half_cauchy(sigma).
//   log p(x | μ, σ) = −log π − log σ − log(1 + ((x − μ)/σ)²),   x ∈ ℝ;
//   half_cauchy: log 2 − log π − log σ − log(1 + (x/σ)²),        x > 0.
// ----- begin tyche/distributions/detail/family.hpp -----
// tyche/distributions/detail/family.hpp — what every distribution header uses: building a named
// random variable or an unnamed distribution from user arguments, constants, and the sum over
// elements of an elementwise log density.
// ----- begin tyche/model/random_variable.hpp -----
// tyche/model/random_variable.hpp — named random variables (parameters with a prior) and
// observed ones (likelihood terms). A random variable is used in expressions as its value: the
// transform (chosen from the distribution's support) of an unconstrained parameter.
// ----- begin tyche/transforms/bounds.hpp -----
// tyche/transforms/bounds.hpp — the transforms from the unconstrained line to a support given
// by bounds: none (identity), a lower bound, an upper bound, both. Each gives the constrained
// value as a core expression of the unconstrained parameter u, the log-Jacobian log|dx/du| as
// a core expression, and the inverse for unconstrain(). Bounds are core expressions too, so a
// bound may depend on another parameter (beta1 < 1 − alpha1).

#include <cmath>

namespace tyche::transforms {

namespace detail {
/// Σ over the elements for a vector expression, the expression itself for a scalar.
template <class E>
auto total(const E& e) {
  if constexpr (is_vector_v<tyche::detail::node_t<E>>) return sum(e);
  else return tyche::detail::as_node(e);
}
}  // namespace detail

/// The real line: x = u, log|J| = 0.
struct identity {
  static constexpr const char* name = "identity";
  template <class U> auto constrain(const U& u) const { return u; }
  template <class U> auto log_jacobian(const U&) const { return lit<0>; }
  static double unconstrain(double x) { return x; }
  static bool contains(double x) { return !std::isnan(x); }
};

/// (L, ∞): x = L + eᵘ, log|J| = u. With L = 0 this is the positive half-line (x = eᵘ).
template <class Lower>
struct lower_bound {
  static constexpr const char* name = "lower bound";
  Lower lower;
  template <class U> auto constrain(const U& u) const {
    if constexpr (std::is_same_v<Lower, literal<0>>) return exp(u);
    else return lower + exp(u);
  }
  template <class U> auto log_jacobian(const U& u) const { return detail::total(u); }
  static double unconstrain(double x, double l) { return std::log(x - l); }
  static bool contains(double x, double l) { return x > l; }
};

/// (−∞, U): x = U − eᵘ, log|J| = u.
template <class Upper>
struct upper_bound {
  static constexpr const char* name = "upper bound";
  Upper upper;
  template <class U> auto constrain(const U& u) const { return upper - exp(u); }
  template <class U> auto log_jacobian(const U& u) const { return detail::total(u); }
  static double unconstrain(double x, double h) { return std::log(h - x); }
  static bool contains(double x, double h) { return x < h; }
};

/// (L, U): x = L + (U − L)·logistic(u), log|J| = log(U − L) + log σ(u) + log(1 − σ(u)).
template <class Lower, class Upper>
struct interval {
  static constexpr const char* name = "interval";
  Lower lower;
  Upper upper;
  template <class U> auto constrain(const U& u) const {
    if constexpr (std::is_same_v<Lower, literal<0>> && std::is_same_v<Upper, literal<1>>)
      return logistic(u);
    else return lower + (upper - lower) * logistic(u);
  }
  template <class U> auto log_jacobian(const U& u) const {
    auto per_element = log_logistic(u) + log1m_logistic(u);
    if constexpr (std::is_same_v<Lower, literal<0>> && std::is_same_v<Upper, literal<1>>)
      return detail::total(per_element);
    else return detail::total(per_element + log(upper - lower));
  }
  static double unconstrain(double x, double l, double h) {
    const double p = (x - l) / (h - l);
    return std::log(p) - std::log1p(-p);
  }
  static bool contains(double x, double l, double h) { return x > l && x < h; }
};

}  // namespace tyche::transforms
// ----- end tyche/transforms/bounds.hpp -----

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tyche {

// ---- shapes ---------------------------------------------------------------------------------

struct scalar_shape {};
/// A vector of N values, N fixed at compile time: `std_normal<"z">(shape<8>)`.
template <std::size_t N>
struct static_shape {
  static constexpr std::size_t size = N;
};
template <std::size_t N>
inline constexpr static_shape<N> shape{};
/// A vector whose size is given at run time: `std_normal<"z">(shape_of(n))`.
struct dynamic_shape {
  std::size_t size;
};
inline dynamic_shape shape_of(std::size_t n) { return {n}; }

template <class S>
concept shape_tag = std::is_same_v<S, scalar_shape> || std::is_same_v<S, dynamic_shape> ||
                    requires { S::size; };

namespace detail {
template <fixed_string Name, class Shape>
struct param_for;
template <fixed_string Name>
struct param_for<Name, scalar_shape> {
  using type = param<Name>;
  static type make(scalar_shape) { return {}; }
};
template <fixed_string Name, std::size_t N>
struct param_for<Name, static_shape<N>> {
  using type = vector_param<Name, N>;
  static type make(static_shape<N>) { return {}; }
};
template <fixed_string Name>
struct param_for<Name, dynamic_shape> {
  using type = vector_param<Name>;
  static type make(dynamic_shape s) { return type(s.size); }
};
}  // namespace detail

// ---- distributions: the shared part ------------------------------------------------------------

template <class Dist, class X>
struct observed;

/// CRTP base of every distribution: observe(data) makes a likelihood term.
template <class Derived>
struct distribution {
  const Derived& derived() const { return static_cast<const Derived&>(*this); }

  /// The likelihood term log p(x | arguments) for observed x (data, usually). Data values are
  /// checked now: a value outside the family's support throws, naming the index and value.
  template <class X>
  auto observe(const X& x) const {
    using N = detail::node_t<X>;
    const N node = detail::as_node(x);
    if constexpr (kind_of<N> == node_kind::data_vector) {
      for (std::size_t i = 0; i < node.size(); ++i) check_observation(node.ptr[i], i);
    } else if constexpr (kind_of<N> == node_kind::constant) {
      check_observation(node.value, 0);
    }
    return observed<Derived, N>{derived(), node};
  }

 private:
  void check_observation(double v, std::size_t i) const {
    const char* problem = nullptr;
    if (!std::isfinite(v)) problem = "is not finite";
    else if constexpr (requires { Derived::observation_problem(v); }) problem = Derived::observation_problem(v);
    if (problem)
      throw std::invalid_argument(std::string("tyche::") + Derived::family + "(...).observe(y): y[" +
                                  std::to_string(i + 1) + "] = " + std::to_string(v) + " " +
                                  problem);
  }
};

/// A likelihood term: distribution Dist observed at x.
template <class Dist, class X>
struct observed {
  Dist distribution;
  X value;
  auto log_density() const { return distribution.log_prob(value); }
};

// ---- random variables ---------------------------------------------------------------------------

/// A named random variable: a parameter with a prior. In expressions it is its value.
template <fixed_string Name, class Dist, class Shape>
struct random_variable : expr<random_variable<Name, Dist, Shape>> {
  static constexpr auto name = Name;
  using distribution_type = Dist;
  using shape_type = Shape;
  using param_type = typename detail::param_for<Name, Shape>::type;

  Dist distribution;
  param_type parameter;

  random_variable(Dist d, Shape s)
      : distribution(d), parameter(detail::param_for<Name, Shape>::make(s)) {}

  /// The transform from the unconstrained line to the distribution's support.
  auto transform() const { return distribution.transform(); }
  /// The variable's value: transform(parameter), a core expression.
  auto value_expression() const { return transform().constrain(parameter); }
  /// log p(value | arguments), summed over the elements of a vector variable.
  auto log_prior() const { return distribution.log_prob(value_expression()); }
  /// log |d value / d parameter|, summed over the elements.
  auto log_jacobian() const { return transform().log_jacobian(parameter); }
  /// Number of scalar parameters.
  std::size_t size() const {
    if constexpr (std::is_same_v<Shape, scalar_shape>) return 1;
    else return parameter.size();
  }
};

namespace detail {
/// Builds random_variable<Name, Dist, Shape>. With no shape given and a vector argument, the
/// variable takes the argument's shape.
template <fixed_string Name, class Dist, class Shape>
auto make_random_variable(const Dist& d, Shape s) {
  return random_variable<Name, Dist, Shape>(d, s);
}
}  // namespace detail

}  // namespace tyche
// ----- end tyche/model/random_variable.hpp -----

#include <type_traits>

namespace tyche::detail {

inline constexpr double log_two = 0.69314718055994530942;
inline constexpr double log_pi = 1.14472988584940017414;
inline constexpr double half_log_two_pi = 0.91893853320467274178;  // ½ log(2π)

/// Σ over the elements of a vector log density; a scalar one as it is.
template <class E>
auto total(const E& e) {
  if constexpr (is_vector_v<node_t<E>>) return sum(e);
  else return as_node(e);
}

/// The shape a random variable takes from its arguments when none is given: the size of its
/// vector arguments (static if one of them has a static size), or a scalar.
template <class... Nodes>
auto shape_from(const Nodes&... nodes) {
  constexpr bool any_vector = (is_vector_v<Nodes> || ...);
  if constexpr (!any_vector) {
    return scalar_shape{};
  } else {
    constexpr std::size_t e = [] {
      std::size_t found = dynamic_extent;
      ((is_vector_v<Nodes> && extent_v<Nodes> != dynamic_extent ? (found = extent_v<Nodes>, 0) : 0), ...);
      return found;
    }();
    if constexpr (e != dynamic_extent) {
      return static_shape<e>{};
    } else {
      std::size_t n = 0;
      ((is_vector_v<Nodes> ? (n = nodes.size(), 0) : 0), ...);
      return dynamic_shape{n};
    }
  }
}

/// Dist<node_t<Args>...> from user arguments (numbers, expressions, random variables).
template <template <class...> class Dist, class... Args>
auto make_distribution(const Args&... args) {
  return Dist<node_t<Args>...>{{}, as_node(args)...};
}

/// The named random variable Name ~ Dist(args...), of the given shape (or of the arguments').
template <fixed_string Name, template <class...> class Dist, class Shape, class... Args>
auto make_named(Shape shape, const Args&... args) {
  auto d = make_distribution<Dist>(args...);
  if constexpr (std::is_same_v<Shape, scalar_shape>) {
    return make_random_variable<Name>(d, shape_from(as_node(args)...));
  } else {
    return make_random_variable<Name>(d, shape);
  }
}

}  // namespace tyche::detail
// ----- end tyche/distributions/detail/family.hpp -----

#include <cmath>
#include <random>
#include <tuple>

namespace tyche {

template <class Mu, class Sigma>
struct cauchy_distribution : distribution<cauchy_distribution<Mu, Sigma>> {
  static constexpr const char* family = "cauchy";
  Mu mu;
  Sigma sigma;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(-log1p(square((x - mu) / sigma)) - log(sigma) - detail::log_pi);
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
  template <class G>
  static double draw(G& rng, double m, double s) { return std::cauchy_distribution<double>(m, s)(rng); }
};

template <class Sigma>
struct half_cauchy_distribution : distribution<half_cauchy_distribution<Sigma>> {
  static constexpr const char* family = "half_cauchy";
  Sigma sigma;
  auto transform() const { return transforms::lower_bound<literal<0>>{}; }
  template <class X>
  auto log_prob(const X& x) const {
    return detail::total(-log1p(square(x / sigma)) - log(sigma) + (detail::log_two - detail::log_pi));
  }
  auto arguments() const { return std::tuple{sigma}; }
  template <class G>
  static double draw(G& rng, double s) { return std::fabs(std::cauchy_distribution<double>(0.0, s)(rng)); }
  static const char* observation_problem(double v) { return v < 0 ? "is negative (support x ≥ 0)" : nullptr; }
};

template <fixed_string Name, detail::operand Mu, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto cauchy(const Mu& mu, const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, cauchy_distribution>(shape, mu, sigma);
}
template <detail::operand Mu, detail::operand Sigma>
auto cauchy(const Mu& mu, const Sigma& sigma) {
  return detail::make_distribution<cauchy_distribution>(mu, sigma);
}

/// Name ~ half-Cauchy(0, sigma), support (0, ∞), sampled as log Name.
template <fixed_string Name, detail::operand Sigma, shape_tag Shape = scalar_shape>
auto half_cauchy(const Sigma& sigma, Shape shape = {}) {
  return detail::make_named<Name, half_cauchy_distribution>(shape, sigma);
}
template <detail::operand Sigma>
auto half_cauchy(const Sigma& sigma) {
  return detail::make_distribution<half_cauchy_distribution>(sigma);
}

}  // namespace tyche
// ----- end tyche/distributions/cauchy.hpp -----
// ----- begin tyche/distributions/normal.hpp -----
// tyche/distributions/normal.hpp — normal(mu, sigma) and std_normal().
//   log p(x | μ, σ) = −½ ((x − μ)/σ)² − log σ − ½ log 2π,   x ∈ ℝ, σ > 0.

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
  auto arguments() const { return std::tuple{mu, sigma}; }
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
// ----- end tyche/distributions/normal.hpp -----
// ----- end tyche/distributions.hpp -----
// ----- begin tyche/model/joint.hpp -----
// tyche/model/joint.hpp — joint(...): the random variables and likelihood terms of a model,
// and from them its log density (priors, log-Jacobians, likelihoods) as one core expression.

#include <tuple>
#include <type_traits>

namespace tyche {

namespace detail {
template <class T>
struct is_random_variable : std::false_type {};
template <fixed_string Name, class Dist, class Shape>
struct is_random_variable<random_variable<Name, Dist, Shape>> : std::true_type {};
template <class T>
struct is_observed : std::false_type {};
template <class Dist, class X>
struct is_observed<observed<Dist, X>> : std::true_type {};

template <class L, class T>
struct append_if_variable {
  using type = L;
};
template <class... Ls, class T>
  requires is_random_variable<T>::value
struct append_if_variable<meta::list<Ls...>, T> {
  using type = meta::list<Ls..., T>;
};
template <class L, class... Ts>
struct variables_of {
  using type = L;
};
template <class L, class T, class... Ts>
struct variables_of<L, T, Ts...> {
  using type = typename variables_of<typename append_if_variable<L, T>::type, Ts...>::type;
};

template <class L>
struct params_of_variables;
template <class... Vs>
struct params_of_variables<meta::list<Vs...>> {
  using type = meta::list<typename Vs::param_type...>;
};

/// a + b, where a literal 0 on either side is dropped.
template <class A, class B>
auto add_terms(const A& a, const B& b) {
  if constexpr (std::is_same_v<A, literal<0>>) return b;
  else if constexpr (std::is_same_v<B, literal<0>>) return a;
  else return a + b;
}
}  // namespace detail

/// A model's random variables (parameters, in θ order) and likelihood terms.
template <class... Terms>
struct joint_t {
  std::tuple<Terms...> terms;

  /// The random variables, in the order given.
  using variables = typename detail::variables_of<meta::list<>, Terms...>::type;
  /// Their parameters: the layout of θ.
  using layout = typename detail::params_of_variables<variables>::type;

  /// The log density on the unconstrained space: Σ log priors (+ Σ log-Jacobians when
  /// Jacobian) + Σ log-likelihoods.
  template <bool Jacobian>
  auto log_density() const {
    return std::apply([](const auto&... t) { return sum_terms(term<Jacobian>(t)...); }, terms);
  }

 private:
  template <bool Jacobian, class T>
  static auto term(const T& t) {
    if constexpr (detail::is_random_variable<T>::value) {
      if constexpr (Jacobian) return detail::add_terms(detail::as_node(t.log_prior()), detail::as_node(t.log_jacobian()));
      else return detail::as_node(t.log_prior());
    } else {
      return detail::as_node(t.log_density());
    }
  }
  template <class First, class... Rest>
  static auto sum_terms(const First& first, const Rest&... rest) {
    if constexpr (sizeof...(Rest) == 0) return first;
    else return detail::add_terms(first, sum_terms(rest...));
  }
};

/// The joint distribution of random variables and observations: `joint(mu, tau, y_obs)`.
/// Random variables are laid out in θ in the order given.
template <class... Terms>
auto joint(const Terms&... terms) {
  static_assert(sizeof...(Terms) > 0, "tyche::joint(...) requires at least one term");
  static_assert(((detail::is_random_variable<Terms>::value || detail::is_observed<Terms>::value) && ...),
                "tyche::joint(terms...) requires every term to be a named random variable "
                "(normal<\"mu\">(0, 1)) or an observation (normal(mu, 1).observe(data(y)))");
  using J = joint_t<Terms...>;
  static_assert(meta::unique<meta::same, typename J::variables>::size == J::variables::size,
                "tyche::joint(terms...): a random variable is listed twice");
  return J{{terms...}};
}

}  // namespace tyche
// ----- end tyche/model/joint.hpp -----
// ----- begin tyche/model/model.hpp -----
// tyche/model/model.hpp — model(joint): the compiled log density of a joint distribution on the
// unconstrained space, with and without the log-Jacobian, parameter names, constrain /
// unconstrain, Stan-style random initialisation, prior and posterior predictive sampling.

#include <cmath>
#include <cstddef>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

template <class Joint>
class model_t {
 public:
  using joint_type = Joint;
  using layout = typename Joint::layout;
  using variables = typename Joint::variables;

  explicit model_t(const Joint& joint)
      : joint_(joint),
        with_jacobian_(detail::compile_with_layout<layout>(joint.template log_density<true>())),
        without_jacobian_(detail::compile_with_layout<layout>(joint.template log_density<false>())) {}

  /// Number of unconstrained parameters.
  [[nodiscard]] std::size_t dim() const { return with_jacobian_.dim(); }

  /// Names of the coordinates of θ, Stan style: "mu", "theta[1]", "theta[2]", …
  [[nodiscard]] std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    for (const auto& [name, size] : with_jacobian_.parameters()) {
      if (is_vector_param(name)) {
        for (std::size_t i = 1; i <= size; ++i) names.push_back(name + "[" + std::to_string(i) + "]");
      } else {
        names.push_back(name);
      }
    }
    return names;
  }

  /// log p(θ) on the unconstrained space; with jacobian = false, without the log-Jacobian.
  [[nodiscard]] double log_prob(std::span<const double> theta, bool jacobian = true) const {
    return jacobian ? with_jacobian_.value(theta, workspace(theta))
                    : without_jacobian_.value(theta, workspace(theta));
  }
  [[nodiscard]] double log_prob(const std::vector<double>& theta, bool jacobian = true) const {
    return log_prob(std::span<const double>(theta), jacobian);
  }
  /// log p(θ) and its gradient, written to grad.
  double log_prob_and_gradient(std::span<const double> theta, std::span<double> grad,
                               bool jacobian = true) const {
    return jacobian ? with_jacobian_.value_and_gradient(theta, grad, workspace(theta))
                    : without_jacobian_.value_and_gradient(theta, grad, workspace(theta));
  }
  double log_prob_and_gradient(const std::vector<double>& theta, std::vector<double>& grad,
                               bool jacobian = true) const {
    return log_prob_and_gradient(std::span<const double>(theta), std::span<double>(grad), jacobian);
  }

  /// The compiled log density (with the log-Jacobian): evaluate it for any scalar type, with a
  /// caller-owned workspace and no allocation (program::value_and_gradient, program::view()).
  [[nodiscard]] const auto& program() const { return with_jacobian_; }
  [[nodiscard]] const auto& program_without_jacobian() const { return without_jacobian_; }

  /// The constrained values of θ, in layout order (same length as θ for these transforms).
  [[nodiscard]] std::vector<double> constrain(std::span<const double> theta) const {
    check_size(theta.size(), "constrain");
    std::vector<double> out(dim());
    for_each_variable([&](const auto& v, std::size_t k) {
      detail::evaluate_at<layout>(v.value_expression(), layout_(), theta.data(), out.data() + offset(k));
    });
    return out;
  }
  [[nodiscard]] std::vector<double> constrain(const std::vector<double>& theta) const {
    return constrain(std::span<const double>(theta));
  }

  /// θ from constrained values (the inverse of constrain). A value outside its variable's
  /// support throws, naming the variable, the index and the value.
  [[nodiscard]] std::vector<double> unconstrain(std::span<const double> values) const {
    check_size(values.size(), "unconstrain");
    std::vector<double> theta(dim(), 0.0);
    for_each_variable([&](const auto& v, std::size_t k) {
      for (std::size_t i = 0; i < v.size(); ++i)
        theta[offset(k) + i] = unconstrain_one(v, values[offset(k) + i], i, theta);
    });
    return theta;
  }
  [[nodiscard]] std::vector<double> unconstrain(const std::vector<double>& values) const {
    return unconstrain(std::span<const double>(values));
  }

  /// Stan's default initialisation: every coordinate of θ uniform on (−2, 2).
  template <class Generator>
  [[nodiscard]] std::vector<double> initial_point(Generator& rng, double radius = 2.0) const {
    std::uniform_real_distribution<double> u(-radius, radius);
    std::vector<double> theta(dim());
    for (auto& t : theta) t = u(rng);
    return theta;
  }

  /// A draw from the prior: each random variable in order, given the ones before it. Returns
  /// constrained values in layout order.
  template <class Generator>
  [[nodiscard]] std::vector<double> sample_prior(Generator& rng) const {
    std::vector<double> theta(dim(), 0.0), values(dim(), 0.0);
    for_each_variable([&](const auto& v, std::size_t k) {
      const auto draws = draw_from(v.distribution, v.size(), theta, rng);
      for (std::size_t i = 0; i < v.size(); ++i) {
        values[offset(k) + i] = draws[i];
        theta[offset(k) + i] = unconstrain_one(v, draws[i], i, theta);
      }
    });
    return values;
  }

  /// A posterior (or prior) predictive draw of every observation, given θ (unconstrained):
  /// one vector per observed term, in the order of the joint.
  template <class Generator>
  [[nodiscard]] std::vector<std::vector<double>> sample_observations(std::span<const double> theta,
                                                                      Generator& rng) const {
    check_size(theta.size(), "sample_observations");
    std::vector<double> th(theta.begin(), theta.end());
    std::vector<std::vector<double>> out;
    std::apply(
        [&](const auto&... t) {
          (
              [&] {
                if constexpr (detail::is_observed<std::remove_cvref_t<decltype(t)>>::value)
                  out.push_back(draw_from(t.distribution, detail::value_count(t.value), th, rng));
              }(),
              ...);
        },
        joint_.terms);
    return out;
  }

  [[nodiscard]] const Joint& joint() const { return joint_; }

 private:
  const detail::param_offsets<layout>& layout_() const { return with_jacobian_.view().layout; }
  std::size_t offset(std::size_t k) const { return with_jacobian_.offset(k); }

  template <class F>
  void for_each_variable(F&& f) const {
    std::size_t k = 0;
    std::apply(
        [&](const auto&... t) {
          (
              [&] {
                if constexpr (detail::is_random_variable<std::remove_cvref_t<decltype(t)>>::value)
                  f(t, k++);
              }(),
              ...);
        },
        joint_.terms);
  }

  bool is_vector_param(const std::string& name) const {
    bool vec = false;
    meta::static_for<layout::size>([&](auto k) {
      using P = meta::at<decltype(k)::value, layout>;
      if (std::string(P::name.view()) == name) vec = kind_of<P> == node_kind::vector_param;
    });
    return vec;
  }

  std::span<double> workspace(std::span<const double>) const {
    if (workspace_.size() < with_jacobian_.workspace_size())
      workspace_.resize(std::max(with_jacobian_.workspace_size(), without_jacobian_.workspace_size()));
    return workspace_;
  }

  void check_size(std::size_t n, const char* fn) const {
    if (n != dim())
      throw std::invalid_argument(std::string("tyche::model::") + fn + ": got " + std::to_string(n) +
                                  " values, expected " + std::to_string(dim()));
  }

  /// Value of expression e (element i, or its only value) at θ.
  template <class E>
  double value_at(const E& e, std::size_t i, const std::vector<double>& theta) const {
    std::vector<double> v(detail::value_count(e));
    detail::evaluate_at<layout>(e, layout_(), theta.data(), v.data());
    return v.size() == 1 ? v[0] : v[i];
  }

  /// The unconstrained coordinate of element i of variable v with constrained value x, bounds
  /// evaluated at θ (earlier variables already filled in).
  template <class V>
  double unconstrain_one(const V& v, double x, std::size_t i, const std::vector<double>& theta) const {
    const auto tr = v.transform();
    using Tr = decltype(tr);
    bool inside = true;
    double u = x;
    if constexpr (requires { tr.lower; tr.upper; }) {
      const double l = value_at(tr.lower, i, theta), h = value_at(tr.upper, i, theta);
      inside = Tr::contains(x, l, h);
      if (inside) u = Tr::unconstrain(x, l, h);
    } else if constexpr (requires { tr.lower; }) {
      const double l = value_at(tr.lower, i, theta);
      inside = Tr::contains(x, l);
      if (inside) u = Tr::unconstrain(x, l);
    } else if constexpr (requires { tr.upper; }) {
      const double h = value_at(tr.upper, i, theta);
      inside = Tr::contains(x, h);
      if (inside) u = Tr::unconstrain(x, h);
    } else {
      inside = Tr::contains(x);
    }
    if (!inside) {
      std::string where(V::name.view());
      if (v.size() > 1 || kind_of<typename V::param_type> == node_kind::vector_param)
        where += "[" + std::to_string(i + 1) + "]";
      throw std::invalid_argument("tyche::model::unconstrain: " + where + " = " + std::to_string(x) +
                                  " is outside its support (" + Tr::name + ")");
    }
    return u;
  }

  /// n draws from distribution d, its arguments evaluated at θ (elementwise for vectors).
  template <class D, class Generator>
  std::vector<double> draw_from(const D& d, std::size_t n, const std::vector<double>& theta,
                                Generator& rng) const {
    const auto args = std::apply(
        [&](const auto&... a) {
          return std::array<std::vector<double>, sizeof...(a)>{values_of(a, theta)...};
        },
        d.arguments());
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = [&]<std::size_t... J>(std::index_sequence<J...>) {
        return D::draw(rng, (args[J].size() == 1 ? args[J][0] : args[J][i])...);
      }(std::make_index_sequence<std::tuple_size_v<decltype(d.arguments())>>{});
    }
    return out;
  }
  template <class E>
  std::vector<double> values_of(const E& e, const std::vector<double>& theta) const {
    std::vector<double> v(detail::value_count(e));
    detail::evaluate_at<layout>(e, layout_(), theta.data(), v.data());
    return v;
  }

  Joint joint_;
  decltype(detail::compile_with_layout<layout>(std::declval<Joint>().template log_density<true>())) with_jacobian_;
  decltype(detail::compile_with_layout<layout>(std::declval<Joint>().template log_density<false>())) without_jacobian_;
  mutable std::vector<double> workspace_;
};

/// The model of a joint distribution: `auto m = model(joint(mu, tau, ...))`, or of a callable
/// that returns one: `model([&] { ...; return joint(...); })`.
template <class J>
auto model(const J& j) {
  if constexpr (requires { j(); }) return model_t<std::remove_cvref_t<decltype(j())>>(j());
  else return model_t<J>(j);
}

}  // namespace tyche
// ----- end tyche/model/model.hpp -----
// ----- end tyche/tyche.hpp -----
