// tyche/mpi.hpp — NUTS across the processes of an MPI program (issue 17; docs/mpi.md). Not part
// of <tyche/tyche.hpp>: it needs <mpi.h> (Open MPI from Debian's libopenmpi-dev; the CMake
// target tyche::mpi). Two ways to use several processes, each a collective call that every rank
// of the communicator makes with the same configuration:
//
//   tyche::mpi::nuts(model, config, comm)          the chains spread over the ranks: each rank runs
//       a block of them (nuts_config::first_chain), the fit is gathered on every rank and is the
//       fit one process would give with the same seed, bit for bit;
//   tyche::mpi::nuts_sharded(model, config, comm)  the data spread over the ranks: each rank's
//       model holds its block of observations, the log density is the sum of the ranks' log
//       densities (one gather of value and gradient per evaluation), and every rank runs the same
//       NUTS chains in step, with the same random numbers, on the same sums.
//
// An error on one rank (a chain that cannot start, a model whose evaluation throws, models whose
// parameters differ between ranks) ends the call on every rank with the same exception, naming
// the rank: no rank is left waiting in a collective.
//
// This header includes only <tyche/tyche.hpp> and <mpi.h>: beside the single header
// (single_include/tyche/tyche.hpp) it works as it is.
#pragma once
#include <tyche/tyche.hpp>

// The C interface only: Open MPI's and MPICH's C++ bindings (deprecated since MPI 2.2, removed in
// MPI 3) are not needed, and Open MPI's do not compile warning-free.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace tyche::mpi {

namespace detail {
/// Throws std::logic_error, naming the call, unless MPI is initialised and not yet finalised
/// (MPI_Initialized and MPI_Finalized may be called at any time; any other MPI call before
/// MPI_Init is an error that Open MPI reports by aborting the job, without naming tyche's call).
inline void require_initialized(const char* who) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized == 0)
    throw std::logic_error(std::string(who) + ": MPI is not initialised: call MPI_Init (or MPI_Init_thread) at the "
                           "start of main, before any tyche::mpi call (docs/mpi.md)");
  if (finalized != 0)
    throw std::logic_error(std::string(who) + ": MPI is already finalised: make tyche::mpi calls before MPI_Finalize");
}
}  // namespace detail

/// This process's rank and the number of ranks of comm. Throw std::logic_error before MPI_Init or
/// after MPI_Finalize.
inline int rank(MPI_Comm comm = MPI_COMM_WORLD) {
  detail::require_initialized("tyche::mpi::rank");
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
inline int size(MPI_Comm comm = MPI_COMM_WORLD) {
  detail::require_initialized("tyche::mpi::size");
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}

/// The block [begin, end) of n items (observations, chains) that rank r of `ranks` holds: the
/// first n mod ranks ranks hold one more. Blocks are contiguous and in rank order.
struct block {
  std::size_t begin = 0, end = 0;
  [[nodiscard]] std::size_t size() const { return end - begin; }
};
inline block block_of(std::size_t n, int r, int ranks) {
  const std::size_t p = static_cast<std::size_t>(ranks), k = static_cast<std::size_t>(r);
  const std::size_t base = n / p, extra = n % p;
  const std::size_t begin = k * base + std::min(k, extra);
  return {begin, begin + base + (k < extra ? 1 : 0)};
}
/// This rank's block of n items.
inline block block_of(std::size_t n, MPI_Comm comm = MPI_COMM_WORLD) { return block_of(n, rank(comm), size(comm)); }

namespace detail {

/// Collective: rank `root`'s bytes on every rank, in pieces of at most 2^30 bytes (MPI counts are
/// ints; a fit's draws may hold more than 2^31 bytes).
inline std::vector<char> broadcast_bytes(std::vector<char> bytes, int root, MPI_Comm comm) {
  std::uint64_t n = bytes.size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, root, comm);
  bytes.resize(static_cast<std::size_t>(n));
  constexpr std::size_t piece = std::size_t{1} << 30;
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    MPI_Bcast(bytes.data() + at, static_cast<int>(std::min(piece, bytes.size() - at)), MPI_BYTE, root, comm);
  return bytes;
}

/// Collective: every rank's bytes, in rank order (one broadcast per rank: sizes of any length).
inline std::vector<std::vector<char>> all_bytes(const std::vector<char>& mine, MPI_Comm comm) {
  const int n = size(comm), me = rank(comm);
  std::vector<std::vector<char>> out(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) out[static_cast<std::size_t>(r)] = broadcast_bytes(r == me ? mine : std::vector<char>(), r, comm);
  return out;
}

/// Collective: throws on every rank when `error` is not empty on some rank — the message of the
/// first such rank, prefixed "tyche::mpi: rank r: " (and how many ranks failed, when several did).
inline void throw_if_any(const std::string& error, MPI_Comm comm) {
  int mine = error.empty() ? 0 : 1, failed = 0;
  MPI_Allreduce(&mine, &failed, 1, MPI_INT, MPI_SUM, comm);
  if (failed == 0) return;
  const auto messages = all_bytes(std::vector<char>(error.begin(), error.end()), comm);
  for (std::size_t r = 0; r < messages.size(); ++r) {
    if (messages[r].empty()) continue;
    std::string what = "tyche::mpi: rank " + std::to_string(r) + ": " + std::string(messages[r].begin(), messages[r].end());
    if (failed > 1) what += " (and " + std::to_string(failed - 1) + " other rank" + (failed > 2 ? "s" : "") + " failed)";
    throw std::runtime_error(what);
  }
}

/// Runs f, returning its exception's message ("" when it returned).
template <class F>
std::string capture(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return what.empty() ? std::string("an exception with no message") : what;
  } catch (...) {
    return "an exception that is not a std::exception";
  }
  return {};
}

