// tyche/samplers/nuts/cpu_executor.hpp — the CPU executor (tyche::cpu): chains on threads, each
// thread advancing `lanes` chains together as the lanes of NUTS kernels (kernel.hpp) of a SIMD
// batch type (one kernel per batch of lanes; lanes = 1: a kernel of one double), every lane at
// its own point of its own trajectory.
//
// Each step a thread evaluates the model once per kernel with a running lane — log p and its
// gradient for all its lanes at once, straight from the kernel's pending θ, which is laid out as
// the batched evaluation reads it — and resumes the kernel, which runs every lane's state
// machine up to its next gradient. A lane whose transition ends hands its chain back
// (nuts_chain::end_iteration: warm-up, recording) and, in the program_counter schedule, puts it
// at the back of its thread's queue and starts the next transition of the chain at the front
// (a thread with an empty queue takes a chain from another's), so no lane waits for another and
// chains rotate through the lanes at about the same pace (program-counter batching, Radul et
// al. 2020, "Automatically batching control-intensive programs for modern accelerators"). The
// trajectory_sync schedule holds every chain in a lane of its thread and makes all chains wait
// for the longest trajectory of each iteration: the "local static" batching that paper
// measures against, kept as the benchmark's baseline.
//
// Utilisation is the fraction of lane slots that do useful work: useful lane gradients over lane
// slots evaluated (program_counter; a kernel with no running lane is not evaluated), or over the
// lane slots the chains occupy (whole batches) × the longest trajectory of each iteration
// (trajectory_sync). A single chain on a build with 8 lanes has utilisation 1/8 under both.
#pragma once
#include <tyche/backends/simd/lanes.hpp>
#include <tyche/concepts.hpp>
#include <tyche/config.hpp>
#include <tyche/samplers/nuts/chain.hpp>
#include <tyche/samplers/nuts/config.hpp>
#include <tyche/samplers/nuts/cpus.hpp>
#include <tyche/samplers/nuts/kernel.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <type_traits>
#include <vector>

