// tyche/distributions/car.hpp — car(alpha, tau, graph), icar(graph): sparse areal (CAR) priors.
// Conditional autoregressive priors for K areas on a graph of neighbours (tyche::areal_graph: K
// and the pairs of neighbours), in O(K + E) per evaluation for E pairs — the sparse forms of
// brms's car(type = "escar") and "icar" and of the Stan case studies (Joseph 2016; Morris et al.
// 2019), where multi_normal_prec(0, tau * (D - alpha * W)) costs O(K³):
//   car:   φ ~ normal(0, Q⁻¹), Q = τ(D − αW), D the diagonal of the areas' numbers of neighbours,
//          W the adjacency matrix, τ > 0, 1/λ_min < α < 1 (λ the eigenvalues of D^(−½) W D^(−½),
//          computed once when car is called; outside, the log density is NaN, a rejected point):
//          log p = ½K log τ + ½ Σᵢ log(1 − αλᵢ) + ½ Σᵢ log dᵢ − ½τ(Σᵢ dᵢφᵢ² − 2α Σ_{i~j} φᵢφⱼ) − (K/2) log 2π;
//   icar:  the intrinsic CAR of unit precision (Besag 1974), −½ Σ_{i~j} (φᵢ − φⱼ)², with Morris et
//          al.'s soft sum-to-zero constraint Σφᵢ ~ normal(0, 0.001K): the normal law of precision
//          Q + 11ᵀ/ε², ε = 0.001K, Q = D − W, normalised exactly: + ½ log pdet(Q) + ½ log K − log ε
//          − (K/2) log 2π, pdet(Q) = K · det(Q without its last row and column) (the matrix-tree
//          theorem; a Cholesky factor computed once). The graph must be connected (one sum-to-zero
//          constraint). Scale it outside: sigma * phi; the BYM2 model's spatial part is
//          sqrt(rho / s) * phi with s = graph.icar_scaling_factor() (Riebler et al. 2016).
// Each is one op over φ (its gradient by the same sums). Setting up costs O(K³) once per graph
// (car: the eigenvalues, kept with the graph and its copies; icar: a Cholesky factor per call):
// about 1 s at K = 1,000 here, 25 s at K = 3,000. α is checked: its support must lie in
// (1/λ_min, 1) (a compile error where the types put it at or above 1). A graph's pairs are 0-based area indices,
// each pair once (i ≠ j); areal_graph::from_adjacency(tyche::matrix(W, K, K)) reads them from the
// nonzero entries below the diagonal of a symmetric matrix. Errors name the pair or the area (an
// index outside 0 … K−1, a pair given twice or an area with itself, an area without neighbours, a
// graph that is not connected for icar). Draws: from the normal law, by a dense Cholesky factor of
// its precision (O(K³) per draw: for prior predictive checks of moderate K).
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/multivariate_ops.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/distributions/multi_normal.hpp>
#include <tyche/scalar/format.hpp>
#include <tyche/scalar/math.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tyche {

namespace domains {
/// car's alpha: below 1 (its lower end, 1/λ_min, depends on the graph: checked at run time).
struct below_one {
  static constexpr interval value = interval::open(-interval::inf, 1.0);
  static constexpr const char* text = "< 1";
};
}  // namespace domains

