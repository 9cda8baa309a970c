// tyche/samplers/nuts/lockstep.hpp — the lockstep driver: chains as SIMD lanes, each lane at its
// own point of its own trajectory.
//
// A chain's transition (transition.hpp) stops only to ask for a gradient. A thread owns a group
// of `lanes` chains; each step it evaluates every lane's pending point with one batched
// evaluation of the model per SIMD batch (one chain per lane), then resumes each lane's state
// machine up to its next gradient request. A lane whose trajectory ends at once starts the next
// transition of the chain that has waited longest (chains rotate through the lanes of all
// threads), so no lane waits for another (program-counter batching, Radul et al. 2020,
// "Automatically batching control-intensive programs for modern accelerators"). The other
// schedule, trajectory_sync, holds every chain and makes all of them wait for the longest
// trajectory of each iteration: the "local static" batching that paper measures against, kept
// here as the benchmark's baseline.
//
// Utilisation is the fraction of lane slots that do useful work: useful lane gradients over lane
// slots evaluated (program_counter; a SIMD batch with no active lane is not evaluated), or over
// the lane slots the chains occupy (whole SIMD batches) × the longest trajectory of each
// iteration (trajectory_sync, where the chains that finished early wait). A single chain on a
// build with 8 lanes therefore has utilisation 1/8 under both schedules.
#pragma once
#include <tyche/backends/simd/batch.hpp>
#include <tyche/config.hpp>
#include <tyche/samplers/nuts/transition.hpp>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace tyche::samplers {

/// How the lockstep driver schedules chains; see the header comment.
enum class lane_schedule { program_counter, trajectory_sync };

#if TYCHE_HAS_XSIMD
/// The SIMD batch one chain per lane is evaluated in: the build's widest batch of doubles.
using lane_batch = xsimd::batch<double>;
inline constexpr std::size_t simd_lane_width = lane_batch::size;
/// A batch of half that width where the build has one (AVX2 with FMA under AVX-512; SSE2 under
/// AVX): fewer chains than the wide batch's lanes, e.g. 4 chains on one thread of an AVX-512
/// build, are evaluated at the half width rather than with half of a wide batch empty.
#if XSIMD_WITH_AVX512F && XSIMD_WITH_FMA3_AVX2
using half_lane_batch = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
#elif XSIMD_WITH_AVX512F && XSIMD_WITH_AVX2
using half_lane_batch = xsimd::batch<double, xsimd::avx2>;
#elif XSIMD_WITH_AVX && XSIMD_WITH_SSE2
using half_lane_batch = xsimd::batch<double, xsimd::sse2>;
#else
using half_lane_batch = void;
#endif
inline constexpr std::size_t half_lane_width =
    std::is_void_v<half_lane_batch> ? 0 : simd_lane_width / 2;
#else
inline constexpr std::size_t simd_lane_width = 1;
inline constexpr std::size_t half_lane_width = 0;
#endif

/// Gradient counts of a run: useful lane gradients and lane slots spent.
struct lane_counts {
  long long useful = 0;
  long long slots = 0;
};

namespace detail {

/// Evaluates the pending point of one lane in double precision (lanes = 1).
template <class View>
class scalar_evaluator {
 public:
  static constexpr std::size_t width = 1;
  scalar_evaluator(const View& view, int) : view_(view), ws_(view.workspace_size) {}
  long long operator()(phase_point* const* points) {
    if (points[0] == nullptr) return 0;
    phase_point& z = *points[0];
    z.log_density = view_.value_and_gradient(z.q.data(), z.grad.data(), ws_.empty() ? nullptr : ws_.data());
    return 1;
  }

 private:
  const View& view_;
  std::vector<double> ws_;
};

#if TYCHE_HAS_XSIMD
/// Evaluates the pending points of a group of lanes with one batched evaluation of the model per
/// SIMD batch of lanes (Batch: lane_batch or half_lane_batch). Batches holding no active lane
/// are skipped; idle lanes of a partly active batch repeat an active lane's point.
template <class View, class Batch>
class batch_evaluator {
 public:
  static constexpr std::size_t width = Batch::size;
  batch_evaluator(const View& view, int lanes)
      : view_(view), d_(view.dim()), lanes_(static_cast<std::size_t>(lanes)), theta_(d_), grad_(d_),
        ws_(view.workspace_size), grad_out_(d_ * width) {}