namespace tyche::samplers {

/// Gradient counts of a run: useful lane gradients and lane slots spent.
struct lane_counts {
  long long useful = 0;
  long long slots = 0;
};

namespace detail {

/// Models reading at least this many values of data per evaluation, most of them not in
/// matrices, run one chain at a time by default (lanes = 0): their time is in elementwise loops
/// over the data, which the scalar path runs in SIMD batches of observations (bench/run.sh lanes,
/// AVX-512: a Poisson regression over 20,000 observations 1.1x slower in 8 lanes, 1.5x in 4).
/// On AVX2, before rows in tiles, chains in 4 lanes were 1.2-1.3x faster up to 1,100 values and
/// level from 10,300 up; the limit is between.
inline constexpr std::size_t lane_data_values_limit = 4096;

/// The threads a cpu executor may use: cpu::threads, or for 0 the CPUs this process may run on
/// (available_cpus(): its affinity mask, at least 1). The chains use up to one each, or one per
/// batch of chains in SIMD lanes (cpu_layout); cpu::split's helpers use the rest.
inline int cpu_threads(const cpu& exec) {
  return exec.threads > 0 ? exec.threads : static_cast<int>(available_cpus());
}

/// Batches narrower than this are not chosen by lanes = 0: two chains in an SSE2 batch were no
/// faster than one at a time on any model measured (bench/run.sh lanes).
inline constexpr int min_default_lanes = 4;

/// The number of lanes the CPU executor uses by default (lanes = 0), for a thread's ⌈chains /
/// threads⌉ chains (per_thread) and the build's full and half SIMD widths (in doubles): the
/// widest batch of at least min_default_lanes lanes that per_thread chains fill, unless the model
/// reads lane_data_values_limit values of data or more and fewer than half of them are matrices
/// (matrix_values: model_t::matrix_values); else 1 (one chain at a time, its loops over data in
/// SIMD). Chains in lanes pay on models whose data are matrices: the batch's chains share each
/// read of a row, a streamed matvec takes its rows in tiles (compile/evaluate.hpp), and a row's
/// reduction runs for all the lanes at once: bench/run.sh lanes, AVX-512, 1.4-2.1x less CPU per
/// gradient than one chain at a time with 4 or 8 chains on a thread on the logistic regression
/// 10,000 × 100 and the AR(1) Gaussian (docs/benchmarks.md, "The default lanes"). A lone chain
/// on a thread is never put in a batch with empty lanes (it cost 1.1-3.7x, bench/run.sh lanes).
inline constexpr int default_lanes(int per_thread, int width, int half, std::size_t data_values,
                                   std::size_t matrix_values) {
  if (data_values >= lane_data_values_limit && 2 * matrix_values < data_values) return 1;
  if (width >= min_default_lanes && per_thread >= width) return width;
  if (half >= min_default_lanes && per_thread >= half) return half;
  return 1;
}
/// resolve_lanes: `requested` checked, or for 0 default_lanes with this build's widths.
inline int resolve_lanes(int requested, int chains, int threads, std::size_t data_values,
                         std::size_t matrix_values) {
  constexpr int width = simd_lane_width;
  constexpr int half = half_lane_width;
  if (requested == 0) {
    const int per_thread = (chains + threads - 1) / threads;
    return default_lanes(per_thread, width, half, data_values, matrix_values);
  }
  if (requested == 1) return 1;
  if (width == 1 && requested > 1)  // no SIMD backend: the kernel has one lane
    throw std::invalid_argument("tyche::nuts: lanes = " + std::to_string(requested) +
                                " needs the SIMD backend (link tyche::simd, or define "
                                "TYCHE_USE_XSIMD=1); this build evaluates one chain at a time: "
                                "use lanes = 0 or 1");
  const bool fits = requested > 1 && (requested % width == 0 || (half > 1 && requested % half == 0));
  if (!fits)
    throw std::invalid_argument("tyche::nuts: lanes = " + std::to_string(requested) +
                                " must be 0 (automatic), 1 (scalar) or a multiple of the SIMD "
                                "width " + std::to_string(width) +
                                (half > 1 ? " or of the half width " + std::to_string(half) : std::string()));
  return requested;
}

/// What a target tells the CPU executor's automatic settings (lanes = 0, split = 0): the values
/// of data one evaluation reads, the part of them in matrices, the part the parts of a split
/// evaluation divide (model_t::split_values) and the work of those loops (model_t::split_work),
/// and whether it evaluates in parts at all.
struct target_shape {
  std::size_t data_values = 0, matrix_values = 0, split_values = 0, split_work = 0;
  bool splittable = false;          // a chain's evaluation (double) in parts
  bool batches_splittable = false;  // a batch of chains' evaluation in parts too
};

/// How the CPU executor runs a fit's chains: `lanes` chains per thread in SIMD lanes (1: one at
/// a time), on `threads` threads that hold chains, each evaluation in `parts` parts (cpu::split;
/// 1: whole) spread over the holding thread and the threads the chains leave free.
struct cpu_layout {
  int lanes = 1;
  int threads = 1;
  std::size_t parts = 1;
};

/// The layout for `chains` chains on `total` threads (cpu_threads) with cpu::lanes and cpu::split
/// as requested (lanes checked: resolve_lanes), in a build whose full and half SIMD widths are
/// `width` and `half` doubles.
///
/// lanes = 0 takes default_lanes' width for a thread's ⌈chains / threads⌉ chains. Where that is
/// 1 (too few chains per thread for a batch) for a model that both the lanes and the split gain
/// on (its data mostly matrices, and enough work in the fused sums: split_work ≥
/// cpu_split_min_work), the chains fill batches from all of them instead — of the width (at
/// least min_default_lanes, at most the chains) that leaves fewer lanes empty — when that leaves
/// threads free and the batches' parts (cpu_split_parts each) can still occupy every thread; the
/// free threads then split each batch's evaluations. A batch shares each read of a row of X
/// among its chains and runs their terms in SIMD (on the logistic regression 10,000 × 100,
/// AVX-512: 0.100 ms per chain-gradient for 4 chains in the half width, 0.19 for one chain at a
/// time; docs/benchmarks.md), so 4 chains on 2 cores are faster as one batch on both cores than
/// as 2 + 2 chains one at a time. With more threads than the batches' parts (4 chains on 16 threads)
/// the chains stay scalar, each split over its share of the threads. Threads that hold chains:
/// one per ⌈chains / lanes⌉ batch (or per chain for lanes 1), up to `total`; the split, automatic
/// where the chains leave threads free and the model qualifies.
inline constexpr cpu_layout plan_cpu_layout(int requested_lanes, int requested_split, int chains, int total,
                                            int width, int half, const target_shape& s) {
  cpu_layout out;
  const int threads = std::min(total, chains);
  const bool may_split = s.splittable && (requested_split > 1 ||
                                          (requested_split == 0 && s.split_work >= cpu_split_min_work));
  out.lanes = requested_lanes;
  if (requested_lanes == 0) {
    out.lanes = default_lanes((chains + threads - 1) / threads, width, half, s.data_values, s.matrix_values);
    // Batches filled from all the chains where lanes pay (the model reads matrices, as
    // default_lanes' first rule asks) and the split can divide them.
    const bool lanes_pay = default_lanes(chains, width, half, s.data_values, s.matrix_values) > 1;
    if (out.lanes == 1 && may_split && s.batches_splittable && lanes_pay) {
      // The width that leaves fewer lanes empty (the wider one at a tie).
      const int parts = requested_split > 1 ? requested_split : cpu_split_parts;
      int empty_lanes = 0;
      for (const int w : {width, half}) {
        if (w < min_default_lanes || chains < w) continue;
        const int batches = (chains + w - 1) / w;
        if (batches >= total || batches * parts < total) continue;
        if (out.lanes == 1 || batches * w - chains < empty_lanes) {
          out.lanes = w;
          empty_lanes = batches * w - chains;
        }
      }
    }
  }
  out.threads = out.lanes > 1 ? std::min(total, (chains + out.lanes - 1) / out.lanes) : threads;
  if (requested_split >= 1) out.parts = static_cast<std::size_t>(requested_split);
  else if (may_split && total > out.threads && (out.lanes == 1 || s.batches_splittable))
    out.parts = static_cast<std::size_t>(cpu_split_parts);
  return out;
}

/// plan_cpu_layout for this executor's settings and this build's widths; throws for a lanes or
/// split setting that cannot be.
inline cpu_layout resolve_cpu_layout(const cpu& exec, int chains, const target_shape& s) {
  if (exec.threads < 0)
    throw std::invalid_argument("tyche::nuts: threads = " + std::to_string(exec.threads) +
                                " must be ≥ 0 (0: one per chain, or per batch of chains in SIMD lanes, up to the "
                                "CPUs this process may run on)");
  if (exec.split < 0)
    throw std::invalid_argument("tyche::nuts: split = " + std::to_string(exec.split) +
                                " must be ≥ 0 (0: automatic, 1: never, k: k parts per gradient)");
  if (exec.split > 1 && !s.splittable)
    throw std::invalid_argument("tyche::nuts: split = " + std::to_string(exec.split) +
                                ": this target cannot evaluate its log density in parts (value_and_gradient_part)");
  const int total = cpu_threads(exec);
  // Checks a requested width (the chains and threads do not matter for one that is not 0).
  const int lanes = exec.lanes == 0 ? 0 : resolve_lanes(exec.lanes, chains, 1, s.data_values, s.matrix_values);
  const cpu_layout out = plan_cpu_layout(lanes, exec.split, chains, total, simd_lane_width,
                                         half_lane_width > 1 ? half_lane_width : 1, s);
  if (out.parts > 1 && out.lanes > 1 && !s.batches_splittable)
    throw std::invalid_argument("tyche::nuts: split = " + std::to_string(exec.split) + " with lanes = " +
                                std::to_string(out.lanes) +
                                ": this target evaluates in parts only one chain at a time; use lanes = 1 or split = 1");
  return out;
}

/// The shape of a target (zeros and false for what it does not say).
template <class Target>
target_shape shape_of(const Target& target) {
  target_shape s;
  if constexpr (requires { target.data_values(); }) s.data_values = target.data_values();
  if constexpr (requires { target.matrix_values(); }) s.matrix_values = target.matrix_values();
  if constexpr (requires { target.split_values(); }) s.split_values = target.split_values();
  if constexpr (requires { target.split_work(); }) s.split_work = target.split_work();
  else s.split_work = s.split_values;
  if constexpr (requires { target.splittable(); }) s.splittable = target.splittable();
  if constexpr (requires { target.batches_splittable(); }) s.batches_splittable = target.batches_splittable();
  return s;
}

/// W chains in the lanes of one kernel over T (the batch-lane kernel: its pending θ is laid out
/// as the batched evaluation reads it), with the buffers it works in.
template <class T>
class batch_lanes : public nuts_kernel<T> {
 public:
  using kernel_type = nuts_kernel<T>;
  static constexpr int width = kernel_type::width;

