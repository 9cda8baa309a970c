// tyche/samplers/nuts/config.hpp — what nuts() takes and returns: nuts_config (Stan's settings and
// the executor that runs the chains), nuts_fit (draws, sampler statistics, adapted step sizes
// and metrics), nuts_progress. Executors are values: tyche::cpu{…} runs the chains on this
// machine's threads and SIMD lanes; later executors (CUDA, processes) join the variant.
#pragma once
#include <tyche/config.hpp>
#include <tyche/scalar/format.hpp>
#include <tyche/samplers/nuts/kernel.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tyche {

namespace samplers {
/// How warm-up estimates the diagonal metric: in each of Stan's windows from the draws' variances
/// (Stan's scheme, the default) or from the draws and the gradients of log p, √(var θ / var
/// ∇log p) (nutpie's estimator; draws_and_gradients); or nutpie's estimator on nutpie's schedule
/// (nutpie): a first metric 1/|∇log p| at the initial point, then the metric from every draw on,
/// two overlapping estimates switched every 10 draws in the first 30 % of warm-up and in windows
/// from 80 draws growing 1.5× after, the last 15 % for the step size alone (docs/nuts.md,
/// "Warm-up"). Both gradient estimators need metric = diagonal (low_rank uses gradients anyway).
enum class metric_estimator { draws, draws_and_gradients, nutpie };

/// How the CPU executor schedules the chains of its lanes: program_counter (default) lets
/// every lane start its next transition as soon as its trajectory ends; trajectory_sync makes
/// all chains wait for the longest trajectory of each iteration (the baseline of the
/// autobatching paper's Figure 7, for benchmarks; a comparison mode, compiled only with
/// TYCHE_CPU_COMPARISON_MODES or the separate driver: tyche/config.hpp).
enum class lane_schedule { program_counter, trajectory_sync };
}  // namespace samplers

/// How the CPU executor runs a group of chains in SIMD lanes: each chain in a NUTS kernel of its
/// own, their gradients evaluated together as the lanes of one batch (per_chain, the default:
/// the kernel's bookkeeping in each chain's own order), or all of them as the lanes of one
/// kernel over the batch type (batch: the bookkeeping too in SIMD, with masks where the lanes'
/// trajectories differ; a comparison mode, compiled only with TYCHE_CPU_COMPARISON_MODES or the
/// separate driver: tyche/config.hpp). Both give the same draws up to the fusing of multiply-adds
/// (docs/design/nuts-kernel.md).
enum class cpu_lane_kernel { per_chain, batch };

/// The CPU executor: chains on `threads` threads, each advancing `lanes` chains together as the
/// lanes of SIMD batches (samplers/nuts/cpu_executor.hpp).
struct cpu {
  static constexpr const char* executor_name = "cpu";
  /// 0: one per chain, up to the CPUs this process may run on (its affinity mask: taskset, a
  /// cpuset, an MPI binding; samplers/nuts/cpus.hpp). Chains in SIMD lanes take one thread per
  /// batch (⌈chains / lanes⌉), not more: a batch costs the same with empty lanes. Threads the
  /// chains leave free help split their evaluations (`split`).
  int threads = 0;
  /// Chains one thread advances together as SIMD lanes. 0 (the default) chooses: chains in the
  /// lanes of the widest SIMD batch of at least 4 doubles that a thread's ⌈chains / threads⌉
  /// chains fill (AVX2: 4 lanes from 4 chains per thread; AVX-512: 4 from 4, 8 from 8), unless
  /// the model reads 4,096 values of data or more per evaluation (model_t::data_values()) and
  /// fewer than half of them are matrices (model_t::matrix_values(): X in matvec(X, v), a data
  /// covariance's Cholesky factor): then 1, one chain at a
  /// time with its loops over the data in SIMD, which measured faster per chain there (bench/run.sh
  /// lanes; docs/nuts.md). Where the split (below) would divide the model's evaluations, the
  /// batch is filled from all the chains instead, when that leaves threads free to split it (4
  /// chains on 2 cores: one batch of 4 on one thread, split with the other, not 2 + 2 chains one
  /// at a time; samplers::detail::plan_cpu_layout). 1 = one chain at a time in
  /// scalar double; otherwise a multiple of the widest batch or of the half width (the widest
  /// when it is a multiple of both). A chain's draws are the same for every value that uses
  /// the same batch width (lanes never interact); the two widths, and the scalar path, differ
  /// in the last bits of exp/log (the compiler contracts multiply-adds differently in each), so
  /// they give other, equally valid, chains. lanes = 0 picks the width from chains, threads and
  /// the model: to reproduce a chain with another number of chains, set lanes.
  int lanes = 0;
  samplers::lane_schedule schedule = samplers::lane_schedule::program_counter;
  cpu_lane_kernel lane_kernel = cpu_lane_kernel::per_chain;
  /// A gradient on several cores: each evaluation of a chain, or of a batch of chains in SIMD
  /// lanes, in `split` parts — every sum over observations over its share of them
  /// (program_view::value_and_gradient_part) — run on the evaluating thread and on the threads
  /// the chains leave free, the parts' sums added in part order. 1: never. 0 (the default):
  /// cpu_split_parts parts when the chains leave threads free (more threads than chains one at
  /// a time, or than batches of chains) and the model's loops over observations (the fused sums
  /// the parts divide) do at least cpu_split_min_work of work per evaluation (model_t::
  /// split_work(): their data values, a logistic regression's rows weighted by their cost);
  /// otherwise 1. The parts, not the threads, fix the sums: a chain's
  /// draws are the same for every thread count with the same split and lanes, and differ in the
  /// last bits from split = 1 (nuts_fit::split says what a run used; docs/nuts.md).
  int split = 0;
};