  /// points[0 .. lanes): the lanes' pending points, nullptr for an idle lane. Returns the
  /// number of lane slots evaluated.
  long long operator()(phase_point* const* points) {
    constexpr std::size_t w = width;
    long long slots = 0;
    alignas(64) double buffer[w];
    for (std::size_t first = 0; first < lanes_; first += w) {
      // The batch's points; an idle lane borrows an active one's.
      const double* q[w];
      const phase_point* any = nullptr;
      for (std::size_t l = 0; l < w && any == nullptr; ++l) any = points[first + l];
      if (any == nullptr) continue;
      for (std::size_t l = 0; l < w; ++l) q[l] = (points[first + l] ? points[first + l] : any)->q.data();
      slots += static_cast<long long>(w);
      for (std::size_t i = 0; i < d_; ++i) {
        for (std::size_t l = 0; l < w; ++l) buffer[l] = q[l][i];
        theta_[i] = Batch::load_aligned(buffer);
      }
      const Batch value = view_.value_and_gradient(theta_.data(), grad_.data(), ws_.empty() ? nullptr : ws_.data());
      value.store_aligned(buffer);
      double* out = grad_out_.data();
      for (std::size_t i = 0; i < d_; ++i) grad_[i].store_aligned(out + i * w);
      for (std::size_t l = 0; l < w; ++l) {
        phase_point* z = points[first + l];
        if (z == nullptr) continue;
        z->log_density = buffer[l];
        double* g = z->grad.data();
        for (std::size_t i = 0; i < d_; ++i) g[i] = out[i * w + l];
      }
    }
    return slots;
  }