  batch_lanes(std::size_t d, const nuts_config& cfg, std::size_t workspace)
      : storage_(kernel_type::storage_size(d, cfg.max_depth, cfg.metric, low_rank_kmax(cfg, d))), workspace_(workspace) {
    const nuts_status s =
        this->bind(storage_.data(), storage_.size(), d, cfg.max_depth, cfg.metric, low_rank_kmax(cfg, d));
    if (s != nuts_status::ok) throw_status(s, "max_depth = " + std::to_string(cfg.max_depth));
    this->rng().seed = cfg.seed;
  }

  /// Evaluates log p and its gradient at every lane's pending point when a lane is running.
  template <class Target>
  bool evaluate(const Target& target) {
    if (!this->any_running()) return false;
    this->set_pending(target.value_and_gradient(this->pending_q(), this->pending_grad(),
                                                workspace_.empty() ? nullptr : workspace_.data()));
    return true;
  }

 private:
  std::vector<T> storage_;  // (std::allocator honours a batch's alignment)
  std::vector<T> workspace_;
};

/// W chains, each in a kernel of its own over double, whose pending points are evaluated
/// together as the lanes of T: copied into a batch, evaluated once, the gradients copied back.
/// The same interface as a kernel of W lanes.
template <class T>
class chain_lanes {
 public:
  using traits = lane_traits<T>;
  using kernel_type = nuts_kernel<double>;
  static constexpr int width = traits::width;

  chain_lanes(std::size_t d, const nuts_config& cfg, std::size_t workspace)
      : d_(d), size_(kernel_type::storage_size(d, cfg.max_depth, cfg.metric, low_rank_kmax(cfg, d))),
        storage_(size_ * width),
        q_(d), g_(d), workspace_(workspace), gradients_(d * width) {
    for (int l = 0; l < width; ++l) {
      const nuts_status s =
          k_[l].bind(storage_.data() + size_ * static_cast<std::size_t>(l), size_, d, cfg.max_depth, cfg.metric,
                     low_rank_kmax(cfg, d));
      if (s != nuts_status::ok) throw_status(s, "max_depth = " + std::to_string(cfg.max_depth));
      k_[l].rng().seed = cfg.seed;
    }
  }

  void set_point(int l, const double* q, const double* g, double lp) { k_[l].set_point(0, q, g, lp); }
  void get_point(int l, double* q, double* g = nullptr) const { k_[l].get_point(0, q, g); }
  [[nodiscard]] double log_density(int l) const { return k_[l].log_density(0); }
  nuts_status set_metric(int l, const double* m, const double* chol = nullptr) { return k_[l].set_metric(0, m, chol); }
  nuts_status set_metric_low_rank(int l, const double* factors, const double* matrix = nullptr) {
    return k_[l].set_metric_low_rank(0, factors, matrix);
  }
  nuts_status set_step_size(int l, double eps) { return k_[l].set_step_size(0, eps); }
  void set_stream(int l, const counter_rng& g) { k_[l].set_stream(0, g); }
  [[nodiscard]] counter_rng stream(int l) const { return k_[l].stream(0); }
  [[nodiscard]] bool running(int l) const { return k_[l].running(0); }
  [[nodiscard]] bool any_running() const {
    bool any = false;
    for (int l = 0; l < width; ++l) any = any || k_[l].running(0);
    return any;
  }
  [[nodiscard]] const transition_stats& stats(int l) const { return k_[l].stats(0); }
  void park(int, int) {}  // an idle lane is evaluated at a running lane's point (evaluate)

  nuts_status begin(const bool* start, int* bad = nullptr) {
    nuts_status status = nuts_status::ok;
    for (int l = 0; l < width; ++l) {
      if (!start[l]) continue;
      const bool one[1] = {true};
      const nuts_status s = k_[l].begin(one);
      if (s != nuts_status::ok) {
        status = s;
        if (bad) *bad = l;
      }
    }
    return status;
  }
  int resume(bool* ended) {
    int n = 0;
    for (int l = 0; l < width; ++l) {
      ended[l] = false;
      if (k_[l].running(0)) n += k_[l].resume(&ended[l]);
    }
    return n;
  }

  /// Evaluates log p and its gradient at every running lane's pending point, all lanes in one
  /// batched evaluation (an idle lane repeats a running lane's point).
  template <class Target>
  bool evaluate(const Target& target) {
    int any = -1;
    for (int l = 0; l < width && any < 0; ++l)
      if (k_[l].running(0)) any = l;
    if (any < 0) return false;
    const double* q[width];
    for (int l = 0; l < width; ++l) q[l] = (k_[l].running(0) ? k_[l] : k_[any]).pending_q();
    alignas(64) double lanes[width];
    for (std::size_t i = 0; i < d_; ++i) {
      for (int l = 0; l < width; ++l) lanes[l] = q[l][i];
      q_[i] = traits::load(lanes);
    }
    const T value = target.value_and_gradient(q_.data(), g_.data(), workspace_.empty() ? nullptr : workspace_.data());
    traits::store(lanes, value);
    double* out = gradients_.data();
    for (std::size_t i = 0; i < d_; ++i) traits::store(out + i * width, g_[i]);
    for (int l = 0; l < width; ++l) {
      if (!k_[l].running(0)) continue;
      k_[l].set_pending(lanes[l]);
      double* g = k_[l].pending_grad();
      for (std::size_t i = 0; i < d_; ++i) g[i] = out[i * width + static_cast<std::size_t>(l)];
    }
    return true;
  }

