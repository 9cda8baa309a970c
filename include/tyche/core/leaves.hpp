// tyche/core/leaves.hpp — the leaves of an expression: literal and run-time constants,
// parameters (scalar and vector, by name) and views of data.
#pragma once
#include <tyche/config.hpp>
#include <tyche/core/expr.hpp>

#include <array>
#include <cmath>
#include <concepts>
#include <iterator>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
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
  static constexpr bool reads_data_buffers = false;  // compile/relocate.hpp
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

namespace detail {
/// The size of a vector parameter: a constant, or a run-time value (dynamic_extent).
template <std::size_t Extent>
struct vector_param_size {
  TYCHE_HD constexpr std::size_t size() const { return Extent; }
};
template <>
struct vector_param_size<dynamic_extent> {
  std::size_t n = 0;
  TYCHE_HD constexpr explicit vector_param_size(std::size_t size) : n(size) {}
  TYCHE_HD constexpr std::size_t size() const { return n; }
};

/// A name spelled as characters: both compilers print a char template argument as a character
/// ('s', 'i', 'g', 'm', 'a'), where a fixed_string argument is printed as packed numbers.
template <char... C>
struct random_variable_named {};
template <auto Name, class I = std::make_index_sequence<Name.size()>>
struct spelled_name;
template <auto Name, std::size_t... I>
struct spelled_name<Name, std::index_sequence<I...>> {
  using type = random_variable_named<Name[I]...>;
};

/// Instantiated for a parameter that a model's density uses but no random variable of its joint
/// declares (Missing spells its name): by joint(...)'s check, and by an evaluation that meets the
/// parameter (compile/evaluate.hpp) — one instantiation, so one error, however many evaluations
/// the model compiles.
template <class Missing>
constexpr bool variable_missing_from_joint() {
  static_assert(sizeof(Missing) == 0,
                "tyche::joint(terms...): a random variable is used in the model but not listed in "
                "joint(...): add it to joint(...). Its name is spelled out, a character at a time, in "
                "random_variable_named<...> (Missing) of this diagnostic");
  return false;
}
}  // namespace detail

/// A vector parameter of compile-time size Extent, or of run-time size when Extent is
/// dynamic_extent (then the size is given on construction). One template, no partial
/// specialisation on Extent: nvcc's front end does not deduce a `fixed_string Name` in a partial
/// specialisation, so the size lives in a base chosen by Extent alone.
template <fixed_string Name, std::size_t Extent = dynamic_extent>
struct vector_param : expr<vector_param<Name, Extent>>, detail::vector_param_size<Extent> {
  using detail::vector_param_size<Extent>::vector_param_size;
  static constexpr node_kind kind = node_kind::vector_param;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = Extent;
  static constexpr bool has_payload = false;  // identity is the name; a run-time size is checked
  static constexpr auto name = Name;
  using children = meta::list<>;
};

/// Element k (0-based) of vector parameter V: a scalar. Made by at(v, k) or v[k].
template <class V>
struct param_element : expr<param_element<V>> {
  static constexpr node_kind kind = node_kind::param_element;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = 1;
  static constexpr bool has_payload = true;  // the index
  static constexpr bool reads_data_buffers = false;
  using children = meta::list<>;
  using vector_type = V;
  static constexpr auto name = V::name;
  V vector;
  std::size_t index = 0;
};