/// cpu::split = 0's parts, where it splits (a constant: the draws must not depend on the machine).
inline constexpr int cpu_split_parts = 8;
/// cpu::split = 0 splits models whose loops that the parts divide do at least this much work per
/// evaluation (model_t::split_work(), in units of one data value read by an elementwise loop:
/// about 12 µs of one chain's gradient on the machine of docs/benchmarks.md). Measured by
/// bench/run.sh scale's `threshold` rows (2026-12-06, one chain, split = 8 against 1 on 2
/// threads, four runs; docs/nuts.md): above 14 µs per gradient the split gained in every run
/// but one model's two (logistic regression 2,500 × 10, work 85,833: 1.33–1.79×; elementwise
/// Poisson regression of 25,000 rows, 75,000: 1.35–1.76×); from 7 to 9 µs only when the second
/// core was free (logistic 500 × 100, work 32,166: 0.71–1.16×; 1,000 × 50, 47,666: 0.72–1.36×;
/// 1,000 × 10, 34,333: 0.76–1.55×). Until 2026-12-06 the rule counted data values alone (50,000; 250,000
/// before the split's parts stopped sharing a cache line), which split the first two of those
/// and not the logistic regression of 2,500 × 10 (27,500 values).
inline constexpr std::size_t cpu_split_min_work = 50000;

/// How the CUDA executor computes each chain's log density and gradient (docs/gpu.md).
enum class cuda_gradient {
  /// whole_device for a model whose loops over observations (the fused sums, which the workers
  /// divide among themselves; model_t::split_values()) read at least
  /// cuda_whole_device_data_values values of data per evaluation and at least
  /// cuda_whole_device_values_per_chain per chain, with at most cuda_whole_device_max_chains
  /// chains; per_thread otherwise (data read elsewhere — a triangular solve with a data
  /// covariance's Cholesky factor, a scan's steps — every worker would repeat).
  automatic,
  /// One chain per CUDA thread, which evaluates the whole model: many chains of a small model.
  per_thread,
  /// Every thread of the device computes a share of each chain's loops over the data
  /// (program_view::value_and_gradient_part), and the shares are added up: few chains of a model
  /// with much data. The chains advance in lockstep, one gradient each per round; at most
  /// cuda_whole_device_max_chains of them.
  whole_device,
};

/// cuda_gradient::automatic: the data (values the fused sums read per evaluation,
/// model_t::split_values()) from
/// which, and the chains up to which, the whole device computes each gradient. Measured on an
/// H100 (docs/gpu.md): one thread evaluates ~47 ns per data value, a whole_device round costs
/// ~40 µs per chain beside ~7.6 ps per data value, so one chain per thread wins once the chains
/// outnumber about the data values / 850 (640 here: a thread's fixed cost per gradient favours
/// the whole device for small data).
inline constexpr std::size_t cuda_whole_device_data_values = 4096;
inline constexpr std::size_t cuda_whole_device_values_per_chain = 640;
inline constexpr int cuda_whole_device_max_chains = 256;