 private:
  std::size_t d_, size_;
  std::vector<double> storage_;
  kernel_type k_[width];
  std::vector<T> q_, g_, workspace_;
  std::vector<double> gradients_;  // [i * width + lane]
};

/// The chains of a group of W lanes (Lanes: batch_lanes or chain_lanes), with which chain each
/// lane runs and which chain's state it holds.
template <class Lanes, class Target>
class lane_block {
 public:
  using chain_type = nuts_chain<Target>;
  static constexpr int width = Lanes::width;

  lane_block(const Target& target, const nuts_config& cfg) : kernel(target.dim(), cfg, target.workspace_size()) {}
  lane_block(const lane_block&) = delete;
  lane_block& operator=(const lane_block&) = delete;

  bool evaluate(const Target& target) { return kernel.evaluate(target); }

  /// Puts chain c into lane l, its state loaded (the point and metric only when the lane does
  /// not already hold them).
  void load(chain_type* c, int l) {
    // (A new metric reloads the point too: a chain restarted during warm-up (the watch of
    // run_program_counter) has both new; elsewhere the point is the one the lane holds.)
    const bool same = resident[l] == c && metric_version[l] == c->metric_version();
    c->load(kernel, l, !same, !same);
    owner[l] = c;
    resident[l] = c;
    metric_version[l] = c->metric_version();
  }
  /// Lane l holds no chain: its pending θ becomes its last point, or another lane's, so that
  /// the batched evaluation reads finite numbers there.
  void park(int l) {
    owner[l] = nullptr;
    int from = resident[l] != nullptr ? l : -1;
    for (int k = 0; k < width && from < 0; ++k)
      if (resident[k] != nullptr) from = k;
    if (from >= 0) kernel.park(l, from);
  }
  /// A chain that failed leaves its lane; the lane's state is not its any more.
  void drop(int l) {
    resident[l] = nullptr;
    park(l);
  }