/// K areas and the pairs (node1[e], node2[e]) of neighbours, 0-based, each pair once.
class areal_graph {
 public:
  areal_graph(std::size_t k, std::span<const int> node1, std::span<const int> node2) : k_(k) {
    if (k == 0) throw std::invalid_argument("tyche::areal_graph: K = 0 areas");
    if (node1.size() != node2.size())
      throw std::invalid_argument("tyche::areal_graph: node1 has " + std::to_string(node1.size()) +
                                  " values but node2 has " + std::to_string(node2.size()) + " (one pair per index)");
    degree_.assign(k, 0.0);
    for (std::size_t e = 0; e < node1.size(); ++e) {
      const int a = node1[e], b = node2[e];
      for (const auto& [name, v] : {std::pair{"node1", a}, std::pair{"node2", b}})
        if (v < 0 || static_cast<std::size_t>(v) >= k)
          throw std::out_of_range(std::string("tyche::areal_graph: ") + name + "[" + std::to_string(e) +
                                  "] = " + std::to_string(v) + " is outside 0 … " + std::to_string(k - 1) +
                                  " (area indices count from 0: Stan's 1-based node1, node2 need - 1)");
      if (a == b)
        throw std::invalid_argument("tyche::areal_graph: pair " + std::to_string(e) + " joins area " +
                                    std::to_string(a) + " with itself");
      first_.push_back(a);
      second_.push_back(b);
      degree_[static_cast<std::size_t>(a)] += 1;
      degree_[static_cast<std::size_t>(b)] += 1;
    }
    // A pair given twice (in either order): the first repetition in the input's order.
    std::vector<std::tuple<int, int, std::size_t>> keys;
    for (std::size_t e = 0; e < first_.size(); ++e)
      keys.emplace_back(std::min(first_[e], second_[e]), std::max(first_[e], second_[e]), e);
    std::sort(keys.begin(), keys.end());
    std::size_t repeated = first_.size();
    for (std::size_t i = 1; i < keys.size(); ++i)
      if (std::get<0>(keys[i]) == std::get<0>(keys[i - 1]) && std::get<1>(keys[i]) == std::get<1>(keys[i - 1]))
        repeated = std::min(repeated, std::get<2>(keys[i]));
    if (repeated < first_.size())
      throw std::invalid_argument("tyche::areal_graph: pair " + std::to_string(repeated) + " (" +
                                  std::to_string(first_[repeated]) + ", " + std::to_string(second_[repeated]) +
                                  ") is given twice (each pair of neighbours once)");
  }
  areal_graph(std::size_t k, const std::vector<int>& node1, const std::vector<int>& node2)
      : areal_graph(k, std::span<const int>(node1), std::span<const int>(node2)) {}

  /// The pairs (i, j), i > j, where W[i, j] ≠ 0 in a symmetric K × K matrix W (row major).
  static areal_graph from_adjacency(const data_matrix& w) {
    if (w.rows != w.cols || w.rows == 0)
      throw std::invalid_argument("tyche::areal_graph::from_adjacency: W must be square and non-empty; it is " +
                                  std::to_string(w.rows) + " x " + std::to_string(w.cols));
    const std::size_t k = w.rows;
    std::vector<int> a, b;
    for (std::size_t i = 0; i < k; ++i) {
      if (w.ptr[i * k + i] != 0)
        throw std::invalid_argument("tyche::areal_graph::from_adjacency: W[" + std::to_string(i + 1) + ", " +
                                    std::to_string(i + 1) + "] = " + detail::format_number(w.ptr[i * k + i]) +
                                    " (an area is not its own neighbour: the diagonal must be 0)");
      for (std::size_t j = 0; j < i; ++j) {
        const double lo = w.ptr[i * k + j], up = w.ptr[j * k + i];
        for (const auto& [r, c, v] : {std::tuple{i, j, lo}, std::tuple{j, i, up}})
          if (v != 0 && v != 1)
            throw std::invalid_argument("tyche::areal_graph::from_adjacency: W[" + std::to_string(r + 1) + ", " +
                                        std::to_string(c + 1) + "] = " + detail::format_number(v) +
                                        " (an adjacency matrix holds 0 and 1; entries count from 1)");
        if (lo != up)
          throw std::invalid_argument("tyche::areal_graph::from_adjacency: W is not symmetric: W[" +
                                      std::to_string(i + 1) + ", " + std::to_string(j + 1) + "] = " +
                                      detail::format_number(lo) + " but W[" + std::to_string(j + 1) + ", " +
                                      std::to_string(i + 1) + "] = " + detail::format_number(up));
        if (lo != 0) {
          a.push_back(static_cast<int>(i));
          b.push_back(static_cast<int>(j));
        }
      }
    }
    return areal_graph(k, a, b);
  }

