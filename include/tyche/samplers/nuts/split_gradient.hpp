// tyche/samplers/nuts/split_gradient.hpp — one chain's gradient on several cores (issue 17, "one
// chain on every core"): the CPU executor's chains (one at a time, or a batch of them in SIMD
// lanes) evaluate a data-heavy model in `parts` parts (program_view::value_and_gradient_part:
// each sum over observations runs over its share of the elements), the parts spread over the chain's thread and helper threads, and the parts'
// values and gradients added in part order. The number of parts is fixed by the configuration
// (cpu::split), never by the number of threads, so a chain's draws are the same with 1, 2 or 16
// threads; they differ in the last bits from the unsplit evaluation's (another order of sums).
#pragma once
#include <tyche/concepts.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/samplers/nuts/cpus.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace tyche::samplers::detail {

/// Threads that help the callers of run() with the parts of their jobs. Several callers (one
/// per chain thread) may run jobs at once; each caller works on its own job's parts too, and
/// returns when all of them are done, so a pool with no helpers runs every part on the caller.
class part_pool {
 public:
  /// Starts the helpers; if one cannot start (std::system_error), those started are stopped and
  /// joined before the exception leaves (a std::thread destroyed while joinable would terminate).
  explicit part_pool(int helpers) {
    try {
      for (int t = 0; t < helpers; ++t) threads_.emplace_back([this] { help(); });
    } catch (...) {
      stop();
      throw;
    }
  }
  part_pool(const part_pool&) = delete;
  part_pool& operator=(const part_pool&) = delete;
  ~part_pool() { stop(); }
  [[nodiscard]] int helpers() const { return static_cast<int>(threads_.size()); }
  /// Parts run so far (of jobs of more than one part), and of those, the helpers': whether the
  /// helpers' cores did the work they were there for (nuts_fit::split_parts_by_helpers).
  [[nodiscard]] long long parts_run() const { return parts_run_.load(std::memory_order_relaxed); }
  [[nodiscard]] long long parts_by_helpers() const { return parts_by_helpers_.load(std::memory_order_relaxed); }

