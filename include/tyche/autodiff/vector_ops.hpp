// tyche/autodiff/vector_ops.hpp — value and vector–Jacobian rules of the vectors that are not
// elementwise, whose every value depends on whole operands: the ordered transform, a running
// sum, a stack of operands, copies of a scalar, a contiguous segment, a linear recurrence, a
// gather through data indices, a triangular solve, a Cholesky product. Such an op is the rule of a vector_op node (core/nodes.hpp): the
// evaluator (compile/evaluate.hpp) materialises the operands, calls the op's forward step into
// a buffer of the workspace and, in the reverse pass, the op's vector–Jacobian product. The
// functions that make these nodes are in operations/vectors.hpp. See docs/design/vector-ops.md.
//
// An op is a small value type with
//   name, has_payload (and operator== when it has one), extent<Cs...> (the static size of the
//   result, or dynamic_extent),
//   with a payload, reads_data_buffers: true when the op holds pointers to data, and then
//   for_each_data_buffer(m, f), which calls f(ptr, count) for each of them (m: the node's
//   number of values; compile/relocate.hpp),
//   forward(m, out, in, in_n):           out[0 .. m) from the operands in[j][0 .. in_n[j]),
//   reverse(m, out, adj, in, in_n, in_adj): in_adj[j][·] += ∂(Σ adj·out)/∂in[j][·] (in_adj is
//                                           zero on entry),
// templated on the scalar type T (double, float, SIMD batches, …).
#pragma once
#include <tyche/config.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/backends/simd/lanes.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace tyche {

namespace detail {
/// The lower Cholesky factor l (m × m, row major, zeros above the diagonal) of the matrix whose
/// lower triangle c holds (row major; the part above the diagonal is not read): the unblocked
/// Cholesky–Banachiewicz loops. A matrix that is not positive definite gives NaN.
template <class T>
TYCHE_HD void cholesky_forward(std::size_t m, const T* c, T* l) {
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      T s = c[i * m + j];
      for (std::size_t p = 0; p < j; ++p) s = s - l[i * m + p] * l[j * m + p];
      l[i * m + j] = i == j ? math::sqrt(s) : s / l[j * m + j];
    }
    for (std::size_t j = i + 1; j < m; ++j) l[i * m + j] = lift<T>(0.0);
  }
}
/// Exchanges columns j and j + 1 of the rows × stride matrix m (row major) in the SIMD lanes where
/// swap holds (a select per entry): the column moves of the sorting networks of the eigen- and
/// singular-value decompositions.
template <class T, class Mask>
TYCHE_HD void swap_columns_where(const Mask& swap, std::size_t rows, std::size_t stride, T* m, std::size_t j) {
  if constexpr (std::is_same_v<Mask, bool>)  // one lane: a branch (the same values, no selects)
    if (!swap) return;
  for (std::size_t r = 0; r < rows; ++r) {
    const T x = m[r * stride + j];
    m[r * stride + j] = math::select(swap, m[r * stride + j + 1], x);
    m[r * stride + j + 1] = math::select(swap, x, m[r * stride + j + 1]);
  }
}
/// Exchanges entries from … to − 1 of rows r and c of the matrix m of row length stride (row
/// major) in the SIMD lanes where swap holds (a select per entry; in one lane, a branch): the
/// pivoting sweeps of the eliminations (each lane brings its own pivot row up).
template <class T, class Mask>
TYCHE_HD void swap_rows_where(const Mask& swap, std::size_t stride, T* m, std::size_t r, std::size_t c,
                              std::size_t from, std::size_t to) {
  if constexpr (std::is_same_v<Mask, bool>)  // one lane: a branch (the same values, no selects)
    if (!swap) return;
  for (std::size_t j = from; j < to; ++j) {
    const T top = m[c * stride + j];
    m[c * stride + j] = math::select(swap, m[r * stride + j], top);
    m[r * stride + j] = math::select(swap, top, m[r * stride + j]);
  }
}
/// Reverse mode of cholesky_forward: from L̄ (lb, lower part; overwritten) adds C̄ to the lower
/// triangle of c_adj, running the loops in their exact reverse order (with s the pivot quantity
/// of entry (i, j): s̄ = L̄ᵢᵢ / (2 Lᵢᵢ) on the diagonal, s̄ = L̄ᵢⱼ / Lⱼⱼ and L̄ⱼⱼ −= L̄ᵢⱼ Lᵢⱼ / Lⱼⱼ
/// below it; C̄ᵢⱼ += s̄; L̄ᵢₚ −= s̄ Lⱼₚ and L̄ⱼₚ −= s̄ Lᵢₚ for p < j). Murray, "Differentiation of
/// the Cholesky decomposition", 2016, unblocked algorithm. O(m³).
template <class T>
TYCHE_HD void cholesky_reverse(std::size_t m, const T* l, T* lb, T* c_adj) {
  for (std::size_t i = m; i-- > 0;) {
    for (std::size_t j = i + 1; j-- > 0;) {
      T sb;
      if (i == j) {
        sb = lb[i * m + i] / (lift<T>(2.0) * l[i * m + i]);
      } else {
        sb = lb[i * m + j] / l[j * m + j];
        lb[j * m + j] = lb[j * m + j] - lb[i * m + j] * l[i * m + j] / l[j * m + j];
      }
      c_adj[i * m + j] += sb;
      for (std::size_t p = 0; p < j; ++p) {
        lb[i * m + p] = lb[i * m + p] - sb * l[j * m + p];
        lb[j * m + p] = lb[j * m + p] - sb * l[i * m + p];
      }
    }
  }
}

