// tyche/operations/sparse.hpp — sparse data matrices in compressed sparse row (CSR) form and
// their product with a vector expression: `matvec(S, v)` / `S * v`, and Stan's
// `csr_matrix_times_vector(m, n, w, v, u, b)` with Stan's 1-based indices. A design matrix that
// is mostly zeros (indicator columns of many groups, a spatial weights matrix, a basis of local
// splines) costs one multiply-add per non-zero entry per evaluation instead of one per entry.
//
//   sparse_matrix(rows, cols, w, c, u, "S")   a view of CSR arrays, 0-based: the non-zero values
//                                             w, their column indices c (as many as w), the row
//                                             starts u (rows + 1: row r's entries are w[u[r]] …
//                                             w[u[r + 1] − 1]); checked now, named in messages
//   csr_extract(matrix(x, rows, cols))        the CSR arrays of a dense data matrix's non-zero
//                                             entries (a csr_matrix, which owns them)
//   csr_from_triplets(rows, cols, i, j, x)    the same from (row, column, value) triplets,
//                                             0-based, in any order, duplicates summed
//   sparse_matrix(csr)                        a view of a csr_matrix
//
// Like data, the arrays are viewed: they must outlive the model and not change after it is
// built (a temporary is refused at compile time). Column indices in a row need not be sorted;
// repeated ones add. The product is one vector_op (ops::sparse_matvec_map, autodiff/
// matrix_ops.hpp), O(non-zeros) forwards and backwards; the values w are data (Stan also allows
// parameters there; not yet here).
//
// Data checks (std::invalid_argument naming the matrix, the array, the index and the value):
//   u has n values; a R-row matrix needs R + 1 row starts     u[0] = v; row starts begin at 0
//   u[r] = a is less than u[r - 1] = b                        u[R] = v but w has n values
//   c has n values but w has m                                c[k] = j is outside 0 … C − 1
//   w[k] = v; data must be finite                             matvec: S has C columns but v has size n
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/matrix_ops.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tyche {

/// A sparse data matrix: a view of CSR arrays (sparse_matrix(...)), checked when it was made.
/// Base is 0 for tyche's indices, 1 for Stan's (csr_matrix_times_vector).
struct data_sparse_matrix {
  const double* w = nullptr;
  const int* c = nullptr;
  const int* u = nullptr;
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::size_t nonzeros = 0;
  std::size_t base = 0;
  const char* name = nullptr;
};

/// CSR arrays that own their values (csr_extract, csr_from_triplets), 0-based; view them with
/// sparse_matrix(csr).
struct csr_matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<double> w;  // the non-zero values, row by row
  std::vector<int> c;     // their column indices
  std::vector<int> u;     // row starts: rows + 1 values, u[0] = 0, u[rows] = w.size()
};

namespace detail {
/// The checks of the header comment, for base 0 or 1; fn and the matrix's name for messages.
inline data_sparse_matrix checked_sparse(std::size_t rows, std::size_t cols, std::span<const double> w,
                                         std::span<const int> c, std::span<const int> u, std::size_t base,
                                         const char* fn, const char* name, const char* c_name = "c") {
  const std::string who = std::string("tyche::") + fn + ": " + (name != nullptr ? std::string(name) + "'s " : "");
  const long b = static_cast<long>(base);
  if (u.size() != rows + 1)
    throw std::invalid_argument(who + "u has " + std::to_string(u.size()) + " values; a " + std::to_string(rows) +
                                "-row matrix needs rows + 1 = " + std::to_string(rows + 1) + " row starts");
  if (c.size() != w.size())
    throw std::invalid_argument(who + "column indices " + c_name + " have " + std::to_string(c.size()) + " values but w has " +
                                std::to_string(w.size()) + " (one column index per non-zero value)");
  if (u[0] != b)
    throw std::invalid_argument(who + "u[" + std::to_string(base) + "] = " + std::to_string(u[0]) +
                                "; the row starts begin at " + std::to_string(base));
  for (std::size_t r = 1; r <= rows; ++r)
    if (u[r] < u[r - 1])
      throw std::invalid_argument(who + "u[" + std::to_string(r + base) + "] = " + std::to_string(u[r]) +
                                  " is less than u[" + std::to_string(r - 1 + base) + "] = " + std::to_string(u[r - 1]) +
                                  " (row starts must not decrease)");
  if (static_cast<long>(u[rows]) - b != static_cast<long>(w.size()))
    throw std::invalid_argument(who + "u[" + std::to_string(rows + base) + "] = " + std::to_string(u[rows]) +
                                " but w has " + std::to_string(w.size()) + " values (the last row start is " +
                                std::to_string(w.size() + base) + ")");
  for (std::size_t k = 0; k < c.size(); ++k)
    if (static_cast<long>(c[k]) < b || static_cast<long>(c[k]) - b >= static_cast<long>(cols))
      throw std::out_of_range(who + c_name + "[" + std::to_string(k + base) + "] = " + std::to_string(c[k]) +
                              (cols == 0 ? std::string(": the matrix has no columns")
                                         : " is outside " + std::to_string(base) + " … " + std::to_string(cols - 1 + base) +
                                               " (the matrix has " + std::to_string(cols) + " columns)"));
  for (std::size_t k = 0; k < w.size(); ++k)
    if (!std::isfinite(w[k]))
      throw std::invalid_argument(who + "w[" + std::to_string(k + base) + "] = " + format_number(w[k]) +
                                  "; data must be finite");
  return {w.data(), c.data(), u.data(), rows, cols, w.size(), base, name};
}

/// True for a view (a span) or an lvalue that outlives the call; a temporary container would dangle.
template <class R>
inline constexpr bool is_span_v = false;
template <class E, std::size_t N>
inline constexpr bool is_span_v<std::span<E, N>> = true;
template <class R>
inline constexpr bool viewable_v = std::is_lvalue_reference_v<R> || is_span_v<std::remove_cvref_t<R>>;
}  // namespace detail

