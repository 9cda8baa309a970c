// tyche/operations/constructors.hpp — Stan's matrix and vector constructors on tyche's matrices
// (vectors of their entries, row major): identity_matrix, rep_matrix, append_col, to_matrix,
// linspaced_vector, one_hot_vector, zeros_vector, ones_vector, uniform_simplex (and the
// row-vector and array spellings of the last five, which are the same vectors here). Each is a
// vector_op node (ops in autodiff/vector_ops.hpp) or a composition of existing ones; of
// constants and data alone, it is computed once when the model is made (compile/fold.hpp).
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/operations/matrices.hpp>
#include <tyche/operations/vectors.hpp>
#include <tyche/scalar/format.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tyche {

namespace detail {
/// Throws unless n ≥ 1 (a size argument of a constructor).
inline void check_constructor_size(std::size_t n, const char* fn, const char* arg) {
  if (n == 0) throw std::invalid_argument(std::string("tyche::") + fn + ": " + arg + " must be >= 1");
}
/// A block of append_col: a data matrix of `rows` rows or a vector expression of rows · K values.
template <class M>
auto column_block(const M& m, std::size_t rows, const char* arg) {
  using N = node_t<M>;
  if constexpr (is_data_matrix_v<N>) {
    const N n = as_node(m);
    check_matrix_finite(n, "append_col(A, B, R)", arg);
    if (n.rows != rows)
      throw std::invalid_argument(std::string("tyche::append_col(A, B, R): '") + arg + "' is " +
                                  std::to_string(n.rows) + " x " + std::to_string(n.cols) + " but R = " +
                                  std::to_string(rows));
    return data_vector<>{{}, n.ptr, n.rows * n.cols};
  } else {
    static_assert(is_vector_v<N>, "tyche::append_col(A, B, R): A and B must be data matrices or vector expressions "
                                  "(R rows of entries, row major; a vector of R values is one column); to put a "
                                  "scalar before or after a row, use append_row");
    const N n = as_node(m);
    if (n.size() % rows != 0)
      throw std::invalid_argument(std::string("tyche::append_col(A, B, R): '") + arg + "' has " +
                                  std::to_string(n.size()) + " values, which is not R = " + std::to_string(rows) +
                                  " rows of equal length");
    return n;
  }
}
}  // namespace detail

/// The K × K identity matrix, its K² entries: Stan's identity_matrix(K).
inline auto identity_matrix(std::size_t k) {
  detail::check_constructor_size(k, "identity_matrix(K)", "K");
  return diag_matrix(rep_vector(1.0, k));
}

/// The R × C matrix with the scalar x in every entry: Stan's rep_matrix(x, R, C).
template <detail::operand X>
auto rep_matrix(const X& x, std::size_t rows, std::size_t cols) {
  static_assert(!is_vector_v<detail::node_t<X>>,
                "tyche::rep_matrix(x, R, C) repeats a scalar x; to repeat a vector v as the C columns of a "
                "matrix, use rep_matrix(v, C)");
  detail::check_constructor_size(rows, "rep_matrix(x, R, C)", "R");
  detail::check_constructor_size(cols, "rep_matrix(x, R, C)", "C");
  return rep_vector(x, rows * cols);
}

/// The R × C matrix whose every column is the vector v of R values: Stan's rep_matrix(vector v,
/// C). (Stan's rep_matrix(row_vector rv, R), R rows each rv, is transpose(rep_matrix(rv, R), C)
/// for rv of C values: tyche's vectors are columns.)
template <expression V>
auto rep_matrix(const V& v, std::size_t cols) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::rep_matrix(v, C) repeats a vector v as the columns of a matrix; to fill a "
                                "matrix with a scalar x, use rep_matrix(x, R, C)");
  detail::check_constructor_size(cols, "rep_matrix(v, C)", "C");
  const N n = detail::as_node(v);
  return make_vector_op(ops::rep_columns_map{cols}, n.size() * cols, n);
}

/// [A B]: the R × (K₁ + K₂) matrix of the columns of A (R × K₁) then those of B (R × K₂): Stan's
/// append_col. Each is a data matrix or a vector expression of R rows of entries (a vector of R
/// values is one column: append_col(a, b, N) of two vectors is the N × 2 matrix of them).
template <expression A, expression B>
auto append_col(const A& a, const B& b, std::size_t rows) {
  detail::check_constructor_size(rows, "append_col(A, B, R)", "R");
  const auto na = detail::column_block(a, rows, "A");
  const auto nb = detail::column_block(b, rows, "B");
  return make_vector_op(ops::append_col_map{rows}, na.size() + nb.size(), na, nb);
}
/// append_col(A, B) where A or B is a data matrix, whose rows give R.
template <expression A, expression B>
auto append_col(const A& a, const B& b) {
  if constexpr (detail::is_data_matrix_v<detail::node_t<A>>) {
    return append_col(a, b, detail::as_node(a).rows);
  } else if constexpr (detail::is_data_matrix_v<detail::node_t<B>>) {
    return append_col(a, b, detail::as_node(b).rows);
  } else {
    static_assert(sizeof(A) == 0,
                  "tyche::append_col(A, B): tyche's matrix expressions are vectors of their entries, whose number "
                  "of rows their size does not tell: give it, append_col(A, B, R) (two vectors of N values as "
                  "columns: append_col(a, b, N))");
    return append_col(a, b, 1);  // the same type as a valid call: no second error
  }
}