/// v[idx[i] − Shift], i = 0 … n−1, for a vector parameter V and n data indices (0-based for
/// Shift = 0; categorical observations are 1-based doubles, Index = double, Shift = 1), checked
/// against V's size when made: a vector leaf read straight from θ, so the gather is fused into
/// the loop that consumes it (y ~ normal(alpha[group], sigma)). Made by gather(v, idx). The
/// index storage must outlive the model, as data does.
template <class V, class Index = int, std::size_t Shift = 0>
struct param_gather : expr<param_gather<V, Index, Shift>> {
  static constexpr node_kind kind = node_kind::param_gather;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = true;  // the indices
  static constexpr bool reads_data_buffers = true;
  using children = meta::list<>;
  using vector_type = V;
  static constexpr auto name = V::name;
  static constexpr std::size_t shift = Shift;
  V vector;
  const Index* index = nullptr;
  std::size_t n = 0;
  const char* index_name = nullptr;  // gather(v, idx, "name"): for messages
  TYCHE_HD constexpr std::size_t size() const { return n; }
  /// f(index, n) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(F&& f) {
    if (index != nullptr) f(index, n);
  }
  /// The position in V of element i.
  TYCHE_HD constexpr std::size_t position(std::size_t i) const {
    return static_cast<std::size_t>(index[i]) - Shift;
  }
};

/// A view of a vector of data (double). The storage must outlive the model, as with std::span,
/// and must not change after compile(): compile() reads data to fold what depends on data only
/// (e.g. 1/σ for a division by data), so a changed value would be half seen. Compile again
/// after changing data.
template <std::size_t Extent = dynamic_extent>
struct data_vector : expr<data_vector<Extent>> {
  static constexpr node_kind kind = node_kind::data_vector;
  static constexpr bool is_vector = true;
  static constexpr std::size_t extent = Extent;
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  using children = meta::list<>;
  const double* ptr = nullptr;
  std::size_t n = 0;
  const char* name = nullptr;  // for messages: data(y, "y"); not part of the value
  TYCHE_HD constexpr std::size_t size() const { return Extent == dynamic_extent ? n : Extent; }
  /// f(ptr, size()) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(F&& f) {
    if (ptr != nullptr) f(ptr, size());
  }
  TYCHE_HD constexpr double operator[](std::size_t i) const { return ptr[i]; }
};

/// A view of a row-major matrix of data (values of type E: double, or float to halve the memory
/// a matrix takes and the bandwidth a pass over it needs; evaluation converts each value to the
/// scalar type, accumulating in double for double chains); it appears only as the left operand
/// of matvec.
template <class E>
struct basic_data_matrix : expr<basic_data_matrix<E>> {
  static_assert(std::is_same_v<E, double> || std::is_same_v<E, float>,
                "tyche::matrix: the values of a data matrix are double or float");
  static constexpr node_kind kind = node_kind::data_matrix;
  static constexpr bool is_vector = false;
  static constexpr std::size_t extent = dynamic_extent;
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  using children = meta::list<>;
  using value_type = E;
  const E* ptr = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  const char* name = nullptr;  // for messages: matrix(x, rows, cols, "X"); not part of the value
  /// f(ptr, rows · cols) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(F&& f) {
    if (ptr != nullptr) f(ptr, rows * cols);
  }
};
/// A matrix of doubles: what matrix(…) of doubles returns, and what every operation that takes
/// a data matrix (multi_normal's covariance, wishart's scale, …) takes.
using data_matrix = basic_data_matrix<double>;
/// A matrix of floats: matrix(const float*, …), for matvec(X, v) (and the GLM likelihoods).
using data_matrix_f = basic_data_matrix<float>;

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

  /// The same view, with a name that error messages use: `data(y, "y")` (a string literal, or
  /// storage that outlives the model).
  template <contiguous_doubles Container>
  auto operator()(const Container& c, const char* name) const {
    auto v = (*this)(c);
    v.name = name;
    return v;
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
    requires(!std::is_lvalue_reference_v<Container> && !std::is_arithmetic_v<Container> &&
             !std::ranges::enable_borrowed_range<std::remove_cvref_t<Container>>)  // a temporary std::span is fine
                                                                                 // (<span> declares the trait)
  data_vector<> operator()(Container&&, const char* = nullptr) const {
    static_assert(sizeof(Container) == 0,
                  "tyche::data(x) keeps a view of 'x', not a copy: pass a named container that "
                  "outlives the model, not a temporary");
    return {};  // a node, so that the expression around the call raises no further errors
  }

  /// Refused, with a message: storage of integers or floats (counts, 0/1 outcomes, categories
  /// in a std::vector<int>) cannot be viewed as doubles in place.
  template <class Container>
    requires(!contiguous_doubles<Container> && !xtensor_like<Container> &&
             requires(const Container& c) {
               std::size(c);
               requires std::is_arithmetic_v<std::remove_cvref_t<decltype(*std::data(c))>>;
             })
  data_vector<> operator()(const Container&, const char* = nullptr) const {
    static_assert(sizeof(Container) == 0,
                  "tyche::data(y) views doubles in place, and y holds integers or floats: keep a copy "
                  "as doubles beside the model, e.g. std::vector<double> yd(y.begin(), y.end()), and "
                  "pass data(yd) (indices for gather(v, idx) stay std::vector<int>)");
    return {};  // a node, so that the expression around the call raises no further errors
  }

  /// A view of n doubles starting at ptr (host or, for device evaluation, device memory).
  data_vector<> operator()(const double* ptr, std::size_t n) const { return {{}, ptr, n}; }
};
}  // namespace detail