/// A fit's chains as bytes, and back (the chains of several ranks appended in rank order).
class fit_writer {
 public:
  template <class T>
  void put(const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const char*>(&x);
    bytes.insert(bytes.end(), p, p + sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(static_cast<std::uint64_t>(v.size()));
    const auto* p = reinterpret_cast<const char*>(v.data());
    bytes.insert(bytes.end(), p, p + v.size() * sizeof(T));
  }
  std::vector<char> bytes;
};
class fit_reader {
 public:
  explicit fit_reader(const std::vector<char>& b) : bytes_(b) {}
  template <class T>
  T get() {
    T x;
    need(sizeof(T));
    std::memcpy(&x, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return x;
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = static_cast<std::size_t>(get<std::uint64_t>());
    need(n * sizeof(T));
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), bytes_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return v;
  }

 private:
  void need(std::size_t n) const {
    if (at_ + n > bytes_.size()) throw std::logic_error("tyche::mpi: a rank's fit arrived truncated");
  }
  const std::vector<char>& bytes_;
  std::size_t at_ = 0;
};

/// The chains of `fit` (values, statistics, step size, metric, restarts) and its counters.
inline std::vector<char> chains_to_bytes(const nuts_fit& fit) {
  fit_writer w;
  w.put(fit.chains);
  w.put(fit.gradient_evaluations);
  const double slots = fit.utilization > 0 ? static_cast<double>(fit.gradient_evaluations) / fit.utilization : 0.0;
  w.put(slots);
  w.put(fit.device_seconds);
  for (int c = 0; c < fit.chains; ++c) {
    const auto k = static_cast<std::size_t>(c);
    w.put_vector(fit.values[k]);
    w.put_vector(fit.stats[k]);
    w.put(fit.step_size[k]);
    w.put_vector(fit.inv_metric[k]);
    w.put_vector(k < fit.inv_metric_factors.size() ? fit.inv_metric_factors[k] : std::vector<double>{});
    w.put(k < fit.restarted_from.size() ? fit.restarted_from[k] : -1);
    constexpr double unmeasured = std::numeric_limits<double>::quiet_NaN();
    w.put(k < fit.warmup_seconds.size() ? fit.warmup_seconds[k] : unmeasured);
    w.put(k < fit.sampling_seconds.size() ? fit.sampling_seconds[k] : unmeasured);
  }
  return std::move(w.bytes);
}

/// Appends the chains of one rank (chains_to_bytes) to `fit`; adds its counters to `slots`.
inline void append_chains(nuts_fit& fit, const std::vector<char>& bytes, double& slots) {
  fit_reader r(bytes);
  const int chains = r.get<int>();
  fit.gradient_evaluations += r.get<long long>();
  slots += r.get<double>();
  fit.device_seconds += r.get<double>();
  for (int c = 0; c < chains; ++c) {
    fit.values.push_back(r.get_vector<double>());
    fit.stats.push_back(r.get_vector<samplers::transition_stats>());
    fit.step_size.push_back(r.get<double>());
    fit.inv_metric.push_back(r.get_vector<double>());
    std::vector<double> factors = r.get_vector<double>();  // (low rank only: else none, as nuts() leaves it)
    if (!factors.empty() || !fit.inv_metric_factors.empty()) {
      fit.inv_metric_factors.resize(fit.inv_metric.size() - 1);
      fit.inv_metric_factors.push_back(std::move(factors));
    }
    fit.restarted_from.push_back(r.get<int>());
    fit.warmup_restarted_from.push_back(-1);  // chains across ranks do not pool (pool_metric is an error)
    fit.warmup_restarted_at.push_back(-1);
    fit.warmup_seconds.push_back(r.get<double>());
    fit.sampling_seconds.push_back(r.get<double>());
  }
  fit.chains += chains;
}

/// A fit's frame (names, settings) with no chains: append_chains fills it.
inline nuts_fit empty_frame(const nuts_config& cfg, std::vector<std::string> names) {
  nuts_config none = cfg;
  none.chains = 0;
  return samplers::detail::make_fit_frame(none, std::move(names));
}

/// The lanes and parts a one-process nuts() with this configuration would use (cpu::lanes = 0
/// and cpu::split = 0 resolved as cpu_executor.hpp's resolve_cpu_layout does for all the
/// chains), so that every rank uses that width and split.
template <class Target>
samplers::detail::cpu_layout one_process_layout(const nuts_config& cfg, const cpu& exec, const Target& target) {
  return samplers::detail::resolve_cpu_layout(exec, cfg.chains, samplers::detail::shape_of(target));
}

/// An FNV-1a hash of bytes (model signatures compared across ranks).
inline std::uint64_t hash_bytes(const void* data, std::size_t n, std::uint64_t h = 1469598103934665603ULL) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

/// What every rank's call must agree on, so that the ranks make the same collective calls, as
/// (setting, hash of its value) in a fixed order: the sampling settings, the initial values and
/// the executor's settings that change results (not cpu::threads nor cuda::device, which may
/// differ from machine to machine).
inline std::vector<std::pair<const char*, std::uint64_t>> config_fingerprints(const nuts_config& cfg) {
  std::vector<std::pair<const char*, std::uint64_t>> out;
  auto add = [&](const char* name, const auto& x) { out.emplace_back(name, hash_bytes(&x, sizeof x)); };
  add("chains", cfg.chains), add("warmup", cfg.warmup), add("draws", cfg.draws), add("seed", cfg.seed);
  add("max_depth", cfg.max_depth), add("adapt_delta", cfg.adapt_delta), add("first_chain", cfg.first_chain);
  add("init_step_size", cfg.init_step_size), add("init_radius", cfg.init_radius), add("metric", cfg.metric);
  add("metric_estimator", cfg.metric_estimator), add("restart_stuck_chains", cfg.restart_stuck_chains);
  add("pool_metric", cfg.pool_metric);
  std::uint64_t h = hash_bytes(nullptr, 0);
  for (const auto& v : cfg.init) h = hash_bytes(v.data(), v.size() * sizeof(double), hash_bytes(&h, sizeof h));
  add("init", h);
  add("init_inv_metric", hash_bytes(cfg.init_inv_metric.data(), cfg.init_inv_metric.size() * sizeof(double)));
  add("init_inv_metric_factors",
      hash_bytes(cfg.init_inv_metric_factors.data(), cfg.init_inv_metric_factors.size() * sizeof(double)));
  add("low_rank_max_rank", cfg.low_rank_max_rank);
  add("executor (cpu or cuda)", cfg.executor.index());
  const cpu c = std::holds_alternative<cpu>(cfg.executor) ? std::get<cpu>(cfg.executor) : cpu{};
  add("cpu::lanes", c.lanes), add("cpu::schedule", c.schedule), add("cpu::lane_kernel", c.lane_kernel);
  add("cpu::split", c.split);
  const cuda g = std::holds_alternative<cuda>(cfg.executor) ? std::get<cuda>(cfg.executor) : cuda{};
  add("cuda::emulate", g.emulate), add("cuda::gradient", g.gradient), add("cuda::threads_per_block", g.threads_per_block);
  add("cuda::draws_per_launch", g.draws_per_launch), add("cuda::tiles", g.tiles), add("cuda::chain_group", g.chain_group);
  add("cuda::shared_gradient", g.shared_gradient), add("cuda::separate_controllers", g.separate_controllers);
  add("cuda::worker_blocks", g.worker_blocks), add("cuda::init_on_device", g.init_on_device);
  return out;
}

/// Collective: throws on every rank unless every rank's configuration is rank 0's
/// (config_fingerprints; the message names the first setting that differs): ranks with other
/// settings would make other collective calls, and wait.
inline void check_same_config(const nuts_config& cfg, const std::string& who, MPI_Comm comm) {
  const auto mine = config_fingerprints(cfg);
  std::vector<std::uint64_t> first(mine.size());
  for (std::size_t k = 0; k < mine.size(); ++k) first[k] = mine[k].second;
  MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_UINT64_T, 0, comm);
  std::string error;
  for (std::size_t k = 0; k < mine.size() && error.empty(); ++k)
    if (mine[k].second != first[k])
      error = who + ": this rank's configuration differs from rank 0's in " + mine[k].first +
              " (every rank must make the call with the same chains, warm-up, draws, seed, initial values and "
              "executor settings; only cpu::threads and cuda::device may differ)";
  throw_if_any(error, comm);
}