/// The CUDA executor: every chain in a thread of an NVIDIA GPU, the whole NUTS state machine,
/// warm-up included, on the device, each chain at its own program point
/// (samplers/nuts/device_chain.hpp, backends/cuda/nuts.cuh; docs/gpu.md). The translation unit
/// that calls nuts() must be compiled by nvcc (CMake target tyche::cuda); elsewhere nuts()
/// throws, unless `emulate` is set. The chains' initial points and first step sizes are found
/// on the host, as the CPU executor finds them.
struct cuda {
  static constexpr const char* executor_name = "cuda";
  /// The CUDA device (cudaSetDevice).
  int device = 0;
  /// Chains per block of threads.
  int threads_per_block = 64;
  /// Draws per chain copied back after each launch (the output block on the device holds
  /// chains × draws_per_launch draws); 0: as many as fit in 256 MiB, at most all of them.
  /// Warm-up runs in one launch.
  int draws_per_launch = 0;
  /// Run the device code on this machine's threads, one chain per thread at a time, instead of
  /// on a GPU: the same function a CUDA thread runs, compiled as host code (tests, debugging,
  /// machines without a GPU). A chain's draws are the CPU executor's with lanes = 1 (scalar
  /// double); with gradient = whole_device they follow them to rounding (the parts of each
  /// gradient are added in another order).
  bool emulate = false;
  /// One chain per thread, or every thread on each chain's loops over the data (cuda_gradient).
  /// Emulated, whole_device adds up the 8 parts of each evaluation, one after the other.
  cuda_gradient gradient = cuda_gradient::automatic;
  /// whole_device with several chains: the chains can share each read of the data. Each
  /// thread's share of the data is cut into `tiles` parts, and a group of chain_group chains is
  /// evaluated on a part before the next part is read, so that it is read from device memory
  /// once and then from the SM's cache. tiles = 0: automatic (1: measured faster, docs/gpu.md);
  /// chain_group = 0: as many as fit in 60 KiB of shared memory per block. A chain's draws
  /// depend on the tiles (the order of the additions), not on the group, unless the group's
  /// shared memory changes how many blocks the device runs at once (docs/gpu.md).
  int tiles = 0;
  int chain_group = 0;
  /// whole_device: each thread's share of a gradient in shared memory (when it fits: d up to
  /// about 110 parameters with 256 threads per block) instead of the thread's local memory,
  /// which spills to L2 at 256 threads per SM. Measured on an H200 (docs/gpu.md, 2026-11-28,
  /// one run): 1.6x faster per leapfrog on covertype, 1.8x on the logistic regression 10,000 x
  /// 100 (2.8x with 32 chains).
  bool shared_gradient = true;
  /// whole_device: the chains' controllers (their NUTS code) in a kernel of their own, beside the
  /// workers' kernel (launched once the controllers run, on the SMs they leave free), so that
  /// the workers get only the registers their own code needs (125 instead of 255 on covertype).
  /// Measured no faster on an H200 (docs/gpu.md: 0.94-1.14x the speed of the one kernel, and
  /// slower with many chains), so off: both in one cooperative launch, every
  /// thread with the controllers' registers. The draws differ between the two in the last bits
  /// (the workers are more or fewer, and add up in another order). Experimental: its kernels are
  /// compiled only where TYCHE_CUDA_SEPARATE_CONTROLLERS=1 is defined (config.hpp); elsewhere
  /// true is an error.
  bool separate_controllers = false;
  /// whole_device: at most this many blocks of workers (256 threads each); 0: as many as the
  /// device holds at once. Fewer, fuller workers for a model with little data per evaluation
  /// (each worker's part has a fixed cost: on an H200, the logistic regression 10,000 x 100 with
  /// the gradients in local memory ran 2.1x faster per leapfrog with 66 blocks than with 262;
  /// not measured with shared gradients; docs/gpu.md). The draws depend on it in the last bits.
  int worker_blocks = 0;
  /// Random initial points and the first step size found by the device's threads, one chain per
  /// thread (true), or by the host's threads, chain by chain (false: the CPU executor's code).
  /// The same draws of each chain's stream either way, so the same start up to the device's
  /// rounding (emulated: bit for bit). Given initial values (nuts_config::init), a given
  /// initial metric or gradient = whole_device (one thread would evaluate all the data) start on
  /// the host whatever this says. A chain that cannot start is reported as on the host (its
  /// initialisation is repeated there for the message).
  bool init_on_device = true;
};