/// An entry of a matrix row as T: data (double) broadcast to T's lanes, a T as it is.
template <class T, class A>
TYCHE_HD TYCHE_INLINE T row_value(const A& a) {
  if constexpr (std::is_same_v<A, T>) return a;
  else return lift<T>(a);
}
/// Σ_{j<n} a[j]·x[j] for the rows of the triangular solves (a: a row of L, data or T; x: the
/// solved values). One chain of multiply-adds made each row latency bound (each add waits for
/// the last: corr_gaussian_100's gradient, K = 100, 4.8 → 1.6 µs for double, docs/benchmarks.md); here
/// the products go into independent partial sums, added pairwise at the end: for double with the
/// SIMD backend, observation batches (two accumulators of a batch's width, the rest one at a
/// time); otherwise (a batch of chains, the device, no SIMD backend) four accumulators of T. The
/// last bits differ from a sum left to right.
template <class A, class T>
TYCHE_HD TYCHE_INLINE T triangular_dot(const A* a, const T* x, std::size_t n) {
  using W = observation_batch_t<T>;
  if constexpr (!std::is_same_v<W, T>) {  // T = double, the SIMD backend: W is a batch of doubles
    using L = lane_ops<W>;
    constexpr std::size_t w = L::size;
    W s0 = W(0.0), s1 = W(0.0);
    std::size_t j = 0;
    for (; j + 2 * w <= n; j += 2 * w) {
      s0 = s0 + L::load(a + j) * L::load(x + j);
      s1 = s1 + L::load(a + j + w) * L::load(x + j + w);
    }
    if (j + w <= n) {
      s0 = s0 + L::load(a + j) * L::load(x + j);
      j += w;
    }
    T acc = L::sum(s0 + s1);
    for (; j < n; ++j) acc = acc + a[j] * x[j];
    return acc;
  } else {
    T s0 = lift<T>(0.0), s1 = s0, s2 = s0, s3 = s0;
    std::size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      s0 = s0 + row_value<T>(a[j]) * x[j];
      s1 = s1 + row_value<T>(a[j + 1]) * x[j + 1];
      s2 = s2 + row_value<T>(a[j + 2]) * x[j + 2];
      s3 = s3 + row_value<T>(a[j + 3]) * x[j + 3];
    }
    for (; j < n; ++j) s0 = s0 + row_value<T>(a[j]) * x[j];
    return (s0 + s1) + (s2 + s3);
  }
}
/// y[j] −= a[j]·s for j < n (a: a row of L, data or T): the back substitutions column by column,
/// each solved value taken out of the ones before it at once, so that no row is a sum down a
/// column (a stride of K) and the only chain is through y[j − 1]. For double with the SIMD
/// backend, observation batches.
template <class A, class T>
TYCHE_HD TYCHE_INLINE void triangular_axpy(const A* a, const T s, T* y, std::size_t n) {
  using W = observation_batch_t<T>;
  std::size_t j = 0;
  if constexpr (!std::is_same_v<W, T>) {
    using L = lane_ops<W>;
    constexpr std::size_t w = L::size;
    const W sw = W(s);
    for (; j + w <= n; j += w) L::store(y + j, L::load(y + j) - L::load(a + j) * sw);
  }
  for (; j < n; ++j) y[j] = y[j] - row_value<T>(a[j]) * s;
}
}  // namespace detail