  [[nodiscard]] std::size_t areas() const { return k_; }
  [[nodiscard]] std::size_t pairs() const { return first_.size(); }
  [[nodiscard]] const std::vector<int>& node1() const { return first_; }
  [[nodiscard]] const std::vector<int>& node2() const { return second_; }
  /// The number of neighbours of each area.
  [[nodiscard]] const std::vector<double>& neighbours() const { return degree_; }
  /// The number of connected components (breadth-first search).
  [[nodiscard]] std::size_t components() const {
    std::vector<std::vector<std::size_t>> adj(k_);
    for (std::size_t e = 0; e < first_.size(); ++e) {
      adj[static_cast<std::size_t>(first_[e])].push_back(static_cast<std::size_t>(second_[e]));
      adj[static_cast<std::size_t>(second_[e])].push_back(static_cast<std::size_t>(first_[e]));
    }
    std::vector<char> seen(k_, 0);
    std::size_t count = 0;
    for (std::size_t s = 0; s < k_; ++s) {
      if (seen[s]) continue;
      ++count;
      std::vector<std::size_t> stack{s};
      seen[s] = 1;
      while (!stack.empty()) {
        const std::size_t v = stack.back();
        stack.pop_back();
        for (std::size_t u : adj[v])
          if (!seen[u]) seen[u] = 1, stack.push_back(u);
      }
    }
    return count;
  }

  /// The BYM2 model's scaling factor (Riebler et al. 2016): the geometric mean of the diagonal of
  /// the generalised inverse Q⁺ of the graph's ICAR precision Q = D − W, the variance that
  /// sqrt(rho / s) * phi scales to 1 (as INLA's scale.model and Morris et al.'s case study compute
  /// it). Q⁺ = (Q + 11ᵀ/K)⁻¹ − 11ᵀ/K for a connected graph (1 spans Q's null space): a dense
  /// Cholesky factor and inverse, O(K³). Throws for a graph that is not connected.
  [[nodiscard]] double icar_scaling_factor() const;
  /// The eigenvalues of D^(−½) W D^(−½), ascending (every area needs a neighbour): computed on
  /// the first call, O(K³) (dense Householder reduction and bisection), and kept with the graph
  /// and its copies. Within 8Kε of ±1 they are ±1 exactly (the largest is 1 for every graph,
  /// the smallest −1 for a bipartite one), so that α = 1 is outside car's range, as it is.
  [[nodiscard]] const std::vector<double>& normalised_eigenvalues() const;

 private:
  std::size_t k_;
  std::vector<int> first_, second_;
  std::vector<double> degree_;
  struct eigen_cache {
    std::once_flag once;
    std::vector<double> values;
  };
  std::shared_ptr<eigen_cache> eigen_ = std::make_shared<eigen_cache>();
};

namespace detail {
/// The eigenvalues of a symmetric n × n matrix a (row major, overwritten): Householder
/// reduction to tridiagonal form, then each eigenvalue by bisection on Sturm sequence counts
/// within the Gershgorin bounds (Golub & Van Loan, "Matrix Computations", §8.3 and §8.4.1).
/// O(n³) for the reduction, O(n²) per 60 halvings for the eigenvalues. Ascending.
inline std::vector<double> symmetric_eigenvalues(std::vector<double> a, std::size_t n) {
  std::vector<double> v(n), p(n), w(n);
  for (std::size_t k = 0; k + 2 < n; ++k) {
    double below = 0;  // Σ of squares below the subdiagonal: the part this step must zero
    for (std::size_t i = k + 2; i < n; ++i) below += a[i * n + k] * a[i * n + k];
    if (below == 0) continue;
    const double x0 = a[(k + 1) * n + k];
    const double norm2 = below + x0 * x0;
    const double alpha = x0 > 0 ? -std::sqrt(norm2) : std::sqrt(norm2);
    for (std::size_t i = k + 1; i < n; ++i) v[i] = a[i * n + k];
    v[k + 1] -= alpha;
    double vv = 0;
    for (std::size_t i = k + 1; i < n; ++i) vv += v[i] * v[i];
    // B ← H B H on the trailing block, H = I − 2vvᵀ/vv: p = 2Bv/vv, w = p − (vᵀp/vv) v,
    // B − v wᵀ − w vᵀ.
    for (std::size_t i = k + 1; i < n; ++i) {
      double s = 0;
      for (std::size_t j = k + 1; j < n; ++j) s += a[i * n + j] * v[j];
      p[i] = 2 * s / vv;
    }
    double vp = 0;
    for (std::size_t i = k + 1; i < n; ++i) vp += v[i] * p[i];
    const double c = vp / vv;
    for (std::size_t i = k + 1; i < n; ++i) w[i] = p[i] - c * v[i];
    for (std::size_t i = k + 1; i < n; ++i)  // symmetric: the lower triangle, then its mirror
      for (std::size_t j = k + 1; j <= i; ++j) a[i * n + j] -= v[i] * w[j] + w[i] * v[j];
    for (std::size_t i = k + 1; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) a[i * n + j] = a[j * n + i];
    a[(k + 1) * n + k] = a[k * n + k + 1] = alpha;
  }
  std::vector<double> d(n), e(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) d[i] = a[i * n + i];
  for (std::size_t i = 0; i + 1 < n; ++i) e[i] = a[(i + 1) * n + i];
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = (i > 0 ? std::fabs(e[i - 1]) : 0.0) + (i + 1 < n ? std::fabs(e[i]) : 0.0);
    lo = std::min(lo, d[i] - r);
    hi = std::max(hi, d[i] + r);
  }
  const double scale = std::max(std::fabs(lo), std::fabs(hi)) + 1e-300;
  // The number of eigenvalues below x.
  const auto below = [&](double x) {
    std::size_t count = 0;
    double q = 1;
    for (std::size_t i = 0; i < n; ++i) {
      q = d[i] - x - (i > 0 ? e[i - 1] * e[i - 1] / q : 0.0);
      if (q == 0) q = -1e-300 * scale;
      if (q < 0) ++count;
    }
    return count;
  };
  std::vector<double> out(n);
  for (std::size_t j = 0; j < n; ++j) {
    double l = lo - 1e-12 * scale, h = hi + 1e-12 * scale;
    for (int it = 0; it < 200 && h - l > 4e-16 * scale; ++it) {
      const double m = 0.5 * (l + h);
      if (below(m) > j) h = m;
      else l = m;
    }
    out[j] = 0.5 * (l + h);
  }
  return out;
}
}  // namespace detail

