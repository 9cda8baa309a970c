// tyche/samplers/nuts/sampler.hpp — nuts(model, config): warm-up and sampling of several chains.
// The transition is the NUTS kernel (kernel.hpp), the same code on every executor; a chain's
// life between transitions (initialisation, warm-up, recording) is nuts_chain (chain.hpp); the
// executor named by config.executor runs the chains (cpu_executor.hpp: threads × SIMD lanes).
// Each chain draws from its own Philox stream (seed, chain), so its draws do not depend on the
// number of chains, threads or lanes beside it, for a given batch width (cpu::lanes).
#pragma once
#include <tyche/backends/simd/lanes.hpp>
#include <tyche/concepts.hpp>
#include <tyche/config.hpp>
#include <tyche/model/quantities.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/samplers/nuts/chain.hpp>
#include <tyche/samplers/nuts/config.hpp>
#include <tyche/samplers/nuts/cpu_executor.hpp>
#include <tyche/samplers/nuts/device_executor.hpp>
#include <tyche/samplers/nuts/split_gradient.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tyche {

namespace samplers::detail {

/// A model as the sampler sees it (samplers/concepts.hpp, log_density_target): its compiled
/// log density (with the log-Jacobian; without it for Jacobian = false, as tyche::mpi's
/// data-sharded fits evaluate the ranks whose parameters are declared flat) for double and for
/// the SIMD batches, Stan's random initialisation, and constrain.
template <class Model, bool Jacobian = true>
class model_target {
  static const auto& program_of(const Model& m) {
    if constexpr (Jacobian) return m.program();
    else return m.program_without_jacobian();
  }

 public:
  explicit model_target(const Model& m) : model_(m), view_(program_of(m).view()) {}
  [[nodiscard]] std::size_t dim() const { return model_.dim(); }
  [[nodiscard]] std::size_t constrained_dim() const { return model_.constrained_dim(); }
  [[nodiscard]] std::size_t workspace_size() const { return program_of(model_).workspace_size(); }
  /// The values of data one evaluation reads (model_t::data_values), and the part of them in
  /// matrices (model_t::matrix_values): the default lanes use them.
  [[nodiscard]] std::size_t data_values() const { return model_.data_values(); }
  [[nodiscard]] std::size_t matrix_values() const { return model_.matrix_values(); }
  /// The part of data_values() a split evaluation divides (model_t::split_values): the GPU's
  /// whole_device gradient is chosen by it; and the work of those loops (model_t::split_work),
  /// by which the CPU's split gradient is.
  [[nodiscard]] std::size_t split_values() const { return model_.split_values(); }
  [[nodiscard]] std::size_t split_work() const { return model_.split_work(); }
  template <class T>
  T value_and_gradient(const T* q, T* grad, T* workspace) const {
    return view_.value_and_gradient(q, grad, workspace);
  }
  /// Part `part` of `parts` of the evaluation (program_view::value_and_gradient_part), for
  /// double and for the batches of chains.
  template <class T>
  T value_and_gradient_part(const T* q, T* grad, T* workspace, std::size_t part, std::size_t parts) const {
    return view_.value_and_gradient_part(q, grad, workspace, part, parts);
  }
  template <class Generator>
  [[nodiscard]] std::vector<double> initial_point(Generator& rng, double radius) const {
    return model_.initial_point(rng, radius);
  }
  /// Appends the constrained values of θ to out.
  void constrain(const double* q, std::vector<double>& out) const {
    const auto x = model_.constrain(std::span<const double>(q, dim()));
    out.insert(out.end(), x.begin(), x.end());
  }
  /// θ of constrained values (nuts_config::init).
  [[nodiscard]] std::vector<double> unconstrain(const std::vector<double>& values) const {
    return model_.unconstrain(values);
  }
  /// The terms of the log density that are not finite at q, for messages ("" when none).
  [[nodiscard]] std::string non_finite_terms(const double* q) const
    requires requires(const Model& m) { m.non_finite_terms(std::span<const double>()); }
  {
    return model_.non_finite_terms(std::span<const double>(q, dim()));
  }