/// A random initial point where Stan's step-size heuristic needs a step below this is rejected
/// like one with a non-finite log density (samplers/nuts/chain.hpp, random_initial_point).
inline constexpr double min_initial_step_size = 1e-8;

/// The executors nuts() can run on.
using nuts_executor = std::variant<cpu, cuda>;

/// What nuts() reports every `refresh` iterations of a chain.
struct nuts_progress {
  int chain = 0;       // 1-based, as Stan prints it
  int iteration = 0;   // 1-based, warm-up included
  int iterations = 0;  // warm-up + draws
  bool warmup = false;
};

/// Settings of nuts(); defaults as Stan's.
struct nuts_config {
  int chains = 4;
  int warmup = 1000;
  int draws = 1000;
  std::uint64_t seed = 1;
  int max_depth = 10;
  double adapt_delta = 0.8;
  /// The first chain's number (0-based, CmdStan's id − 1): chain c of this run draws from the
  /// stream (seed, first_chain + c) and is chain first_chain + c + 1 in messages and progress.
  /// A run of chains [a, b) — first_chain = a, chains = b − a — gives the draws that chains a … b − 1
  /// of one larger run with the same seed and cpu::lanes give (tyche::mpi spreads chains over
  /// processes with it). nuts_config::init with one vector per chain holds this run's chains.
  int first_chain = 0;
  double init_step_size = 1.0;
  double init_radius = 2.0;  // initial θ uniform on (−r, r), as Stan
  /// The metric adapted in warm-up: diagonal (Stan's diag_e, the default), dense (dense_e, for
  /// strongly correlated posteriors of moderate dimension: O(d²) per leapfrog) or low_rank
  /// (nutpie's low-rank + diagonal, estimated from each window's draws and gradients whatever
  /// metric_estimator says; applied factored, O(dk) per leapfrog for k directions (the d × d
  /// matrix where 2k ≥ d), kept factored, O(d·kmax) memory per chain (low_rank_max_rank), plus
  /// the longest window's draws and gradients, 2·500·d values per chain at 1000 warm-up
  /// iterations, during warm-up).
  samplers::metric_kind metric = samplers::metric_kind::diagonal;
  /// metric = low_rank: the most directions a chain's metric keeps, kmax (the estimate keeps the
  /// kmax with the largest |log λ| where it finds more), which bounds a chain's metric to
  /// O(d·kmax) values. 0 (the default): no cap beyond the estimate's own, min(d, 2 × the draws
  /// of the longest warm-up window, × chains with pool_metric), or the start's directions (d
  /// with a d × d init_inv_metric) where warm-up is too short for windows
  /// (a d × d init_inv_metric is otherwise cut to its kmax directions with the largest |log λ|).
  std::size_t low_rank_max_rank = 0;
  /// How warm-up estimates the diagonal metric: draws (Stan's) or draws_and_gradients (nutpie's).
  samplers::metric_estimator metric_estimator = samplers::metric_estimator::draws;
  /// Cross-chain pooling of warm-up's metric estimate: at the end of each metric window (on
  /// nutpie's schedule, at each switch of its estimates) every chain waits for the others, and
  /// all of them take the metric estimated from the moments of all the chains' window draws
  /// together (and gradients, for the gradient estimators), merged in chain order: with Stan's
  /// windows every chain's metric is the same, from chains × the draws (on nutpie's schedule
  /// each chain then adds its own draws until the next switch). The draws stay reproducible
  /// (the merge does not depend on which chain arrives last or on the threads), but a chain's
  /// draws now depend on the other chains: a run of chains [a, b) (first_chain) is not part of
  /// a larger run. Any metric (low_rank: the estimate of all the chains' window draws and
  /// gradients, chain after chain, as one sample), the CPU executor with the program_counter
  /// schedule (also tyche::mpi::nuts_sharded, not mpi::nuts); docs/nuts.md, "Pooling the metric
  /// across chains". false (the default): each chain its own, as Stan.
  bool pool_metric = false;
  /// Initial values on the constrained scale, in the order of parameter_names(): one vector for
  /// every chain, or one per chain; empty (the default): Stan's random initial points
  /// (init_radius). approximate_fit::initial_values(chains) gives one per chain from the draws
  /// of pathfinder() (docs/inference.md).
  std::vector<std::vector<double>> init = {};
  /// The inverse metric warm-up starts from, on the unconstrained scale: d values (metric =
  /// diagonal) or d × d row-major (dense; low_rank: either); empty: the identity, as Stan. Warm-up replaces it at
  /// the end of its first slow window; with warmup = 0 it is the metric of every draw.
  /// approximate_fit::inverse_metric() (dense: inverse_metric(true)) gives it from a pathfinder()
  /// fit.
  std::vector<double> init_inv_metric = {};
  /// metric = low_rank: the metric warm-up starts from as factors (samplers/nuts/low_rank.hpp's
  /// layout [k, kmax, σ, λ − 1, U]: a fit's inv_metric_factors[c], or
  /// low_rank_factors_from_matrix's), instead of init_inv_metric: no d × d matrix, nothing to
  /// decompose. A chain with room for fewer directions (low_rank_max_rank) keeps those with the
  /// largest |log λ|. pathfinder_init fills it for the low-rank metric.
  std::vector<double> init_inv_metric_factors = {};
  /// A chain that warm-up left stuck — its step size below 10⁻³ of the largest chain's and its
  /// median log density below every log density of the chains that are not — is run again,
  /// warm-up included, from the last draw and the metric of a chain that is not stuck, on a
  /// stream of its own; nuts_fit::restarted_from says which, and summary() warns. Needs two
  /// chains or more; the run with no stuck chain is unchanged. Where the chains can meet at the
  /// end of each metric window of Stan's schedule — the CPU executor's program_counter schedule
  /// (the default), with or without pool_metric — they do, and the same rule runs there too: a
  /// chain stuck then takes the point, step size and metric of the next chain that is not
  /// (nuts_fit::warmup_restarted_from), long before the run's end, and is not run again. Chains
  /// that are not stuck draw what they would have drawn without the meetings, bit for bit (they
  /// wait there for the slowest chain: docs/nuts.md gives the cost). false: chains are kept as
  /// they ran, and do not meet unless pool_metric is set.
  bool restart_stuck_chains = true;
  /// Progress: every `refresh` iterations of each chain (and at its first and last), on_progress
  /// is called, or, when it is empty, a line in Stan's format goes to std::clog
  /// ("Chain 2: Iteration: 100 / 2000 [  5%]  (Warmup)"). 0: silent. Calls are serialised, from
  /// the sampling threads.
  int refresh = 0;
  std::function<void(const nuts_progress&)> on_progress = {};
  /// Where the chains run: tyche::cpu{.threads = …, .lanes = …} (the default, cpu{}) or
  /// tyche::cuda{…}.
  nuts_executor executor = cpu{};
};