  Lanes kernel;
  chain_type* owner[width] = {};     // the chain running in each lane, or none
  chain_type* resident[width] = {};  // the chain whose point and metric each lane holds
  unsigned metric_version[width] = {};
};

/// Starts the lanes of `start`; a lane whose chain cannot start (non-finite energy) reports the
/// chain's error and is parked.
template <class Block, class OnError>
void begin_lanes(Block& b, bool* start, OnError& on_error) {
  constexpr int w = Block::width;
  b.kernel.begin(start);
  for (int l = 0; l < w; ++l)
    if (start[l] && !b.kernel.running(l)) {
      try {
        throw_status(nuts_status::non_finite_start, "chain " + std::to_string(b.owner[l]->chain_number()));
      } catch (...) {
        on_error(b.owner[l]->chain());
      }
      b.drop(l);
    }
}

/// The program_counter schedule: chains wait in queues, one per thread (chain c in thread
/// c mod threads's); a lane whose transition ends puts its chain at the back of its thread's
/// queue and takes the chain at the front; a thread whose queue is empty takes the chain at the
/// back of another's (a chain's draws do not depend on which thread runs it). One queue shared
/// by all threads, locked at every transition's end, cost more than the second thread gained on
/// small models (eight schools, 16 chains: 2 threads 1.03x faster than 1; docs/nuts.md). A
/// chain is initialised (initial point, first step size) the first time a lane takes it.
/// With nuts_config::pool_metric, a chain whose transition closed a metric window waits aside
/// (its lane takes another chain) until every chain neither failed nor done is there; the thread
/// whose chain arrives last pools their estimates (nuts_chain::pool_chains, in chain order) and
/// puts them back in the queue, and threads whose lanes all wait sleep until then. Without it,
/// restart_stuck_chains' rule runs at each window's end without holding the chains there (two
/// chains or more, Stan's windows: nuts_chain::meet_at_windows and its watch): each chain keeps a
/// snapshot of its state there and goes on; when all have one, the rule runs on the snapshots, and
/// a stuck chain goes back to its own and takes another's. Until 2026-12-05 the chains met there as
/// they do to pool, which cost eight schools with 16 chains a fifth of its run (docs/nuts.md).
template <class Lanes, class Target, class OnError>
lane_counts run_program_counter(const Target& target, const nuts_config& cfg,
                                std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, int threads, int lanes,
                                OnError& on_error) {
  using block = lane_block<Lanes, Target>;
  using chain_type = nuts_chain<Target>;
  constexpr int w = block::width;
  // The threads' queues, each guarded by its own mutex (taken by its thread at every
  // transition's end, by another only to take a chain when that one has none).
  struct alignas(64) thread_queue {
    std::mutex mutex;
    std::deque<chain_type*> chains;
  };
  const std::size_t n_queues = static_cast<std::size_t>(threads < 1 ? 1 : threads);
  const std::unique_ptr<thread_queue[]> queues(new thread_queue[n_queues]);
  auto home = [&](const chain_type* c) -> thread_queue& {
    return queues[static_cast<std::size_t>(c->chain()) % n_queues];
  };
  for (auto& c : chains) home(c.get()).chains.push_back(c.get());
  // The front of thread t's queue after `mine` (if any) joined its back; else the back of
  // another thread's queue; else nullptr.
  auto take = [&](std::size_t t, chain_type* mine) -> chain_type* {
    {
      thread_queue& own = queues[t];
      std::lock_guard<std::mutex> lock(own.mutex);
      if (mine != nullptr) own.chains.push_back(mine);
      if (!own.chains.empty()) {
        chain_type* c = own.chains.front();
        own.chains.pop_front();
        return c;
      }
    }
    for (std::size_t k = 1; k < n_queues; ++k) {
      thread_queue& other = queues[(t + k) % n_queues];
      std::lock_guard<std::mutex> lock(other.mutex);
      if (!other.chains.empty()) {
        chain_type* c = other.chains.back();
        other.chains.pop_back();
        return c;
      }
    }
    return nullptr;
  };
  auto any_queued = [&] {
    for (std::size_t t = 0; t < n_queues; ++t) {
      std::lock_guard<std::mutex> lock(queues[t].mutex);
      if (!queues[t].chains.empty()) return true;
    }
    return false;
  };
  std::mutex queue_mutex;  // the pools' state below (taken before a thread queue's mutex, never after)
  std::atomic<long long> useful{0}, slots{0};
  // Pooling (cfg.pool_metric, or restart_stuck_chains' check at the windows' ends, the watch
  // below: `pooling` says either), guarded by queue_mutex: the chains waiting for the others
  // (pool_metric), and
  // `unfinished`, the chains neither failed nor done (a pool waits for all of them; an idle
  // thread sleeps until a pool queues chains or this is 0). `pools` counts the pools that have
  // queued chains, so that lanes left idle take them.
  const bool pooling = cfg.pool_metric || (cfg.restart_stuck_chains && chains.size() >= 2 &&
                                           cfg.metric_estimator != metric_estimator::nutpie);
  for (auto& c : chains) c->meet_at_windows(pooling);
  std::vector<chain_type*> waiting;
  waiting.reserve(chains.size());
  std::size_t unfinished = chains.size();
  std::condition_variable pooled;
  std::atomic<unsigned> pools{0};
  // Pools the chains in `ready` (every unfinished chain, each with its window closed), then queues them.
  // (Each chain's step-size heuristic runs here, one chain after another, while the other
  // threads sleep: a few gradients per chain and window.)
  auto pool = [&](std::vector<chain_type*> ready) {
    std::sort(ready.begin(), ready.end(), [](const chain_type* a, const chain_type* b) { return a->chain() < b->chain(); });
    std::vector<chain_type*> back;
    std::size_t failed = 0;
    bool merged = true;
    try {
      back.reserve(ready.size());
      chain_type::pool_chains(ready);
    } catch (...) {  // no memory for the merge: every chain of the pool fails
      merged = false;
      for (chain_type* c : ready) on_error(c->chain());
      failed = ready.size();
    }
    if (merged)
      for (chain_type* c : ready) {
        try {
          c->after_pool();
          back.push_back(c);
        } catch (...) {
          on_error(c->chain());
          ++failed;
        }
      }
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      unfinished -= failed;
      for (chain_type* c : back) {
        if (c->done()) {
          --unfinished;  // (a pool at the last iteration, no draws)
        } else {
          thread_queue& q = home(c);
          std::lock_guard<std::mutex> queue_lock(q.mutex);
          q.chains.push_back(c);
        }
      }
      ++pools;
    }
    pooled.notify_all();
  };
  // A chain arrives at a pool (c), or leaves the unfinished chains (nullptr: it failed, or drew
  // its last iteration); when every unfinished chain waits, the pool runs.
  auto arrive = [&](chain_type* c) {
    std::vector<chain_type*> ready;
    bool none_left = false;
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      if (c != nullptr) waiting.push_back(c);
      else none_left = --unfinished == 0;
      if (!waiting.empty() && waiting.size() == unfinished) ready.swap(waiting);
    }
    if (!ready.empty()) pool(std::move(ready));
    else if (none_left) pooled.notify_all();
  };
  // The watch (restart_stuck_chains without pool_metric; nuts_chain's "watch"): no chain waits
  // at a window's end. Guarded by queue_mutex: `open_window`, the first window whose rule has not
  // run; `arrived[w]`, the unfinished chains that hold their snapshot of window w; `held`, the
  // chains that wait for a rule: one that has drawn its last draw (until every window's rule has
  // run), or one whose new metric's check or step-size heuristic failed at a window's end
  // (`deferred`: the error, which is the chain's unless that window's rule finds it stuck and
  // restarts it: a stuck chain's own window's metric is never used). When every unfinished chain
  // holds its snapshot of the open window, its rule runs (resolve): the chains it finds stuck drop
  // their later snapshots and are restarted (at once if held, else at the end of their current
  // transition, or when a lane takes them), and held chains whose rules have all run are released.
  const bool watch = pooling && !cfg.pool_metric;
  int open_window = 0;
  std::vector<std::size_t> arrived;
  std::vector<chain_type*> held;
  std::vector<std::exception_ptr> deferred(chains.size());
  enum class release { restart, fail, finish };
  using released_chain = std::pair<chain_type*, release>;
  auto index = [](const chain_type* c) { return static_cast<std::size_t>(c->chain()); };
  auto arrivals = [&](int w) -> std::size_t& {  // (queue_mutex held)
    if (arrived.size() <= static_cast<std::size_t>(w)) arrived.resize(static_cast<std::size_t>(w) + 1, 0);
    return arrived[static_cast<std::size_t>(w)];
  };
  // c's snapshots of the open window and after leave the counts (queue_mutex held).
  auto withdraw = [&](chain_type* c, int from) {
    for (int w = from; w < static_cast<int>(arrived.size()); ++w)
      if (c->has_snapshot(w)) --arrived[static_cast<std::size_t>(w)];
    c->forget_snapshots_from(from);
  };
  auto resolve = [&](std::vector<released_chain>& out) {  // (queue_mutex held)
    bool any = false;
    while (unfinished > 0 && arrivals(open_window) == unfinished) {
      std::vector<chain_type*> at;
      for (auto& c : chains)
        if (c->has_snapshot(open_window)) at.push_back(c.get());
      for (chain_type* s : chain_type::restart_stuck_at_window(at, open_window)) withdraw(s, open_window + 1);
      ++open_window;
      any = true;
    }
    if (!any) return;
    std::vector<chain_type*> still;
    for (chain_type* h : held) {
      if (h->restart_pending()) {
        deferred[index(h)] = nullptr;
        out.emplace_back(h, release::restart);
      } else if (deferred[index(h)] && !h->has_snapshot_from(open_window)) {
        out.emplace_back(h, release::fail);
      } else if (!deferred[index(h)] && h->windows_closed() <= open_window) {
        out.emplace_back(h, release::finish);  // (done: held chains without an error are)
      } else {
        still.push_back(h);
      }
    }
    held.swap(still);
  };
  // A chain left the unfinished ones: failed (its snapshots withdrawn), or done (c null).
  auto leave_watch = [&](chain_type* c, std::vector<released_chain>& out) {  // (queue_mutex held)
    --unfinished;
    if (c != nullptr) withdraw(c, open_window);
    resolve(out);
  };
  std::function<void(std::vector<released_chain>)> process;  // (below: it and these call each other)
  auto leave = [&](chain_type* c) {  // leave_watch, then what it released
    std::vector<released_chain> out;
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      leave_watch(c, out);
    }
    pooled.notify_all();
    if (!out.empty()) process(std::move(out));
  };
  // A chain's error (inside its catch block): recorded; with pooling, the chain leaves the count.
  auto fail_chain = [&](chain_type* c) {
    on_error(c->chain());
    if (!pooling) return;
    if (!watch) return arrive(nullptr);
    leave(c);
  };
  // A restarted chain waits in its thread's queue for a lane.
  auto requeue = [&](chain_type* c) {
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      thread_queue& q = home(c);
      std::lock_guard<std::mutex> queue_lock(q.mutex);
      q.chains.push_back(c);
      ++pools;
    }
    pooled.notify_all();
  };
  // A running chain's error (inside its catch block). With the watch, a chain that holds a
  // snapshot of a window whose rule has not run may yet be found stuck there — and a stuck chain
  // runs on where it is stuck, where it may fail (its own window's metric check, a step size
  // that underflows): its error waits for that rule (held, `deferred`); if the rule finds it
  // stuck it is restarted and the error dropped, as in a run where every chain waited at the
  // window's end. Otherwise, and once the rule has run, it fails.
  auto chain_error = [&](chain_type* c) {
    if (watch) {
      bool restart = false;
      {
        std::lock_guard<std::mutex> lock(queue_mutex);
        restart = c->restart_pending();
        if (!restart && c->has_snapshot_from(open_window)) {
          deferred[index(c)] = std::current_exception();
          held.push_back(c);
          return;
        }
      }
      if (restart) {
        try {
          c->apply_restart();
        } catch (...) {
          fail_chain(c);
          return;
        }
        requeue(c);
        return;
      }
    }
    fail_chain(c);
  };
  // c has closed a window (c->pool_pending()): its snapshot, then after_pool; true when it goes
  // on, false when it is held or failed.
  auto window_end = [&](chain_type* c) {
    std::vector<released_chain> out;
    bool flagged = false;  // found stuck at an earlier window since its transition ended
    std::exception_ptr no_memory;  // for the snapshot (a dense metric's d² values, say)
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      flagged = c->restart_pending();
      if (!flagged) {
        const int w = c->windows_closed() - 1;
        try {
          c->take_snapshot(w);
          ++arrivals(w);
        } catch (...) {
          c->release_snapshot(w);
          no_memory = std::current_exception();
        }
        if (!no_memory) resolve(out);
      }
    }
    if (no_memory) {  // the chain's error, as any other (chain_error: it may wait for a rule)
      try {
        std::rethrow_exception(no_memory);
      } catch (...) {
        chain_error(c);
      }
      return false;
    }
    if (flagged) {
      try {
        c->apply_restart();
        return true;
      } catch (...) {
        fail_chain(c);
        return false;
      }
    }
    if (!out.empty()) {
      pooled.notify_all();
      process(std::move(out));
    }
    try {
      c->after_pool();
    } catch (...) {
      chain_error(c);
      return false;
    }
    return true;
  };
  // After its last draw: true when the chain waits for the rules of windows it closed (held),
  // or failed; false when it is finished, or was found stuck since its transition ended (then
  // restarted: it goes on).
  auto hold_when_done = [&](chain_type* c) {
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      if (!c->restart_pending()) {
        if (open_window >= c->windows_closed()) return false;
        held.push_back(c);
        return true;
      }
    }
    try {
      c->apply_restart();
    } catch (...) {
      fail_chain(c);
      return true;
    }
    return false;
  };
  // Released chains: restarted (then queued), failed, or done.
  process = [&](std::vector<released_chain> work) {
    while (!work.empty()) {
      const auto [c, kind] = work.back();
      work.pop_back();
      if (kind == release::fail) {
        try {
          std::rethrow_exception(deferred[index(c)]);
        } catch (...) {
          fail_chain(c);
        }
        continue;
      }
      std::vector<released_chain> more;
      if (kind == release::restart) {
        try {
          c->apply_restart();
        } catch (...) {
          fail_chain(c);
          continue;
        }
      }
      {
        std::lock_guard<std::mutex> lock(queue_mutex);
        if (kind == release::finish) {
          leave_watch(nullptr, more);
        } else {
          thread_queue& q = home(c);
          std::lock_guard<std::mutex> queue_lock(q.mutex);
          q.chains.push_back(c);
        }
        ++pools;
      }
      pooled.notify_all();
      work.insert(work.end(), more.begin(), more.end());
    }
  };
  auto finished = [&] {
    if (!watch) return arrive(nullptr);
    leave(nullptr);
  };
  auto fail = [&](int chain) { chain_error(chains[static_cast<std::size_t>(chain)].get()); };
  auto worker = [&](std::size_t me) {
    const int k_blocks = lanes / w;
    std::vector<std::unique_ptr<block>> blocks;
    for (int k = 0; k < k_blocks; ++k) blocks.push_back(std::make_unique<block>(target, cfg));
    // Gives lane l of b the chain at the front of the queue, after putting `mine` (if any) at
    // the back; start[l] when it has one.
    auto rotate = [&](block& b, int l, chain_type* mine, bool* start) {
      for (;;) {
        chain_type* next = take(me, mine);
        mine = nullptr;
        if (next == nullptr) {
          b.park(l);
          return;
        }
        bool done = false;
        try {
          if (!next->initialised()) next->initialise();
          if (watch && next->restart_pending()) next->apply_restart();  // (found stuck while queued)
          done = next->done();  // (no iterations at all)
          if (!done) {
            b.load(next, l);
            start[l] = true;
            return;
          }
        } catch (...) {
          fail(next->chain());
          b.drop(l);
        }
        if (done && pooling) finished();
      }
    };
    std::vector<bool> evaluated(static_cast<std::size_t>(k_blocks));
    for (auto& b : blocks) {
      bool start[w] = {};
      for (int l = 0; l < w; ++l) rotate(*b, l, nullptr, start);
      begin_lanes(*b, start, fail);
    }
    long long my_useful = 0, my_slots = 0;
    unsigned seen = 0;
    auto refill = [&] {  // the idle lanes take queued chains (after a pool, or a failed start)
      seen = pools.load();
      for (auto& b : blocks) {
        bool start[w] = {};
        for (int l = 0; l < w; ++l)
          if (b->owner[l] == nullptr) rotate(*b, l, nullptr, start);
        begin_lanes(*b, start, fail);
      }
    };
    for (;;) {
      if (pooling && pools.load() != seen) refill();
      long long spent = 0;
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        evaluated[k] = blocks[k]->evaluate(target);
        if (evaluated[k]) spent += w;
      }
      if (spent == 0) {  // every lane is idle
        // Pooling: sleep until a pool queues chains, or every chain has finished (or failed).
        // Chains left in a queue (a lane whose chain could not start stays idle, or another
        // thread's chains wait for its lanes) are taken. (While this thread holds queue_mutex,
        // the queues gain chains only from a pool, which holds it too: a chain that another
        // thread puts back it takes out again in the same lock.)
        {
          std::unique_lock<std::mutex> lock(queue_mutex);
          if (pooling) pooled.wait(lock, [&] { return unfinished == 0 || any_queued(); });
          if (!any_queued()) break;
        }
        refill();
        continue;
      }
      my_slots += spent;
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        if (!evaluated[k]) continue;
        block& b = *blocks[k];
        for (int l = 0; l < w; ++l) my_useful += b.kernel.running(l) ? 1 : 0;
        bool ended[w];
        if (b.kernel.resume(ended) == 0) continue;
        bool start[w] = {};
        for (int l = 0; l < w; ++l) {
          if (!ended[l]) continue;
          chain_type* c = b.owner[l];
          bool restarted = false;
          try {
            c->unload(b.kernel, l);
            if (watch && c->restart_pending()) {  // found stuck: this transition is dropped
              c->apply_restart();
              restarted = true;
            } else {
              c->end_iteration(b.kernel.stats(l));
            }
          } catch (...) {
            fail(c->chain());
            b.drop(l);
            rotate(b, l, nullptr, start);
            continue;
          }
          if (watch && !restarted) {
            bool go_on = !c->pool_pending() || window_end(c);
            if (go_on && c->done() && hold_when_done(c)) go_on = false;
            if (!go_on) {  // held, or failed: the lane takes another chain
              b.drop(l);
              rotate(b, l, nullptr, start);
              continue;
            }
          } else if (pooling && c->pool_pending()) {
            // It waits for the others; the lane forgets it (another lane may run it next, so its
            // point here goes stale) and takes another chain.
            arrive(c);
            b.drop(l);
            rotate(b, l, nullptr, start);
            continue;
          }
          if (pooling && c->done()) finished();
          rotate(b, l, c->done() ? nullptr : c, start);
        }
        begin_lanes(b, start, fail);
      }
    }
    useful += my_useful;
    slots += my_slots;
  };
  if (threads <= 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, static_cast<std::size_t>(t));
    for (auto& th : pool) th.join();
  }
  return {useful.load(), slots.load()};
}