 private:
  const Model& model_;
  const std::remove_cvref_t<decltype(program_of(std::declval<const Model&>()).view())>& view_;
};

/// The configuration's errors, before any chain starts: invalid_argument naming the setting.
TYCHE_DRIVER_INLINE void check_config(const nuts_config& cfg)
#if TYCHE_DRIVER_BODIES
{
  auto fail = [](const std::string& what) { throw std::invalid_argument("tyche::nuts: " + what); };
  if (cfg.first_chain < 0)
    fail("first_chain = " + std::to_string(cfg.first_chain) + " must be ≥ 0 (the first chain's 0-based number)");
  if (cfg.chains < 1 || cfg.draws < 0 || cfg.warmup < 0)
    fail("chains must be ≥ 1 and warmup, draws ≥ 0 (got chains = " + std::to_string(cfg.chains) +
         ", warmup = " + std::to_string(cfg.warmup) + ", draws = " + std::to_string(cfg.draws) + ")");
  if (!(cfg.adapt_delta > 0 && cfg.adapt_delta < 1))
    fail("adapt_delta = " + tyche::detail::format_number(cfg.adapt_delta) + " is outside (0, 1)");
  if (cfg.max_depth < 1 || cfg.max_depth > max_supported_depth)
    fail("max_depth = " + std::to_string(cfg.max_depth) + " is outside [1, " + std::to_string(max_supported_depth) +
         "]");
  if (!(cfg.init_step_size > 0) || !std::isfinite(cfg.init_step_size))
    fail("init_step_size = " + tyche::detail::format_number(cfg.init_step_size) + " is not a positive finite number");
  if (!(cfg.init_radius >= 0) || !std::isfinite(cfg.init_radius))
    fail("init_radius = " + tyche::detail::format_number(cfg.init_radius) + " is not a finite number ≥ 0");
  if (cfg.metric_estimator == metric_estimator::draws_and_gradients && cfg.metric == metric_kind::dense)
    fail("metric_estimator = draws_and_gradients estimates a diagonal metric (or, with metric = low_rank, a low-rank "
         "+ diagonal one): use metric = diagonal or low_rank");
  if (cfg.metric_estimator == metric_estimator::nutpie && cfg.metric != metric_kind::diagonal)
    fail("metric_estimator = nutpie (nutpie's schedule) estimates a diagonal metric: use metric = diagonal");
  if (cfg.pool_metric) {
    const cpu* exec = std::get_if<cpu>(&cfg.executor);
    if (exec == nullptr)
      fail("pool_metric = true needs the CPU executor (tyche::cpu): on the device executor the chains do not wait "
           "for each other at the ends of the metric windows");
    else if (exec->schedule != lane_schedule::program_counter)
      fail("pool_metric = true needs the CPU executor's program_counter schedule (cpu::schedule = trajectory_sync "
           "does not pool)");
  }
  if (cfg.init.size() > 1 && cfg.init.size() != static_cast<std::size_t>(cfg.chains))
    fail("init holds " + std::to_string(cfg.init.size()) + " vectors of initial values: give one for every chain, or " +
         std::to_string(cfg.chains) + " (one per chain)");
  for (std::size_t c = 0; c < cfg.init.size(); ++c)
    for (std::size_t k = 0; k < cfg.init[c].size(); ++k)
      if (!std::isfinite(cfg.init[c][k]))
        fail("init[" + std::to_string(c) + "][" + std::to_string(k) + "] (" +
             (cfg.init.size() == 1 ? std::string("every chain's") : "chain " + std::to_string(cfg.first_chain + c + 1) + ",") +
             " value " + std::to_string(k + 1) + "; the indices in brackets are C++'s, from 0) = " +
             tyche::detail::format_number(cfg.init[c][k]) + " is not finite");
  for (std::size_t k = 0; k < cfg.init_inv_metric.size(); ++k)
    if (!std::isfinite(cfg.init_inv_metric[k]))
      fail("init_inv_metric[" + std::to_string(k) + "] = " + tyche::detail::format_number(cfg.init_inv_metric[k]) +
           " is not finite");
}
#else
;
#endif

/// The configuration's errors that need the target's sizes (init, init_inv_metric), before any
/// chain starts.
TYCHE_DRIVER_INLINE void check_config_sizes(const nuts_config& cfg, std::size_t dim, std::size_t constrained_dim,
                                            const std::vector<std::string>& names)
#if TYCHE_DRIVER_BODIES
{
  auto fail = [](const std::string& what) { throw std::invalid_argument("tyche::nuts: " + what); };
  for (std::size_t c = 0; c < cfg.init.size(); ++c)
    if (cfg.init[c].size() != constrained_dim) {
      fail("init[" + std::to_string(c) + "] (" +
           (cfg.init.size() == 1 ? std::string("every chain's start") : "chain " + std::to_string(cfg.first_chain + c + 1)) +
           "; the index in brackets is C++'s, from 0) holds " +
           std::to_string(cfg.init[c].size()) + " values, expected " +
           std::to_string(constrained_dim) + " (one per name of parameter_names(), in order: " +
           tyche::detail::first_names(names) + ")");
    }
  if (!cfg.init_inv_metric_factors.empty()) {
    const auto& f = cfg.init_inv_metric_factors;
    if (cfg.metric != metric_kind::low_rank)
      fail("init_inv_metric_factors is the low-rank metric's start: it needs metric = low_rank");
    if (!cfg.init_inv_metric.empty()) fail("init_inv_metric and init_inv_metric_factors are both given: give one");
    for (std::size_t k = 0; k < f.size(); ++k)
      if (!std::isfinite(f[k]))
        fail("init_inv_metric_factors[" + std::to_string(k) + "] = " + tyche::detail::format_number(f[k]) +
             " is not finite");
    if (f.size() < 2 + dim || low_rank_dimension(f.data(), f.size()) != dim)
      fail("init_inv_metric_factors holds " + std::to_string(f.size()) +
           " values, which are not the factors of a metric of d = " + std::to_string(dim) +
           " coordinates (2 + d + kmax + kmax·d values, kmax = its second value)");
    std::size_t where = 0;
    const int bad = low_rank_check(f.data(), dim, &where);
    if (bad == 1 && where == static_cast<std::size_t>(-1))
      fail("init_inv_metric_factors: its count of directions k = " + tyche::detail::format_number(f[0]) +
           " is not an integer in [0, kmax = " + tyche::detail::format_number(f[1]) + "]");
    if (bad == 1)
      fail("init_inv_metric_factors: its scale σ[" + std::to_string(where) + "] = " +
           tyche::detail::format_number(f[2 + where]) + " is not positive");
    if (bad == 2)
      fail("init_inv_metric_factors: its direction " + std::to_string(where + 1) + " has λ − 1 = " +
           tyche::detail::format_number(f[2 + dim + where]) + ", so λ is not positive");
    return;
  }
  if (cfg.init_inv_metric.empty()) return;
  // (low_rank takes the diagonal or the d × d matrix)
  const bool low_rank_diagonal = cfg.metric == metric_kind::low_rank && cfg.init_inv_metric.size() == dim;
  const bool dense = stored_dense(cfg.metric) && !low_rank_diagonal;
  const std::size_t want = dense ? dim * dim : dim;
  if (cfg.init_inv_metric.size() != want)
    fail("init_inv_metric holds " + std::to_string(cfg.init_inv_metric.size()) + " values, expected " +
         std::to_string(want) +
         (cfg.metric == metric_kind::low_rank ? " (d × d, row-major, or the diagonal's d, for the low-rank metric; d = "
          : dense                             ? " (d × d, row-major, for the dense metric; d = "
                                              : " (the diagonal; d = ") +
         std::to_string(dim) + " unconstrained coordinates)");
  if (!dense) {
    for (std::size_t k = 0; k < dim; ++k)
      if (!(cfg.init_inv_metric[k] > 0))
        fail("init_inv_metric[" + std::to_string(k) + "] = " + tyche::detail::format_number(cfg.init_inv_metric[k]) +
             " is not positive");
  } else {
    const auto& a = cfg.init_inv_metric;
    for (std::size_t i = 0; i < dim; ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (std::fabs(a[i * dim + j] - a[j * dim + i]) > 1e-8 * std::sqrt(std::fabs(a[i * dim + i] * a[j * dim + j])))
          fail("init_inv_metric is not symmetric: element [" + std::to_string(i + 1) + "," + std::to_string(j + 1) +
               "] = " + tyche::detail::format_number(a[i * dim + j]) + " but [" + std::to_string(j + 1) + "," +
               std::to_string(i + 1) + "] = " + tyche::detail::format_number(a[j * dim + i]));
    std::vector<double> chol(dim * dim);
    std::size_t pivot = 0;
    if (cholesky_lower(cfg.init_inv_metric.data(), chol.data(), dim, &pivot) != nuts_status::ok)
      fail("init_inv_metric is not symmetric positive definite (its Cholesky factorisation fails at pivot " +
           std::to_string(pivot + 1) + " of " + std::to_string(dim) + ")");
  }
}
#else
;
#endif

/// The sampler's view of a log_density_target with its type erased: the driver — chains,
/// warm-up, the executor's schedules over every lane layout and batch width — is compiled once
/// per translation unit, not once per model type (issue 18: it was most of the code generated
/// for each model of a program that samples several); per model only the model's own code is
/// compiled: its log density and gradient for double and for each batch the executor may use,
/// its initialisation and constrain. The price is one indirect call per evaluation of a batch of
/// lanes (bench/run.sh nuts_step measures it); the arithmetic, and so every draw, is unchanged.
///
/// A template on the batch types, so that translation units built with different SIMD settings
/// (-march, tyche::tyche beside tyche::simd) get distinct drivers instead of one inline function
/// with two bodies; and on whether the CPU executor's comparison modes are compiled
/// (TYCHE_CPU_COMPARISON_MODES, config.hpp), for the same reason.
template <class Full, class Half, bool ComparisonModes = true>
class erased_target {
  template <class T>
  using value_and_gradient_fn = T (*)(const void*, const T*, T*, T*);
  using half_type = std::conditional_t<std::is_void_v<Half>, double, Half>;

  template <class Target, class T>
  static T value_and_gradient_of(const void* self, const T* q, T* grad, T* workspace) {
    return static_cast<const Target*>(self)->value_and_gradient(q, grad, workspace);
  }
  template <class Target, class T>
  static T part_of(const void* self, const T* q, T* grad, T* workspace, std::size_t part, std::size_t parts) {
    return static_cast<const Target*>(self)->value_and_gradient_part(q, grad, workspace, part, parts);
  }
  template <class T>
  using part_fn = T (*)(const void*, const T*, T*, T*, std::size_t, std::size_t);
  template <class Target, class T>
  static constexpr part_fn<T> parts_of() {
    if constexpr (requires(const Target& t, const T* q, T* g) { t.value_and_gradient_part(q, g, g, 0, 1); })
      return &part_of<Target, T>;
    else
      return nullptr;
  }
  template <class Target>
  static std::vector<double> initial_point_of(const void* self, counter_rng& rng, double radius) {
    return static_cast<const Target*>(self)->initial_point(rng, radius);
  }
  template <class Target>
  static std::size_t data_values_of(const Target& target) {
    if constexpr (requires { target.data_values(); }) return target.data_values();
    else return 0;
  }
  template <class Target>
  static std::size_t matrix_values_of(const Target& target) {
    if constexpr (requires { target.matrix_values(); }) return target.matrix_values();
    else return 0;
  }
  template <class Target>
  static std::size_t split_values_of(const Target& target) {
    if constexpr (requires { target.split_values(); }) return target.split_values();
    else return 0;
  }
  template <class Target>
  static std::size_t split_work_of(const Target& target) {
    if constexpr (requires { target.split_work(); }) return target.split_work();
    else return split_values_of(target);
  }
  template <class Target>
  static void constrain_of(const void* self, const double* q, std::vector<double>& out) {
    static_cast<const Target*>(self)->constrain(q, out);
  }
  using unconstrain_fn = std::vector<double> (*)(const void*, const std::vector<double>&);
  template <class Target>
  static constexpr unconstrain_fn unconstrain_of() {
    if constexpr (requires(const Target& t, const std::vector<double>& v) { t.unconstrain(v); })
      return [](const void* self, const std::vector<double>& v) { return static_cast<const Target*>(self)->unconstrain(v); };
    else
      return nullptr;
  }
  using terms_fn = std::string (*)(const void*, const double*);
  template <class Target>
  static constexpr terms_fn non_finite_terms_of() {
    if constexpr (requires(const Target& t, const double* q) { t.non_finite_terms(q); })
      return [](const void* self, const double* q) { return static_cast<const Target*>(self)->non_finite_terms(q); };
    else
      return nullptr;
  }

 public:
  /// Whether the CPU executor runs cpu::schedule = trajectory_sync and cpu::lane_kernel = batch
  /// on this target (compiled only then: cpu_comparison_modes).
  static constexpr bool comparison_modes = ComparisonModes;
  /// Views `target`, which must outlive this object.
  template <log_density_target Target>
  explicit erased_target(const Target& target)
      : self_(&target), dim_(target.dim()), constrained_dim_(target.constrained_dim()),
        workspace_size_(target.workspace_size()), data_values_(data_values_of(target)),
        matrix_values_(matrix_values_of(target)), split_values_(split_values_of(target)),
        split_work_(split_work_of(target)), double_(&value_and_gradient_of<Target, double>),
        full_(&value_and_gradient_of<Target, Full>), half_(&value_and_gradient_of<Target, half_type>),
        part_(parts_of<Target, double>()), full_part_(parts_of<Target, Full>()),
        half_part_(parts_of<Target, half_type>()), initial_point_(&initial_point_of<Target>), constrain_(&constrain_of<Target>),
        unconstrain_(unconstrain_of<Target>()), non_finite_terms_(non_finite_terms_of<Target>()) {}
  [[nodiscard]] std::size_t dim() const { return dim_; }
  [[nodiscard]] std::size_t constrained_dim() const { return constrained_dim_; }
  [[nodiscard]] std::size_t workspace_size() const { return workspace_size_; }
  /// The values of data one evaluation reads, and the part of them in matrices, where the
  /// target says (else 0).
  [[nodiscard]] std::size_t data_values() const { return data_values_; }
  [[nodiscard]] std::size_t matrix_values() const { return matrix_values_; }
  [[nodiscard]] std::size_t split_values() const { return split_values_; }
  /// The work of the loops a split divides (model_t::split_work; split_values where the target
  /// does not say).
  [[nodiscard]] std::size_t split_work() const { return split_work_; }
  /// T: double, Full or Half (lane_batch, half_lane_batch: the types the CPU executor evaluates).
  template <class T>
  T value_and_gradient(const T* q, T* grad, T* workspace) const {
    if constexpr (std::is_same_v<T, double>) {
      return double_(self_, q, grad, workspace);
    } else if constexpr (std::is_same_v<T, Full>) {
      return full_(self_, q, grad, workspace);
    } else {
      static_assert(std::is_same_v<T, half_type>, "erased_target: a batch type the CPU executor does not use");
      return half_(self_, q, grad, workspace);
    }
  }
  /// Whether value_and_gradient_part works (the target evaluates in parts): in double, and for
  /// the batch types too.
  [[nodiscard]] bool splittable() const { return part_ != nullptr; }
  [[nodiscard]] bool batches_splittable() const { return part_ != nullptr && full_part_ != nullptr && half_part_ != nullptr; }
  /// Part `part` of `parts` of the evaluation (program_view::value_and_gradient_part); T as for
  /// value_and_gradient.
  template <class T>
  T value_and_gradient_part(const T* q, T* grad, T* workspace, std::size_t part, std::size_t parts) const {
    part_fn<T> f = nullptr;
    if constexpr (std::is_same_v<T, double>) f = part_;
    else if constexpr (std::is_same_v<T, Full>) f = full_part_;
    else {
      static_assert(std::is_same_v<T, half_type>, "erased_target: a batch type the CPU executor does not use");
      f = half_part_;
    }
    if (f == nullptr)
      throw std::invalid_argument("tyche::nuts: this target cannot split an evaluation into parts "
                                  "(value_and_gradient_part): use cpu{.split = 1} or cuda{.gradient = per_thread}");
    return f(self_, q, grad, workspace, part, parts);
  }
  [[nodiscard]] std::vector<double> initial_point(counter_rng& rng, double radius) const {
    return initial_point_(self_, rng, radius);
  }
  void constrain(const double* q, std::vector<double>& out) const { constrain_(self_, q, out); }
  /// θ of constrained values (nuts_config::init); throws when the target cannot map them.
  [[nodiscard]] std::vector<double> unconstrain(const std::vector<double>& values) const {
    if (unconstrain_ == nullptr)
      throw std::invalid_argument("tyche::nuts: this target cannot map constrained values to θ (unconstrain): "
                                  "leave init empty");
    return unconstrain_(self_, values);
  }
  /// The terms of the target's log density that are not finite at q, for messages ("" when
  /// none, or when the target cannot tell).
  [[nodiscard]] std::string non_finite_terms(const double* q) const {
    return non_finite_terms_ == nullptr ? std::string() : non_finite_terms_(self_, q);
  }

 private:
  const void* self_;
  std::size_t dim_, constrained_dim_, workspace_size_, data_values_, matrix_values_, split_values_, split_work_;
  value_and_gradient_fn<double> double_;
  value_and_gradient_fn<Full> full_;
  value_and_gradient_fn<half_type> half_;
  part_fn<double> part_;  // null: the target cannot split an evaluation
  part_fn<Full> full_part_;
  part_fn<half_type> half_part_;
  std::vector<double> (*initial_point_)(const void*, counter_rng&, double);
  void (*constrain_)(const void*, const double*, std::vector<double>&);
  unconstrain_fn unconstrain_;  // null: the target cannot map constrained values to θ
  terms_fn non_finite_terms_;   // null: the target cannot name its terms
};

/// The driver's view of every model of this translation unit's SIMD settings, with or without
/// the CPU executor's comparison modes (TYCHE_CPU_COMPARISON_MODES). Templates that name it take
/// the flag as a template argument defaulted from the macro (nuts(), mpi::nuts), so that files
/// built with and without the macro instantiate different functions, not one with two bodies.
template <bool ComparisonModes>
using erased_target_for = erased_target<lane_batch, half_lane_batch, ComparisonModes>;
using model_erased_target = erased_target_for<TYCHE_CPU_COMPARISON_MODES != 0>;

/// The parts of each evaluation of these chains on this target (cpu::split; 1: whole), as the
/// CPU executor's layout says (resolve_cpu_layout); throws for a split the configuration or the
/// target cannot have.
template <class Target>
std::size_t resolve_split(const Target& target, const nuts_config& cfg, const cpu& exec) {
  return samplers::detail::resolve_cpu_layout(exec, cfg.chains, samplers::detail::shape_of(target)).parts;
}

template <class Target>
nuts_fit run_chains_cpu(const Target& target, const nuts_config& cfg, std::vector<std::string> names,
                        const samplers::detail::cpu_layout& layout);

/// nuts() on a model's erased target: the fit's frame, the chains, the executor. One
/// instantiation per SIMD setting, whatever the number of models a program samples. An
/// evaluation split over cores (cpu::split) is the same erased target type around a
/// split_target, so it adds no instantiation of the driver either.
template <class Target>
nuts_fit run_nuts_erased(const Target& target, const nuts_config& cfg, std::vector<std::string> names) {
  check_config(cfg);
  check_config_sizes(cfg, target.dim(), target.constrained_dim(), names);
  const cpu* executor = std::get_if<cpu>(&cfg.executor);
  if (executor == nullptr) throw std::logic_error("tyche::nuts: run_nuts_erased runs the CPU executor only");
  samplers::detail::check_comparison_modes<Target>(*executor);
  // One layout for the whole run: the pool's helpers and the threads that hold chains add up.
  samplers::detail::cpu_layout layout =
      samplers::detail::resolve_cpu_layout(*executor, cfg.chains, samplers::detail::shape_of(target));
  if constexpr (std::is_constructible_v<Target, const split_target<Target>&>) {
    if (layout.parts > 1) {
      const int total = samplers::detail::cpu_threads(*executor);
      part_pool pool(std::max(0, total - layout.threads));  // the threads the chains leave free
      const split_target<Target> split(target, layout.parts, pool);
      nuts_fit fit = run_chains_cpu(Target(split), cfg, std::move(names), layout);
      fit.split = static_cast<int>(layout.parts);
      fit.helper_threads = static_cast<int>(std::max(0, total - layout.threads));
      fit.split_parts = pool.parts_run();
      fit.split_parts_by_helpers = pool.parts_by_helpers();
      return fit;
    }
  }
  layout.parts = 1;
  return run_chains_cpu(target, cfg, std::move(names), layout);
}

/// run_nuts_erased's chains on the CPU executor, laid out as `layout` says.
template <class Target>
nuts_fit run_chains_cpu(const Target& target, const nuts_config& cfg, std::vector<std::string> names,
                        const samplers::detail::cpu_layout& layout) {
  const auto start = std::chrono::steady_clock::now();
  nuts_fit fit = make_fit_frame(cfg, std::move(names));
  using chain_type = nuts_chain<Target>;
  std::vector<std::unique_ptr<chain_type>> chains;
  for (int c = 0; c < cfg.chains; ++c) chains.push_back(std::make_unique<chain_type>(target, cfg, c, fit));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(cfg.chains));
  auto record_error = [&](int c) {
    // Named once: a chain's own errors start "tyche::nuts: chain <c>: ".
    const auto named = [&](const std::exception& e) {
      const std::string what = e.what();
      const std::string number = std::to_string(cfg.first_chain + c + 1);
      return what.rfind("tyche::nuts: chain " + number + ":", 0) == 0 ? what : what + " (chain " + number + ")";
    };
    try {
      throw;
    } catch (const std::invalid_argument& e) {  // bad input (an init outside a support) stays so
      errors[static_cast<std::size_t>(c)] = std::make_exception_ptr(std::invalid_argument(named(e)));
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(c)] = std::make_exception_ptr(std::runtime_error(named(e)));
    } catch (...) {
      errors[static_cast<std::size_t>(c)] = std::current_exception();
    }
  };
  const cpu* executor = std::get_if<cpu>(&cfg.executor);
  const samplers::lane_counts counts = samplers::detail::run_cpu(target, cfg, *executor, layout, chains, fit, record_error);
  fit.gradient_evaluations = counts.useful;
  fit.utilization = counts.slots > 0 ? static_cast<double>(counts.useful) / static_cast<double>(counts.slots) : 1.0;
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

template <class View>
class cuda_launcher;  // backends/cuda/nuts.cuh, in translation units compiled by nvcc

/// log p and its gradient in double through a log_density_target: the emulated threads' target.
template <class Target>
struct target_log_density {
  const Target* target;
  TYCHE_EXEC_CHECK_DISABLE  // host code: nvcc instantiates device_chain_run for the host here
  TYCHE_HD double operator()(const double* q, double* grad, double* workspace) const {
    return target->value_and_gradient(q, grad, workspace);
  }
};

/// tyche::cuda{.emulate = true}: the device executor with the host's launcher, on an erased
/// target (one instantiation per translation unit, as run_nuts_erased).
template <class Target>
nuts_fit run_nuts_emulated(const Target& target, const nuts_config& cfg, const cuda& exec,
                           std::vector<std::string> names) {
  check_config(cfg);
  check_config_sizes(cfg, target.dim(), target.constrained_dim(), names);
  const auto start = std::chrono::steady_clock::now();
  host_launcher launcher;
  nuts_fit fit;
  if (resolve_cuda_gradient(exec, cfg.chains, target.split_values()) == cuda_gradient::whole_device)
    fit = run_device(target, parted_log_density<Target>{&target}, launcher, cfg, exec, std::move(names), true);
  else
    fit = run_device(target, target_log_density<Target>{&target}, launcher, cfg, exec, std::move(names), false);
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

/// The error of nuts() on tyche::cuda where this translation unit compiles neither the device
/// executor (a host compiler: no GPU) nor, for cuda{.emulate = true}, its emulation. One function
/// for every model: run_nuts() does not instantiate run_nuts_cuda<Model> for such a unit.
[[noreturn]] TYCHE_DRIVER_INLINE void cuda_not_compiled(const cuda& exec)
#if TYCHE_DRIVER_BODIES
{
  if (exec.emulate)
    throw std::invalid_argument(
        "tyche::nuts: tyche::cuda{.emulate = true} is not compiled into this translation unit: it costs every "
        "file that calls nuts() seconds of compile time, so a header-only build has it only with "
        "TYCHE_DEVICE_EMULATION defined to 1 before <tyche/tyche.hpp> is included (or with the CMake target "
        "tyche::separate_driver, whose driver file has it; docs/gpu.md)");
  throw std::invalid_argument(
      "tyche::nuts: the executor tyche::cuda runs on a GPU only from a translation unit compiled by nvcc "
      "(link the CMake target tyche::cuda; docs/gpu.md); this one was compiled by a host compiler. "
      "tyche::cuda{.emulate = true} runs the same device code on this host");
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

/// nuts() on the executor tyche::cuda (device_executor.hpp). Nvcc: whether this translation unit
/// is compiled by nvcc; Emulation: TYCHE_DEVICE_EMULATION (config.hpp). Template arguments, so
/// that translation units with different settings define different functions, not one inline
/// function with two bodies.
template <class Model, bool Nvcc, bool Emulation, bool Comparison>
nuts_fit run_nuts_cuda(const Model& m, const nuts_config& cfg, const cuda& exec) {
  using model_erased_target = erased_target_for<Comparison>;  // (see erased_target_for)
  const model_target<Model> target(m);
  // Emulated: through the erased target, so that a program built by a host compiler compiles the
  // device chain once per translation unit, not once per model (the arithmetic is the model's
  // own value_and_gradient<double> either way).
  if (exec.emulate) {
    if constexpr (Emulation) {
      nuts_fit fit = run_nuts_emulated(model_erased_target(target), cfg, exec, m.parameter_names());
      fit.emulated_device = true;
      return fit;
    } else
      cuda_not_compiled(exec);
  }
  check_config(cfg);
  check_config_sizes(cfg, m.dim(), m.constrained_dim(), m.parameter_names());
  check_cuda_settings(exec);  // before a launcher touches the device
  const auto start = std::chrono::steady_clock::now();
  using view_type = std::remove_cvref_t<decltype(m.program().view())>;
  nuts_fit fit;
  if constexpr (Nvcc && std::is_trivially_copyable_v<view_type>) {
    const bool whole_device = resolve_cuda_gradient(exec, cfg.chains, m.split_values()) == cuda_gradient::whole_device;
    cuda_launcher<view_type> launcher(m.program().view(), exec, cfg.chains, whole_device);
    // The host's part (initialisation, constrain) through the erased target too.
    fit = run_device(model_erased_target(target), launcher.target(), launcher, cfg, exec, m.parameter_names(),
                     whole_device);
  } else if constexpr (Nvcc) {
    throw std::invalid_argument(
        "tyche::nuts: cuda: this model's program cannot be copied to a GPU: its view holds more than plain "
        "values and pointers to data (an op with an owning member, e.g. a std::shared_ptr, that folding does not "
        "release into the program's storage; docs/errors.md). Run it with tyche::cpu{} or tyche::cuda{.emulate = true}");
  } else {
    cuda_not_compiled(exec);
  }
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

/// A chain that warm-up left stuck, and the chain whose last draw and metric it is run again from.
struct stuck_chain {
  int chain = 0, from = 0;
};

/// The chains of a fit that warm-up left stuck (nuts_config::restart_stuck_chains): step size
/// below 10⁻³ of the largest chain's, and median lp__ below the lowest lp__ of every chain whose
/// step size is not that small — a chain caught where the log density is astronomically low and
/// steep (an ARMA model's non-invertible region: docs/nuts.md), not one in a narrow mode of its
/// own, whose log density is high. Each is paired with the next chain (cyclically) that is not
/// stuck. None when fewer than two chains have draws.
TYCHE_DRIVER_INLINE std::vector<stuck_chain> find_stuck_chains(const nuts_fit& fit)
#if TYCHE_DRIVER_BODIES
{
  const int n = fit.chains;
  if (n < 2 || fit.draws < 1 || fit.step_size.size() != static_cast<std::size_t>(n)) return {};
  double largest = 0;
  for (const double e : fit.step_size) largest = std::max(largest, e);
  std::vector<bool> small(static_cast<std::size_t>(n));
  double lowest = INFINITY;  // the lowest lp__ of the chains whose step size is not small
  bool any_small = false, any_normal = false;
  for (int c = 0; c < n; ++c) {
    small[c] = !(fit.step_size[c] >= 1e-3 * largest);
    any_small = any_small || small[c];
    any_normal = any_normal || !small[c];
    if (!small[c])
      for (const auto& s : fit.stats[c]) lowest = std::min(lowest, s.log_density);
  }
  if (!any_small || !any_normal) return {};
  std::vector<stuck_chain> out;
  for (int c = 0; c < n; ++c) {
    if (!small[c]) continue;
    std::vector<double> lp;
    for (const auto& s : fit.stats[c]) lp.push_back(s.log_density);
    std::nth_element(lp.begin(), lp.begin() + static_cast<std::ptrdiff_t>(lp.size() / 2), lp.end());
    if (!(lp[lp.size() / 2] < lowest)) continue;
    int from = (c + 1) % n;
    while (small[from]) from = (from + 1) % n;
    out.push_back({c, from});
  }
  return out;
}
#else
;
#endif

/// Runs every stuck chain of `fit` again (run(config) → nuts_fit: the same model and executor):
/// one chain, warm-up included, from the constrained values of its partner's last draw and its
/// partner's adapted metric, on the stream (seed′, 0) with seed′ = a mix of the seed and the
/// chain's index (its own random numbers, not a copy of chain 1's). The rerun's draws, statistics,
/// step size and metric replace the stuck chain's; gradients and seconds add up. A rerun that
/// fails (an exception) leaves the chain as it was: the fit is still returned, and its R-hat
/// warnings speak for the chain. Not a template on `run`: one body for every model of a program
/// (in the driver's file with TYCHE_SEPARATE_DRIVER), where a template was 5 KB of code per model
/// in every translation unit that calls nuts(); run is called only for a stuck chain.
TYCHE_DRIVER_INLINE void restart_stuck_chains(nuts_fit& fit, const nuts_config& cfg,
                                              const std::function<nuts_fit(const nuts_config&)>& run)
#if TYCHE_DRIVER_BODIES
{
  fit.restarted_from.assign(static_cast<std::size_t>(fit.chains), -1);
  if (!cfg.restart_stuck_chains) return;
  const std::vector<stuck_chain> stuck = find_stuck_chains(fit);
  const std::size_t dim = fit.values.empty() || fit.draws == 0 ? 0 : fit.values[0].size() / static_cast<std::size_t>(fit.draws);
  for (const stuck_chain& s : stuck) {
    nuts_config again = cfg;
    again.chains = 1;
    again.first_chain = 0;
    const int number = cfg.first_chain + s.chain + 1;  // the chain's number in a run of many
    std::uint64_t mixed = cfg.seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(number);
    mixed = (mixed ^ (mixed >> 30)) * 0xBF58476D1CE4E5B9ULL;  // splitmix64's finaliser
    mixed = (mixed ^ (mixed >> 27)) * 0x94D049BB133111EBULL;
    again.seed = mixed ^ (mixed >> 31);
    const auto& partner = fit.values[static_cast<std::size_t>(s.from)];
    again.init = {std::vector<double>(partner.end() - static_cast<std::ptrdiff_t>(dim), partner.end())};
    again.init_inv_metric = fit.inv_metric[static_cast<std::size_t>(s.from)];
    if (static_cast<std::size_t>(s.from) < fit.inv_metric_factors.size() &&
        fit.inv_metric_factors[static_cast<std::size_t>(s.from)].size() > 2) {
      // A low-rank metric: its factors as they are (no d × d matrix to build and decompose again,
      // σ kept), with the room for directions it had.
      const auto& f = fit.inv_metric_factors[static_cast<std::size_t>(s.from)];
      again.init_inv_metric.clear();
      again.init_inv_metric_factors = f;  // (nothing to decompose, σ kept)
      if (f[1] >= 1) again.low_rank_max_rank = static_cast<std::size_t>(f[1]);
    }
    again.restart_stuck_chains = false;
    if (cfg.refresh > 0)  // progress under the chain's own number
      again.on_progress = [user = cfg.on_progress, chain = number](const nuts_progress& p) {
        nuts_progress q = p;
        q.chain = chain;
        if (user) user(q);
        else print_progress_line(q);
      };
    nuts_fit one;
    try {
      one = run(again);
    } catch (const std::exception&) {
      continue;
    }
    const auto c = static_cast<std::size_t>(s.chain);
    fit.values[c] = std::move(one.values[0]);
    fit.stats[c] = std::move(one.stats[0]);
    fit.step_size[c] = one.step_size[0];
    if (c < fit.warmup_seconds.size() && !one.warmup_seconds.empty()) fit.warmup_seconds[c] = one.warmup_seconds[0];
    if (c < fit.sampling_seconds.size() && !one.sampling_seconds.empty()) fit.sampling_seconds[c] = one.sampling_seconds[0];
    fit.inv_metric[c] = std::move(one.inv_metric[0]);
    if (!one.inv_metric_factors.empty()) fit.inv_metric_factors[c] = std::move(one.inv_metric_factors[0]);
    fit.gradient_evaluations += one.gradient_evaluations;
    fit.seconds += one.seconds;
    fit.device_seconds += one.device_seconds;
    fit.restarted_from[c] = s.from;
  }
}
#else
;  // defined in the driver's source file (TYCHE_SEPARATE_DRIVER)
#endif

/// nuts() once the model is known to be one: its target, erased (CPU), or on the device. Nvcc and
/// Batch (defaulted by nuts() from this translation unit's settings) make the instantiations of
/// translation units compiled by nvcc, and with other SIMD settings, distinct functions: the same
/// model type sampled from a .cu and a .cpp file of one program must not share one body.
/// Quantities: whether the model's quantities (quantity<"name">(e)) are added to the fit here
/// (tyche::mpi::nuts gathers the ranks' chains first, and adds them after).
template <class Model, bool Nvcc, class Batch, bool Emulation, bool Comparison, bool Quantities = true>
nuts_fit run_nuts(const Model& m, const nuts_config& cfg) {
  static_assert(std::is_same_v<Batch, lane_batch>, "tyche::nuts: Batch is this translation unit's lane_batch");
  auto run = [&](const nuts_config& c) {
    if (const cuda* gpu = std::get_if<cuda>(&c.executor)) {
      if constexpr (Nvcc || Emulation)
        return run_nuts_cuda<Model, Nvcc, Emulation, Comparison>(m, c, *gpu);
      else
        cuda_not_compiled(*gpu);  // a host compiler's unit without the emulation: nothing per model
    }
    const model_target<Model> target(m);
    return run_nuts_erased(erased_target_for<Comparison>(target), c, m.parameter_names());
  };
  nuts_fit fit = run(cfg);
  restart_stuck_chains(fit, cfg, run);
  if constexpr (Quantities) tyche::detail::append_quantities(m, fit);  // after the parameters
  return fit;
}

}  // namespace samplers::detail

/// Runs NUTS on a model: config.chains chains of config.warmup + config.draws iterations, on
/// the executor config.executor (tyche::cpu{} by default). (Nvcc, Batch, Emulation and Comparison
/// are not for callers: their defaults keep translation units with different compilers, SIMD
/// settings, TYCHE_DEVICE_EMULATION and TYCHE_CPU_COMPARISON_MODES apart.)
template <class Model, bool Nvcc = TYCHE_CUDA_COMPILER != 0, class Batch = tyche::lane_batch,
          bool Emulation = TYCHE_DEVICE_EMULATION != 0, bool Comparison = TYCHE_CPU_COMPARISON_MODES != 0>
nuts_fit nuts(const Model& m, const nuts_config& cfg = {}) {
  if constexpr (!sampleable_model<Model>) {
    static_assert(sampleable_model<Model>,
                  "tyche::nuts(model, config) requires a model built with tyche::model(...) (a joint "
                  "distribution of named random variables, e.g. tyche::model(tyche::joint(mu, "
                  "normal(mu, 1.0).observe(tyche::data(y))))); the first argument is not one");
    return {};
  } else {
    return samplers::detail::run_nuts<Model, Nvcc, Batch, Emulation, Comparison>(m, cfg);
  }
}

/// nuts(model, config) on the given executor: nuts(m, {.chains = 8}, tyche::cpu{.threads = 2})
/// is nuts(m, {.chains = 8, .executor = tyche::cpu{.threads = 2}}).
template <class Model, class Executor, bool Nvcc = TYCHE_CUDA_COMPILER != 0, class Batch = tyche::lane_batch,
          bool Emulation = TYCHE_DEVICE_EMULATION != 0, bool Comparison = TYCHE_CPU_COMPARISON_MODES != 0>
nuts_fit nuts(const Model& m, nuts_config cfg, const Executor& executor) {
  if constexpr (!nuts_executor_type<Executor>) {
    static_assert(nuts_executor_type<Executor>,
                  "tyche::nuts(model, config, executor) requires an executor as its third argument "
                  "(tyche::cpu{.threads = ..., .lanes = ...}); the argument given is not one");
    return {};
  } else {
    cfg.executor = executor;
    return nuts<Model, Nvcc, Batch, Emulation, Comparison>(m, cfg);
  }
}

}  // namespace tyche

// --- Separate compilation of the driver (opt-in; docs/compile-time.md) ---------------------------
// The driver above (run_nuts_erased and run_nuts_emulated on model_erased_target: chains, warm-up,
// the executors' schedules) is the same code for every model of a program, and about half of what
// a translation unit that calls nuts() compiles (examples/quickstart.cpp: 12.5 -> 6.9 s with g++
// -O2, bash bench/compile_times.sh --only quickstart). With TYCHE_SEPARATE_DRIVER defined in every
// translation unit of a program, none of them compiles it: each sees an explicit instantiation declaration (extern template), and exactly one
// source file of the program holds the instantiations, with
//
//     #define TYCHE_NUTS_DRIVER_SOURCE
//     #include <tyche/tyche.hpp>
//     TYCHE_NUTS_DRIVER_INSTANCE()
//
// (that file also holds the one definition of the driver's few non-template functions, which the
// other files only declare: summary, the configuration checks; config.hpp, TYCHE_DRIVER_INLINE)
// (the CMake target tyche::separate_driver defines the macro and adds that file; the pattern of
// Asio's ASIO_SEPARATE_COMPILATION and spdlog's SPDLOG_COMPILED_LIB). Every file of the program must
// be built with the same SIMD settings: the driver is a template on the lane batch types, so a file
// built with other -march flags than the instance names another function, and the program does not
// link (an undefined run_nuts_erased<...>), instead of running a driver built for another machine.
// Translation units compiled by nvcc instantiate their own (they name other types).
#define TYCHE_DETAIL_NUTS_DRIVER(kind)                                                                    \
  namespace tyche::samplers::detail {                                                                   \
  kind template nuts_fit run_nuts_erased<model_erased_target>(const model_erased_target&, const nuts_config&, \
                                                              std::vector<std::string>);                \
  kind template nuts_fit run_nuts_emulated<model_erased_target>(const model_erased_target&, const nuts_config&, \
                                                                const cuda&, std::vector<std::string>); \
  }
/// In one source file of a program built with TYCHE_SEPARATE_DRIVER, which defines
/// TYCHE_NUTS_DRIVER_SOURCE before it includes tyche: the driver's instantiations (and, from the
/// headers, the definitions of its TYCHE_DRIVER_INLINE functions: summary, the checks).
#define TYCHE_NUTS_DRIVER_INSTANCE()                                                                     \
  static_assert(TYCHE_DRIVER_BODIES,                                                                    \
                "tyche: the file with TYCHE_NUTS_DRIVER_INSTANCE() must #define TYCHE_NUTS_DRIVER_SOURCE " \
                "before it includes <tyche/tyche.hpp> (src/tyche_nuts_driver.cpp does)");                 \
  TYCHE_DETAIL_NUTS_DRIVER()
#if defined(TYCHE_SEPARATE_DRIVER) && !defined(__CUDACC__)
TYCHE_DETAIL_NUTS_DRIVER(extern)
#endif

#if defined(__CUDACC__)
#include <tyche/backends/cuda/nuts.cuh>
#endif
