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
// at the back of a queue shared by all threads and starts the next transition of the chain at
// the front, so no lane waits for another and chains rotate through the lanes of all threads at
// about the same pace (program-counter batching, Radul et al. 2020, "Automatically batching
// control-intensive programs for modern accelerators"). The trajectory_sync schedule holds
// every chain in a lane of its thread and makes all chains wait for the longest trajectory of
// each iteration: the "local static" batching that paper measures against, kept as the
// benchmark's baseline.
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
#include <tyche/samplers/nuts/kernel.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace tyche::samplers {

/// Gradient counts of a run: useful lane gradients and lane slots spent.
struct lane_counts {
  long long useful = 0;
  long long slots = 0;
};

namespace detail {

/// The number of lanes the CPU executor uses: `requested`, checked, or for 0 the narrowest SIMD
/// batch that holds the chains of one thread (⌈chains / threads⌉): the half-width batch where
/// the build has one and it suffices, else the full width.
inline int resolve_lanes(int requested, int chains, int threads) {
  constexpr int width = simd_lane_width;
  constexpr int half = half_lane_width;
  if (requested == 0) {
    const int per_thread = (chains + threads - 1) / threads;
    return half > 1 && per_thread <= half ? half : width;
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

/// W chains in the lanes of one kernel, with the buffers it works in.
template <class T, class Target>
class lane_block {
 public:
  using kernel_type = nuts_kernel<T>;
  using chain_type = nuts_chain<Target>;
  static constexpr int width = kernel_type::width;

  lane_block(const Target& target, const nuts_config& cfg)
      : storage_(kernel_type::storage_size(target.dim(), cfg.max_depth, cfg.metric)),
        workspace_(target.workspace_size()) {
    const nuts_status s = kernel.bind(storage_.data(), storage_.size(), target.dim(), cfg.max_depth, cfg.metric);
    if (s != nuts_status::ok) throw_status(s, "max_depth = " + std::to_string(cfg.max_depth));
    kernel.rng().seed = cfg.seed;
  }
  lane_block(const lane_block&) = delete;
  lane_block& operator=(const lane_block&) = delete;

  /// Evaluates log p and its gradient at every lane's pending point when a lane is running.
  bool evaluate(const Target& target) {
    if (!kernel.any_running()) return false;
    kernel.set_pending(target.value_and_gradient(kernel.pending_q(), kernel.pending_grad(),
                                                 workspace_.empty() ? nullptr : workspace_.data()));
    return true;
  }

  /// Puts chain c into lane l, its state loaded (the point and metric only when the lane does
  /// not already hold them).
  void load(chain_type* c, int l) {
    const bool same = resident[l] == c;
    c->load(kernel, l, !same, !same || metric_version[l] != c->metric_version());
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

  kernel_type kernel;
  chain_type* owner[width] = {};     // the chain running in each lane, or none
  chain_type* resident[width] = {};  // the chain whose point and metric each lane holds
  unsigned metric_version[width] = {};

 private:
  std::vector<T> storage_;  // (std::allocator honours a batch's alignment)
  std::vector<T> workspace_;
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
        throw_status(nuts_status::non_finite_start, "chain " + std::to_string(b.owner[l]->chain() + 1));
      } catch (...) {
        on_error(b.owner[l]->chain());
      }
      b.drop(l);
    }
}

/// The program_counter schedule: chains [0, chains) wait in one queue shared by all threads; a
/// lane whose transition ends puts its chain at the back and takes the chain at the front. A
/// chain is initialised (initial point, first step size) the first time a lane takes it.
template <class T, class Target, class OnError>
lane_counts run_program_counter(const Target& target, const nuts_config& cfg,
                                std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, int threads, int lanes,
                                OnError& on_error) {
  using block = lane_block<T, Target>;
  using chain_type = nuts_chain<Target>;
  constexpr int w = block::width;
  std::mutex queue_mutex;
  std::deque<chain_type*> queue;  // guarded by queue_mutex
  for (auto& c : chains) queue.push_back(c.get());
  std::atomic<long long> useful{0}, slots{0};
  auto worker = [&] {
    const int k_blocks = lanes / w;
    std::vector<std::unique_ptr<block>> blocks;
    for (int k = 0; k < k_blocks; ++k) blocks.push_back(std::make_unique<block>(target, cfg));
    // Gives lane l of b the chain at the front of the queue, after putting `mine` (if any) at
    // the back; start[l] when it has one.
    auto rotate = [&](block& b, int l, chain_type* mine, bool* start) {
      for (;;) {
        chain_type* next = nullptr;
        {
          std::lock_guard<std::mutex> lock(queue_mutex);
          if (mine != nullptr) queue.push_back(mine);
          mine = nullptr;
          if (!queue.empty()) {
            next = queue.front();
            queue.pop_front();
          }
        }
        if (next == nullptr) {
          b.park(l);
          return;
        }
        try {
          if (!next->initialised()) next->initialise();
          if (next->done()) continue;
          b.load(next, l);
          start[l] = true;
          return;
        } catch (...) {
          on_error(next->chain());
          b.drop(l);
        }
      }
    };
    std::vector<bool> evaluated(static_cast<std::size_t>(k_blocks));
    for (auto& b : blocks) {
      bool start[w] = {};
      for (int l = 0; l < w; ++l) rotate(*b, l, nullptr, start);
      begin_lanes(*b, start, on_error);
    }
    long long my_useful = 0, my_slots = 0;
    for (;;) {
      long long spent = 0;
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        evaluated[k] = blocks[k]->evaluate(target);
        if (evaluated[k]) spent += w;
      }
      if (spent == 0) break;  // every lane is idle and the queue is empty
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
          try {
            c->unload(b.kernel, l);
            c->end_iteration(b.kernel.stats(l));
          } catch (...) {
            on_error(c->chain());
            b.drop(l);
            rotate(b, l, nullptr, start);
            continue;
          }
          rotate(b, l, c->done() ? nullptr : c, start);
        }
        begin_lanes(b, start, on_error);
      }
    }
    useful += my_useful;
    slots += my_slots;
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& th : pool) th.join();
  }
  return {useful.load(), slots.load()};
}

/// The trajectory_sync schedule: thread t holds chains t, t + threads, …, each in a lane of its
/// own; every iteration all of them begin a transition, and the thread waits for the longest,
/// then for the other threads.
template <class T, class Target, class OnError>
lane_counts run_trajectory_sync(const Target& target, const nuts_config& cfg,
                                std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, int threads, int lanes,
                                OnError& on_error) {
  using block = lane_block<T, Target>;
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

/// Runs the chains with the CPU executor's settings; returns the gradient counts and sets
/// fit.lanes.
template <class Target, class OnError>
lane_counts run_cpu(const Target& target, const nuts_config& cfg, const cpu& exec,
                    std::vector<std::unique_ptr<nuts_chain<Target>>>& chains, nuts_fit& fit, OnError& on_error) {
  static_assert(log_density_target<Target>,
                "tyche::samplers::detail::run_cpu(target, ...) requires a log_density_target (tyche/concepts.hpp)");
  int threads = exec.threads > 0 ? exec.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min(threads, cfg.chains);
  const int lanes = resolve_lanes(exec.lanes, cfg.chains, threads);
  fit.lanes = lanes;
  auto run = [&]<class T>(std::type_identity<T>) {
    if (exec.schedule == lane_schedule::trajectory_sync)
      return run_trajectory_sync<T>(target, cfg, chains, threads, lanes, on_error);
    return run_program_counter<T>(target, cfg, chains, threads, lanes, on_error);
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