namespace ops {
/// The proper CAR's log density of φ (K values) given α and τ (operands φ, α, τ), from the
/// graph buffer g: the E pairs' first areas, their second areas, the K numbers of neighbours
/// d, the K eigenvalues λ of D^(−½) W D^(−½) (2E + 2K values); c = ½ Σ log dᵢ − (K/2) log 2π.
/// Four values: the log density, then what its reverse pass reads (s_d = Σ dᵢφᵢ², s_w =
/// Σ_{i~j} φᵢφⱼ, Σ λᵢ/(1 − αλᵢ)), so that it repeats no sum (car_distribution reads value 0).
/// Reverse: φ̄ᵢ = −τdᵢφᵢ + τα Σ_{j~i} φⱼ, ᾱ = −½ Σ λᵢ/(1 − αλᵢ) + τ s_w, τ̄ = K/(2τ) −
/// ½(s_d − 2α s_w), each times the adjoint of value 0.
struct car_view {
  static constexpr const char* name = "car";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const double* g = nullptr;
  std::size_t k = 0, e = 0;
  double c = 0;
  template <class Phi, class Alpha, class Tau>
  static constexpr std::size_t extent = 4;
  bool operator==(const car_view& o) const { return g == o.g && k == o.k && e == o.e && c == o.c; }
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (g != nullptr) f(g, 2 * e + 2 * k);
  }
  TYCHE_HD std::size_t first(std::size_t p) const { return static_cast<std::size_t>(g[p]); }
  TYCHE_HD std::size_t second(std::size_t p) const { return static_cast<std::size_t>(g[e + p]); }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* phi = in[0];
    const T alpha = in[1][0], tau = in[2][0];
    T sd = lift<T>(0.0), sw = lift<T>(0.0), ld = lift<T>(0.0), dl = lift<T>(0.0);
    for (std::size_t i = 0; i < k; ++i) sd = sd + lift<T>(g[2 * e + i]) * phi[i] * phi[i];
    for (std::size_t p = 0; p < e; ++p) sw = sw + phi[first(p)] * phi[second(p)];
    for (std::size_t i = 0; i < k; ++i) {
      const T l = lift<T>(g[2 * e + k + i]);
      ld = ld + math::log1p(-(alpha * l));
      dl = dl + l / (lift<T>(1.0) - alpha * l);
    }
    out[0] = lift<T>(0.5 * double(k)) * math::log(tau) + lift<T>(0.5) * ld -
             lift<T>(0.5) * tau * (sd - lift<T>(2.0) * alpha * sw) + lift<T>(c);
    out[1] = sd;
    out[2] = sw;
    out[3] = dl;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T* phi = in[0];
    const T alpha = in[1][0], tau = in[2][0], a = adj[0];
    const T sd = out[1], sw = out[2], dl = out[3];
    const T at = a * tau, ata = at * alpha;
    for (std::size_t i = 0; i < k; ++i) in_adj[0][i] += -(at * lift<T>(g[2 * e + i]) * phi[i]);
    for (std::size_t p = 0; p < e; ++p) {
      in_adj[0][first(p)] += ata * phi[second(p)];
      in_adj[0][second(p)] += ata * phi[first(p)];
    }
    in_adj[1][0] += a * (tau * sw - lift<T>(0.5) * dl);
    in_adj[2][0] += a * (lift<T>(0.5 * double(k)) / tau - lift<T>(0.5) * (sd - lift<T>(2.0) * alpha * sw));
  }
};

