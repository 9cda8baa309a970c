// tyche/compile/relocate.hpp — for_each_data_buffer(view, f): visits every pointer to data in
// the expression tree of a program_view, with the number of values read through it, so that a
// backend can copy those values elsewhere (a CUDA device) and re-point the view at the copies.
//
// What a tree reads through pointers: the user's data (data_vector, data_matrix, the indices of
// a gather, ordinal categories, a scan's or tabulate's sequences, ...), what compile() put in
// the program's fold storage (folded vectors, sufficient statistics) and what an op computed and
// owns (multi_normal's Cholesky factor of a data covariance). A pointer is a payload (two nodes
// of one type with different pointers are different values), so only a type with has_payload =
// true may hold one. The rule, checked by static_assert for every node, rule and op of each tree
// this function visits:
//
//   every node type, unary/binary rule and vector_op op with has_payload = true declares
//   `static constexpr bool reads_data_buffers`: true when it holds pointers to data, and then it
//   has a member
//     nodes and rules:  template <class F> void for_each_data_buffer(F&& f);
//     ops:              template <class F> void for_each_data_buffer(std::size_t m, F&& f);
//                       (m: the vector_op node's number of values)
//   that calls f(ptr, count) once for each such member that is not null (ptr the member itself,
//   `const T*&`; count the number of T the evaluation reads from it).
//
// So a new type with a payload does not compile here until it says whether it reads data, and
// one that says true without the member does not either (tests/compile_fail/relocate_*.cpp).
// Not caught: a pointer added to a type that already declares reads_data_buffers = false, or a
// wrong count (tests/compile/relocate_test.cpp checks the counts of every type below). The
// types without a payload (param, vector_param, sum, log_sum_exp, most rules and ops) hold no
// pointer by that rule.
//
// Covered (count in T): data_vector (size), data_matrix (rows·cols), param_gather (n indices,
// of its Index type), residual_squares_node (3 + 2k + k² statistics); ops gather_map (n
// indices), lower_triangular_solve_map (k²), data_matvec_map and rows_dot_product_map (rows·cols),
// sparse_matvec_map (non-zeros values, non-zeros column indices, rows + 1 row starts),
// gp_exp_quad_cov_map, gp_dot_prod_cov_map and gp_cov_map (n points · d),
// ordinal_map (m categories), car_view (2E + 2K graph values) and icar_view (2E), scan_map (steps per sequence), tabulate_map (m per sequence) and
// ode_map (n output times; an algebraic equation's none), these three followed by the buffers
// of the step's, element's or right-hand side's own program_view.
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/graph.hpp>
#include <tyche/compile/program.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/meta.hpp>

#include <cstddef>
#include <type_traits>

namespace tyche {

namespace detail {

/// What the checks below call a hook with.
struct data_buffer_probe {
  template <class T>
  void operator()(const T*&, std::size_t) const {}
};

/// X (a node, rule or op) has a payload but does not say whether it holds pointers to data.
template <class X>
inline constexpr bool data_buffers_undeclared_v = X::has_payload && !requires { X::reads_data_buffers; };

/// X holds pointers to data (as it declares).
template <class X>
inline constexpr bool reads_data_buffers_v = [] {
  if constexpr (!X::has_payload || data_buffers_undeclared_v<X>) return false;
  else return bool(X::reads_data_buffers);
}();

/// X has the member that visits them: for_each_data_buffer(f), or for an op (m, f).
template <class X, bool Op>
inline constexpr bool has_data_buffer_hook_v = [] {
  if constexpr (Op) return requires(X& x, data_buffer_probe& p) { x.for_each_data_buffer(std::size_t{}, p); };
  else return requires(X& x, data_buffer_probe& p) { x.for_each_data_buffer(p); };
}();

/// The rule of the header comment for X, then f on X's pointers (m: the node's size, for an op).
template <class X, bool Op, class F>
void visit_data_buffers(X& x, [[maybe_unused]] std::size_t m, [[maybe_unused]] F& f) {
  static_assert(!data_buffers_undeclared_v<X>,
                "tyche::for_each_data_buffer: a node, rule or vector_op op with a payload (has_payload = "
                "true) must declare `static constexpr bool reads_data_buffers`, true when it holds "
                "pointers to data (see compile/relocate.hpp)");
  static_assert(!X::has_payload || data_buffers_undeclared_v<X> ||
                    reads_data_buffers_v<X> == has_data_buffer_hook_v<X, Op>,
                "tyche::for_each_data_buffer: reads_data_buffers = true needs a member "
                "for_each_data_buffer(f) (an op's: for_each_data_buffer(m, f)) that calls f on each "
                "pointer to data; reads_data_buffers = false goes without one (see compile/relocate.hpp)");
  if constexpr (reads_data_buffers_v<X> && has_data_buffer_hook_v<X, Op>) {
    if constexpr (Op) x.for_each_data_buffer(m, f);
    else x.for_each_data_buffer(f);
  }
}

/// The walk: n's own pointers (or its rule's or op's), then its children's.
template <class N, class F>
void for_each_data_buffer_in(N& n, F& f) {
  if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary)
    visit_data_buffers<typename N::rule_type, false>(n.rule, 0, f);
  else if constexpr (kind_of<N> == node_kind::vector_op)
    visit_data_buffers<typename N::op_type, true>(n.op, n.size(), f);
  else
    visit_data_buffers<N, false>(n, 0, f);
  if constexpr (children_t<N>::size > 0) {
    meta::static_for<children_t<N>::size>([&](auto i) {
      // child<i>() is a const accessor, but the child is a member of n, which is not const (the
      // caller's view): casting the constness away writes to a non-const object.
      auto& c = const_cast<std::remove_cvref_t<decltype(n.template child<i>())>&>(n.template child<i>());
      for_each_data_buffer_in(c, f);
    });
  }
}

}  // namespace detail

