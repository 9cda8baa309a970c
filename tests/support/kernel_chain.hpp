// tests/support/kernel_chain.hpp — one chain run through the NUTS kernel
// (tyche/samplers/nuts/kernel.hpp) with a plain target `double target(const std::vector<double>& q,
// std::vector<double>& grad)`, and a random stream the tests control: what a test needs to run
// transitions one at a time, as the recursive reference (recursive_nuts.hpp) does.
#pragma once
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <random>
#include <vector>

namespace tyche_test {

/// Uniform and normal draws from a fixed-seed engine; two copies give the same stream. Both the
/// recursive reference (uniform(), normal()) and the kernel (uniforms(), normals(): the
/// lane_generator contract with one lane) read it.
struct stream_rng {
  std::mt19937_64 engine;
  explicit stream_rng(std::uint64_t seed = 0) : engine(seed) {}
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(engine); }
  double normal() { return std::normal_distribution<double>(0.0, 1.0)(engine); }
  void uniforms(double* out, const bool* take) {
    if (take[0]) out[0] = uniform();
  }
  void normals(double* out, std::size_t n, const bool* take) {
    if (take[0])
      for (std::size_t i = 0; i < n; ++i) out[i] = normal();
  }
};

/// One chain in a kernel of one double lane.
template <class Rng>
class kernel_chain {
 public:
  using kernel_type = tyche::samplers::nuts_kernel<double, Rng>;

  kernel_chain(std::size_t d, const std::vector<double>& inv_metric, int max_depth,
               tyche::samplers::metric_kind kind = tyche::samplers::metric_kind::diagonal)
      : storage_(kernel_type::storage_size(d, max_depth, kind)), d_(d) {
    REQUIRE(kernel_.bind(storage_.data(), storage_.size(), d, max_depth, kind) == tyche::samplers::nuts_status::ok);
    REQUIRE(kernel_.set_metric(0, inv_metric.data()) == tyche::samplers::nuts_status::ok);
  }

  kernel_type& kernel() { return kernel_; }
  Rng& rng() { return kernel_.rng(); }

  /// One transition from (q, log p(q), its gradient) with step size eps; on return q, grad and
  /// log_density hold the selected point.
  template <class Target>
  tyche::samplers::transition_stats step(const Target& target, std::vector<double>& q, std::vector<double>& grad,
                                         double& log_density, double eps) {
    kernel_.set_point(0, q.data(), grad.data(), log_density);
    REQUIRE(kernel_.set_step_size(0, eps) == tyche::samplers::nuts_status::ok);
    const bool start[1] = {true};
    REQUIRE(kernel_.begin(start) == tyche::samplers::nuts_status::ok);
    std::vector<double> x(d_), g(d_);
    bool ended[1] = {false};
    do {
      for (std::size_t i = 0; i < d_; ++i) x[i] = kernel_.pending_q()[i];
      const double lp = target(x, g);
      for (std::size_t i = 0; i < d_; ++i) kernel_.pending_grad()[i] = g[i];
      kernel_.set_pending(lp);
      kernel_.resume(ended);
    } while (!ended[0]);
    kernel_.get_point(0, q.data(), grad.data());
    log_density = kernel_.log_density(0);
    return kernel_.stats(0);
  }

 private:
  std::vector<double> storage_;
  std::size_t d_;
  kernel_type kernel_;
};

}  // namespace tyche_test