/// The intrinsic CAR's log density of φ (K values; the one operand) from the graph buffer g: the
/// E pairs' first areas then their second areas (2E values); eps = 0.001K, c the normalising
/// constant. One value: −½ Σ_{i~j}(φᵢ − φⱼ)² − ½(Σφᵢ)²/ε² + c. Reverse: φ̄ᵢ = −Σ_{j~i}(φᵢ − φⱼ)
/// − Σφ/ε², times the adjoint.
struct icar_view {
  static constexpr const char* name = "icar";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const double* g = nullptr;
  std::size_t k = 0, e = 0;
  double eps = 1, c = 0;
  template <class Phi>
  static constexpr std::size_t extent = 1;
  bool operator==(const icar_view& o) const { return g == o.g && k == o.k && e == o.e && eps == o.eps && c == o.c; }
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (g != nullptr) f(g, 2 * e);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t*) const {
    const T* phi = in[0];
    T q = lift<T>(0.0), s = lift<T>(0.0);
    for (std::size_t p = 0; p < e; ++p) {
      const T d = phi[static_cast<std::size_t>(g[p])] - phi[static_cast<std::size_t>(g[e + p])];
      q = q + d * d;
    }
    for (std::size_t i = 0; i < k; ++i) s = s + phi[i];
    out[0] = lift<T>(-0.5) * q - lift<T>(0.5 / (eps * eps)) * s * s + lift<T>(c);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj) const {
    const T* phi = in[0];
    const T a = adj[0];
    T s = lift<T>(0.0);
    for (std::size_t i = 0; i < k; ++i) s = s + phi[i];
    const T gs = a * s * lift<T>(1.0 / (eps * eps));
    for (std::size_t i = 0; i < k; ++i) in_adj[0][i] += -gs;
    for (std::size_t p = 0; p < e; ++p) {
      const std::size_t i = static_cast<std::size_t>(g[p]), j = static_cast<std::size_t>(g[e + p]);
      const T d = a * (phi[i] - phi[j]);
      in_adj[0][i] += -d;
      in_adj[0][j] += d;
    }
  }
};

/// The views with the owner of their graph buffer until folding (as lower_triangular_solve_map).
struct car_map : car_view {
  host_owner<std::vector<double>> owner;
  template <class Storage>
  car_view release_into(Storage& storage) const {
    if (owner.ptr) storage.keep(owner.ptr);
    return *this;
  }
};
struct icar_map : icar_view {
  host_owner<std::vector<double>> owner;
  template <class Storage>
  icar_view release_into(Storage& storage) const {
    if (owner.ptr) storage.keep(owner.ptr);
    return *this;
  }
};
}  // namespace ops