/// Calls f(ptr, count) for every buffer of data the expression tree of `view` reads, where ptr is
/// a reference to the node's pointer member (`const T*&`, T = double, or the index type the node
/// uses: a gather's int, long, ... indices) and count the number of T it reads from there. f may
/// re-point ptr (e.g. at a device copy of the count values). Visits each pointer member once,
/// in a fixed order (the tree's, depth first); two members may point at the same buffer (data
/// used twice), and a member that is null (an optional buffer not in use) is not visited. A
/// count may be 0 (an empty data vector). The pointers are into the user's data, the fold
/// storage of the program the view came from and storage an op owns; an evaluation reads
/// nothing else through a pointer of the view, so once every visited pointer is re-pointed it
/// reads only the copies. (What the ops of a scan, a tabulate or a lower_triangular_solve owned
/// before folding — the step's program, a Cholesky factor — is kept by the program's
/// fold_storage: the view is trivially copyable.) The rule every node
/// type follows is at the top of this header. Host code only.
template <class Expr, class Layout, class F>
void for_each_data_buffer(program_view<Expr, Layout>& view, F&& f) {
  detail::for_each_data_buffer_in(view.expr, f);
}

/// The number of data values one evaluation of `view` reads through pointers: the sum of the
/// counts for_each_data_buffer visits (a buffer two nodes read is counted for each). What makes a
/// model data-heavy: the CPU executor's default lanes read it (samplers/nuts/cpu_executor.hpp).
template <class Expr, class Layout>
[[nodiscard]] std::size_t data_values_read(program_view<Expr, Layout> view) {
  std::size_t total = 0;
  for_each_data_buffer(view, [&total](const auto*&, std::size_t count) { total += count; });
  return total;
}

namespace detail {
/// An op declares `static constexpr bool reads_data_matrix = true` when the data it reads are a
/// matrix that each output value reduces a row (or column) of.
template <class Op>
inline constexpr bool op_reads_data_matrix_v = [] {
  if constexpr (requires { Op::reads_data_matrix; }) return bool(Op::reads_data_matrix);
  else return false;
}();

template <class N>
std::size_t matrix_values_in(const N& n) {
  std::size_t total = 0;
  if constexpr (kind_of<N> == node_kind::matvec) total += n.x.rows * n.x.cols;
  if constexpr (kind_of<N> == node_kind::vector_op) {
    if constexpr (op_reads_data_matrix_v<typename N::op_type>) {
      auto op = n.op;  // for_each_data_buffer takes a mutable op (it may re-point); a copy is read only
      op.for_each_data_buffer(n.size(), [&total](const auto*&, std::size_t count) { total += count; });
    }
  }
  if constexpr (children_t<N>::size > 0)
    meta::static_for<children_t<N>::size>([&](auto i) { total += matrix_values_in(n.template child<i>()); });
  return total;
}
}  // namespace detail

/// The part of data_values_read that is matrices: rows × columns of each X·v in the expression
/// tree (streamed matvec nodes and the data_matvec op) and what the ops that reduce rows of a
/// data matrix per output value read (reads_data_matrix: multi_normal's triangular solve with a
/// data covariance's Cholesky factor, rows_dot_product of a data matrix); the steps of a scan or a
/// tabulate are not counted. A model whose data are mostly matrices is cheaper per chain with
/// chains in SIMD lanes than one chain at a time: the batch's chains share each read of a row, a
/// streamed matvec takes its rows in tiles (compile/evaluate.hpp), and a row's reduction, a chain
/// of dependent adds for one chain, runs for a lane's worth of chains at once. The CPU
/// executor's default lanes read it (samplers/nuts/cpu_executor.hpp).
template <class Expr, class Layout>
[[nodiscard]] std::size_t matrix_values_read(program_view<Expr, Layout> view) {
  return detail::matrix_values_in(view.expr);
}

