// tyche/samplers/nuts/device_executor.hpp — nuts() on the executor tyche::cuda: the host's part.
// The chains' random initial points and first step sizes are found by device_chain_initialise
// (device_chain.hpp), one chain per thread, on the launcher (cuda::init_on_device; given initial
// values, a given metric or whole_device gradients: here, by nuts_chain::initialise, the CPU
// executor's code; a chain that cannot start is initialised here again for its message);
// everything after — every transition, the warm-up, the draws — runs as device_chain_run
// (device_chain.hpp), one chain per thread, on a launcher: the CUDA one (backends/cuda/nuts.cuh, in translation units compiled by nvcc) or
// the host one below (cuda{.emulate = true}: the same function called for one chain after
// another). After each launch the block of draws comes back and is constrained here.
//
// The model is evaluated on the device through its program_view, copied by value into the
// kernel's arguments with every data buffer it reads copied to device memory and re-pointed
// (compile/relocate.hpp, for_each_data_buffer).
#pragma once
#include <tyche/config.hpp>
#include <tyche/samplers/nuts/chain.hpp>
#include <tyche/samplers/nuts/config.hpp>
#include <tyche/samplers/nuts/cpus.hpp>
#include <tyche/samplers/nuts/device_chain.hpp>
#include <tyche/samplers/nuts/kernel.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace tyche::samplers::detail {

/// log p and its gradient through a program_view: what a device thread calls.
template <class View>
struct view_log_density {
  View view;
  TYCHE_EXEC_CHECK_DISABLE
  TYCHE_HD double operator()(const double* q, double* grad, double* workspace) const {
    return view.value_and_gradient(q, grad, workspace);
  }
};

/// The emulation of cuda_gradient::whole_device: log p and its gradient as the sum of `parts`
/// parts (value_and_gradient_part), added one after the other in part order, what the device's
/// threads compute and add up (in another order). The chain's workspace holds the part's
/// gradient (d values) before the model's own workspace.
template <class Target>
struct parted_log_density {
  const Target* target;
  std::size_t parts = 8;
  /// The chain's workspace: the model's and d values for a part's gradient.
  [[nodiscard]] std::size_t workspace_size(std::size_t model_workspace, std::size_t d) const {
    return model_workspace + d;
  }
  TYCHE_EXEC_CHECK_DISABLE  // host code: nvcc instantiates device_chain_run for the host here
  TYCHE_HD double operator()(const double* q, double* grad, double* workspace) const {
    const std::size_t d = target->dim();
    double* part_grad = workspace;
    double* model_workspace = workspace + d;
    double value = target->value_and_gradient_part(q, grad, model_workspace, 0, parts);
    for (std::size_t p = 1; p < parts; ++p) {
      value += target->value_and_gradient_part(q, part_grad, model_workspace, p, parts);
      for (std::size_t k = 0; k < d; ++k) grad[k] += part_grad[k];
    }
    return value;
  }
};

/// The chain workspace a device target needs: the model's, and what the target adds.
template <class DeviceTarget>
std::size_t device_workspace_size(const DeviceTarget& t, std::size_t model_workspace, std::size_t d) {
  if constexpr (requires { t.workspace_size(model_workspace, d); }) return t.workspace_size(model_workspace, d);
  else return model_workspace;
}

/// cuda_gradient::automatic resolved for a run (per_thread or whole_device) from the data values
/// the parts of a split evaluation divide (model_t::split_values: data read elsewhere, e.g. by a
/// triangular solve, every worker would repeat); whole_device with more chains than it runs is an
/// invalid_argument naming both.
inline cuda_gradient resolve_cuda_gradient(const cuda& exec, int chains, std::size_t data_values) {
  if (exec.gradient == cuda_gradient::whole_device && chains > cuda_whole_device_max_chains)
    throw std::invalid_argument("tyche::nuts: cuda: gradient = whole_device runs at most " +
                                std::to_string(cuda_whole_device_max_chains) + " chains (one round of gradients "
                                "serves them all), and chains = " + std::to_string(chains) +
                                ": use fewer chains, or gradient = per_thread");
  if (exec.gradient != cuda_gradient::automatic) return exec.gradient;
  const bool whole = data_values >= cuda_whole_device_data_values && chains <= cuda_whole_device_max_chains &&
                     static_cast<std::size_t>(chains) * cuda_whole_device_values_per_chain <= data_values;
  return whole ? cuda_gradient::whole_device : cuda_gradient::per_thread;
}