namespace detail {
/// Draws of x ~ normal(0, P⁻¹) for a dense K × K precision P (n values, n/K vectors).
template <class G>
std::vector<double> draw_from_precision(G& rng, std::size_t n, std::size_t k, const std::vector<double>& p,
                                        const char* who) {
  const auto l = cholesky_lower(p.data(), k, who, "the precision matrix");
  std::normal_distribution<double> z01;
  std::vector<double> x(n), w(k);
  for (std::size_t r = 0; r * k < n; ++r) {
    for (auto& v : w) v = z01(rng);
    for (std::size_t i = k; i-- > 0;) {  // Lᵀ w = z
      double acc = w[i];
      for (std::size_t j = i + 1; j < k; ++j) acc -= l[j * k + i] * w[j];
      w[i] = acc / l[i * k + i];
    }
    for (std::size_t i = 0; i < k && r * k + i < n; ++i) x[r * k + i] = w[i];
  }
  return x;
}
}  // namespace detail

/// car(alpha, tau, graph): the proper CAR prior of K values.
template <class Alpha, class Tau>
struct car_distribution : distribution<car_distribution<Alpha, Tau>> {
  static constexpr const char* family = "car";
  Alpha alpha;
  Tau tau;
  ops::car_map op;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto xn = detail::as_node(x);
    static_assert(is_vector_v<detail::node_t<X>>, "tyche::car(alpha, tau, graph): phi must be a vector of K values");
    if (xn.size() != op.k)
      throw std::invalid_argument("tyche::car(alpha, tau, graph): phi has " + std::to_string(xn.size()) +
                                  " values but the graph has K = " + std::to_string(op.k) + " areas");
    return at(make_vector_op(op, 4, xn, alpha, tau), 0);
  }
  auto arguments() const { return std::tuple{alpha, tau}; }
  template <class A2, class T2>
  auto with_arguments(const A2& a, const T2& t) const {
    return car_distribution<A2, T2>{{}, a, t, op};
  }
  static constexpr bool whole_arguments = true;
  auto check_supports() const {
    static_assert(argument_support_t<Alpha, domains::below_one>::ok,
                  "tyche::car(alpha, tau, graph): alpha must be < 1 (tau (D - alpha W) is positive definite for "
                  "1/lambda_min < alpha < 1), but its support (spelled out in tyche::support_is<...> in this "
                  "diagnostic) is not inside (-inf, 1)" TYCHE_SUPPORT_HINT);
    static_assert(argument_support_t<Tau, domains::positive>::ok,
                  "tyche::car(alpha, tau, graph): tau (the precision) must be > 0, but its support (spelled out in "
                  "tyche::support_is<...> in this diagnostic) is not inside (0, inf)" TYCHE_SUPPORT_HINT);
    detail::check_argument<domains::positive>("car(alpha, tau, graph)", "tau", tau);
  }
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& a, const std::vector<double>& t) const {
    const std::size_t k = op.k;
    std::vector<double> p(k * k, 0.0);
    for (std::size_t i = 0; i < k; ++i) p[i * k + i] = t[0] * op.g[2 * op.e + i];
    for (std::size_t q = 0; q < op.e; ++q) {
      const std::size_t i = op.first(q), j = op.second(q);
      p[i * k + j] = p[j * k + i] = -t[0] * a[0];
    }
    return detail::draw_from_precision(rng, n, k, p, "car(alpha, tau, graph)");
  }
};

/// icar(graph): the intrinsic CAR prior of K values (unit precision, soft sum-to-zero).
struct icar_distribution : distribution<icar_distribution> {
  static constexpr const char* family = "icar";
  ops::icar_map op;
  auto transform() const { return transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    const auto xn = detail::as_node(x);
    static_assert(is_vector_v<detail::node_t<X>>, "tyche::icar(graph): phi must be a vector of K values");
    if (xn.size() != op.k)
      throw std::invalid_argument("tyche::icar(graph): phi has " + std::to_string(xn.size()) +
                                  " values but the graph has K = " + std::to_string(op.k) + " areas");
    return at(make_vector_op(op, 1, xn), 0);
  }
  auto arguments() const { return std::tuple{}; }
  auto with_arguments() const { return *this; }
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n) const {
    const std::size_t k = op.k;
    const double f = 1.0 / (op.eps * op.eps);
    std::vector<double> p(k * k, f);
    std::vector<double> deg(k, 0.0);
    for (std::size_t q = 0; q < op.e; ++q) {
      const std::size_t i = static_cast<std::size_t>(op.g[q]), j = static_cast<std::size_t>(op.g[op.e + q]);
      p[i * k + j] -= 1;
      p[j * k + i] -= 1;
      deg[i] += 1;
      deg[j] += 1;
    }
    for (std::size_t i = 0; i < k; ++i) p[i * k + i] += deg[i];
    return detail::draw_from_precision(rng, n, k, p, "icar(graph)");
  }
};