namespace detail {
/// What the loops of the fused sums read per evaluation (split_values_read, split_work_read).
struct loop_reads {
  std::size_t values = 0;         // data values, matrices included
  std::size_t matrix_values = 0;  // of them, a streamed matvec's X
  std::size_t matvec_rows = 0;    // rows of streamed matvecs
};

/// What the loop of a reduction reads per evaluation: its elementwise body (a streamed matvec's
/// rows included) down to the leaves. A boundary — a scalar node, a buffered matvec, a
/// vector_op — has a loop of its own, which is not counted.
template <class N>
void loop_reads_in(N& n, loop_reads& r) {
  auto count = [&r](const auto*&, std::size_t c) { r.values += c; };
  if constexpr (is_leaf_v<N>) {
    for_each_data_buffer_in(n, count);
  } else if constexpr (is_elementwise_v<N>) {
    if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary)
      visit_data_buffers<typename N::rule_type, false>(n.rule, 0, count);
    else
      visit_data_buffers<N, false>(n, 0, count);
    if constexpr (kind_of<N> == node_kind::matvec) {
      r.matrix_values += n.x.rows * n.x.cols;
      r.matvec_rows += n.x.rows;
    }
    meta::static_for<children_t<N>::size>([&](auto i) {
      auto& c = const_cast<std::remove_cvref_t<decltype(n.template child<i>())>&>(n.template child<i>());
      loop_reads_in(c, r);
    });
  }
}

/// loop_reads of every loop of a fused sum of the view's expression.
template <class Expr, class Layout>
loop_reads split_loop_reads(program_view<Expr, Layout>& view) {
  using entries = outer_entries_t<Expr>;
  loop_reads r;
  meta::static_for<entries::size>([&](auto k) {
    using E = meta::at<decltype(k)::value, entries>;
    using N = typename E::node;
    if constexpr (!is_vector_v<N> && fused_sign_v<Expr, E> != 0) {
      auto& n = const_cast<N&>(at_path(view.expr, typename E::path{}));
      meta::static_for<children_t<N>::size>([&](auto i) {
        auto& c = const_cast<std::remove_cvref_t<decltype(n.template child<i>())>&>(n.template child<i>());
        loop_reads_in(c, r);
      });
    }
  });
  return r;
}
}  // namespace detail

/// The part of data_values_read that a split evaluation divides among its parts
/// (program_view::value_and_gradient_part): what the loops of the fused sums — the reductions
/// reached from the log density by sums only, a likelihood over observations — read. The rest
/// (a buffered operation's loop, a triangular solve with a data Cholesky factor, a scan's steps)
/// every part repeats. What the GPU's whole_device gradient is chosen by (samplers/nuts/
/// device_executor.hpp): it gains only from these.
template <class Expr, class Layout>
[[nodiscard]] std::size_t split_values_read(program_view<Expr, Layout> view) {
  return detail::split_loop_reads(view).values;
}

/// A streamed matvec row's own work (the row's link function and likelihood term, after its dot
/// product), and the work of a value of X in that dot product, in units of one data value read
/// by an elementwise loop: the CPU's costs per evaluation, one chain in double, measured
/// (bench/split.cpp's threshold rows, 2026-12-06, AVX-512): an elementwise Poisson regression
/// 0.23 ns per data value (its loop runs in SIMD over observations), a logistic regression's row
/// 7 ns plus 0.075 ns per column (its dot product runs in SIMD over columns, its link once per
/// row).
inline constexpr std::size_t split_work_matvec_row = 30;
inline constexpr std::size_t split_work_matrix_values_per_unit = 3;

/// The work of the loops a split evaluation divides (split_values_read's), in units of one data
/// value read by an elementwise loop: each value outside a streamed matvec's X counts 1, each of
/// X's values 1/3 and each of its rows 30 more (split_work_matvec_row): a logistic regression
/// of 2,500 × 10 does as much work per evaluation as an elementwise loop over 86,000 values,
/// one of 250 × 100 as 16,000. The CPU executor splits an evaluation when it is large enough
/// to pay for the parts (samplers/nuts/config.hpp, cpu_split_min_work).
template <class Expr, class Layout>
[[nodiscard]] std::size_t split_work_read(program_view<Expr, Layout> view) {
  const detail::loop_reads r = detail::split_loop_reads(view);
  return (r.values - r.matrix_values) + r.matrix_values / split_work_matrix_values_per_unit +
         split_work_matvec_row * r.matvec_rows;
}

}  // namespace tyche