  /// f(p) for every p in [0, parts), on this thread and the helpers; rethrows the first
  /// exception a part threw, once every part has ended.
  template <class F>
  void run(std::size_t parts, F& f) {
    job j;
    j.parts = parts;
    j.context = &f;
    j.call = [](void* c, std::size_t p) { (*static_cast<F*>(c))(p); };
    if (!threads_.empty() && parts > 1) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        jobs_.push_back(&j);
        generation_.fetch_add(1);
      }
      wake_.notify_all();
    }
    work_on(j, false);
    if (!threads_.empty() && parts > 1) {
      // Every part ended, and no helper still holds j (a helper's last claim reads j.next): a
      // short spin first (a helper's part usually ends within microseconds of this thread's),
      // then the condition variable.
      auto complete = [&] { return j.finished.load() == j.parts && j.workers.load() == 0; };
      spin_until(complete);
      std::unique_lock<std::mutex> lock(mutex_);
      jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &j));
      done_.wait(lock, complete);
    }
    if (j.error) std::rethrow_exception(j.error);
  }

 private:
  struct job {
    std::size_t parts = 0;
    void* context = nullptr;
    void (*call)(void*, std::size_t) = nullptr;
    std::atomic<std::size_t> next{0};
    std::atomic<std::size_t> finished{0};  // changed under the pool's mutex, read by a spin too
    std::atomic<int> workers{0};           // helpers working on the job; likewise
    std::exception_ptr error;  // guarded by the pool's mutex
  };

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      stopping_.store(true);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // Claims and runs parts of j until none is left (helper: on a helper thread).
  void work_on(job& j, bool helper) {
    for (;;) {
      const std::size_t p = j.next.fetch_add(1);
      if (p >= j.parts) return;
      if (j.parts > 1) {
        parts_run_.fetch_add(1, std::memory_order_relaxed);
        if (helper) parts_by_helpers_.fetch_add(1, std::memory_order_relaxed);
      }
      std::exception_ptr error;
      try {
        j.call(j.context, p);
      } catch (...) {
        error = std::current_exception();
      }
      bool last = false;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (error && !j.error) j.error = error;
        last = ++j.finished == j.parts;
      }
      if (last) done_.notify_all();
    }
  }

  // A job of the pool's with parts left to claim, or nullptr (the pool's mutex held).
  job* open_job() const {
    for (job* k : jobs_)
      if (k->next.load() < k->parts) return k;
    return nullptr;
  }

  // Waits for ready() by spinning, at most spin_time: cpu_pause, and every 16th turn a yield
  // (another thread may need this CPU). Whether ready() held.
  template <class Ready>
  static bool spin_until(Ready&& ready) {
    auto until = std::chrono::steady_clock::now() + spin_time;
    for (unsigned i = 1;; ++i) {
      if (ready()) return true;
      if (i % 16 == 0) {
        std::this_thread::yield();
        if (std::chrono::steady_clock::now() >= until) return ready();
      } else {
        cpu_pause();
      }
    }
  }

  void help() {
    std::unique_lock<std::mutex> lock(mutex_);  // held at the top of every turn
    std::size_t seen = 0;
    for (;;) {
      // A chain's next evaluation usually comes within microseconds: spin until a job with
      // parts left arrives, and sleep only when none has come for spin_time. Before
      // (2026-12-05; docs/benchmarks.md, "The split's parts wrote to one cache line; its helper
      // slept") the helper slept whenever the job it saw had all its parts claimed by their
      // caller, and a wake-up through the condition variable took longer on this VM than a
      // part of a small gradient, so it kept arriving late: 2 parts of 5 µs took 18 µs a run.
      // First a job already waiting (another chain thread's, pushed while this helper worked).
      seen = generation_.load();
      job* j = stop_ ? nullptr : open_job();
      if (!j && !stop_) {
        lock.unlock();
        while (!j && spin_until([&] { return stopping_.load() || generation_.load() != seen; })) {
          if (stopping_.load()) break;
          lock.lock();
          seen = generation_.load();
          j = open_job();
          if (!j) lock.unlock();  // a job came and its caller claimed every part: spin again
        }
        if (!lock.owns_lock()) lock.lock();
        if (!j) {
          wake_.wait(lock, [&] {
            if (stop_) return true;
            j = open_job();
            return j != nullptr;
          });
        }
      }
      if (stop_) return;
      ++j->workers;
      lock.unlock();
      work_on(*j, true);  // j stays alive: its caller waits until workers is 0 again
      lock.lock();
      if (--j->workers == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<job*> jobs_;  // guarded by mutex_
  bool stop_ = false;       // guarded by mutex_
  std::atomic<std::size_t> generation_{0};  // jobs pushed so far, for the helpers' spin
  std::atomic<bool> stopping_{false};   // stop_, for the helpers' spin
  std::atomic<long long> parts_run_{0}, parts_by_helpers_{0};  // parts_run(), parts_by_helpers()
  // How long a helper with nothing to do, or a caller whose parts are all claimed, spins
  // before it sleeps.
  static constexpr std::chrono::microseconds spin_time{2000};
};

/// A log_density_target whose evaluation is Inner's in `parts` parts on a part_pool, for double
/// (a scalar chain) and for the batches of chains alike. Its workspace holds every part's
/// gradient, value and own workspace, so concurrent evaluations (one per chain thread) share
/// nothing but the pool.
template <class Inner>
class split_target {
 public:
  split_target(const Inner& inner, std::size_t parts, part_pool& pool) : inner_(inner), parts_(parts), pool_(pool) {}
  [[nodiscard]] std::size_t dim() const { return inner_.dim(); }
  [[nodiscard]] std::size_t constrained_dim() const { return inner_.constrained_dim(); }
  [[nodiscard]] std::size_t workspace_size() const {
    return std::max(inner_.workspace_size(), gap + parts_ * part_stride());
  }
  [[nodiscard]] std::size_t data_values() const { return inner_.data_values(); }
  [[nodiscard]] std::size_t matrix_values() const { return inner_.matrix_values(); }
  [[nodiscard]] std::size_t split_values() const { return inner_.split_values(); }
  [[nodiscard]] std::size_t split_work() const { return inner_.split_work(); }
  [[nodiscard]] bool splittable() const { return true; }
  [[nodiscard]] std::size_t parts() const { return parts_; }

  template <class T>
  T value_and_gradient(const T* q, T* grad, T* workspace) const {
    // Each part's gradient, value and scratch in a block of its own, with `gap` elements of
    // nothing after each: a part adds to its gradient row after row, and parts that run at
    // once on two cores must not write to one cache line. Packed end to end, they did (the
    // end of one part's gradient and the start of the next's), and the line went back and forth
    // between the cores for every row: the two halves of logistic regression 10,000 × 100's
    // gradient took 0.12–0.15 ms each alone and 0.2–0.3 ms at once on two cores (0.12–0.16 ms
    // apart; docs/benchmarks.md, "The split's parts wrote to one cache line; its helper slept").
    const std::size_t d = dim(), stride = part_stride();
    T* blocks = workspace + gap;  // and a gap before the first: the workspace's neighbour on the heap
    auto grads = [&](std::size_t p) { return blocks + p * stride; };
    auto value_of = [&](std::size_t p) -> T& { return blocks[p * stride + d + gap]; };
    auto scratch = [&](std::size_t p) { return blocks + p * stride + d + 2 * gap; };
    auto part = [&](std::size_t p) {
      value_of(p) = inner_.value_and_gradient_part(q, grads(p), scratch(p), p, parts_);
    };
    pool_.run(parts_, part);
    T value = value_of(0);
    for (std::size_t k = 0; k < d; ++k) grad[k] = grads(0)[k];
    for (std::size_t p = 1; p < parts_; ++p) {  // in part order: the same sums on every thread count
      value += value_of(p);
      for (std::size_t k = 0; k < d; ++k) grad[k] += grads(p)[k];
    }
    return value;
  }
  template <class T>
  T value_and_gradient_part(const T* q, T* grad, T* workspace, std::size_t part, std::size_t parts) const {
    return inner_.value_and_gradient_part(q, grad, workspace, part, parts);
  }
  template <class Generator>
  [[nodiscard]] std::vector<double> initial_point(Generator& rng, double radius) const {
    return inner_.initial_point(rng, radius);
  }
  void constrain(const double* q, std::vector<double>& out) const { inner_.constrain(q, out); }
  [[nodiscard]] std::vector<double> unconstrain(const std::vector<double>& values) const {
    return inner_.unconstrain(values);
  }
  [[nodiscard]] std::string non_finite_terms(const double* q) const { return inner_.non_finite_terms(q); }

 private:
  // Elements left unused after each of a part's blocks: 256 bytes of doubles (four 64-byte
  // lines, more than a line and the one the adjacent-line prefetcher pairs with it), more for a
  // batch type.
  static constexpr std::size_t gap = 32;
  // One part's share of the workspace: its gradient, a gap, its value and gap − 1 more, its
  // scratch, a gap (so part p + 1's gradient starts at least a gap after part p's scratch).
  [[nodiscard]] std::size_t part_stride() const { return inner_.dim() + gap + 1 + gap + inner_.workspace_size() + gap; }

  const Inner& inner_;
  std::size_t parts_;
  part_pool& pool_;
};

}  // namespace tyche::samplers::detail