namespace detail {
/// α's support (data and constants read) must lie in (1/λ_min, 1), where τ(D − αW) is positive
/// definite; a number outside throws, naming λ_min.
template <class Alpha>
void check_car_alpha(const Alpha& alpha, double lambda_min) {
  const auto a = as_node(alpha);
  const interval s = support(a);
  const double lo = 1.0 / lambda_min;  // λ_min < 0 for every graph with a pair
  if (s.lo > lo && s.hi < 1.0) return;
  if (s.lo >= lo && s.hi <= 1.0 && !s.contains(lo) && !s.contains(1.0)) return;  // open ends
  const std::string range = "(" + number_to_string(lo) + ", 1)";
  throw std::invalid_argument(
      "tyche::car(alpha, tau, graph): alpha must be in " + range + " for this graph (1/λ_min, λ_min = " +
      number_to_string(lambda_min) + " the smallest eigenvalue of D^-1/2 W D^-1/2: there tau (D - alpha W) is "
      "positive definite), but " + (s.lo == s.hi ? "it is " + number_to_string(s.lo) : "its support is " + to_string(s)) +
      (s.lo == s.hi ? "" : " (a prior inside the range, e.g. uniform(0, 1), or assume_support<...>(alpha))"));
}

inline void require_neighbours(const areal_graph& g, const char* who) {
  for (std::size_t i = 0; i < g.areas(); ++i)
    if (g.neighbours()[i] == 0)
      throw std::invalid_argument(std::string("tyche::") + who + ": area " + std::to_string(i) +
                                  " has no neighbours (every area needs one: D would be singular)");
}
inline std::shared_ptr<std::vector<double>> pair_buffer(const areal_graph& g) {
  auto buf = std::make_shared<std::vector<double>>();
  buf->reserve(2 * g.pairs() + 2 * g.areas());
  for (int v : g.node1()) buf->push_back(v);
  for (int v : g.node2()) buf->push_back(v);
  return buf;
}

template <class Alpha, class Tau>
auto make_car(const Alpha& alpha, const Tau& tau, const areal_graph& g) {
  static_assert(!is_vector_v<node_t<Alpha>> && !is_vector_v<node_t<Tau>>,
                "tyche::car(alpha, tau, graph): alpha and tau are one value each (scalars)");
  require_neighbours(g, "car(alpha, tau, graph)");
  const std::size_t k = g.areas();
  auto buf = pair_buffer(g);
  const auto& d = g.neighbours();
  buf->insert(buf->end(), d.begin(), d.end());
  const auto& lambda = g.normalised_eigenvalues();
  buf->insert(buf->end(), lambda.begin(), lambda.end());
  check_car_alpha(alpha, lambda.front());
  double c = -0.5 * double(k) * 1.83787706640934548356;
  for (double v : d) c += 0.5 * std::log(v);
  ops::car_map op{};
  op.g = buf->data();
  op.k = k;
  op.e = g.pairs();
  op.c = c;
  op.owner = std::shared_ptr<const std::vector<double>>(std::move(buf));
  const auto a = as_node(alpha);
  const auto t = as_node(tau);
  return car_distribution<std::remove_const_t<decltype(a)>, std::remove_const_t<decltype(t)>>{{}, a, t, op};
}

inline icar_distribution make_icar(const areal_graph& g) {
  require_neighbours(g, "icar(graph)");
  if (const std::size_t c = g.components(); c != 1)
    throw std::invalid_argument("tyche::icar(graph): the graph has " + std::to_string(c) +
                                " connected components; icar's one sum-to-zero constraint needs a connected "
                                "graph (model each component separately)");
  const std::size_t k = g.areas();
  // log det of the Laplacian Q = D − W without its last row and column (Cholesky).
  double log_det_minor = 0;
  if (k > 1) {
    const std::size_t m = k - 1;
    std::vector<double> q(m * m, 0.0);
    for (std::size_t i = 0; i < m; ++i) q[i * m + i] = g.neighbours()[i];
    for (std::size_t p = 0; p < g.pairs(); ++p) {
      const auto i = static_cast<std::size_t>(g.node1()[p]), j = static_cast<std::size_t>(g.node2()[p]);
      if (i < m && j < m) q[i * m + j] = q[j * m + i] = -1.0;
    }
    const auto l = cholesky_lower(q.data(), m, "icar(graph)", "the graph Laplacian minor");
    for (std::size_t i = 0; i < m; ++i) log_det_minor += 2 * std::log(l[i * m + i]);
  }
  const double eps = 0.001 * double(k);
  ops::icar_map op{};
  auto buf = pair_buffer(g);
  op.g = buf->data();
  op.k = k;
  op.e = g.pairs();
  op.eps = eps;
  op.c = -std::log(eps) + std::log(double(k)) + 0.5 * log_det_minor - 0.5 * double(k) * 1.83787706640934548356;
  op.owner = std::shared_ptr<const std::vector<double>>(std::move(buf));
  return icar_distribution{{}, op};
}
}  // namespace detail

