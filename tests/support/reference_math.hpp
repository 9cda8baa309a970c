// tests/support/reference_math.hpp — plain-C++ references the statistical and model tests share:
// the normal log density written out, and the mean of every draw of one quantity over its
// chains (what a posterior mean is checked with, against its MCSE).
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

}  // namespace tyche_test
