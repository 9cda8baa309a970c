// tests/cuda/compile_only/every_op.cu — every op of the op contract (autodiff/vector_ops.hpp:
// forward and reverse of a vector_op node), instantiated in device code for double, so that a
// model using any of them compiles with nvcc. A __host__-only function reached from an op's
// forward or reverse pass is otherwise found only when some model first uses that op on a GPU
// (poisson_binomial_map::triangle, 2026-12-07). Built as an object library in the g++ tree
// (tests/CMakeLists.txt): it is a compile check, nothing runs. tools/check_device_ops.py (test
// device_ops_listed) fails when an op struct in include/tyche is neither instantiated below nor
// in its list of exceptions.
#include <tyche/tyche.hpp>

#include <cstddef>

namespace tyche_every_op {

template <class Op>
__global__ void every_op_kernel(Op op, std::size_t m, const double* const* in, const std::size_t* in_n,
                                double* out, const double* adj, double* const* in_adj, double* scratch) {
  if constexpr (requires { op.scratch_size(m, in_n); }) {
    op.template forward<double>(m, out, in, in_n, scratch);
    op.template reverse<double>(m, out, adj, in, in_n, in_adj, scratch);
  } else {
    op.template forward<double>(m, out, in, in_n);
    op.template reverse<double>(m, out, adj, in, in_n, in_adj);
  }
}

// Taking each kernel's address instantiates it for the device.
template <class... Ops>
void every_op_kernels(const void** out) {
  std::size_t i = 0;
  ((out[i++] = reinterpret_cast<const void*>(&every_op_kernel<Ops>)), ...);
}

namespace o = tyche::ops;
// The op structs of include/tyche, each with every value of its template parameters that a model
// can make (tools/check_device_ops.py reads the names between OPS BEGIN and OPS END).
// OPS BEGIN
template void every_op_kernels<
    o::ordinal_map<false>, o::ordinal_map<true>, o::ordered_map<false>, o::ordered_map<true>, o::cumulative_sum_map,
    o::extremum_map<false>, o::extremum_map<true>, o::prod_map, o::reverse_map, o::sort_map<false>, o::sort_map<true>,
    o::diag_matrix_map, o::multinomial_rows_map, o::stack_map, o::rep_map<>, o::rep_map<3>, o::rep_columns_map, o::append_col_map, o::linspaced_map, o::one_hot_map,
    o::segment_map<>,
    o::segment_map<3>, o::linear_recurrence_map, o::gather_map<>, o::gather_map<int, 1>, o::lower_triangular_solve_map,
    o::cholesky_multiply_map, o::beta_binomial_lcdf_map<false>, o::beta_binomial_lcdf_map<true>,
    o::log_inc_beta_map<false>, o::log_inc_beta_map<true>, o::wiener_map, o::basic_categorical_logit_glm_map<double>,
    o::basic_categorical_logit_glm_map<float>, o::row_sums_of_squares_map, o::wishart_map<false>, o::wishart_map<true>,
    o::wishart_cholesky_map<false>, o::wishart_cholesky_map<true>, o::inverse_spd_map, o::inverse_map, o::lu_solve_map<false>, o::lu_solve_map<true>,
    o::determinant_map<false>, o::determinant_map<true>, o::matrix_exp_map, o::matrix_power_map,
    o::eigen_sym_map<false>, o::eigen_sym_map<true>, o::gaussian_dlm_map, o::svd_map<o::svd_part::values>,
    o::svd_map<o::svd_part::u>, o::svd_map<o::svd_part::v>, o::qr_map<o::qr_part::thin_q>, o::qr_map<o::qr_part::thin_r>,
    o::qr_map<o::qr_part::q>, o::qr_map<o::qr_part::r>, o::pinv_map,
    o::poisson_binomial_map<o::count_event::equal>,
    o::poisson_binomial_map<o::count_event::at_most>, o::poisson_binomial_map<o::count_event::above>,
    o::precision_quadratic_map, o::corr_cholesky_map, o::cov_cholesky_map, o::cpc_log_jacobian_map<false>,
    o::cpc_log_jacobian_map<true>, o::diagonal_sum_map<false, false>, o::diagonal_sum_map<false, true>,
    o::diagonal_sum_map<true, false>, o::diagonal_sum_map<true, true>, o::multiply_lower_tri_self_transpose_map,
    o::symmetrize_lower_map,
    o::cholesky_decompose_map, o::diag_pre_multiply_map, o::matmul_map<false>, o::matmul_map<true>, o::transpose_map, o::diagonal_map,
    o::diag_post_multiply_map, o::tri_low_solve_map<false, false>, o::tri_low_solve_map<false, true>,
    o::tri_low_solve_map<true, false>, o::tri_low_solve_map<true, true>, o::basic_data_matvec_map<double>,
    o::basic_data_matvec_map<float>, o::sparse_matvec_map, o::gp_exp_quad_cov_map, o::gp_dot_prod_cov_map,
    o::gp_cov_map<o::gp_kernel::exponential>, o::gp_cov_map<o::gp_kernel::matern32>,
    o::gp_cov_map<o::gp_kernel::matern52>, o::gp_cov_map<o::gp_kernel::periodic>, o::add_diag_map, o::matvec_map,
    o::rows_dot_product_map<false>, o::rows_dot_product_map<true>, o::cholesky_residual_map,
    o::lkj_log_normaliser_map, o::hmm_marginal_map, o::car_map, o::icar_map,
    o::inflated_map<tyche::inflation::zero_inflated>, o::inflated_map<tyche::inflation::hurdle_discrete>,
    o::inflated_map<tyche::inflation::hurdle_continuous>>(const void**);
// OPS END
// Not instantiated here: precision_quadratic_owning_map (folding releases it into
// precision_quadratic_map before evaluation), tabulate_map, ode_map and scan_map (templates over
// the user's program: the device executor's tests instantiate them with theirs).

}  // namespace tyche_every_op