 private:
  const View& view_;
  std::size_t d_, lanes_;
  std::vector<Batch, xsimd::aligned_allocator<Batch>> theta_, grad_, ws_;
  std::vector<double, xsimd::aligned_allocator<double>> grad_out_;  // the gradient, [i * width + lane]
};
#endif

/// Runs chains [0, chains) with `threads` threads of `lanes` lanes. The chains wait in one queue
/// shared by all threads; a lane whose transition ends puts its chain at the back of the queue
/// and takes the chain at the front, so all chains advance at about the same pace, no lane waits
/// for another, and lanes fall idle only in the last transitions of the run. A chain is built
/// (initial point, first step size) the first time a lane takes it.
template <class Runner, class Evaluator, class View, class Make, class OnError>
lane_counts run_program_counter(const View& view, int chains, int threads, int lanes, Make& make,
                                OnError& on_error) {
  struct waiting {
    int chain;
    std::unique_ptr<Runner> runner;  // null until a lane first takes the chain
  };
  std::mutex queue_mutex;
  std::deque<waiting> queue;  // guarded by queue_mutex
  for (int c = 0; c < chains; ++c) queue.push_back({c, nullptr});
  std::atomic<long long> useful{0}, slots{0};
  auto worker = [&] {
    Evaluator evaluate(view, lanes);
    const std::size_t L = static_cast<std::size_t>(lanes);
    std::vector<std::unique_ptr<Runner>> lane(L);
    std::vector<phase_point*> points(L, nullptr);
    // Puts lane l's chain (if any, and not done) at the back of the queue and gives the lane
    // the chain at the front, its transition begun; or leaves the lane empty.
    auto rotate = [&](std::size_t l) {
      std::unique_ptr<Runner> mine = std::move(lane[l]);
      points[l] = nullptr;
      for (;;) {
        waiting next;
        {
          std::lock_guard<std::mutex> lock(queue_mutex);
          if (mine) queue.push_back({mine->chain(), std::move(mine)});
          if (queue.empty()) return;
          next = std::move(queue.front());
          queue.pop_front();
        }
        try {
          if (!next.runner) next.runner = make(next.chain);
          if (next.runner->done()) continue;
          next.runner->begin();
          lane[l] = std::move(next.runner);
          points[l] = &lane[l]->pending();
          return;
        } catch (...) {
          on_error(next.chain);
        }
      }
    };
    for (std::size_t l = 0; l < L; ++l) rotate(l);
    long long my_useful = 0, my_slots = 0;
    for (;;) {
      const long long spent = evaluate(points.data());
      if (spent == 0) break;  // every lane is empty and so is the queue
      my_slots += spent;
      for (std::size_t l = 0; l < L; ++l) {
        if (!lane[l]) continue;
        ++my_useful;
        try {
          if (lane[l]->resume()) {
            if (lane[l]->done()) lane[l].reset();
            rotate(l);
            continue;
          }
          points[l] = &lane[l]->pending();
        } catch (...) {
          on_error(lane[l]->chain());
          lane[l].reset();
          rotate(l);
        }
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

/// Runs every chain at once, iteration by iteration: each thread advances its groups of lanes
/// until all their trajectories of the iteration are over, then waits for the other threads.
template <class Runner, class Evaluator, class View, class Make, class OnError>
lane_counts run_trajectory_sync(const View& view, int chains, int threads, int lanes, Make& make,
                                OnError& on_error) {
  std::vector<long long> longest(static_cast<std::size_t>(threads), 0);
  std::atomic<long long> useful{0};
  long long slots = 0;
  std::atomic<long long> resident_slots{0};  // lane slots the chains occupy, whole SIMD batches
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
    Evaluator evaluate(view, lanes);
    std::vector<std::unique_ptr<Runner>> mine;
    for (int c = t; c < chains; c += threads) {
      try {
        auto r = make(c);
        if (!r->done()) mine.push_back(std::move(r));
      } catch (...) {
        on_error(c);
      }
    }
    const std::size_t L = static_cast<std::size_t>(lanes), w = Evaluator::width;
    for (std::size_t first = 0; first < mine.size(); first += L)
      resident_slots += static_cast<long long>((std::min(L, mine.size() - first) + w - 1) / w * w);
    sync.arrive_and_wait();  // every thread counted its chains
    std::vector<phase_point*> points(L, nullptr);
    std::vector<long long> steps(mine.size(), 0);
    long long my_useful = 0;
    for (;;) {
      bool any = false;
      for (std::size_t first = 0; first < mine.size(); first += L) {
        const std::size_t n = std::min(L, mine.size() - first);
        std::fill(points.begin(), points.end(), nullptr);
        for (std::size_t l = 0; l < n; ++l) {
          Runner* r = mine[first + l].get();
          if (r == nullptr || r->done()) continue;
          any = true;
          try {
            r->begin();
            points[l] = &r->pending();
          } catch (...) {
            on_error(r->chain());
            mine[first + l].reset();
          }
        }
        for (;;) {
          if (evaluate(points.data()) == 0) break;
          for (std::size_t l = 0; l < n; ++l) {
            if (points[l] == nullptr) continue;
            Runner* r = mine[first + l].get();
            ++my_useful;
            ++steps[first + l];
            try {
              if (r->resume()) {
                points[l] = nullptr;
              } else {
                points[l] = &r->pending();
              }
            } catch (...) {
              on_error(r->chain());
              mine[first + l].reset();
              points[l] = nullptr;
            }
          }
        }
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

}  // namespace detail

/// Runs `chains` chains, made by make(c) (a std::unique_ptr to a runner with begin(), pending(),
/// resume(), done(), chain() and run()), on `threads` threads of `lanes` lanes: 1 (scalar), or a
/// multiple of simd_lane_width or of half_lane_width (batch_width(lanes) says which batch).
/// on_error(c) is called inside a catch block when chain c throws; its lane moves on to other
/// chains.
template <class Runner, class View, class Make, class OnError>
lane_counts run_lockstep(const View& view, int chains, int threads, int lanes, lane_schedule schedule,
                         Make make, OnError on_error) {
  auto run = [&]<class Evaluator>(std::type_identity<Evaluator>) {
    if (schedule == lane_schedule::trajectory_sync)
      return detail::run_trajectory_sync<Runner, Evaluator>(view, chains, threads, lanes, make, on_error);
    return detail::run_program_counter<Runner, Evaluator>(view, chains, threads, lanes, make, on_error);
  };
#if TYCHE_HAS_XSIMD
  if (lanes > 1 && lanes % static_cast<int>(simd_lane_width) == 0)
    return run(std::type_identity<detail::batch_evaluator<View, lane_batch>>{});
  if constexpr (half_lane_width > 1)
    if (lanes > 1 && lanes % static_cast<int>(half_lane_width) == 0)
      return run(std::type_identity<detail::batch_evaluator<View, half_lane_batch>>{});
#endif
  return run(std::type_identity<detail::scalar_evaluator<View>>{});
}

}  // namespace tyche::samplers