/// The log density of a data-sharded model as the sampler sees it: this rank's model (a
/// log_density_target) evaluated at θ, then every rank's value and gradient gathered and summed
/// in rank order — the same sum, bit for bit, on every rank. Each evaluation is a collective: the
/// ranks' samplers call it in the same sequence because they run the same chains on the same sums
/// with the same random numbers (one thread per rank). θ is checked to be the same on every rank,
/// and an evaluation that throws on one rank throws on all.
template <class Local>
class sharded_target {
 public:
  sharded_target(const Local& local, MPI_Comm comm) : local_(local), comm_(comm), ranks_(size(comm)) {
    unsigned long long mine[2] = {0, 0}, total[2] = {0, 0};
    if constexpr (requires { local.data_values(); }) mine[0] = local.data_values();
    if constexpr (requires { local.matrix_values(); }) mine[1] = local.matrix_values();
    MPI_Allreduce(mine, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    data_values_ = static_cast<std::size_t>(total[0]);  // the same on every rank: the same lanes
    matrix_values_ = static_cast<std::size_t>(total[1]);
  }
  /// The same sums over another evaluation of this rank's block (its parts on threads), without
  /// another collective: a rank may build it where another does not.
  sharded_target(const Local& local, const sharded_target& totals)
      : local_(local), comm_(totals.comm_), ranks_(totals.ranks_), data_values_(totals.data_values_),
        matrix_values_(totals.matrix_values_) {}
  [[nodiscard]] std::size_t dim() const { return local_.dim(); }
  [[nodiscard]] std::size_t constrained_dim() const { return local_.constrained_dim(); }
  [[nodiscard]] std::size_t workspace_size() const { return local_.workspace_size(); }
  [[nodiscard]] std::size_t data_values() const { return data_values_; }
  [[nodiscard]] std::size_t matrix_values() const { return matrix_values_; }

  template <class T>
  T value_and_gradient(const T* q, T* grad, T* workspace) const {
    using traits = lane_traits<T>;
    constexpr std::size_t w = static_cast<std::size_t>(traits::width);
    const std::size_t d = dim();
    const std::size_t n = 2 + w + d * w;  // status, θ's hash, value per lane, gradient per lane
    send_.assign(n, 0.0);
    T value{};
    std::string error = capture([&] { value = local_.value_and_gradient(q, grad, workspace); });
    std::uint64_t h = 1469598103934665603ULL;
    for (std::size_t k = 0; k < d; ++k) {
      typename traits::real lanes[w];
      traits::store(lanes, q[k]);
      h = hash_bytes(lanes, sizeof lanes, h);
    }
    send_[0] = error.empty() ? 0.0 : 1.0;
    std::memcpy(&send_[1], &h, sizeof h);
    if (error.empty()) {
      traits::store(&send_[2], value);
      for (std::size_t k = 0; k < d; ++k) traits::store(&send_[2 + w + k * w], grad[k]);
    }
    recv_.resize(n * static_cast<std::size_t>(ranks_));
    MPI_Allgather(send_.data(), static_cast<int>(n), MPI_DOUBLE, recv_.data(), static_cast<int>(n), MPI_DOUBLE, comm_);
    bool failed = false;
    for (int r = 0; r < ranks_; ++r) failed = failed || recv_[static_cast<std::size_t>(r) * n] != 0.0;
    if (failed) throw_if_any(error, comm_);
    for (int r = 1; r < ranks_; ++r)
      if (std::memcmp(&recv_[static_cast<std::size_t>(r) * n + 1], &recv_[1], sizeof h) != 0)
        throw std::logic_error("tyche::mpi::nuts_sharded: rank " + std::to_string(r) +
                               " evaluated the log density at another θ than rank 0: the ranks' samplers are not in "
                               "step (every rank must call nuts_sharded with the same configuration)");
    // Σ over ranks in rank order, lane by lane: the same rounding on every rank.
    for (std::size_t i = 2; i < n; ++i) {
      double s = recv_[i];
      for (int r = 1; r < ranks_; ++r) s += recv_[static_cast<std::size_t>(r) * n + i];
      send_[i] = s;
    }
    for (std::size_t k = 0; k < d; ++k) grad[k] = traits::load(&send_[2 + w + k * w]);
    return traits::load(&send_[2]);
  }

  template <class Generator>
  [[nodiscard]] std::vector<double> initial_point(Generator& rng, double radius) const {
    return local_.initial_point(rng, radius);
  }
  void constrain(const double* q, std::vector<double>& out) const { local_.constrain(q, out); }
  [[nodiscard]] std::vector<double> unconstrain(const std::vector<double>& values) const
    requires requires(const Local& t) { t.unconstrain(values); }
  {
    return local_.unconstrain(values);
  }
  /// Collective: every rank's terms that are not finite at q ("rank r: …").
  [[nodiscard]] std::string non_finite_terms(const double* q) const
    requires requires(const Local& t) { t.non_finite_terms(q); }
  {
    std::string mine;
    const std::string error = capture([&] { mine = local_.non_finite_terms(q); });
    if (!error.empty()) mine = "(its terms could not be evaluated: " + error + ")";
    const auto all = all_bytes(std::vector<char>(mine.begin(), mine.end()), comm_);
    std::string out;
    for (std::size_t r = 0; r < all.size(); ++r) {
      if (all[r].empty()) continue;
      if (!out.empty()) out += "; ";
      out += "rank " + std::to_string(r) + ": " + std::string(all[r].begin(), all[r].end());
    }
    return out;
  }

 private:
  const Local& local_;
  MPI_Comm comm_;
  int ranks_;
  std::size_t data_values_ = 0;
  std::size_t matrix_values_ = 0;
  mutable std::vector<double> send_, recv_;
};

/// The first of m's random variables that is not declared flat, as a message ("" when all are).
template <class Model>
std::string non_flat_parameter(const Model& m) {
  for (const std::string& term : m.term_descriptions()) {
    const std::string variable = "the random variable '";
    if (!term.starts_with(variable) || term.ends_with("(flat)")) continue;
    const std::string name = term.substr(variable.size(), term.find('\'', variable.size()) - variable.size());
    return "tyche::mpi::nuts_sharded: this rank's model gives " + term.substr(4) +
           " a prior: the log density is the sum of the ranks' models, so only rank 0's carries the priors; declare "
           "it flat<\"" + name + "\">(...) of the same support here (docs/mpi.md)";
  }
  return {};
}

/// Collective: throws on every rank unless every rank's model has rank 0's parameter names, in
/// order; the message, prefixed by `who`, lists both and ends with `rule`.
template <class Model>
void check_same_names(const Model& m, const char* who, const char* rule, MPI_Comm comm) {
  std::string mine;
  std::string error = capture([&] {
    for (const auto& name : m.parameter_names()) mine += name + ", ";
  });
  throw_if_any(error, comm);
  if (!mine.empty()) mine.resize(mine.size() - 2);
  const auto names = all_bytes(std::vector<char>(mine.begin(), mine.end()), comm);
  const std::string first(names[0].begin(), names[0].end());
  if (mine != first)
    error = std::string(who) + ": this rank's model has the parameters (" + mine + ") but rank 0's has (" + first +
            "): " + rule + " (docs/mpi.md)";
  throw_if_any(error, comm);
}

/// Collective: throws on every rank unless every rank's model has rank 0's parameters — the same
/// names, dimensions and supports (constrain gives the same values, bit for bit, at three
/// points) — as a data-sharded fit needs.
template <class Model>
void check_same_parameters(const Model& m, MPI_Comm comm) {
  std::string error, found;
  if (rank(comm) != 0) error = capture([&] { found = non_flat_parameter(m); });
  throw_if_any(error.empty() ? found : error, comm);
  check_same_names(m, "tyche::mpi::nuts_sharded", "every rank's model must declare the same parameters", comm);
  // The same names on every rank (above), so the same count of constrained values: each one's
  // values at three points, hashed, against rank 0's.
  const std::vector<std::string> values = m.parameter_names();
  std::vector<std::uint64_t> mine_h(values.size() + 1, hash_bytes(nullptr, 0));
  mine_h.back() = m.dim();
  error = capture([&] {
    for (const double x : {-0.7, 0.3, 1.9}) {
      const std::vector<double> q(m.dim(), x);
      const auto c = m.constrain(std::span<const double>(q));
      for (std::size_t k = 0; k < c.size() && k < values.size(); ++k) mine_h[k] = hash_bytes(&c[k], sizeof(double), mine_h[k]);
    }
  });
  throw_if_any(error, comm);
  std::vector<std::uint64_t> first_h = mine_h;
  MPI_Bcast(first_h.data(), static_cast<int>(first_h.size()), MPI_UINT64_T, 0, comm);
  if (mine_h.back() != first_h.back()) {
    error = "tyche::mpi::nuts_sharded: this rank's model has the parameters of rank 0's but another number of "
            "unconstrained coordinates (" + std::to_string(m.dim()) + " here, " + std::to_string(first_h.back()) +
            " on rank 0): declare each parameter with the transform of rank 0's prior (docs/mpi.md)";
  } else {
    for (std::size_t k = 0; k < values.size() && error.empty(); ++k)
      if (mine_h[k] != first_h[k]) {
        const std::string base = values[k].substr(0, values[k].find('['));
        error = "tyche::mpi::nuts_sharded: this rank's '" + values[k] + "' is not constrained as rank 0's (another "
                "support or transform): declare it with the transform of rank 0's prior, e.g. flat<\"" + base +
                "\">(positive()) where rank 0 has a half-normal prior on " + base + " (docs/mpi.md)";
      }
  }
  throw_if_any(error, comm);
}

/// Collective: throws on every rank unless every rank's model has rank 0's parameters and gives
/// rank 0's log density and gradient at three points of the unconstrained space (coordinate k at
/// −0.7, 0.3 and 1.9 plus 0.01·(k mod 64)) — what mpi::nuts needs, since every rank's chains
/// are gathered into one fit: a rank that read other data (a stale file on one node, another
/// path) would sample another posterior, which only R̂ might reveal. Values compared to 1e-10
/// relative (the same binary gives the same bits; a node with other arithmetic may round
/// otherwise); an evaluation that throws or is not finite must do so on rank 0 too.
template <class Model>
void check_same_density(const Model& m, const char* who, MPI_Comm comm) {
  check_same_names(m, who, "every rank must make the call with the same model and data", comm);
  std::string error;
  // Per point: the log density, the gradient's 2-norm, its weighted sum Σ (k + 1)·gₖ (an error in
  // one coordinate changes it) and that sum's scale Σ (k + 1)·|gₖ|, or NaN where the evaluation
  // threw.
  constexpr int points = 3, per = 4;
  constexpr double at[points] = {-0.7, 0.3, 1.9};
  unsigned long long dims[2] = {static_cast<unsigned long long>(m.dim()), 0};
  dims[1] = dims[0];
  MPI_Bcast(&dims[1], 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  if (dims[0] != dims[1])
    error = std::string(who) + ": this rank's model has " + std::to_string(dims[0]) +
            " unconstrained coordinates but rank 0's has " + std::to_string(dims[1]) +
            ": every rank must make the call with the same model and data (docs/mpi.md)";
  throw_if_any(error, comm);
  double mine[per * points];
  for (int p = 0; p < points; ++p) {
    std::vector<double> q(m.dim()), g(m.dim());
    for (std::size_t k = 0; k < q.size(); ++k) q[k] = at[p] + 0.01 * static_cast<double>(k % 64);
    double lp = std::numeric_limits<double>::quiet_NaN(), norm = lp, weighted = lp, scale = lp;
    (void)capture([&] {
      lp = m.log_prob_and_gradient(std::span<const double>(q), std::span<double>(g));
      norm = weighted = scale = 0;
      for (std::size_t k = 0; k < g.size(); ++k) {
        norm += g[k] * g[k];
        weighted += g[k] * static_cast<double>(k + 1);
        scale += std::abs(g[k]) * static_cast<double>(k + 1);
      }
      norm = std::sqrt(norm);
    });
    mine[per * p] = lp, mine[per * p + 1] = norm, mine[per * p + 2] = weighted, mine[per * p + 3] = scale;
  }
  double first[per * points];
  std::memcpy(first, mine, sizeof mine);
  MPI_Bcast(first, per * points, MPI_DOUBLE, 0, comm);
  // Equal to 1e-10 relative to `size` (at least 1 for the log density, the sum's scale for the
  // gradient's sums): another node's rounding passes, another datum does not.
  auto same = [](double a, double b, double size) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::abs(a - b) <= 1e-10 * size;
  };
  for (int p = 0; p < points && error.empty(); ++p) {
    const double* a = mine + per * p;
    const double* b = first + per * p;
    const double gradient_size = std::max({a[3], b[3], std::numeric_limits<double>::min()});
    const bool lp_same = same(a[0], b[0], std::max({std::abs(a[0]), std::abs(b[0]), 1.0}));
    if (lp_same && same(a[1], b[1], gradient_size) && same(a[2], b[2], gradient_size)) continue;
    std::ostringstream os;
    os << who << ": this rank's model gives another " << (lp_same ? "gradient" : "log density")
       << " than rank 0's at the same point (unconstrained coordinate k at " << at[p] << " + 0.01·(k mod 64)): ";
    os.precision(17);
    if (!lp_same)
      os << a[0] << " here, " << b[0] << " on rank 0";
    else
      os << "gradient norm " << a[1] << " and weighted sum Σ(k + 1)·g[k] " << a[2] << " here, " << b[1] << " and "
         << b[2] << " on rank 0";
    os << ". Every rank must make the call with the same model and the same data: has this rank read another "
          "data file? (For data split over the ranks, use mpi::nuts_sharded; docs/mpi.md)";
    error = os.str();
  }
  throw_if_any(error, comm);
}

/// Throws unless MPI was initialised with at least MPI_THREAD_FUNNELED (MPI_Init_thread): a
/// data-sharded rank's helper threads make no MPI call, but the process is then multithreaded,
/// which MPI_THREAD_SINGLE (what MPI_Init may give) rules out.
inline void require_funneled() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_FUNNELED)
    throw std::invalid_argument(
        "tyche::mpi::nuts_sharded: cpu::threads > 1 starts threads beside the rank's MPI calls, which needs "
        "MPI_THREAD_FUNNELED or more, but MPI was initialised with MPI_THREAD_SINGLE: call "
        "MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) instead of MPI_Init (docs/mpi.md)");
}