namespace ops {

/// The ordered transform's map (Stan's): x₀ = u₀ (positive_ordered: x₀ = e^u₀),
/// xₖ = xₖ₋₁ + e^uₖ. Reverse: with Gₖ = Σ_{j ≥ k} adjⱼ, ∂/∂uₖ = Gₖ e^uₖ (k ≥ 1, or k = 0 when
/// positive), ∂/∂u₀ = G₀ otherwise. e^uₖ is recomputed, not taken as xₖ − xₖ₋₁, which cancels.
template <bool Positive>
struct ordered_map {
  static constexpr const char* name = Positive ? "positive_ordered" : "ordered";
  static constexpr bool has_payload = false;
  static constexpr bool positive_result = Positive;  // the values' support (interval/support.hpp)
  template <class U>
  static constexpr std::size_t extent = extent_v<U>;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    const T* u = in[0];
    if (m == 0) return;
    T acc = Positive ? math::exp(u[0]) : u[0];
    out[0] = acc;
    for (std::size_t k = 1; k < m; ++k) {
      acc = acc + math::exp(u[k]);
      out[k] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in,
                        const std::size_t*, T* const* in_adj) const {
    const T* u = in[0];
    T g = lift<T>(0.0);
    for (std::size_t k = m; k-- > 0;) {
      g = g + adj[k];
      in_adj[0][k] += (k > 0 || Positive) ? g * math::exp(u[k]) : g;
    }
  }
};

/// xₖ = Σ_{j ≤ k} aⱼ. Reverse: ∂/∂aₖ = Σ_{j ≥ k} adjⱼ.
struct cumulative_sum_map {
  static constexpr const char* name = "cumulative_sum";
  static constexpr bool has_payload = false;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    T acc = lift<T>(0.0);
    for (std::size_t k = 0; k < m; ++k) out[k] = acc = acc + in[0][k];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T g = lift<T>(0.0);
    for (std::size_t k = m; k-- > 0;) in_adj[0][k] += g = g + adj[k];
  }
};

/// The largest (Max) or smallest element of a vector, as a vector of one value (tyche::max and
/// tyche::min take element 0, and refuse an empty vector): NaN where an element is NaN; ∓∞ for an
/// empty vector (Stan's), which only a relocated or hand-built op can meet.
/// Reverse: the adjoint goes to the first element equal to the result, lane by lane (each chain
/// of a batch has its own), so that ties are not counted twice.
template <bool Max>
struct extremum_map {
  static constexpr const char* name = Max ? "max" : "min";
  static constexpr bool has_payload = false;
  template <class A>
  static constexpr std::size_t extent = 1;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t* in_n) const {
    const T* v = in[0];
    const std::size_t n = in_n[0];
    if (n == 0) {
      out[0] = lift<T>(Max ? -HUGE_VAL : HUGE_VAL);
      return;
    }
    T m = v[0];
    for (std::size_t k = 1; k < n; ++k) {
      // Take v[k] where it beats m or is NaN, unless m is NaN already: a NaN stays.
      if constexpr (std::is_arithmetic_v<T>) {
        if (m == m && (v[k] != v[k] || (Max ? v[k] > m : v[k] < m))) m = v[k];
      } else {
        m = math::select(((Max ? v[k] > m : v[k] < m) | (v[k] != v[k])) & (m == m), v[k], m);
      }
    }
    out[0] = m;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T* out, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj) const {
    const T* v = in[0];
    if constexpr (std::is_arithmetic_v<T>) {
      for (std::size_t k = 0; k < in_n[0]; ++k)
        if (v[k] == out[0]) {
          in_adj[0][k] += adj[0];
          return;
        }
    } else {
      const T zero = lift<T>(0.0);
      T open = lift<T>(1.0);  // 1 until the lane's first element equal to the result
      for (std::size_t k = 0; k < in_n[0]; ++k) {
        const auto hit = (v[k] == out[0]) & (open != zero);
        in_adj[0][k] += math::select(hit, adj[0], zero);
        open = math::select(hit, zero, open);
      }
    }
  }
};

/// The product of a vector's elements, as a vector of one value (tyche::prod takes element 0);
/// 1 for an empty vector. Reverse: ∂/∂vₖ = Π_{j≠k} vⱼ from prefix and suffix products (no
/// division: exact where an element is 0). Scratch: the suffix products.
struct prod_map {
  static constexpr const char* name = "prod";
  static constexpr bool has_payload = false;
  template <class A>
  static constexpr std::size_t extent = 1;
  static std::size_t scratch_size(std::size_t, const std::size_t* in_n) { return in_n[0]; }
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t* in_n, T*) const {
    T p = lift<T>(1.0);
    for (std::size_t k = 0; k < in_n[0]; ++k) p = p * in[0][k];
    out[0] = p;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj, T* suffix) const {
    const T* v = in[0];
    const std::size_t n = in_n[0];
    T s = lift<T>(1.0);
    for (std::size_t k = n; k-- > 0;) {
      suffix[k] = s;
      s = s * v[k];
    }
    T prefix = adj[0];
    for (std::size_t k = 0; k < n; ++k) {
      in_adj[0][k] += prefix * suffix[k];
      prefix = prefix * v[k];
    }
  }
};

/// The elements in reverse order (Stan's reverse(v)).
struct reverse_map {
  static constexpr const char* name = "reverse";
  static constexpr bool has_payload = false;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t k = 0; k < m; ++k) out[k] = in[0][m - 1 - k];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t k = 0; k < m; ++k) in_adj[0][m - 1 - k] += adj[k];
  }
};