/// The result of nuts(): per chain, the draws on the constrained scale and Stan's sampler
/// statistics, plus the adapted step size and metric.
struct nuts_fit {
  std::vector<std::string> names;  // parameter names, Stan style, then the quantities' names
  int chains = 0, draws = 0;
  std::vector<std::vector<double>> values;                     // [chain][draw * dim + k]
  /// The last `quantities` names and values of each draw are the model's quantities
  /// (quantity<"name">(e) terms, computed from the draw), not parameters: the values before
  /// them are what model.unconstrain takes.
  int quantities = 0;
  std::vector<std::vector<samplers::transition_stats>> stats;  // [chain][draw]
  std::vector<double> step_size;                               // [chain]
  std::vector<std::vector<double>> inv_metric;                 // [chain]: diagonal, or d × d row-major
                                                               // (low_rank: while d ≤ 1,000, else empty)
  /// [chain], metric = low_rank: the metric's factors (samplers/nuts/low_rank.hpp: k, kmax, σ,
  /// λ − 1, U; low_rank_dense gives the d × d matrix); empty for the other metrics.
  std::vector<std::vector<double>> inv_metric_factors;
  long long gradient_evaluations = 0;  // leapfrog gradients of all chains, warm-up included
  int lanes = 1;                       // chains per SIMD group actually used
  int threads = 1;                     // CPU executor: threads that held chains (split helpers not counted)
  int helper_threads = 0;              // CPU executor: threads that only helped split evaluations (cpu::split)
  int ranks = 1;                       // tyche::mpi: the processes that ran (threads, helper_threads and
                                       // device_seconds are then sums over them; seconds is this rank's)
  int split = 1;                       // parts of each evaluation (cpu::split) actually used
  /// cpu::split: the parts evaluated, and how many of them the helper threads ran (the rest ran
  /// on the chains' threads): with one helper, near half means the second core did its share;
  /// near 0, that it was busy with something else. 0 and 0 unsplit. (tyche::mpi: sums over the ranks.)
  long long split_parts = 0, split_parts_by_helpers = 0;
  double utilization = 1;              // useful lane gradients / lane slots evaluated
  int max_depth = 10;                  // the configured maximum tree depth (for summary's warning)
  int warmup = 0;                      // the configured warm-up iterations (for summary's warning)
  double adapt_delta = 0.8;            // the configured target acceptance statistic
  std::uint64_t seed = 1;              // the seed the chains' streams were keyed by
  double seconds = 0;                  // wall-clock time of the run (warm-up and sampling)
  /// [chain], the CPU executor: wall-clock seconds from the chain's start (its initial point) to
  /// the end of its last warm-up iteration, and from there to its last draw — what CmdStan's CSV
  /// calls its elapsed warm-up and sampling times. Chains that share a thread take turns, so each
  /// one's times include the others' work meanwhile. NaN where not measured (the device
  /// executor, whose chains run their whole warm-up inside its kernels).
  std::vector<double> warmup_seconds, sampling_seconds;
  double device_seconds = 0;           // tyche::cuda: of which in the device's kernels, initialisation
                                       // included, and the host's work that overlaps the first launch
                                       // where it outlasts it (0 on the CPU)
  bool emulated_device = false;        // tyche::cuda{.emulate = true}: the device executor run on the host
  /// [chain]: −1, or the chain from whose last draw this chain was run again because warm-up
  /// had left it stuck (nuts_config::restart_stuck_chains); its draws are the second run's.
  std::vector<int> restarted_from;
  /// [chain]: −1, or the chain whose state this chain took during warm-up, where the chains met
  /// at the end of a metric window and found it stuck (restart_stuck_chains), and the warm-up
  /// iteration of that meeting (warmup_restarted_at; the last such restart).
  std::vector<int> warmup_restarted_from, warmup_restarted_at;