/// f(c) for every chain c < n, on this machine's threads (the host's part of a device run:
/// initialisation, constraining the draws, and the emulated launches). The first exception, in
/// chain order, is rethrown after all have run.
template <class F>
void for_each_chain(std::size_t n, F&& f) {
  const std::size_t threads =
      std::min<std::size_t>(n, available_cpus());
  std::vector<std::exception_ptr> errors(n);
  auto work = [&](std::size_t t) {
    for (std::size_t c = t; c < n; c += threads) {
      try {
        f(c);
      } catch (...) {
        errors[c] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  std::size_t started = 1;  // part 0 runs on this thread
  for (; started < threads; ++started) {
    try {
      pool.emplace_back(work, started);
    } catch (const std::system_error&) {  // no more threads: this one does the rest
      break;
    }
  }
  work(0);
  for (std::size_t t = started; t < threads; ++t) work(t);
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/// The launches of a run: the warm-up in one, then the draws in blocks of `block`.
struct device_plan {
  device_run run;
  int block = 0;
  std::vector<int> ends;  // each launch runs the chains' iterations up to this one
};

/// The cuda settings' errors, before anything is done: invalid_argument naming the setting.
inline void check_cuda_settings(const cuda& exec) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("tyche::nuts: cuda: " + what); };
  if (exec.threads_per_block < 1 || exec.threads_per_block > 1024)
    fail("threads_per_block = " + std::to_string(exec.threads_per_block) + " is outside [1, 1024]");
  if (exec.draws_per_launch < 0)
    fail("draws_per_launch = " + std::to_string(exec.draws_per_launch) + " must be ≥ 0 (0: automatic)");
  if (exec.device < 0) fail("device = " + std::to_string(exec.device) + " must be ≥ 0");
  if (exec.tiles < 0) fail("tiles = " + std::to_string(exec.tiles) + " must be ≥ 0 (0: automatic)");
  if (exec.chain_group < 0) fail("chain_group = " + std::to_string(exec.chain_group) + " must be ≥ 0 (0: automatic)");
  if (exec.worker_blocks < 0)
    fail("worker_blocks = " + std::to_string(exec.worker_blocks) + " must be ≥ 0 (0: as many as the device holds)");
  if (exec.separate_controllers && !TYCHE_CUDA_SEPARATE_CONTROLLERS)
    fail("separate_controllers = true, but this program was compiled without its kernels: define "
         "TYCHE_CUDA_SEPARATE_CONTROLLERS=1 in every translation unit that includes tyche (an experimental mode, "
         "measured no faster than the default: docs/gpu.md)");
}

/// a · b, or an overflow_error naming what was being counted.
inline std::size_t checked_product(std::size_t a, std::size_t b, const char* what) {
  if (a != 0 && b > static_cast<std::size_t>(-1) / a)
    throw std::overflow_error(std::string("tyche::nuts: cuda: the bytes of ") + what + " overflow size_t (" +
                              std::to_string(a) + " × " + std::to_string(b) + ")");
  return a * b;
}

/// The launches: warm-up in one launch, the draws in blocks of `block`; with cfg.refresh > 0
/// also a launch end at every multiple of refresh, where progress is reported.
inline device_plan make_device_plan(const nuts_config& cfg, const cuda& exec, std::size_t d, std::size_t workspace) {
  check_cuda_settings(exec);
  device_plan p;
  device_run& r = p.run;
  r.seed = cfg.seed;
  r.d = d;
  r.warmup = cfg.warmup;
  r.draws = cfg.draws;
  r.max_depth = cfg.max_depth;
  r.metric = cfg.metric;
  r.layout = device_chain_layout::make(
      d, cfg.max_depth, cfg.metric, workspace,
      metric_adaptation<double>(d, cfg.warmup, adaptation_of(cfg, d), stored_dense(cfg.metric)).buffer_size(),
      low_rank_kmax(cfg, d));
  r.init_radius = cfg.init_radius;
  r.init_step_size = cfg.init_step_size;
  r.min_init_step_size = min_initial_step_size;
  r.nutpie_first_metric = cfg.metric_estimator == metric_estimator::nutpie && cfg.init_inv_metric.empty() &&
                          cfg.warmup >= 20 && cfg.metric == metric_kind::diagonal;  // as nuts_chain::initialise
  const std::size_t per_draw = checked_product(static_cast<std::size_t>(cfg.chains),
                                               d * sizeof(double) + sizeof(transition_stats), "a draw of every chain");
  const std::size_t fit = std::max<std::size_t>(1, (std::size_t(256) << 20) / per_draw);
  const int block = exec.draws_per_launch > 0 ? exec.draws_per_launch
                                              : static_cast<int>(std::min<std::size_t>(fit, std::size_t(1) << 30));
  p.block = std::max(1, std::min(block, std::max(cfg.draws, 1)));
  r.block = p.block;
  const int total = cfg.warmup + cfg.draws;
  if (cfg.warmup > 0) p.ends.push_back(cfg.warmup);
  for (int first = 0; first < cfg.draws; first += p.block) p.ends.push_back(cfg.warmup + std::min(cfg.draws, first + p.block));
  if (cfg.refresh > 0)
    for (int t = cfg.refresh; t < total; t += cfg.refresh) p.ends.push_back(t);
  std::sort(p.ends.begin(), p.ends.end());
  p.ends.erase(std::unique(p.ends.begin(), p.ends.end()), p.ends.end());
  return p;
}

/// Bytes of device memory a run needs beside the model's data: the chains' states and buffers,
/// their initial values and the output block.
inline std::size_t device_bytes_per_chain(const device_plan& p) {
  return sizeof(device_chain) + p.run.layout.total * sizeof(double) +
         device_chain_init_size(p.run.layout, p.run.d) * sizeof(double) +
         checked_product(static_cast<std::size_t>(p.block), p.run.d * sizeof(double) + sizeof(transition_stats),
                         "a chain's block of draws");
}

/// The emulating launcher: the device's memory is host memory, a launch is a loop over chains.
class host_launcher {
 public:
  void reserve(const device_plan& p, std::size_t n) {
    const device_run& r = p.run;
    buffers_.assign(n * r.layout.total, 0.0);
    out_q_.assign(n * static_cast<std::size_t>(p.block) * r.d, 0.0);
    out_stats_.assign(n * static_cast<std::size_t>(p.block), transition_stats{});
  }
  void setup(const device_plan& p, std::vector<device_chain>& states, const std::vector<double>& init) {
    const std::size_t n = states.size();
    const device_run& r = p.run;
    states_ = states;
    const std::size_t per = device_chain_init_size(r.layout, r.d);
    for (std::size_t c = 0; c < n; ++c) device_chain_setup(states_[c], buffers_.data() + c * r.layout.total, r, init.data() + c * per);
  }
  /// The chains' random initialisation (device_chain_initialise), one "thread" per chain; the
  /// states come back in `states`.
  template <class Target>
  void initialise(const device_plan& p, std::vector<device_chain>& states, const Target& target) {
    const device_run& r = p.run;
    states_ = states;
    for_each_chain(states_.size(), [&](std::size_t c) {
      device_chain_initialise(target, states_[c], buffers_.data() + c * r.layout.total, r);
    });
    states = states_;
  }
  /// One "thread" per chain: the chains run on this machine's threads, each chain on one; then
  /// `during()`, the host's work that a GPU's launch overlaps.
  template <class Target, class During>
  void launch(const Target& target, const device_run& r, During&& during) {
    during();
    for_each_chain(states_.size(), [&](std::size_t c) {
      device_chain_run(target, states_[c], buffers_.data() + c * r.layout.total, r,
                       out_q_.data() + c * static_cast<std::size_t>(r.block) * r.d,
                       out_stats_.data() + c * static_cast<std::size_t>(r.block));
    });
  }
  /// The last launch's block of draws and statistics, [chain][row][k] and [chain][row], read
  /// where they are.
  void read_block(const double*& q, const transition_stats*& stats) const {
    q = out_q_.data();
    stats = out_stats_.data();
  }
  void read_states(std::vector<device_chain>& states) const { states = states_; }
  /// Chains per lockstep group (none: each chain runs on a host thread of its own) and the
  /// utilisation of the groups.
  [[nodiscard]] int lanes() const { return 1; }
  [[nodiscard]] double utilization(const std::vector<device_chain>&) const { return 1.0; }
  /// The inverse metric of every chain: [chain][metric_size].
  void read_metrics(const device_run& r, std::vector<double>& out) const {
    const std::size_t m = r.layout.metric_size;
    out.resize(states_.size() * m);
    for (std::size_t c = 0; c < states_.size(); ++c)
      std::copy_n(buffers_.data() + c * r.layout.total + r.layout.metric, m, out.data() + c * m);
  }

 private:
  std::vector<device_chain> states_;
  std::vector<double> buffers_, out_q_;
  std::vector<transition_stats> out_stats_;
};

/// The fit's frame: settings, names, one slot per chain.
inline nuts_fit make_fit_frame(const nuts_config& cfg, std::vector<std::string> names) {
  nuts_fit fit;
  fit.max_depth = cfg.max_depth;
  fit.warmup = cfg.warmup;
  fit.adapt_delta = cfg.adapt_delta;
  fit.seed = cfg.seed;
  fit.names = std::move(names);
  fit.chains = cfg.chains;
  fit.draws = cfg.draws;
  fit.values.resize(static_cast<std::size_t>(cfg.chains));
  fit.stats.resize(static_cast<std::size_t>(cfg.chains));
  fit.step_size.resize(static_cast<std::size_t>(cfg.chains));
  fit.inv_metric.resize(static_cast<std::size_t>(cfg.chains));
  if (cfg.metric == metric_kind::low_rank) fit.inv_metric_factors.resize(static_cast<std::size_t>(cfg.chains));
  fit.restarted_from.assign(static_cast<std::size_t>(cfg.chains), -1);
  fit.warmup_restarted_from.assign(static_cast<std::size_t>(cfg.chains), -1);
  fit.warmup_restarted_at.assign(static_cast<std::size_t>(cfg.chains), -1);
  fit.warmup_seconds.assign(static_cast<std::size_t>(cfg.chains), std::numeric_limits<double>::quiet_NaN());
  fit.sampling_seconds.assign(static_cast<std::size_t>(cfg.chains), std::numeric_limits<double>::quiet_NaN());
  return fit;
}

/// Warp-level utilisation of one chain per thread: a warp of 32 threads runs until its longest
/// chain is done, so its slots are 32 × the most gradients any of its chains evaluated. Warps are
/// formed within a block of threads_per_block chains.
inline double warp_utilization(const std::vector<device_chain>& states, int threads_per_block) {
  long long useful = 0, slots = 0;
  const std::size_t tpb = static_cast<std::size_t>(threads_per_block);
  for (std::size_t b = 0; b < states.size(); b += tpb)
    for (std::size_t w = b; w < std::min(states.size(), b + tpb); w += 32) {
      long long most = 0;
      for (std::size_t c = w; c < std::min({states.size(), b + tpb, w + 32}); ++c) {
        useful += states[c].leapfrogs;
        most = std::max(most, states[c].leapfrogs);
      }
      slots += 32 * most;
    }
  return slots > 0 ? static_cast<double>(useful) / static_cast<double>(slots) : 1.0;
}

/// Throws for the first chain (in chain order) whose device status is not ok.
inline void throw_if_failed(const std::vector<device_chain>& states, const std::vector<double>& metrics,
                            std::size_t metric_size, int first_chain, bool low_rank) {
  for (std::size_t c = 0; c < states.size(); ++c) {
    const device_chain& s = states[c];
    if (s.status == nuts_status::ok) continue;
    warmup_result w;
    w.status = s.status;
    w.bad_metric = s.bad_metric;
    w.where = s.where;
    const std::vector<double> m(metrics.begin() + static_cast<std::ptrdiff_t>(c * metric_size),
                                metrics.begin() + static_cast<std::ptrdiff_t>((c + 1) * metric_size));
    throw std::runtime_error(warmup_error(first_chain + static_cast<int>(c), w, m, low_rank) + " (iteration " + std::to_string(s.iteration + 1) +
                             ", executor cuda)");
  }
}

/// The chains' initialisation on the host, chain by chain, with the CPU executor's code
/// (nuts_chain::initialise; a chain that cannot start throws, naming it), into `states` and the
/// launcher.
template <class Target, class Launcher>
void initialise_on_host(const Target& target, Launcher& launcher, const device_plan& plan, const nuts_config& cfg,
                        nuts_fit& fit, std::vector<device_chain>& states) {
  const std::size_t d = target.dim(), n = states.size();
  const std::size_t per = device_chain_init_size(plan.run.layout, d);
  std::vector<double> init(n * per, 0.0);
  for_each_chain(n, [&](std::size_t c) {
    nuts_chain<Target> chain(target, cfg, static_cast<int>(c), fit);
    chain.initialise();  // throws, naming the chain
    device_chain& s = states[c];
    s.step = chain.step_adaptation();
    s.metric = metric_adaptation<double>(d, cfg.warmup, adaptation_of(cfg, d), stored_dense(cfg.metric));
    s.stream = chain.rng().stream();
    s.position = chain.rng().position();
    s.step_size = chain.step_size();
    s.log_density = chain.log_density();
    double* at = init.data() + c * per;
    std::copy(chain.q().begin(), chain.q().end(), at);
    std::copy(chain.grad().begin(), chain.grad().end(), at + d);
    std::copy(chain.inv_metric().begin(), chain.inv_metric().end(), at + 2 * d);
    if (plan.run.layout.dense)
      std::copy(chain.cholesky().begin(), chain.cholesky().end(), at + 2 * d + plan.run.layout.metric_size);
  });
  launcher.setup(plan, states, init);
}

/// The chains' random initialisation on the launcher (device_chain_initialise). A chain that
/// could not start there is initialised on the host again, which throws with the CPU executor's
/// message (the same draws fail the same way); should it start there, the device's status is
/// the error.
template <class Target, class DeviceTarget, class Launcher>
void initialise_on_device(const Target& target, const DeviceTarget& device_target, Launcher& launcher,
                          const device_plan& plan, const nuts_config& cfg, nuts_fit& fit,
                          std::vector<device_chain>& states) {
  const std::size_t d = target.dim();
  device_chain first;
  first.step = step_size_adaptation<double>(adaptation_of(cfg));
  first.metric = metric_adaptation<double>(d, cfg.warmup, adaptation_of(cfg, d), stored_dense(cfg.metric));
  for (std::size_t c = 0; c < states.size(); ++c) {
    states[c] = first;
    states[c].stream = static_cast<std::uint64_t>(cfg.first_chain) + c;  // nuts_chain's stream
  }
  launcher.initialise(plan, states, device_target);
  for (std::size_t c = 0; c < states.size(); ++c)
    if (states[c].status != nuts_status::ok) {
      nuts_chain<Target> chain(target, cfg, static_cast<int>(c), fit);
      chain.initialise();  // throws, naming the chain
      throw std::runtime_error("tyche::nuts: chain " + std::to_string(cfg.first_chain + static_cast<int>(c) + 1) +
                               ": its initialisation on the device failed (" + describe(states[c].status) +
                               ") where the host's succeeded: cuda{.init_on_device = false} starts the chains on the "
                               "host");
    }
}

/// The device executor's run, on a launcher. Target: the host's view of the model
/// (model_target: initialisation, constrain); device_target: what the launcher's threads
/// evaluate; whole_device: the launcher's threads share each chain's gradient (the chains start
/// on the host).
template <class Target, class DeviceTarget, class Launcher>
nuts_fit run_device(const Target& target, const DeviceTarget& device_target, Launcher& launcher,
                    const nuts_config& cfg, const cuda& exec, std::vector<std::string> names, bool whole_device) {
  const std::size_t d = target.dim();
  const device_plan plan = make_device_plan(cfg, exec, d, device_workspace_size(device_target, target.workspace_size(), d));
  const device_run& base = plan.run;
  const std::size_t n = static_cast<std::size_t>(cfg.chains);
#if defined(TYCHE_DEVICE_HOST_PROFILE)  // a diagnostic build: the host's steps' seconds on stderr
  // launcher.reserve (device memory, the data's copy); the fit's frame and its reservation of the
  // draws (inside the first launch); initialise; launches (the kernels' wait); read_states;
  // read_block; constrain; end
  double profile[8] = {};
  auto tick = std::chrono::steady_clock::now();
  auto lap = [&](int k) {
    const auto now = std::chrono::steady_clock::now();
    profile[k] += std::chrono::duration<double>(now - tick).count();
    tick = now;
  };
#else
  auto lap = [](int) {};
#endif
  launcher.reserve(plan, n);  // first: too many chains for the device's memory is said at once
  lap(0);
  nuts_fit fit = make_fit_frame(cfg, std::move(names));
  lap(1);

  std::vector<device_chain> states(n);
  if (exec.init_on_device && !whole_device && cfg.init.empty() && cfg.init_inv_metric.empty() &&
      cfg.init_inv_metric_factors.empty()) {
    const auto launched = std::chrono::steady_clock::now();
    initialise_on_device(target, device_target, launcher, plan, cfg, fit, states);
    fit.device_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - launched).count();
  } else {
    initialise_on_host(target, launcher, plan, cfg, fit, states);
  }
  lap(2);

  const double* block_q = nullptr;
  const transition_stats* block_stats = nullptr;
  // The fit's memory for the draws, on the host's threads while the first launch runs: 1.68 GB
  // for 131,072 chains × 100 draws of eight schools, 0.25-0.59 s of page faults on an H200
  // machine's 16 cores (2026-12-04), which nuts_chain's constructor paid while initialising when
  // the chains started on the host.
  bool reserved = false;
  auto reserve_draws = [&] {
    if (reserved) return;
    reserved = true;
    lap(3);
    for_each_chain(n, [&](std::size_t c) {
      try {
        fit.values[c].reserve(static_cast<std::size_t>(cfg.draws) * target.constrained_dim());
        fit.stats[c].reserve(static_cast<std::size_t>(cfg.draws));
      } catch (const std::bad_alloc&) {  // nuts_chain's message
        throw std::runtime_error("tyche::nuts: chain " + std::to_string(cfg.first_chain + static_cast<int>(c) + 1) +
                                 ": no memory for its " + std::to_string(cfg.draws) + " draws of " +
                                 std::to_string(target.constrained_dim()) + " values");
      }
    });
    lap(1);
  };
  // A block of draws read back is constrained into the fit while the next launch runs (its rows
  // are on the host by then: a page-locked copy, or the emulation's buffer, which the next launch
  // overwrites only after its during()); the last block after the last launch.
  int pending_rows = 0;
  auto constrain_block = [&] {
    if (pending_rows == 0) return;
    const std::size_t rows = static_cast<std::size_t>(pending_rows);
    pending_rows = 0;
    for_each_chain(n, [&](std::size_t c) {
      const std::size_t first = c * static_cast<std::size_t>(plan.block);
      fit.stats[c].insert(fit.stats[c].end(), block_stats + first, block_stats + first + rows);
      for (std::size_t at = first; at < first + rows; ++at) target.constrain(block_q + at * d, fit.values[c]);
    });
    lap(6);
  };
  auto during = [&] {
    reserve_draws();
    constrain_block();
  };
  int done = 0;
  for (const int end : plan.ends) {
    device_run r = base;
    r.until = end;
    r.first_draw = std::max(0, done - cfg.warmup);
    const auto launched = std::chrono::steady_clock::now();
    launcher.launch(device_target, r, during);  // returns when the kernel and during() have finished
    fit.device_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - launched).count();
    lap(3);
    launcher.read_states(states);  // a failed chain is reported now, not at the end of the run
    lap(4);
    for (const auto& st : states)
      if (st.status != nuts_status::ok) {
        std::vector<double> metrics;
        launcher.read_metrics(base, metrics);
        throw_if_failed(states, metrics, base.layout.metric_size, cfg.first_chain, base.layout.low_rank);
      }
    if (end > cfg.warmup) {
      launcher.read_block(block_q, block_stats);
      lap(5);
      pending_rows = end - std::max(done, cfg.warmup);
    }
    done = end;
    if (cfg.refresh > 0)
      for (std::size_t c = 0; c < n; ++c)
        report_progress(cfg, nuts_progress{static_cast<int>(c) + 1, done, cfg.warmup + cfg.draws, done <= cfg.warmup});
  }

  reserve_draws();  // (no launch: no warm-up and no draws)
  constrain_block();
  std::vector<double> metrics;
  launcher.read_metrics(base, metrics);
  throw_if_failed(states, metrics, base.layout.metric_size, cfg.first_chain, base.layout.low_rank);
  for (std::size_t c = 0; c < n; ++c) {
    fit.step_size[c] = states[c].step_size;
    record_metric(fit, c, cfg.metric, metrics.data() + c * base.layout.metric_size, base.layout.metric_size, d);
    fit.gradient_evaluations += states[c].leapfrogs;
  }
  fit.lanes = launcher.lanes();
  fit.utilization = launcher.utilization(states);
  lap(7);
#if defined(TYCHE_DEVICE_HOST_PROFILE)
  std::fprintf(stderr,
               "device host profile, %zu chains (s): reserve %.4f, frame %.4f, initialise %.4f, launches %.4f, "
               "read_states %.4f, read_block %.4f, constrain %.4f, end %.4f\n",
               n, profile[0], profile[1], profile[2], profile[3], profile[4], profile[5], profile[6], profile[7]);
#endif
  return fit;
}

}  // namespace tyche::samplers::detail