/// The trajectory_sync schedule: thread t holds chains t, t + threads, …, each in a lane of its
/// own; every iteration all of them begin a transition, and the thread waits for the longest,
/// then for the other threads.
template <class Lanes, class Target, class OnError>
lane_counts run_trajectory_sync(const Target& target, const nuts_config& cfg,
                                std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, int threads, int lanes,
                                OnError& on_error) {
  using block = lane_block<Lanes, Target>;
  using chain_type = nuts_chain<Target>;
  constexpr int w = block::width;
  const int n_chains = static_cast<int>(chains.size());
  std::vector<long long> longest(static_cast<std::size_t>(threads), 0);
  std::atomic<long long> useful{0};
  long long slots = 0;
  std::atomic<long long> resident_slots{0};  // lane slots the chains occupy, whole batches
  auto completion = [&]() noexcept {
    long long m = 0;
    for (auto& x : longest) {
      m = std::max(m, x);
      x = 0;
    }
    slots += m * resident_slots.load();
  };
  std::barrier sync(threads, completion);
  auto worker = [&](int t) {
    std::vector<chain_type*> mine;
    for (int c = t; c < n_chains; c += threads) {
      try {
        chains[static_cast<std::size_t>(c)]->initialise();
        if (!chains[static_cast<std::size_t>(c)]->done()) mine.push_back(chains[static_cast<std::size_t>(c)].get());
      } catch (...) {
        on_error(c);
      }
    }
    const std::size_t group = static_cast<std::size_t>(lanes);
    for (std::size_t first = 0; first < mine.size(); first += group)
      resident_slots += static_cast<long long>((std::min(group, mine.size() - first) + w - 1) / w * w);
    std::vector<std::unique_ptr<block>> blocks;
    for (std::size_t first = 0; first < mine.size(); first += w) blocks.push_back(std::make_unique<block>(target, cfg));
    sync.arrive_and_wait();  // every thread counted its chains
    std::vector<long long> steps(mine.size(), 0);
    long long my_useful = 0;
    for (;;) {
      bool any = false;
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        block& b = *blocks[k];
        bool start[w] = {};
        for (int l = 0; l < w; ++l) {
          const std::size_t i = k * w + static_cast<std::size_t>(l);
          if (i >= mine.size() || mine[i] == nullptr || mine[i]->done()) continue;
          try {
            b.load(mine[i], l);
            start[l] = true;
            any = true;
          } catch (...) {
            on_error(mine[i]->chain());
            mine[i] = nullptr;
            b.drop(l);
          }
        }
        begin_lanes(b, start, on_error);
        for (int l = 0; l < w; ++l)
          if (start[l] && !b.kernel.running(l)) mine[k * w + static_cast<std::size_t>(l)] = nullptr;
      }
      for (;;) {
        bool ran = false;
        for (std::size_t k = 0; k < blocks.size(); ++k) {
          block& b = *blocks[k];
          if (!b.evaluate(target)) continue;
          ran = true;
          for (int l = 0; l < w; ++l)
            if (b.kernel.running(l)) {
              ++my_useful;
              ++steps[k * w + static_cast<std::size_t>(l)];
            }
          bool ended[w];
          if (b.kernel.resume(ended) == 0) continue;
          for (int l = 0; l < w; ++l) {
            if (!ended[l]) continue;
            chain_type*& c = mine[k * w + static_cast<std::size_t>(l)];
            try {
              c->unload(b.kernel, l);
              c->end_iteration(b.kernel.stats(l));
              b.park(l);
            } catch (...) {
              on_error(c->chain());
              c = nullptr;
              b.drop(l);
            }
          }
        }
        if (!ran) break;
      }
      long long m = 0;
      for (auto& s : steps) {
        m = std::max(m, s);
        s = 0;
      }
      longest[static_cast<std::size_t>(t)] = m;
      if (!any) {  // this thread's chains are done (or it had none): leave the barrier
        sync.arrive_and_drop();
        break;
      }
      sync.arrive_and_wait();
    }
    useful += my_useful;
  };
  if (threads == 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
    for (auto& th : pool) th.join();
  }
  return {useful.load(), slots};
}