/// The elements sorted in ascending (Ascending) or descending order (Stan's sort_asc, sort_desc),
/// NaN last either way. Each lane of a batch (each chain) sorts its own values: a heap sort of
/// indices, lane by lane (no allocation, no recursion: device code too), the permutation kept in
/// scratch (indices as values of T) for the reverse pass, which adds adjₖ to the element that
/// went to place k. O(n log n) each way; equal values may be taken in any order (their values
/// are the same; the derivative goes to one of them).
template <bool Ascending>
struct sort_map {
  static constexpr const char* name = Ascending ? "sort_asc" : "sort_desc";
  static constexpr bool has_payload = false;
  template <class A>
  static constexpr std::size_t extent = extent_v<A>;
  static std::size_t scratch_size(std::size_t m, const std::size_t*) { return m; }
  /// Whether a goes before b: NaN after everything.
  template <class R>
  TYCHE_HD static bool before(R a, R b) {
    if (b != b) return a == a;
    if (a != a) return false;
    return Ascending ? a < b : a > b;
  }
  template <class T>
  TYCHE_HD static std::size_t index(const T* perm, std::size_t k, int lane) {
    return static_cast<std::size_t>(lane_traits<T>::get(perm[k], lane));
  }
  template <class T>
  TYCHE_HD static auto key(const T* v, const T* perm, std::size_t k, int lane) {
    return lane_traits<T>::get(v[index(perm, k, lane)], lane);
  }
  template <class T>
  TYCHE_HD static void swap(T* perm, std::size_t a, std::size_t b, int lane) {
    using L = lane_traits<T>;
    const auto t = L::get(perm[a], lane);
    L::set(perm[a], lane, L::get(perm[b], lane));
    L::set(perm[b], lane, t);
  }
  /// Restores the heap below root (the element that goes last at the top) over perm[0, n).
  template <class T>
  TYCHE_HD static void sift(const T* v, T* perm, std::size_t root, std::size_t n, int lane) {
    for (;;) {
      std::size_t child = 2 * root + 1;
      if (child >= n) return;
      if (child + 1 < n && before(key(v, perm, child, lane), key(v, perm, child + 1, lane))) ++child;
      if (!before(key(v, perm, root, lane), key(v, perm, child, lane))) return;
      swap(perm, root, child, lane);
      root = child;
    }
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*, T* perm) const {
    using L = lane_traits<T>;
    const T* v = in[0];
    for (int lane = 0; lane < L::width; ++lane) {
      for (std::size_t k = 0; k < m; ++k) L::set(perm[k], lane, static_cast<typename L::real>(k));
      for (std::size_t start = m / 2; start-- > 0;) sift(v, perm, start, m, lane);
      for (std::size_t end = m; end-- > 1;) {
        swap(perm, 0, end, lane);
        sift(v, perm, 0, end, lane);
      }
      for (std::size_t k = 0; k < m; ++k) L::set(out[k], lane, key(v, perm, k, lane));
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj, T* perm) const {
    using L = lane_traits<T>;
    if constexpr (L::width == 1) {
      for (std::size_t k = 0; k < m; ++k) in_adj[0][index(perm, k, 0)] += adj[k];
    } else {
      for (int lane = 0; lane < L::width; ++lane)
        for (std::size_t k = 0; k < m; ++k) {
          T& a = in_adj[0][index(perm, k, lane)];
          L::set(a, lane, L::get(a, lane) + L::get(adj[k], lane));
        }
    }
  }
};

/// The K × K matrix with v on its diagonal and 0 elsewhere, its K² entries row major (Stan's
/// diag_matrix(v)).
struct diag_matrix_map {
  static constexpr const char* name = "diag_matrix";
  static constexpr bool has_payload = false;
  template <class A>
  static constexpr std::size_t extent = extent_v<A> == dynamic_extent ? dynamic_extent : extent_v<A> * extent_v<A>;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t* in_n) const {
    const std::size_t k = in_n[0];
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = 0; j < k; ++j) out[i * k + j] = i == j ? in[0][i] : lift<T>(0.0);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t* in_n,
                        T* const* in_adj) const {
    const std::size_t k = in_n[0];
    for (std::size_t i = 0; i < k; ++i) in_adj[0][i] += adj[i * k + i];
  }
};