/// How a data-sharded rank evaluates its block (nuts_sharded's cpu settings): `threads` threads
/// (the chains' own and threads − 1 helpers) and `split` parts of a scalar chain's gradient
/// (cpu::split: 0 automatic, 1 never, k parts), for `chains` chains in `lanes` (cpu::lanes).
struct shard_threads {
  int threads = 1, split = 1, chains = 1, lanes = 1;
};

/// The parts of this rank's scalar gradients (cpu::split's rule, with this rank's block of data
/// and its helper threads): split ≥ 1 as given for scalar chains (k > 1 needs a model that
/// evaluates in parts); split = 0: cpu_split_parts when the rank has helper threads, its chains
/// are scalar and its block's loops do at least cpu_split_min_work of work per evaluation
/// (model_t::split_work).
/// data_values, matrix_values: all the ranks' (the lanes are chosen from them, as the run does).
template <class Erased>
std::size_t shard_parts(const Erased& local, const shard_threads& t, std::size_t data_values,
                        std::size_t matrix_values) {
  const bool scalar = samplers::detail::resolve_lanes(t.lanes, t.chains, 1, data_values, matrix_values) == 1;
  if (t.split > 1 && !local.splittable())
    throw std::invalid_argument("tyche::mpi::nuts_sharded: split = " + std::to_string(t.split) +
                                ": this rank's model cannot evaluate its log density in parts");
  if (t.split >= 1) return scalar ? static_cast<std::size_t>(t.split) : 1;
  const bool split = local.splittable() && scalar && t.threads > 1 &&
                     local.split_work() >= cpu_split_min_work;
  return split ? static_cast<std::size_t>(cpu_split_parts) : 1;
}