/// Whether the CPU executor compiles its comparison modes (cpu::schedule = trajectory_sync,
/// cpu::lane_kernel = batch) for Target: as its comparison_modes says (erased_target, from
/// TYCHE_CPU_COMPARISON_MODES), and always for a target that does not say.
template <class Target>
constexpr bool cpu_comparison_modes() {
  if constexpr (requires { Target::comparison_modes; }) return Target::comparison_modes;
  else return true;
}

/// Throws std::invalid_argument, naming the macro, for a comparison mode that is not compiled for
/// Target (cpu_comparison_modes).
template <class Target>
void check_comparison_modes(const cpu& exec) {
  if constexpr (!cpu_comparison_modes<Target>()) {
    const char* mode = exec.schedule != lane_schedule::program_counter ? "cpu::schedule = trajectory_sync"
                       : exec.lane_kernel != cpu_lane_kernel::per_chain ? "cpu::lane_kernel = batch"
                                                                        : nullptr;
    if (mode != nullptr)
      throw std::invalid_argument(
          std::string("tyche::nuts: ") + mode +
          " is a mode kept for comparisons and is not compiled in this translation unit: define "
          "TYCHE_CPU_COMPARISON_MODES to 1 before including tyche (in every file of the program), or "
          "link tyche::separate_driver, whose driver has it (docs/nuts.md, \"The CPU executor\")");
  }
}

