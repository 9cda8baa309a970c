// tyche/compile/constant.hpp — evaluates, once at model construction, an expression that
// depends on no parameter (data and constants only), and owns the values of folded vectors.
// The fold (compile/fold.hpp) replaces such subexpressions by their values; the sum rewrites
// (compile/reduce_sum.hpp) use it for the sums and statistics they compute from data.
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/evaluate.hpp>
#include <tyche/compile/graph.hpp>
#include <tyche/core/meta.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace tyche::detail {

/// Owns the values of folded vector subexpressions, and what the ops of a folded tree point
/// into (a scan's or tabulate's compiled step, a Cholesky factor a family computed): folding
/// moves that ownership here (an op's release_into), so that the folded tree — the program's
/// view — holds only values and pointers, and can be copied as bytes (to a GPU).
struct fold_storage {
  std::vector<std::unique_ptr<double[]>> buffers;
  std::vector<std::shared_ptr<const void>> kept;
  double* allocate(std::size_t n) {
    buffers.push_back(std::make_unique<double[]>(n > 0 ? n : 1));
    return buffers.back().get();
  }
  void keep(std::shared_ptr<const void> p) { kept.push_back(std::move(p)); }
};

/// f(ev) for a value-only evaluation ev of n in double with no parameters, its workspace alive
/// for the call.
template <class N, class F>
auto with_constant_evaluation(const N& n, F&& f) {
  param_offsets<meta::list<>> none{};
  bool not_aliased[outer_entries_t<N>::size + 1] = {};
  std::size_t ws_offsets[outer_entries_t<N>::size + 1] = {};
  std::vector<double> workspace(assign_workspace(n, not_aliased, ws_offsets));
  evaluation<N, meta::list<>, double, false> ev{n,       none,    ws_offsets, not_aliased,
                                                nullptr, nullptr, workspace.data()};
  return f(ev);
}

/// The value of a scalar expression that depends on no parameter.
template <class N>
double evaluate_constant(const N& n) {
  return with_constant_evaluation(n, [](auto& ev) { return ev.run(); });
}

/// The values of a vector expression that depends on no parameter, written to out[0 .. size).
template <class N>
void evaluate_constant_vector(const N& n, double* out) {
  with_constant_evaluation(n, [&](auto& ev) {
    ev.prepare();
    for (std::size_t i = 0; i < n.size(); ++i) out[i] = ev.element(i);
  });
}

/// Σᵢ aᵢ of a vector expression that depends on no parameter (reduce_sum, for sums its rules
/// make of data alone).
template <class N>
double constant_sum(const N& n, fold_storage&) {
  std::vector<double> values(n.size());
  evaluate_constant_vector(n, values.data());
  double total = 0;
  for (double v : values) total += v;
  return total;
}

}  // namespace tyche::detail