inline const std::vector<double>& areal_graph::normalised_eigenvalues() const {
  std::call_once(eigen_->once, [&] {
    const std::size_t k = k_;
    std::vector<double> w(k * k, 0.0);  // D^(−½) W D^(−½)
    for (std::size_t p = 0; p < first_.size(); ++p) {
      const auto i = static_cast<std::size_t>(first_[p]), j = static_cast<std::size_t>(second_[p]);
      w[i * k + j] = w[j * k + i] = 1.0 / std::sqrt(degree_[i] * degree_[j]);
    }
    auto lambda = detail::symmetric_eigenvalues(std::move(w), k);
    const double snap = 8.0 * double(k) * 2.220446049250313e-16;
    for (double& l : lambda) {
      if (std::fabs(l - 1.0) <= snap || l > 1.0) l = 1.0;
      if (std::fabs(l + 1.0) <= snap || l < -1.0) l = -1.0;
    }
    eigen_->values = std::move(lambda);
  });
  return eigen_->values;
}

inline double areal_graph::icar_scaling_factor() const {
  if (const std::size_t c = components(); c != 1)
    throw std::invalid_argument("tyche::areal_graph::icar_scaling_factor: the graph has " + std::to_string(c) +
                                " connected components (the factor is defined here for a connected graph)");
  const std::size_t k = k_;
  std::vector<double> m(k * k, 1.0 / double(k));
  for (std::size_t i = 0; i < k; ++i) m[i * k + i] += degree_[i];
  for (std::size_t p = 0; p < first_.size(); ++p) {
    const auto i = static_cast<std::size_t>(first_[p]), j = static_cast<std::size_t>(second_[p]);
    m[i * k + j] -= 1;
    m[j * k + i] -= 1;
  }
  const auto l = detail::cholesky_lower(m.data(), k, "areal_graph::icar_scaling_factor", "Q + 11'/K");
  std::vector<double> linv(k * k), inv(k * k);
  detail::inverse_from_cholesky(k, l.data(), linv.data(), inv.data());
  double mean_log = 0;
  for (std::size_t i = 0; i < k; ++i) mean_log += std::log(inv[i * k + i] - 1.0 / double(k)) / double(k);
  return std::exp(mean_log);
}

/// The distribution car(alpha, tau, graph) (observe(data(phi)), or a free term's *_lpdf).
template <detail::operand Alpha, detail::operand Tau>
auto car(const Alpha& alpha, const Tau& tau, const areal_graph& graph) {
  return detail::make_car(alpha, tau, graph);
}
/// Name ~ car(alpha, tau, graph): K = graph.areas() values, one per area.
template <fixed_string Name, detail::operand Alpha, detail::operand Tau>
auto car(const Alpha& alpha, const Tau& tau, const areal_graph& graph) {
  return detail::make_random_variable<Name>(car(alpha, tau, graph), dynamic_shape{graph.areas()});
}
/// The distribution icar(graph).
inline auto icar(const areal_graph& graph) { return detail::make_icar(graph); }
/// Name ~ icar(graph): K = graph.areas() values, one per area.
template <fixed_string Name>
auto icar(const areal_graph& graph) {
  return detail::make_random_variable<Name>(icar(graph), dynamic_shape{graph.areas()});
}

}  // namespace tyche