/// Runs the chains with the CPU executor's settings, laid out as `layout` says (resolve_cpu_layout
/// for these settings, chains and target); returns the gradient counts and sets fit.lanes and
/// fit.threads.
template <class Target, class OnError>
lane_counts run_cpu(const Target& target, const nuts_config& cfg, const cpu& exec, const cpu_layout& layout,
                    std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, nuts_fit& fit, OnError& on_error) {
  static_assert(log_density_target<Target>,
                "tyche::samplers::detail::run_cpu(target, ...) requires a log_density_target (tyche/concepts.hpp)");
  check_comparison_modes<Target>(exec);  // (run_nuts_erased checked already: for other callers)
  const int threads = layout.threads, lanes = layout.lanes;  // resolve_cpu_layout's, which split the target
  fit.lanes = lanes;
  fit.threads = threads;
  auto run = [&]<class T>(std::type_identity<T>) {
    // One kernel per chain, the gradient batched (the default), or one kernel per batch of
    // chains (cpu::lane_kernel; docs/design/nuts-kernel.md says when each is faster).
    // The comparison modes only where they are compiled (cpu_comparison_modes; refused above
    // otherwise).
    constexpr bool comparison = cpu_comparison_modes<Target>();
    auto with = [&]<class Lanes>(std::type_identity<Lanes>) {
      if constexpr (comparison)
        if (exec.schedule == lane_schedule::trajectory_sync)
          return run_trajectory_sync<Lanes>(target, cfg, chains, threads, lanes, on_error);
      return run_program_counter<Lanes>(target, cfg, chains, threads, lanes, on_error);
    };
    if constexpr (lane_traits<T>::width == 1) {
      return with(std::type_identity<batch_lanes<T>>{});
    } else {
      if constexpr (comparison)
        if (exec.lane_kernel == cpu_lane_kernel::batch) return with(std::type_identity<batch_lanes<T>>{});
      return with(std::type_identity<chain_lanes<T>>{});
    }
  };
  constexpr int full = simd_lane_width, half = half_lane_width > 1 ? half_lane_width : 1;
  if constexpr (full > 1)
    if (lanes > 1 && lanes % full == 0) return run(std::type_identity<lane_batch>{});
  if constexpr (half > 1)
    if (lanes > 1 && lanes % half == 0) return run(std::type_identity<half_lane_batch>{});
  return run(std::type_identity<double>{});
}

}  // namespace detail
}  // namespace tyche::samplers