/// tyche::nuts with this translation unit's settings and the caller's Comparison (mpi::nuts's
/// template argument, from TYCHE_CPU_COMPARISON_MODES).
template <bool Comparison, class Model>
nuts_fit nuts_here(const Model& m, const nuts_config& cfg) {
  // Without the model's quantities: mpi::nuts gathers the chains' parameters, then adds them.
  // (Not a model: mpi::nuts's static_assert says so.)
  if constexpr (sampleable_model<Model>)
    return samplers::detail::run_nuts<Model, TYCHE_CUDA_COMPILER != 0, tyche::lane_batch, TYCHE_DEVICE_EMULATION != 0,
                                      Comparison, false>(m, cfg);
  else
    return nuts_fit{};
}

/// Calls f(target) with the data-sharded log density of model m on this rank: rank 0's model
/// with its log-Jacobian (its priors are the posterior's), every other rank's without (their
/// parameters are declared flat: without the log-Jacobian they add nothing but their
/// observations' terms), the ranks' values and gradients summed (sharded_target). With t's
/// threads and split (nuts_sharded's cpu settings), this rank's own evaluation in parts on its
/// threads first (samplers::detail::split_target), the parts added in part order: the fit does
/// not depend on the threads. f's second argument: the parts (1: unsplit); a third, where f takes
/// one, the helper threads' pool (null unsplit), which counts the parts run. The rank's model enters
/// through the driver's erased target, so sharded_target has one instantiation per program.
template <class Model, bool Comparison = TYCHE_CPU_COMPARISON_MODES != 0, class F>
decltype(auto) with_shard_target(const Model& m, MPI_Comm comm, F&& f, const shard_threads& t = {}) {
  using model_erased_target = samplers::detail::erased_target_for<Comparison>;
  auto on = [&](const model_erased_target& local) {
    sharded_target<model_erased_target> whole(local, comm);
    std::size_t parts = 1;
    std::optional<samplers::detail::part_pool> pool;
    // The helper threads are started before the ranks agree to go on: a rank that cannot start
    // them (or split its block) ends the call on every rank, rather than leave them in a
    // collective.
    throw_if_any(capture([&] {
                   if (t.threads > 1) require_funneled();  // whether or not this block splits
                   parts = shard_parts(local, t, whole.data_values(), whole.matrix_values());
                   if (parts > 1) pool.emplace(t.threads - 1);
                 }),
                 comm);
    // f(target, parts), or f(target, parts, pool) where f takes the pool (null unsplit): what its
    // parts ran (part_pool::parts_run) is known when f's run ends.
    auto call = [&](const auto& target) -> decltype(auto) {
      using pool_pointer = const samplers::detail::part_pool*;
      if constexpr (std::is_invocable_v<F&, decltype(target), std::size_t, pool_pointer>)
        return f(target, parts, pool ? &*pool : pool_pointer{});
      else
        return f(target, parts);
    };
    if (parts == 1) return call(whole);
    const samplers::detail::split_target<model_erased_target> split(local, parts, *pool);
    const model_erased_target in_parts(split);
    return call(sharded_target<model_erased_target>(in_parts, whole));
  };
  // The rank's model_target is named: the erased views hold its address.
  if (rank(comm) == 0) {
    const samplers::detail::model_target<Model, true> local(m);
    return on(model_erased_target(local));
  }
  const samplers::detail::model_target<Model, false> local(m);
  return on(model_erased_target(local));
}

}  // namespace detail

