// tyche/samplers/smc/detail/worker_pool.hpp — a fixed set of threads that run a loop body
// over [0, n) in contiguous chunks; the calling thread runs the first chunk. One pool lives
// for a whole run, so a step costs a wake-up, not a thread start.
#pragma once
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
  explicit worker_pool(std::size_t threads) : size_(threads < 1 ? 1 : threads) {
    for (std::size_t t = 1; t < size_; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;
  ~worker_pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  std::size_t size() const { return size_; }

  /// body(begin, end) over chunks of [0, n); rethrows the first chunk's exception.
  void run(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body) {
    if (size_ == 1 || n < 2) {
      body(0, n);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      body_ = &body;
      n_ = n;
      pending_ = size_ - 1;
      errors_.assign(size_, nullptr);
      ++generation_;
    }
    wake_.notify_all();
    chunk(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    body_ = nullptr;
    for (auto& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  void chunk(std::size_t t) {
    const std::size_t begin = n_ * t / size_, end = n_ * (t + 1) / size_;
    try {
      (*body_)(begin, end);
    } catch (...) {
      errors_[t] = std::current_exception();
    }
  }
  void work(std::size_t t) {
    std::size_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      chunk(t);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--pending_ == 0) done_.notify_one();
      }
    }
  }

  std::size_t size_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t n_ = 0, pending_ = 0, generation_ = 0;
  std::vector<std::exception_ptr> errors_;
  bool stop_ = false;
};

}  // namespace tyche::smc::detail