/// The rows of a multinomial, multinomial_logit or dirichlet_multinomial observation of N rows
/// of K counts (distributions/multinomial.hpp): operands y (N·K counts, data) and the argument a
/// (θ, γ or α), K values shared by the rows or N·K row after row; value n is the log density of
/// row n without the terms of y alone (its multinomial coefficient):
///   θ:  Σₖ yₙₖ log θₙₖ                                   ∂/∂θₙₖ = adjₙ yₙₖ / θₙₖ
///   γ:  Σₖ yₙₖ γₙₖ − Nₙ log Σₖ exp γₙₖ                    ∂/∂γₙₖ = adjₙ (yₙₖ − Nₙ softmax(γₙ)ₖ)
///   α:  log Γ(Aₙ) − log Γ(Nₙ + Aₙ) + Σₖ [log Γ(yₙₖ + αₙₖ) − log Γ(αₙₖ)]
///       ∂/∂αₙₖ = adjₙ (ψ(Aₙ) − ψ(Nₙ + Aₙ) + ψ(yₙₖ + αₙₖ) − ψ(αₙₖ))
/// with Nₙ = Σₖ yₙₖ, Aₙ = Σₖ αₙₖ. No derivative goes to y.
struct multinomial_rows_map {
  enum form_t : int { probabilities = 0, logit = 1, dirichlet = 2 };
  static constexpr const char* name = "multinomial_rows";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;  // y is an operand
  template <class Y, class A>
  static constexpr std::size_t extent = dynamic_extent;
  std::size_t k = 1;  // counts per row
  form_t form = probabilities;
  bool operator==(const multinomial_rows_map&) const = default;
  template <class T>
  TYCHE_HD static T row_log_sum_exp(const T* g, std::size_t k) {
    T top = g[0];
    for (std::size_t j = 1; j < k; ++j) top = math::max(top, g[j]);
    T acc = lift<T>(0.0);
    for (std::size_t j = 0; j < k; ++j) acc = acc + math::exp(g[j] - top);
    return top + math::log(acc);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    for (std::size_t n = 0; n < m; ++n) {
      const T* y = in[0] + n * k;
      const T* a = in[1] + (in_n[1] == k ? 0 : n * k);
      T acc = lift<T>(0.0), total = lift<T>(0.0), a0 = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) {
        if (form == probabilities) acc = acc + y[j] * math::log(a[j]);
        else if (form == logit) acc = acc + y[j] * a[j];
        else acc = acc + (math::lgamma(y[j] + a[j]) - math::lgamma(a[j]));
        total = total + y[j];
        a0 = a0 + a[j];
      }
      if (form == logit) acc = acc - total * row_log_sum_exp(a, k);
      else if (form == dirichlet) acc = acc + (math::lgamma(a0) - math::lgamma(total + a0));
      out[n] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t* in_n,
                        T* const* in_adj) const {
    for (std::size_t n = 0; n < m; ++n) {
      const std::size_t at = in_n[1] == k ? 0 : n * k;
      const T* y = in[0] + n * k;
      const T* a = in[1] + at;
      T total = lift<T>(0.0), a0 = lift<T>(0.0);
      for (std::size_t j = 0; j < k; ++j) {
        total = total + y[j];
        a0 = a0 + a[j];
      }
      if (form == logit) {
        const T lse = row_log_sum_exp(a, k);
        for (std::size_t j = 0; j < k; ++j) in_adj[1][at + j] += adj[n] * (y[j] - total * math::exp(a[j] - lse));
      } else if (form == dirichlet) {
        const T common = math::digamma(a0) - math::digamma(total + a0);
        for (std::size_t j = 0; j < k; ++j)
          in_adj[1][at + j] += adj[n] * (common + math::digamma(y[j] + a[j]) - math::digamma(a[j]));
      } else {
        for (std::size_t j = 0; j < k; ++j) in_adj[1][at + j] += adj[n] * y[j] / a[j];
      }
    }
  }
};

/// The operands (scalars and vectors) one after another: append_row(a, b) and to_vector(x...)
/// (operations/vectors.hpp), and the coefficient vector w of a residual sum of squares
/// Σ(y − s − Zw)² whose predictor mixes scalar coefficients and a vector parameter
/// (compile/reduce_sum.hpp). Reverse: each adjoint goes back to its operand.
struct stack_map {
  static constexpr const char* name = "stack";
  static constexpr bool has_payload = false;
  template <class... Cs>
  static constexpr std::size_t extent =
      ((extent_v<Cs> != dynamic_extent) && ...) ? (std::size_t{0} + ... + extent_v<Cs>) : dynamic_extent;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    for (std::size_t j = 0, k = 0; k < m; ++j)
      for (std::size_t i = 0; i < in_n[j]; ++i) out[k++] = in[j][i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t* in_n,
                        T* const* in_adj) const {
    for (std::size_t j = 0, k = 0; k < m; ++j)
      for (std::size_t i = 0; i < in_n[j]; ++i) in_adj[j][i] += adj[k++];
  }
};

