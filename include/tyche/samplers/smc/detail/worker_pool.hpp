// tyche/samplers/smc/detail/worker_pool.hpp — a fixed set of threads that run a loop body
// over [0, n) in contiguous chunks; the calling thread runs the first chunk. One pool lives
// for a whole run, so a step costs a wake-up, not a thread start.
//
// A sweep of the in-process engine meets its threads at every observation, often every few
// microseconds, so a wake-up must cost less than that: a thread that has finished its chunk (a
// worker waiting for the next run, the caller waiting for the workers) first watches an atomic
// for up to spin_seconds, pausing between looks, and only then blocks on a condition variable.
// With blocking alone, a meeting cost about 20 µs (two futex wake-ups and the scheduler's
// latency): bench/pmmh.cpp's 200 particles × 100 observations with threads = 2 ran at 0.38× one
// thread (docs/smc.md). When the pool has more threads than the machine has CPUs, nothing spins.
// Spinning also hurts when other programs keep the CPUs busy: a worker that spins uses up its
// share of a CPU, the scheduler then runs the other program for milliseconds, and the caller
// waits that long at every meeting (one core kept busy by another process: 100 particles 7.6 s
// with spinning, 1.0 s with blocking alone). So the caller counts the runs whose workers did not
// finish within spin_seconds of its own chunk; three in a row turn spinning off for a number of
// runs that doubles at each such stop (from 64 to 2^16) and resets after 1024 good runs.
//
// The handshake (sequentially consistent atomics): run() publishes the body, then increments
// generation_, then looks at sleepers_; a worker that is about to block increments sleepers_
// under the mutex, then looks at generation_ (in the wait's predicate, under the mutex). One of
// the two sees the other's write, so a worker never sleeps through a run; the last worker to
// finish decrements pending_ to 0 and then looks at caller_asleep_, which the caller sets under
// the mutex before its own predicate looks at pending_, likewise.
//
// A pool may serve many runs of the particle filter (run_pmmh passes each chain's pool to every
// sweep), so that a sweep neither starts threads nor forgets what the spinning back-off learnt.
#pragma once
#include <tyche/samplers/nuts/cpus.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tyche::smc::detail {

class worker_pool {
 public:
  /// How long a thread that has nothing to do watches for work before it blocks.
  static constexpr double spin_seconds = 50e-6;

  /// threads = 0: one per CPU this process may run on (samplers::detail::available_cpus).
  /// pools: how many pools of this size run at once (run_pmmh's chains, each with its own):
  /// the threads spin only while all of them together fit on the CPUs.
  explicit worker_pool(std::size_t threads, std::size_t pools = 1)
      : size_(threads == 0 ? std::size_t{samplers::detail::available_cpus()} : threads) {
    spin_ = size_ * (pools < 1 ? 1 : pools) <= samplers::detail::available_cpus();
    spinning_.store(spin_);
    errors_.assign(size_, nullptr);
    workers_.reserve(size_ - 1);
    try {
      for (std::size_t t = 1; t < size_; ++t) workers_.emplace_back([this, t] { work(t); });
    } catch (...) {  // a thread that could not start (std::system_error): stop the ones that did
      stop();
      throw;
    }
  }
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;
  ~worker_pool() { stop(); }

  std::size_t size() const { return size_; }

  /// body(begin, end) over chunks of [0, n); rethrows the first chunk's exception.
  void run(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
    if (size_ == 1 || n < 2) {
      body(0, n);
      return;
    }
    body_ = &body;
    n_ = n;
    for (auto& e : errors_) e = nullptr;
    pending_.store(size_ - 1);
    generation_.fetch_add(1);  // publishes the three above
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      wake_.notify_all();
    }
    chunk(0);
    const bool was_spinning = spinning_.load(std::memory_order_relaxed);
    if (watch([&] { return pending_.load() == 0; })) {
      late_ = 0;
      if (was_spinning && ++good_ == 1024) off_period_ = min_off_period;
    } else {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        caller_asleep_.store(true);
        done_.wait(lock, [&] { return pending_.load() == 0; });
        caller_asleep_.store(false);
      }
      if (was_spinning && ++late_ == 3) {  // the workers are not getting their CPUs: stop spinning
        spinning_.store(false, std::memory_order_relaxed);
        off_runs_ = off_period_;
        off_period_ = off_period_ < max_off_period ? 2 * off_period_ : max_off_period;
        late_ = good_ = 0;
      }
    }
    if (spin_ && !was_spinning && --off_runs_ == 0) spinning_.store(true, std::memory_order_relaxed);
    body_ = nullptr;
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  /// Whether ready() became true within spin_seconds (false at once when the pool does not spin).
  template <class Ready>
  bool watch(Ready ready) const {
    if (!spinning_.load(std::memory_order_relaxed)) return ready();
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(spin_seconds);
    for (unsigned i = 1;; ++i) {
      if (ready()) return true;
      if (i % 16 == 0) {  // another thread may need this CPU (the pool's own, when others run)
        std::this_thread::yield();
        if (std::chrono::steady_clock::now() >= until) return ready();
      } else {
        samplers::detail::cpu_pause();
      }
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }
  /// Thread t's chunk: sizes differ by at most one, the larger ones first, so that the caller
  /// (thread 0) has work whenever n > 0.
  void chunk(std::size_t t) {
    const std::size_t q = n_ / size_, r = n_ % size_;
    const std::size_t begin = t * q + std::min(t, r), end = begin + q + (t < r ? 1 : 0);
    try {
      (*body_)(begin, end);
    } catch (...) {
      errors_[t] = std::current_exception();
    }
  }
  void work(std::size_t t) {
    std::size_t seen = 0;
    for (;;) {
      const auto ready = [&] { return stop_.load() || generation_.load() != seen; };
      if (!watch(ready)) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, ready);
        sleepers_.fetch_sub(1);
      }
      if (stop_.load()) return;
      seen = generation_.load();
      chunk(t);
      if (pending_.fetch_sub(1) == 1 && caller_asleep_.load()) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_one();
      }
    }
  }

  static constexpr std::size_t min_off_period = 64, max_off_period = std::size_t{1} << 16;

  std::size_t size_;
  bool spin_ = true;                     // whether the pool may spin at all
  std::atomic<bool> spinning_{false};    // whether it spins now
  std::size_t late_ = 0, good_ = 0;      // the caller's: runs in a row that were late, or in time
  std::size_t off_runs_ = 0, off_period_ = min_off_period;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> generation_{0}, pending_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_asleep_{false}, stop_{false};
  std::vector<std::exception_ptr> errors_;
};

}  // namespace tyche::smc::detail