namespace detail {
/// The arrays as spans, checked (checked_sparse), after one message for arrays of the wrong type
/// or temporaries; `call` names the function, `arrays` its three arrays.
template <class W, class C, class U>
data_sparse_matrix sparse_view(std::size_t rows, std::size_t cols, W&& w, C&& c, U&& u, std::size_t base,
                               const char* call, const char* name, const char* c_name) {
  constexpr bool typed = std::is_convertible_v<W&&, std::span<const double>> &&
                         std::is_convertible_v<C&&, std::span<const int>> && std::is_convertible_v<U&&, std::span<const int>>;
  static_assert(typed,
                "tyche::sparse_matrix(rows, cols, w, c, u) / csr_matrix_times_vector(m, n, w, v, u, b): the "
                "values w must be doubles, the column indices and row starts (c and u; Stan's v and u) ints: "
                "a std::vector<double>, std::vector<int> or std::span; convert others once, beside the data");
  static_assert(!typed || (viewable_v<W&&> && viewable_v<C&&> && viewable_v<U&&>),
                "tyche::sparse_matrix(rows, cols, w, c, u) / csr_matrix_times_vector(m, n, w, v, u, b): an array "
                "is a temporary, and the model keeps a view of it, which would dangle: keep the arrays in "
                "variables that outlive the model");
  if constexpr (!typed) return {};
  else
    return checked_sparse(rows, cols, std::span<const double>(w), std::span<const int>(c), std::span<const int>(u),
                          base, call, name, c_name);
}
}  // namespace detail

/// A view of CSR arrays, 0-based (see the header comment); w convertible to
/// std::span<const double>, c and u to std::span<const int> (std::vector, std::array, spans).
template <class W, class C, class U>
data_sparse_matrix sparse_matrix(std::size_t rows, std::size_t cols, W&& w, C&& c, U&& u, const char* name = nullptr) {
  return detail::sparse_view(rows, cols, std::forward<W>(w), std::forward<C>(c), std::forward<U>(u), 0,
                             "sparse_matrix(rows, cols, w, c, u)", name, "c");
}
/// A view of a csr_matrix (which must outlive the model).
inline data_sparse_matrix sparse_matrix(const csr_matrix& s, const char* name = nullptr) {
  return detail::checked_sparse(s.rows, s.cols, s.w, s.c, s.u, 0, "sparse_matrix(csr)", name);
}
/// A temporary csr_matrix would dangle: one message that says so.
template <class S>
  requires std::is_same_v<std::remove_const_t<S>, csr_matrix>  // an rvalue (S not a reference), const or not
data_sparse_matrix sparse_matrix(S&& s, const char* name = nullptr) {
  static_assert(sizeof(S) == 0,
                "tyche::sparse_matrix(csr): csr is a temporary (csr_extract(...) or csr_from_triplets(...) "
                "passed directly), and the model keeps a view of it, which would dangle: keep it in a variable "
                "that outlives the model, e.g. const tyche::csr_matrix S = tyche::csr_extract(...);");
  return sparse_matrix(static_cast<const csr_matrix&>(s), name);
}

/// The non-zero entries of a dense data matrix, in CSR form (Stan's csr_extract, 0-based).
inline csr_matrix csr_extract(const data_matrix& x) {
  csr_matrix s{x.rows, x.cols, {}, {}, {}};
  s.u.reserve(x.rows + 1);
  s.u.push_back(0);
  for (std::size_t r = 0; r < x.rows; ++r) {
    for (std::size_t j = 0; j < x.cols; ++j) {
      const double v = x.ptr[r * x.cols + j];
      if (!std::isfinite(v))
        throw std::invalid_argument("tyche::csr_extract(X): " + std::string(x.name ? x.name : "X") + "[" +
                                    std::to_string(r + 1) + ", " + std::to_string(j + 1) + "] = " + detail::format_number(v) +
                                    "; data must be finite");
      if (v != 0.0) {
        s.w.push_back(v);
        s.c.push_back(static_cast<int>(j));
      }
    }
    s.u.push_back(static_cast<int>(s.w.size()));
  }
  return s;
}

