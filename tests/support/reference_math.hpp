// tests/support/reference_math.hpp — plain-C++ references the statistical and model tests share:
// the normal log density written out, the mean of every draw of one quantity over its chains
// (what a posterior mean is checked with, against its MCSE), and products and transposes of
// row-major matrices (in double or long double) for the linear-algebra tests.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace tyche_test {

inline constexpr double log_two_pi = 1.8378770664093454836;

/// log N(y | mu, sigma).
inline double normal_log(double y, double mu, double sigma) {
  const double z = (y - mu) / sigma;
  return -0.5 * z * z - std::log(sigma) - 0.5 * log_two_pi;
}

/// The mean of all draws of one quantity (one vector per chain).
inline double pooled_mean(const std::vector<std::vector<double>>& chains) {
  double total = 0;
  std::size_t count = 0;
  for (const auto& c : chains)
    for (double v : c) {
      total += v;
      ++count;
    }
  return count > 0 ? total / static_cast<double>(count) : 0.0;
}

/// C = A B for A r × n and B n × c, row major, plain loops (R: double or long double).
template <class R>
std::vector<R> product(const std::vector<R>& a, const std::vector<R>& b, std::size_t r, std::size_t n, std::size_t c) {
  std::vector<R> out(r * c, R(0));
  for (std::size_t i = 0; i < r; ++i)
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < c; ++j) out[i * c + j] += a[i * n + k] * b[k * c + j];
  return out;
}

/// Aᵀ of an r × c matrix A, row major.
template <class R>
std::vector<R> transposed(const std::vector<R>& a, std::size_t r, std::size_t c) {
  std::vector<R> t(r * c);
  for (std::size_t i = 0; i < r; ++i)
    for (std::size_t j = 0; j < c; ++j) t[j * r + i] = a[i * c + j];
  return t;
}

}  // namespace tyche_test