/// m copies of one scalar operand (rep_vector(x, n)). Reverse: ∂/∂x = Σᵢ adjᵢ. N is the static
/// size or dynamic_extent; a run-time size is part of the node's value (has_payload), so that two
/// rep_vectors of one x but of different sizes are not taken for the same value.
template <std::size_t N = dynamic_extent>
struct rep_map {
  static constexpr const char* name = "rep_vector";
  static constexpr bool has_payload = N == dynamic_extent;
  static constexpr bool reads_data_buffers = false;
  template <class X>
  static constexpr std::size_t extent = N;
  bool operator==(const rep_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = in[0][0];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T acc = lift<T>(0.0);
    for (std::size_t i = 0; i < m; ++i) acc = acc + adj[i];
    in_adj[0][0] += acc;
  }
};

/// The m elements of the operand from position offset (0-based) on: head, tail and segment of a
/// vector that is not elementwise over leaves (a cumulative sum, a matvec, a parameter vector).
/// Reverse: each adjoint goes back to its position. N is the static size or dynamic_extent.
template <std::size_t N = dynamic_extent>
struct segment_map {
  static constexpr const char* name = "segment";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t offset = 0;
  template <class V>
  static constexpr std::size_t extent = N;
  bool operator==(const segment_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = in[0][offset + i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) in_adj[0][offset + i] += adj[i];
  }
};

/// The R × C matrix whose every column is the operand v of R values (Stan's rep_matrix(v, C)):
/// out[i·C + j] = v[i]. Reverse: ∂/∂vᵢ = Σⱼ adj[i·C + j]. C is the payload.
struct rep_columns_map {
  static constexpr const char* name = "rep_matrix";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t columns = 1;
  template <class V>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const rep_columns_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t* in_n) const {
    for (std::size_t i = 0; i < in_n[0]; ++i)
      for (std::size_t j = 0; j < columns; ++j) out[i * columns + j] = in[0][i];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t* in_n,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < in_n[0]; ++i) {
      T acc = lift<T>(0.0);
      for (std::size_t j = 0; j < columns; ++j) acc = acc + adj[i * columns + j];
      in_adj[0][i] += acc;
    }
  }
};

/// [A B] of an R × K₁ matrix A and an R × K₂ matrix B (row major; K₁, K₂ from the operands'
/// sizes and R, the payload): Stan's append_col. Reverse: each adjoint back to its entry.
struct append_col_map {
  static constexpr const char* name = "append_col";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t rows = 1;
  template <class A, class B>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const append_col_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t, T* out, const T* const* in, const std::size_t* in_n) const {
    const std::size_t ka = in_n[0] / rows, kb = in_n[1] / rows;
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < ka; ++j) out[i * (ka + kb) + j] = in[0][i * ka + j];
      for (std::size_t j = 0; j < kb; ++j) out[i * (ka + kb) + ka + j] = in[1][i * kb + j];
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t* in_n,
                        T* const* in_adj) const {
    const std::size_t ka = in_n[0] / rows, kb = in_n[1] / rows;
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < ka; ++j) in_adj[0][i * ka + j] += adj[i * (ka + kb) + j];
      for (std::size_t j = 0; j < kb; ++j) in_adj[1][i * kb + j] += adj[i * (ka + kb) + ka + j];
    }
  }
};

/// m values equally spaced from lo to hi, both included (Stan's linspaced_vector; m = 1: hi), as
/// Eigen's LinSpaced computes them (from the end of smaller magnitude, the other end exact).
/// Operands lo and hi. Reverse: ∂/∂lo = Σ adjᵢ (1 − tᵢ), ∂/∂hi = Σ adjᵢ tᵢ, tᵢ = i/(m − 1).
struct linspaced_map {
  static constexpr const char* name = "linspaced_vector";
  static constexpr bool has_payload = false;
  template <class L, class H>
  static constexpr std::size_t extent = dynamic_extent;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    const T lo = in[0][0], hi = in[1][0];
    if (m == 1) {
      out[0] = hi;
      return;
    }
    const T step = (hi - lo) / lift<T>(static_cast<double>(m - 1));
    const auto flip = math::abs(hi) < math::abs(lo);
    for (std::size_t i = 0; i < m; ++i) {
      const T from_lo = i == m - 1 ? hi : lo + lift<T>(static_cast<double>(i)) * step;
      const T from_hi = i == 0 ? lo : hi - lift<T>(static_cast<double>(m - 1 - i)) * step;
      out[i] = math::select(flip, from_hi, from_lo);
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    T d_lo = lift<T>(0.0), d_hi = lift<T>(0.0);
    for (std::size_t i = 0; i < m; ++i) {
      const double t = m == 1 ? 1.0 : static_cast<double>(i) / static_cast<double>(m - 1);
      d_lo = d_lo + adj[i] * lift<T>(1.0 - t);
      d_hi = d_hi + adj[i] * lift<T>(t);
    }
    in_adj[0][0] += d_lo;
    in_adj[1][0] += d_hi;
  }
};