/// CSR arrays from (row i[k], column j[k], value x[k]) triplets, 0-based, in any order;
/// entries at the same place are summed (as Eigen's setFromTriplets and scipy's coo → csr).
inline csr_matrix csr_from_triplets(std::size_t rows, std::size_t cols, std::span<const int> i,
                                    std::span<const int> j, std::span<const double> x) {
  const char* fn = "tyche::csr_from_triplets(rows, cols, i, j, x): ";
  if (i.size() != x.size() || j.size() != x.size())
    throw std::invalid_argument(std::string(fn) + "i, j and x have " + std::to_string(i.size()) + ", " +
                                std::to_string(j.size()) + " and " + std::to_string(x.size()) +
                                " values (one row, column and value per entry)");
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (i[k] < 0 || static_cast<std::size_t>(i[k]) >= rows)
      throw std::out_of_range(std::string(fn) + "i[" + std::to_string(k) + "] = " + std::to_string(i[k]) +
                              " is outside 0 … " + std::to_string(rows) + " - 1");
    if (j[k] < 0 || static_cast<std::size_t>(j[k]) >= cols)
      throw std::out_of_range(std::string(fn) + "j[" + std::to_string(k) + "] = " + std::to_string(j[k]) +
                              " is outside 0 … " + std::to_string(cols) + " - 1");
    if (!std::isfinite(x[k]))
      throw std::invalid_argument(std::string(fn) + "x[" + std::to_string(k) + "] = " + detail::format_number(x[k]) +
                                  "; data must be finite");
  }
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return i[a] != i[b] ? i[a] < i[b] : j[a] < j[b];
  });
  csr_matrix s{rows, cols, {}, {}, std::vector<int>(rows + 1, 0)};
  for (std::size_t n = 0; n < order.size(); ++n) {
    const std::size_t k = order[n];
    if (n > 0 && i[order[n - 1]] == i[k] && j[order[n - 1]] == j[k]) {
      s.w.back() += x[k];
      continue;
    }
    s.w.push_back(x[k]);
    s.c.push_back(j[k]);
    ++s.u[static_cast<std::size_t>(i[k]) + 1];
  }
  for (std::size_t r = 0; r < rows; ++r) s.u[r + 1] += s.u[r];
  return s;
}

/// S v: a sparse data matrix times a vector expression of S.cols values (ops::sparse_matvec_map).
template <expression V>
auto matvec(const data_sparse_matrix& s, const V& v) {
  using N = detail::node_t<V>;
  static_assert(is_vector_v<N>, "tyche::matvec(S, v) requires 'v' to be a vector expression");
  const N node = detail::as_node(v);
  if (s.cols != node.size())
    throw std::invalid_argument("tyche::matvec(S, v): " + std::string(s.name ? s.name : "S") + " has " +
                                std::to_string(s.cols) + " columns but v has size " + std::to_string(node.size()));
  return make_vector_op(ops::sparse_matvec_map{s.w, s.c, s.u, s.rows, s.nonzeros, s.base}, s.rows, node);
}
template <expression V>
auto operator*(const data_sparse_matrix& s, const V& v) {
  return matvec(s, v);
}

/// Stan's csr_matrix_times_vector(m, n, w, v, u, b): the m × n sparse matrix of non-zero values
/// w, column indices v and row starts u, all 1-based as in Stan (u has m + 1 values, u[1] = 1),
/// times the vector expression b of n values. The arrays are viewed and checked as
/// sparse_matrix's (they must outlive the model).
template <class W, class C, class U, expression B>
auto csr_matrix_times_vector(std::size_t m, std::size_t n, W&& w, C&& v, U&& u, const B& b) {
  const data_sparse_matrix s = detail::sparse_view(m, n, std::forward<W>(w), std::forward<C>(v), std::forward<U>(u), 1,
                                                   "csr_matrix_times_vector(m, n, w, v, u, b)", nullptr, "v");
  using N = detail::node_t<B>;
  static_assert(is_vector_v<N>, "tyche::csr_matrix_times_vector(m, n, w, v, u, b): b must be a vector expression");
  const N node = detail::as_node(b);
  if (n != node.size())
    throw std::invalid_argument("tyche::csr_matrix_times_vector(m, n, w, v, u, b): n = " + std::to_string(n) +
                                " columns but b has size " + std::to_string(node.size()));
  return make_vector_op(ops::sparse_matvec_map{s.w, s.c, s.u, s.rows, s.nonzeros, s.base}, s.rows, node);
}

}  // namespace tyche