namespace detail {
inline void check_to_matrix(std::size_t size, std::size_t m, std::size_t n, const char* fn) {
  check_constructor_size(m, fn, "m");
  check_constructor_size(n, fn, "n");
  if (size != m * n)
    throw std::invalid_argument(std::string("tyche::") + fn + ": 'v' has " + std::to_string(size) +
                                " values but m * n = " + std::to_string(m * n));
}
}  // namespace detail

/// The m × n matrix whose entries, column after column, are the m·n values of v (Stan's
/// to_matrix(v, m, n): column major), as its m·n entries row major (vᵀ of v read as n × m). A
/// data matrix X is reshaped as Stan's to_matrix(matrix, m, n) does: its values column after
/// column, into m × n column after column.
template <expression V>
auto to_matrix(const V& v, std::size_t m, std::size_t n) {
  if constexpr (detail::is_data_matrix_v<detail::node_t<V>>) {
    // A data matrix's values in Stan's order, column after column: its transpose's entries.
    const auto& x = detail::as_node(v);
    detail::check_to_matrix(x.rows * x.cols, m, n, "to_matrix(v, m, n)");
    return to_matrix(transpose(v, x.rows), m, n);
  } else {
    detail::check_to_matrix(detail::operand_size(v), m, n, "to_matrix(v, m, n)");
    return transpose(v, n);
  }
}
/// to_matrix(v, m, n, col_major): column major as above when col_major is non-zero, row major
/// (v's values in order: the entries are v) when it is 0 — Stan's to_matrix(v, m, n, 0).
template <expression V>
auto to_matrix(const V& v, std::size_t m, std::size_t n, int col_major) {
  static_assert(!detail::is_data_matrix_v<detail::node_t<V>>,
                "tyche::to_matrix(v, m, n, col_major) takes a vector (Stan's array form); a data matrix is "
                "reshaped column major by to_matrix(X, m, n)");
  detail::check_to_matrix(detail::operand_size(v), m, n, "to_matrix(v, m, n, col_major)");
  return transpose(v, col_major == 0 ? 1 : n);  // a 1 × mn row's transpose: v's values, in one type
}

/// n values equally spaced from lo to hi, both included (n = 1: hi): Stan's linspaced_vector.
/// Numbers lo ≤ hi, both finite, as Stan's data reals; scalar expressions too (the gradient
/// flows to both ends).
template <detail::operand L, detail::operand H>
auto linspaced_vector(std::size_t n, const L& lo, const H& hi) {
  static_assert(!is_vector_v<detail::node_t<L>> && !is_vector_v<detail::node_t<H>>,
                "tyche::linspaced_vector(n, lower, upper): lower and upper must be scalars");
  detail::check_constructor_size(n, "linspaced_vector(n, lower, upper)", "n");
  if constexpr (std::is_arithmetic_v<L> && std::is_arithmetic_v<H>) {
    const double l = static_cast<double>(lo), h = static_cast<double>(hi);
    if (!std::isfinite(l) || !std::isfinite(h) || h < l)
      throw std::invalid_argument("tyche::linspaced_vector(n, lower, upper): lower = " + detail::format_number(l) +
                                  " and upper = " + detail::format_number(h) + " must be finite with lower <= upper");
  }
  return make_vector_op(ops::linspaced_map{}, n, detail::as_node(lo), detail::as_node(hi));
}
template <detail::operand L, detail::operand H>
auto linspaced_row_vector(std::size_t n, const L& lo, const H& hi) {
  return linspaced_vector(n, lo, hi);
}
template <detail::operand L, detail::operand H>
auto linspaced_array(std::size_t n, const L& lo, const H& hi) {
  return linspaced_vector(n, lo, hi);
}

/// n values, 1 at position k (1-based, as Stan's) and 0 elsewhere: Stan's one_hot_vector.
inline auto one_hot_vector(std::size_t n, std::size_t k) {
  detail::check_constructor_size(n, "one_hot_vector(n, k)", "n");
  if (k < 1 || k > n)
    throw std::invalid_argument("tyche::one_hot_vector(n, k): k = " + std::to_string(k) + " is outside 1 … " +
                                std::to_string(n) + " (k counts from 1, as Stan's)");
  return make_vector_op(ops::one_hot_map{k - 1}, n, detail::as_node(1.0));
}
inline auto one_hot_row_vector(std::size_t n, std::size_t k) { return one_hot_vector(n, k); }
inline auto one_hot_array(std::size_t n, std::size_t k) { return one_hot_vector(n, k); }

/// n zeros, n ones, and n values 1/n: Stan's zeros_vector, ones_vector, uniform_simplex.
inline auto zeros_vector(std::size_t n) {
  detail::check_constructor_size(n, "zeros_vector(n)", "n");
  return rep_vector(0.0, n);
}
inline auto ones_vector(std::size_t n) {
  detail::check_constructor_size(n, "ones_vector(n)", "n");
  return rep_vector(1.0, n);
}
inline auto uniform_simplex(std::size_t n) {
  detail::check_constructor_size(n, "uniform_simplex(n)", "n");
  return rep_vector(1.0 / static_cast<double>(n), n);
}
inline auto zeros_row_vector(std::size_t n) { return zeros_vector(n); }
inline auto zeros_array(std::size_t n) { return zeros_vector(n); }
inline auto ones_row_vector(std::size_t n) { return ones_vector(n); }
inline auto ones_array(std::size_t n) { return ones_vector(n); }

}  // namespace tyche