/// m values, the operand x at position k (0-based) and zero elsewhere (Stan's one_hot_vector
/// with x = 1). Reverse: ∂/∂x = adjₖ.
struct one_hot_map {
  static constexpr const char* name = "one_hot_vector";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = false;
  std::size_t position = 0;
  template <class X>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const one_hot_map&) const = default;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = i == position ? in[0][0] : lift<T>(0.0);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    in_adj[0][0] += adj[position];
  }
};

/// sₜ = aₜ + bₜ sₜ₋₁ for t = 0 … m−1, with s₋₁ = s0; b is a scalar or a vector of size m.
/// Reverse, with λₜ the adjoint of sₜ (λₜ = adjₜ + bₜ₊₁ λₜ₊₁): ∂/∂aₜ = λₜ, ∂/∂bₜ = λₜ sₜ₋₁,
/// ∂/∂s0 = b₀ λ₀.
struct linear_recurrence_map {
  static constexpr const char* name = "linear_recurrence";
  static constexpr bool has_payload = false;
  template <class A, class B, class S0>
  static constexpr std::size_t extent = extent_v<A>;
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t* in_n) const {
    const T* a = in[0];
    const T* b = in[1];
    const bool b_vector = in_n[1] > 1;
    T s = in[2][0];
    for (std::size_t t = 0; t < m; ++t) out[t] = s = a[t] + b[b_vector ? t : 0] * s;
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T* out, const T* adj, const T* const* in,
                        const std::size_t* in_n, T* const* in_adj) const {
    const T* b = in[1];
    const bool b_vector = in_n[1] > 1;
    T lambda = lift<T>(0.0);
    for (std::size_t t = m; t-- > 0;) {
      lambda = adj[t] + (t + 1 < m ? b[b_vector ? t + 1 : 0] * lambda : lift<T>(0.0));
      in_adj[0][t] += lambda;
      const T previous = t > 0 ? out[t - 1] : in[2][0];
      in_adj[1][b_vector ? t : 0] += lambda * previous;
    }
    if (m > 0) in_adj[2][0] += b[0] * lambda;
  }
};

/// xᵢ = v[idx[i] − Shift] (idx checked when made). Reverse: ∂/∂v[idx[i] − Shift] += adjᵢ.
template <class Index = int, std::size_t Shift = 0>
struct gather_map {
  static constexpr const char* name = "gather";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const Index* idx = nullptr;
  std::size_t n = 0;
  const char* index_name = nullptr;  // gather(v, idx, "name"): for messages
  template <class V>
  static constexpr std::size_t extent = dynamic_extent;
  bool operator==(const gather_map&) const = default;
  /// f(idx, n) (compile/relocate.hpp; m, the node's size, is n).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (idx != nullptr) f(idx, n);
  }
  TYCHE_HD std::size_t position(std::size_t i) const { return static_cast<std::size_t>(idx[i]) - Shift; }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = in[0][position(i)];
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) in_adj[0][position(i)] += adj[i];
  }
};

/// z = L⁻¹ r for a lower-triangular K × K data matrix L (row-major; the part above the
/// diagonal is not read): forward substitution zᵢ = (rᵢ − Σ_{j<i} Lᵢⱼ zⱼ) / Lᵢᵢ. Reverse:
/// ∂/∂r = L⁻ᵀ adj, by back substitution wᵢ = (adjᵢ − Σ_{j>i} Lⱼᵢ wⱼ) / Lᵢᵢ. owner keeps L
/// alive when the op computed it (multi_normal's Cholesky factor); it is null for a user's L.
/// Folding a model moves owner into the model's fold_storage (release_into) and leaves the
/// view, lower_triangular_solve_view: values and pointers, which a GPU copy needs.
struct lower_triangular_solve_view {
  static constexpr const char* name = "lower_triangular_solve";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  static constexpr bool reads_data_matrix = true;  // L (compile/relocate.hpp, matrix_values_read)
  const double* l = nullptr;
  std::size_t k = 0;
  template <class R>
  static constexpr std::size_t extent = extent_v<R>;
  bool operator==(const lower_triangular_solve_view& o) const { return l == o.l && k == o.k; }
  /// f(l, k²) (compile/relocate.hpp).
  template <class F>
  void for_each_data_buffer(std::size_t, F&& f) {
    if (l != nullptr) f(l, k * k);
  }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    const T* r = in[0];
    for (std::size_t i = 0; i < m; ++i)
      out[i] = (r[i] - detail::triangular_dot(l + i * k, out, i)) * lift<T>(1.0 / l[i * k + i]);
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*,
                        T* const* in_adj) const {
    // w is built in place (in_adj[0], zero on entry), column by column from the last: w starts
    // as adj, and once wᵢ is final (wᵢ /= Lᵢᵢ) it is taken out of w₀ … wᵢ₋₁ with row i of L.
    T* w = in_adj[0];
    for (std::size_t i = 0; i < m; ++i) w[i] = adj[i];
    for (std::size_t i = m; i-- > 0;) {
      w[i] = w[i] * lift<T>(1.0 / l[i * k + i]);
      detail::triangular_axpy(l + i * k, w[i], w, i);
    }
  }
};