/// NUTS with config.chains chains spread over the ranks of comm, in contiguous blocks (rank r
/// runs chains block_of(chains, r, ranks): nuts_config::first_chain), each rank with its own
/// executor (config.executor: cpu threads and lanes per rank, or a GPU per rank). The fit —
/// draws, statistics, step sizes, metrics, gradient counts — is gathered on every rank and equals
/// the fit of nuts(model, config) in one process with the same seed, bit for bit: cpu::lanes = 0
/// is resolved once, as one process would for all the chains; chains that warm-up left stuck
/// (nuts_config::restart_stuck_chains) are found among all the chains and run again on rank 0
/// after the run (chains on different ranks do not meet at the metric windows' ends, as one
/// process's program_counter schedule makes them: with a stuck chain, the fit is one process's
/// with the trajectory_sync schedule).
/// fit.seconds is this rank's wall-clock time of the whole call. A collective call: every rank of
/// comm makes it, with the same model (its data included) and configuration. With more ranks
/// than chains, some ranks run none. Throws the same exception on every rank when a chain fails.
/// (Comparison is not for callers: as tyche::nuts's, it keeps translation units built with and
/// without TYCHE_CPU_COMPARISON_MODES apart.)
template <class Model, bool Comparison = TYCHE_CPU_COMPARISON_MODES != 0>
nuts_fit nuts(const Model& m, const nuts_config& cfg = {}, MPI_Comm comm = MPI_COMM_WORLD) {
  static_assert(sampleable_model<Model>,
                "tyche::mpi::nuts(model, config, comm) requires a model built with tyche::model(...)");
  const auto start = std::chrono::steady_clock::now();
  detail::require_initialized("tyche::mpi::nuts");
  const int ranks = size(comm), me = rank(comm);
  detail::check_same_config(cfg, "tyche::mpi::nuts", comm);
  detail::check_same_density(m, "tyche::mpi::nuts", comm);
  // What the executor's automatic settings resolve to for all the chains in one process (on rank
  // 0's machine), so that every rank runs its chains as that process would: the SIMD width, the
  // split of each evaluation, the GPU's gradient mode.
  nuts_config local = cfg;
  int resolved[2] = {0, 1};
  std::string error = detail::capture([&] {
    samplers::detail::check_config(cfg);
    if (cfg.pool_metric)
      throw std::invalid_argument("tyche::mpi::nuts: pool_metric = true: chains on different ranks cannot wait for "
                                  "each other to pool their metric; use pool_metric = false, or mpi::nuts_sharded "
                                  "(every rank runs every chain)");
    if (const cpu* exec = std::get_if<cpu>(&cfg.executor)) {
      const samplers::detail::model_target<Model> target(m);
      const samplers::detail::cpu_layout layout =
          detail::one_process_layout(cfg, *exec, samplers::detail::erased_target_for<Comparison>(target));
      resolved[0] = layout.lanes;
      resolved[1] = static_cast<int>(layout.parts);
    } else if (const cuda* gpu = std::get_if<cuda>(&cfg.executor)) {
      resolved[0] = static_cast<int>(samplers::detail::resolve_cuda_gradient(*gpu, cfg.chains, m.split_values()));
    }
  });
  detail::throw_if_any(error, comm);
  MPI_Bcast(resolved, 2, MPI_INT, 0, comm);
  if (const cpu* exec = std::get_if<cpu>(&cfg.executor)) {
    cpu e = *exec;
    e.lanes = resolved[0];
    e.split = resolved[1];
    local.executor = e;
  } else if (const cuda* gpu = std::get_if<cuda>(&cfg.executor)) {
    cuda g = *gpu;
    g.gradient = static_cast<cuda_gradient>(resolved[0]);
    local.executor = g;
  }
  const block mine = block_of(static_cast<std::size_t>(cfg.chains), me, ranks);
  nuts_fit part;
  if (mine.size() > 0) {
    local.chains = static_cast<int>(mine.size());
    local.first_chain = cfg.first_chain + static_cast<int>(mine.begin);
    if (cfg.init.size() > 1)
      local.init.assign(cfg.init.begin() + static_cast<std::ptrdiff_t>(mine.begin),
                        cfg.init.begin() + static_cast<std::ptrdiff_t>(mine.end));
    local.restart_stuck_chains = false;  // decided below, among all the chains
    error = detail::capture([&] { part = detail::nuts_here<Comparison>(m, local); });
  }
  detail::throw_if_any(error, comm);

  // Every rank's chains, in rank order: chain order.
  const auto all = detail::all_bytes(detail::chains_to_bytes(part), comm);
  nuts_fit fit = detail::empty_frame(cfg, m.parameter_names());
  double slots = 0;
  for (const auto& bytes : all) detail::append_chains(fit, bytes, slots);
  fit.utilization = slots > 0 ? static_cast<double>(fit.gradient_evaluations) / slots : 1.0;
  if (const cuda* device = std::get_if<cuda>(&local.executor)) fit.emulated_device = device->emulate;
  if (const cpu* exec = std::get_if<cpu>(&local.executor)) {
    fit.lanes = exec->lanes;
    fit.split = exec->split;
    // Every rank's threads (those that held chains, and the split's helpers) and split parts,
    // summed in one call (as doubles: counts below 2^53 are exact).
    double mine_counts[4] = {0, 0, 0, 0}, sums[4] = {0, 0, 0, 0};
    if (mine.size() > 0) {
      mine_counts[0] = part.threads;
      mine_counts[1] = part.helper_threads;
      mine_counts[2] = static_cast<double>(part.split_parts);
      mine_counts[3] = static_cast<double>(part.split_parts_by_helpers);
    }
    MPI_Allreduce(mine_counts, sums, 4, MPI_DOUBLE, MPI_SUM, comm);
    fit.threads = static_cast<int>(sums[0]);
    fit.helper_threads = static_cast<int>(sums[1]);
    fit.split_parts = static_cast<long long>(sums[2]);
    fit.split_parts_by_helpers = static_cast<long long>(sums[3]);
  } else {
    fit.lanes = part.lanes;
  }
  fit.ranks = ranks;

  // Stuck chains: found among all the chains (the same on every rank), run again on rank 0.
  fit.restarted_from.assign(static_cast<std::size_t>(fit.chains), -1);
  if (cfg.restart_stuck_chains && !samplers::detail::find_stuck_chains(fit).empty()) {
    if (me == 0)
      error = detail::capture([&] {
        samplers::detail::restart_stuck_chains(fit, cfg,
                                               [&](const nuts_config& again) { return detail::nuts_here<Comparison>(m, again); });
      });
    detail::throw_if_any(error, comm);
    const auto chains = detail::broadcast_bytes(me == 0 ? detail::chains_to_bytes(fit) : std::vector<char>(), 0, comm);
    if (me != 0) {
      nuts_fit again = detail::empty_frame(cfg, m.parameter_names());
      double ignored = 0;
      detail::append_chains(again, chains, ignored);
      again.utilization = fit.utilization;
      again.lanes = fit.lanes;
      again.split = fit.split;
      again.threads = fit.threads;
      again.helper_threads = fit.helper_threads;
      again.split_parts = fit.split_parts;
      again.emulated_device = fit.emulated_device;
      again.split_parts_by_helpers = fit.split_parts_by_helpers;
      again.ranks = fit.ranks;
      fit = std::move(again);
    }
  }
  tyche::detail::append_quantities(m, fit);  // every rank holds every chain: each adds them
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

/// NUTS on a model whose data are spread over the ranks of comm: each rank's model holds its
/// block of observations (block_of(n, comm) gives it), and the log density sampled is rank 0's
/// model's (its priors, the log-Jacobian, its observations) plus the other ranks' observation
/// terms: their models declare the same parameters with flat<...> of the same supports, and are
/// evaluated without the log-Jacobian (docs/mpi.md shows the pattern; the call checks names,
/// sizes, supports and the flat declarations across ranks and throws on every rank when they
/// do not hold). Every rank runs the same chains in step on the summed value and gradient
/// (one MPI_Allgather of d + 1 values per lane and evaluation, summed in rank order, so every
/// rank holds the same numbers and the same fit), with config.executor a tyche::cpu: the chains
/// run on one thread per rank (lanes as usual); with threads = n > 1, n − 1 more threads evaluate
/// parts of each scalar chain's gradient on this rank's block (cpu::split: 0 splits into
/// cpu_split_parts parts when the block's loops do at least cpu_split_min_work of work; k > 1, k
/// parts), added in part order, so that the draws depend on the parts, never on the threads; a
/// rank's threads may differ from another's. fit.split: this rank's parts; fit.threads (the chains'
/// thread of each rank), fit.helper_threads and fit.split_parts / split_parts_by_helpers (the
/// parts the ranks' evaluations ran, and the helpers' share): sums over the ranks. A collective call:
/// every rank of comm makes it with the same configuration. fit.seconds is this rank's
/// wall-clock time.
template <class Model, bool Comparison = TYCHE_CPU_COMPARISON_MODES != 0>
nuts_fit nuts_sharded(const Model& m, nuts_config cfg = {}, MPI_Comm comm = MPI_COMM_WORLD) {
  static_assert(sampleable_model<Model>,
                "tyche::mpi::nuts_sharded(model, config, comm) requires a model built with tyche::model(...)");
  const auto start = std::chrono::steady_clock::now();
  detail::require_initialized("tyche::mpi::nuts_sharded");
  detail::shard_threads shards;
  std::string error = detail::capture([&] {
    samplers::detail::check_config(cfg);
    const cpu* exec = std::get_if<cpu>(&cfg.executor);
    if (exec == nullptr)
      throw std::invalid_argument("tyche::mpi::nuts_sharded: the executor must be tyche::cpu (each rank evaluates its "
                                  "block of the data on its CPU)");
    if (exec->threads < 0)
      throw std::invalid_argument("tyche::mpi::nuts_sharded: cpu::threads = " + std::to_string(exec->threads) +
                                  " must be ≥ 0 (0 or 1: one thread per rank; n > 1: n threads for each evaluation "
                                  "of this rank's block of data)");
    if (exec->split < 0)
      throw std::invalid_argument("tyche::mpi::nuts_sharded: cpu::split = " + std::to_string(exec->split) +
                                  " must be ≥ 0 (0: automatic, 1: never, k: k parts per gradient)");
    // The chains run on one thread per rank (every evaluation is a collective call, made in the
    // same order on every rank); more threads evaluate parts of the rank's block (cpu::split).
    shards.threads = std::max(1, exec->threads);
    shards.split = exec->split;
    shards.chains = cfg.chains;
    shards.lanes = exec->lanes;
    cpu one = *exec;
    one.threads = 1;
    cfg.executor = one;
  });
  detail::throw_if_any(error, comm);
  detail::check_same_config(cfg, "tyche::mpi::nuts_sharded", comm);
  detail::check_same_parameters(m, comm);
  cpu unsplit = std::get<cpu>(cfg.executor);
  unsplit.split = 1;  // the rank's evaluation splits (with_shard_target), not the driver again
  cfg.executor = unsplit;
  nuts_fit fit = detail::with_shard_target<Model, Comparison>(
      m, comm,
      [&](const auto& target, std::size_t parts, const samplers::detail::part_pool* pool) {
        const samplers::detail::erased_target_for<Comparison> erased(target);
        auto run = [&](const nuts_config& c) { return samplers::detail::run_nuts_erased(erased, c, m.parameter_names()); };
        nuts_fit f = run(cfg);
        samplers::detail::restart_stuck_chains(f, cfg, run);
        f.split = static_cast<int>(parts);
        f.helper_threads = parts > 1 ? shards.threads - 1 : 0;  // this rank's pool (with_shard_target)
        if (pool) {  // the parts of this rank's evaluations, and the helpers' share
          f.split_parts = pool->parts_run();
          f.split_parts_by_helpers = pool->parts_by_helpers();
        }
        return f;
      },
      shards);
  // Every rank ran every chain on its shard (the ranks' threads may differ): the sums over the
  // ranks, in one call (as doubles: exact below 2^53).
  fit.ranks = size(comm);
  double mine_counts[4] = {static_cast<double>(fit.threads), static_cast<double>(fit.helper_threads),
                           static_cast<double>(fit.split_parts), static_cast<double>(fit.split_parts_by_helpers)},
         sums[4] = {0, 0, 0, 0};
  MPI_Allreduce(mine_counts, sums, 4, MPI_DOUBLE, MPI_SUM, comm);
  fit.threads = static_cast<int>(sums[0]);
  fit.helper_threads = static_cast<int>(sums[1]);
  fit.split_parts = static_cast<long long>(sums[2]);
  fit.split_parts_by_helpers = static_cast<long long>(sums[3]);
  fit.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

}  // namespace tyche::mpi