  [[nodiscard]] std::size_t dim() const { return names.size(); }
  /// Draw d of chain c (both from 0): its dim() values — the parameters' constrained values,
  /// then the quantities' (the model's m.constrained_dim() + m.quantity_count(), not m.dim()) —
  /// as a view into `values`. m.sample_observations_at(fit.draw(c, d), rng) is a posterior
  /// predictive draw. Throws std::out_of_range naming the chain and draw.
  [[nodiscard]] std::span<const double> draw(int c, int d) const {
    return detail::draw_of(values, chains, draws, dim(), c, d, "tyche::nuts_fit");
  }
  /// The column of the value named `name` ("mu", "theta[2]": Stan's names, 1-based); throws
  /// std::out_of_range naming the names there are when there is none.
  [[nodiscard]] std::size_t index(std::string_view name) const {
    return detail::index_of_name(names, name, "tyche::nuts_fit");
  }
  /// Draws of parameter k, chain by chain: [chain][draw].
  [[nodiscard]] std::vector<std::vector<double>> parameter(std::size_t k) const {
    if (k >= dim())
      throw std::out_of_range("tyche::nuts_fit::parameter: index " + std::to_string(k) + ", but the fit has " +
                              std::to_string(dim()) + " values");
    std::vector<std::vector<double>> out(static_cast<std::size_t>(chains));
    for (int c = 0; c < chains; ++c) {
      out[c].resize(static_cast<std::size_t>(draws));
      for (int d = 0; d < draws; ++d) out[c][d] = values[c][d * dim() + k];
    }
    return out;
  }
  /// Draws of the value named `name`, chain by chain: [chain][draw].
  [[nodiscard]] std::vector<std::vector<double>> parameter(std::string_view name) const {
    return parameter(index(name));
  }
  /// The mean of the value named `name` over every chain's draws (summary(fit) has the rest:
  /// sd, quantiles, R-hat, ESS).
  [[nodiscard]] double mean_of(std::string_view name) const {
    const std::size_t k = index(name);
    double sum = 0;
    long long n = 0;
    for (int c = 0; c < chains; ++c)
      for (int d = 0; d < draws; ++d, ++n) sum += values[c][static_cast<std::size_t>(d) * dim() + k];
    return n > 0 ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
  }
  [[nodiscard]] int divergences() const {
    int n = 0;
    for (const auto& chain : stats)
      for (const auto& s : chain) n += s.divergent ? 1 : 0;
    return n;
  }
};

}  // namespace tyche