/// The std::shared_ptr by which an unfolded node owns what it points into (the Cholesky factor
/// multi_normal computed), with copies, moves and a destructor that nvcc may call from
/// __host__ __device__ code. nvcc makes a node's implicit copy constructor host and device as
/// soon as a host-and-device function could copy the node, and then std::shared_ptr's, whose
/// parts are host only (warning #20011, "calling a __host__ function from a __host__ __device__
/// function"; `nuts(model)` of a multi_normal with a data covariance met it). Here the
/// shared_ptr lives in a union and is copied and destroyed by hand in the host compilation only:
/// nodes reach the device folded into views (release_into below), which hold no owner, so the
/// device compilation's empty bodies never run.
template <class T>
struct host_owner {
  union {  // constructed and destroyed by hand, in the host compilation only
    std::shared_ptr<const T> ptr;
  };
  host_owner() : ptr() {}
  host_owner(std::shared_ptr<const T> p) : ptr(std::move(p)) {}  // NOLINT: implicit, as shared_ptr
  TYCHE_HD host_owner(const host_owner& o) {
#if !defined(__CUDA_ARCH__)
    ::new (static_cast<void*>(&ptr)) std::shared_ptr<const T>(o.ptr);
#else
    (void)o;
#endif
  }
  TYCHE_HD host_owner(host_owner&& o) noexcept {
#if !defined(__CUDA_ARCH__)
    ::new (static_cast<void*>(&ptr)) std::shared_ptr<const T>(std::move(o.ptr));
#else
    (void)o;
#endif
  }
  TYCHE_HD host_owner& operator=(const host_owner& o) {
#if !defined(__CUDA_ARCH__)
    ptr = o.ptr;
#else
    (void)o;
#endif
    return *this;
  }
  TYCHE_HD host_owner& operator=(host_owner&& o) noexcept {
#if !defined(__CUDA_ARCH__)
    ptr = std::move(o.ptr);
#else
    (void)o;
#endif
    return *this;
  }
  TYCHE_HD ~host_owner() {
#if !defined(__CUDA_ARCH__)
    ptr.~shared_ptr();
#endif
  }
};

/// lower_triangular_solve_view with the owner of L (null for a user's L), until folding.
struct lower_triangular_solve_map : lower_triangular_solve_view {
  host_owner<std::vector<double>> owner;
  template <class Storage>
  lower_triangular_solve_view release_into(Storage& storage) const {
    if (owner.ptr) storage.keep(owner.ptr);
    return *this;
  }
};

/// f = L z with L the lower Cholesky factor of a K × K matrix C given as its K² entries (row
/// major; only the lower triangle is read) — Stan's cholesky_decompose(C) * z, for the
/// non-centred latent Gaussian process f ~ multi_normal(0, C). Scratch: L (K²) and its adjoint
/// (K²). Reverse: L̄ = f̄ zᵀ (lower part), z̄ = Lᵀ f̄, then C̄ by reverse-mode of the Cholesky
/// loops (detail::cholesky_reverse). O(K³) each way. A C that is not positive definite gives
/// NaN (a rejected point for the sampler).
struct cholesky_multiply_map {
  static constexpr const char* name = "cholesky_multiply";
  static constexpr bool has_payload = false;
  template <class C, class Z>
  static constexpr std::size_t extent = extent_v<Z>;
  static std::size_t scratch_size(std::size_t m, const std::size_t*) { return 2 * m * m; }
  template <class T>
  TYCHE_HD void forward(std::size_t m, T* out, const T* const* in, const std::size_t*, T* l) const {
    const T* z = in[1];
    detail::cholesky_forward(m, in[0], l);
    for (std::size_t i = 0; i < m; ++i) {
      T acc = lift<T>(0.0);
      for (std::size_t j = 0; j <= i; ++j) acc = acc + l[i * m + j] * z[j];
      out[i] = acc;
    }
  }
  template <class T>
  TYCHE_HD void reverse(std::size_t m, const T*, const T* adj, const T* const* in, const std::size_t*,
                        T* const* in_adj, T* l) const {
    const T* z = in[1];
    T* c_adj = in_adj[0];
    T* z_adj = in_adj[1];
    T* lb = l + m * m;  // L̄
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j <= i; ++j) {
        lb[i * m + j] = adj[i] * z[j];
        z_adj[j] += l[i * m + j] * adj[i];
      }
    }
    detail::cholesky_reverse(m, l, lb, c_adj);
  }
};

}  // namespace ops

}  // namespace tyche