inline constexpr detail::data_fn data{};

namespace detail {
/// Throws std::invalid_argument naming the call, the matrix (its name, or `arg`) and the first
/// entry that is NaN or infinite: for ops that hold a data matrix themselves rather than as a
/// leaf of the expression (which joint(...) checks).
template <class E>
void check_matrix_finite(const basic_data_matrix<E>& x, const char* call, const char* arg) {
  for (std::size_t i = 0; i < x.rows * x.cols; ++i)
    if (!std::isfinite(x.ptr[i]))
      throw std::invalid_argument(std::string("tyche::") + call + ": " + (x.name ? x.name : arg) + "[" +
                                  std::to_string(i / x.cols + 1) + ", " + std::to_string(i % x.cols + 1) +
                                  "] = " + std::to_string(x.ptr[i]) + "; data must be finite");
}
}  // namespace detail

/// A view of a row-major rows × cols matrix starting at ptr.
inline data_matrix matrix(const double* ptr, std::size_t rows, std::size_t cols, const char* name = nullptr) {
  return {{}, ptr, rows, cols, name};
}
/// The same of floats (data_matrix_f): half the memory and half the bytes per pass over it,
/// each value converted exactly to double (or to the scalar type) as it is read. Only as X in
/// matvec(X, v) of a vector parameter v.
inline data_matrix_f matrix(const float* ptr, std::size_t rows, std::size_t cols, const char* name = nullptr) {
  return {{}, ptr, rows, cols, name};
}

/// A view of a contiguous range of doubles or floats (std::vector, std::array, std::span)
/// holding a row-major rows × cols matrix: a data_matrix, or a data_matrix_f for floats; its
/// size must be rows · cols. A name, if given, is what error messages call it: `matrix(x, n, k, "X")`.
template <class R>
  requires(!std::is_pointer_v<R> && requires(const R& r) {
    std::size(r);
    requires std::convertible_to<decltype(std::data(r)), const double*> ||
                 std::same_as<decltype(std::data(r)), const float*>;
  })
auto matrix(const R& r, std::size_t rows, std::size_t cols, const char* name = nullptr) {
  using E = std::conditional_t<std::same_as<decltype(std::data(r)), const float*>, float, double>;
  if (std::size(r) != rows * cols)
    throw std::invalid_argument(
        "tyche::matrix(values, " + std::to_string(rows) + ", " + std::to_string(cols) +
        (name != nullptr ? ", \"" + std::string(name) + "\"): " + std::string(name) : std::string("): values")) +
        " has " + std::to_string(std::size(r)) + " elements, not " + std::to_string(rows * cols));
  return basic_data_matrix<E>{{}, std::data(r), rows, cols, name};
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
