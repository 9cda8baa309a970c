// for_each_data_buffer(view, f) (tyche/compile/relocate.hpp): every pointer to data in a view's
// tree is visited, with the number of values read through it. For each model below, a copy of
// m.program().view() is re-pointed at copies of its buffers in an arena this test owns, then
// the user's data are spoilt (NaN, or other valid values where NaN would index out of bounds):
//   - the relocated view gives the value and gradient of the original, bit for bit, at several
//     θ (so every buffer read is relocated and every count covers what is read), while the
//     original view, which still reads the user's data, no longer does (so the spoiling bites);
//   - every arena block holds count + 1 values, the last one NaN (or an index far out of range):
//     the same results show that nothing past count is read;
//   - each buffer in turn relocated with its last counted value changed changes the result:
//     the count is not larger than what is read;
//   - after relocation every visited pointer is in the arena (the fold storage, which the test
//     cannot spoil, included), and the number of buffers is the one each model should have.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

using namespace tyche;

namespace {

/// One relocated buffer: its arena copy (count + 1 values) and its count.
struct block {
  std::shared_ptr<void> storage;
  const void* begin = nullptr;
  std::size_t bytes = 0;  // count values, without the guard value
  std::size_t count = 0;
};

/// The relocating f: copies each buffer into the arena, with a guard value after the count;
/// when `altered` is the number of the buffer being visited, its last counted value is changed.
struct relocator {
  std::vector<block>* arena;
  std::size_t altered = static_cast<std::size_t>(-1);
  std::size_t visited = 0;

  template <class T>
  void operator()(const T*& ptr, std::size_t count) {
    static_assert(std::is_arithmetic_v<T>);
    auto copy = std::shared_ptr<T[]>(new T[count + 1]);
    if (count > 0) std::memcpy(copy.get(), ptr, count * sizeof(T));
    if constexpr (std::is_floating_point_v<T>) copy[count] = std::numeric_limits<T>::quiet_NaN();
    else copy[count] = std::numeric_limits<T>::max();  // as an index: far out of range
    if (visited == altered) change_last(copy.get(), count);
    arena->push_back({copy, copy.get(), count * sizeof(T), count});
    ptr = copy.get();
    ++visited;
  }

  /// The last counted value replaced by another of the buffer's values (a valid index or
  /// category stays valid), or by a different number when they are all equal.
  template <class T>
  static void change_last(T* v, std::size_t count) {
    REQUIRE(count > 0);
    T& last = v[count - 1];
    for (std::size_t i = 0; i + 1 < count; ++i)
      if (v[i] != last) {
        last = v[i];
        return;
      }
    last = last + T(1);
  }
};

/// Value and gradient of the view at each θ, one after another.
template <class View>
std::vector<double> evaluate(const View& view, const std::vector<std::vector<double>>& thetas) {
  std::vector<double> out;
  std::vector<double> grad(view.dim()), ws(view.workspace_size);
  for (const auto& th : thetas) {
    REQUIRE(th.size() == view.dim());
    out.push_back(view.template value_and_gradient<double>(th.data(), grad.data(), ws.data()));
    out.insert(out.end(), grad.begin(), grad.end());
  }
  return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

std::vector<std::vector<double>> points(std::size_t dim) {
  std::vector<std::vector<double>> out;
  for (int r = 0; r < 3; ++r) {
    std::vector<double> th(dim);
    for (std::size_t i = 0; i < dim; ++i) th[i] = 0.9 * std::sin(1.3 * double(i) + 2.1 * r + 0.4);
    out.push_back(th);
  }
  return out;
}

/// The checks of the header comment for view (a copy of m.program().view()); spoil() overwrites
/// the user's data the model reads. Returns the number of buffers visited.
template <class View>
std::size_t check_relocation(const View& original, const std::function<void()>& spoil) {
  const auto thetas = points(original.dim());
  const std::vector<double> want = evaluate(original, thetas);
  for (double v : want) REQUIRE(std::isfinite(v));

  std::vector<block> arena;
  View relocated = original;
  relocator f{&arena};
  for_each_data_buffer(relocated, f);
  const std::size_t n = f.visited;
  REQUIRE(arena.size() == n);

  // Every visited pointer now points at its arena block, with the same count, in the same order.
  std::size_t k = 0;
  for_each_data_buffer(relocated, [&]<class T>(const T*& ptr, std::size_t count) {
    REQUIRE(k < arena.size());
    CHECK(static_cast<const void*>(ptr) == arena[k].begin);
    CHECK(count == arena[k].count);
    CHECK(count * sizeof(T) == arena[k].bytes);
    ++k;
  });
  CHECK(k == n);

  CHECK(same_bits(evaluate(relocated, thetas), want));
  // What a GPU copy is: the view's bytes (a model with a scan, a tabulate or a factored
  // covariance too: folding moved what their ops owned into the program's storage).
  static_assert(std::is_trivially_copyable_v<View>, "a model's view is values and pointers");
  View bytes_copy = original;
  std::memcpy(static_cast<void*>(&bytes_copy), static_cast<const void*>(&relocated), sizeof(View));
  CHECK(same_bits(evaluate(bytes_copy, thetas), want));
  spoil();
  CHECK(same_bits(evaluate(relocated, thetas), want));
  CHECK(same_bits(evaluate(bytes_copy, thetas), want));
  CHECK_FALSE(same_bits(evaluate(original, thetas), want));

  // Each buffer's last counted value is read. (The originals are spoilt, but the alterations
  // start from a relocated copy, whose values are the unspoilt ones.)
  for (std::size_t b = 0; b < n; ++b) {
    INFO("buffer " << b << " of " << n << ", count " << arena[b].count);
    if (arena[b].count == 0) continue;
    std::vector<block> altered_arena;
    View altered = relocated;
    relocator g{&altered_arena, b};
    for_each_data_buffer(altered, g);
    CHECK_FALSE(same_bits(evaluate(altered, thetas), want));
  }
  return n;
}

/// The number of a view's buffers that lie in one of the ranges (begin, bytes) of the user's
/// data; the others are in the program's fold storage or in storage an op owns.
template <class View>
std::size_t count_into(View view, const std::vector<std::pair<const void*, std::size_t>>& user) {
  std::size_t in_user = 0;
  for_each_data_buffer(view, [&]<class T>(const T*& ptr, std::size_t count) {
    const auto* p = reinterpret_cast<const unsigned char*>(ptr);
    for (const auto& [begin, bytes] : user) {
      const auto* b = static_cast<const unsigned char*>(begin);
      if (p >= b && p + count * sizeof(T) <= b + bytes) {
        ++in_user;
        break;
      }
    }
  });
  return in_user;
}

template <class T>
std::pair<const void*, std::size_t> range_of(const std::vector<T>& v) {
  return {v.data(), v.size() * sizeof(T)};
}

void fill_nan(std::vector<double>& v) {
  for (auto& x : v) x = std::numeric_limits<double>::quiet_NaN();
}

struct schools {
  std::vector<double> y, sigma;
};

}  // namespace

TEST_CASE("for_each_data_buffer: eight schools (y read in place, 1/sigma and log sigma folded)",
          "[relocate][compile]") {
  schools d{{28, 8, -3, 7, -1, 1, 18, 12}, {15, 10, 16, 11, 9, 11, 10, 18}};
  const auto m = model(
      [](const schools& d) {
        auto mu = normal<"mu">(0.0, 5.0);
        auto tau = half_cauchy<"tau">(5.0);
        auto theta_raw = std_normal<"theta_raw">(shape<8>);
        auto theta = mu + tau * theta_raw;
        return joint(mu, tau, theta_raw, normal(theta, data(d.sigma)).observe(data(d.y)));
      },
      d);
  const auto view = m.program().view();
  // y, read in place; 1/sigma (the residuals are multiplied by it) and log sigma (the
  // normalising term of each school), folded into the program's storage.
  CHECK(count_into(view, {range_of(d.y), range_of(d.sigma)}) == 1);
  const std::size_t n = check_relocation(view, [&] {
    fill_nan(d.y);
    fill_nan(d.sigma);
  });
  CHECK(n == 3);
}

namespace {
/// n × 3 covariates, n × 2 group indicators, a binary outcome, a continuous one, 1 … 4
/// categories, 0 … n − 1.
struct regression_data {
  static constexpr std::size_t n = 10, k = 3, g = 2;
  std::vector<double> x, z, y, yc, t, cat;
  regression_data() : x(n * k), z(n * g), y(n), yc(n), t(n), cat(n) {
    for (std::size_t i = 0; i < n * k; ++i) x[i] = std::sin(0.7 * double(i) + 0.1);
    for (std::size_t i = 0; i < n * g; ++i) z[i] = (i % g == (i / g) % g) ? 1.0 : 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      y[i] = i % 3 == 0 ? 1.0 : 0.0;
      yc[i] = 1.0 + std::cos(1.1 * double(i));
      t[i] = double(i);
      cat[i] = double(1 + (i * 7) % 4);
    }
  }
};
}  // namespace

TEST_CASE("for_each_data_buffer: logistic regression, data matrices (streamed matvec, data_matvec_map)",
          "[relocate][compile]") {
  regression_data d;
  constexpr std::size_t n = regression_data::n, k = regression_data::k, g = regression_data::g;
  auto beta = normal<"beta">(0.0, 1.0, shape<k>);
  auto s = half_normal<"s">(1.0);
  auto u = std_normal<"u">(shape<g>);
  // X beta: the matvec node (its data_matrix child); Z (s u): a vector_op reading Z in place.
  const auto m = model(
      joint(beta, s, u,
            bernoulli_logit(matvec(matrix(d.x, n, k), beta) + matvec(matrix(d.z, n, g), s * u)).observe(data(d.y))));
  const auto view = m.program().view();
  CHECK(count_into(view, {range_of(d.x), range_of(d.z), range_of(d.y)}) == 3);
  const std::size_t buffers = check_relocation(view, [&] {
    fill_nan(d.x);
    fill_nan(d.z);
    fill_nan(d.y);
  });
  CHECK(buffers == 3);  // y, X (n·k), Z (n·g)
}

TEST_CASE("for_each_data_buffer: a sparse design matrix (sparse_matvec_map: values, column indices, row starts)",
          "[relocate][compile][sparse]") {
  regression_data d;
  constexpr std::size_t n = regression_data::n, k = regression_data::k;
  // X with every third entry kept: 10 rows of 3, one or two entries each.
  std::vector<double> w;
  std::vector<int> c, u{0};
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < k; ++j)
      if ((i * k + j) % 3 != 1) {
        w.push_back(d.x[i * k + j]);
        c.push_back(static_cast<int>(j));
      }
    u.push_back(static_cast<int>(w.size()));
  }
  auto beta = normal<"beta">(0.0, 1.0, shape<k>);
  auto sigma = half_normal<"sigma">(1.0);
  const auto m = model(joint(beta, sigma, cauchy(sparse_matrix(n, k, w, c, u) * beta, sigma).observe(data(d.yc))));
  const auto view = m.program().view();
  std::vector<std::size_t> counts;
  auto copy = view;
  for_each_data_buffer(copy, [&]<class T>(const T*&, std::size_t count) { counts.push_back(count); });
  CHECK(counts == std::vector<std::size_t>{n, w.size(), w.size(), n + 1});  // yc, w, c, u
  CHECK(count_into(view, {range_of(d.yc), range_of(w), range_of(c), range_of(u)}) == 4);
  const std::size_t buffers = check_relocation(view, [&] {
    fill_nan(d.yc);
    fill_nan(w);
    for (auto& j : c) j = (j + 1) % static_cast<int>(k);  // other valid columns
    for (std::size_t r = 0; r < n; ++r) u[r] = 0;          // every entry in the last row
  });
  CHECK(buffers == 4);
}

TEST_CASE("for_each_data_buffer: normal likelihoods, a sum over data and sufficient statistics",
          "[relocate][compile]") {
  regression_data d;
  constexpr std::size_t n = regression_data::n, k = regression_data::k;
  auto mu = normal<"mu">(0.0, 5.0);
  auto sigma = half_normal<"sigma">(2.0);
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"beta">(0.0, 1.0, shape<k>);
  auto tau = half_normal<"tau">(1.0);
  // cauchy(mu, sigma) of yc: a loop over yc (normal(mu, sigma) of yc would reduce to two numbers,
  // which the tree holds as constants); normal(alpha + X beta, tau) of t: residual_squares,
  // whose 3 + 2k + k² statistics compile() computed into the fold storage.
  const auto m = model(joint(mu, sigma, alpha, beta, tau, cauchy(mu, sigma).observe(data(d.yc)),
                             normal(alpha + matvec(matrix(d.x, n, k), beta), tau).observe(data(d.t))));
  const auto view = m.program().view();
  std::vector<std::size_t> counts;
  auto copy = view;
  for_each_data_buffer(copy, [&]<class T>(const T*&, std::size_t c) { counts.push_back(c); });
  CHECK(counts == std::vector<std::size_t>{n, 3 + 2 * k + k * k});
  CHECK(count_into(view, {range_of(d.yc), range_of(d.x), range_of(d.t)}) == 1);
  const std::size_t buffers = check_relocation(view, [&] { fill_nan(d.yc); });
  CHECK(buffers == 2);
}

TEST_CASE("for_each_data_buffer: gathers through data indices (param_gather, gather_map)", "[relocate][compile]") {
  regression_data d;
  std::vector<int> group{0, 1, 2, 1, 0, 2, 2, 1, 0, 0};
  auto a = normal<"a">(0.0, 1.0, shape<3>);
  auto u = normal<"u">(0.0, 1.0, shape<3>);
  auto sigma = half_normal<"sigma">(1.0);
  // a[group]: a leaf reading θ through the indices; cumulative_sum(u)[group]: a gather_map.
  const auto m =
      model(joint(a, u, sigma, normal(gather(a, group) + gather(cumulative_sum(u), group), sigma).observe(data(d.yc))));
  const auto view = m.program().view();
  std::size_t ints = 0;
  auto copy = view;
  for_each_data_buffer(copy, [&]<class T>(const T*&, std::size_t c) {
    if constexpr (std::is_same_v<T, int>) {
      ++ints;
      CHECK(c == group.size());
    }
  });
  CHECK(ints == 2);
  CHECK(count_into(view, {range_of(d.yc), range_of(group)}) == 3);
  const std::size_t buffers = check_relocation(view, [&] {
    for (auto& i : group) i = (i + 1) % 3;  // other valid indices
    fill_nan(d.yc);
  });
  CHECK(buffers == 3);  // yc, the indices twice
}

TEST_CASE("for_each_data_buffer: ordered_logistic (categories read by the op)", "[relocate][compile]") {
  regression_data d;
  auto b = normal<"b">(0.0, 1.0);
  auto c = ordered<"c">(normal(0.0, 3.0), shape<3>);
  const auto m = model(joint(b, c, ordered_logistic(data(d.yc) * b, c).observe(data(d.cat))));
  const auto view = m.program().view();
  CHECK(count_into(view, {range_of(d.yc), range_of(d.cat)}) == 2);
  const std::size_t buffers = check_relocation(view, [&] {
    for (auto& y : d.cat) y = 5 - y;  // other valid categories (K = 4)
  });
  CHECK(buffers == 2);  // the covariate, the categories
}

TEST_CASE("for_each_data_buffer: scan and tabulate (sequences, and the data of the inner programs)",
          "[relocate][compile]") {
  regression_data d;
  constexpr std::size_t n = regression_data::n;
  auto phi = normal<"phi">(0.0, 1.0);
  auto sigma = half_normal<"sigma">(1.0);
  auto e = lognormal<"e">(0.0, 1.0);
  auto l = lognormal<"l">(0.0, 1.0);
  auto s = scan([&](const auto& state, const auto& xt) { return phi * state + sigma * xt; }, 0.25, data(d.yc));
  // The change point's log p(y, s) for every s: the element reads t and the counts (and
  // lgamma(count + 1), folded into the element program's storage).
  auto lp = tabulate(n, [&](const auto& sp) {
    auto early = step(sp - data(d.t) - 0.5);
    return poisson_log_lpmf(data(d.cat), log(l) + (log(e) - log(l)) * early);
  });
  auto q = tabulate(
      n, [&](const auto& i, const auto& xt) { return -square(xt - phi * i * 0.1); }, data(d.yc));
  const auto m = model(joint(phi, sigma, e, l, target(-square(at(s, 0))), target(log_sum_exp(lp)), target(sum(q))));
  const auto view = m.program().view();
  CHECK(count_into(view, {range_of(d.yc), range_of(d.t), range_of(d.cat)}) == 4);
  const std::size_t buffers = check_relocation(view, [&] {
    fill_nan(d.yc);
    fill_nan(d.t);
    fill_nan(d.cat);
  });
  CHECK(buffers == 5);  // the element's cat, t and folded lgamma; the scan's and q's sequence
}

TEST_CASE("for_each_data_buffer: ode_rk45 (the output times)", "[relocate][compile]") {
  // The op reads its output times through a pointer (the right-hand side's program reads no
  // data here): a GPU copy must carry them, and the solve must read the copy.
  regression_data d;
  auto k = lognormal<"k">(0.0, 0.5);
  auto c = normal<"c">(0.0, 1.0);
  auto sol = ode_rk45([&](const auto& t, const auto& y) { return std::tuple{-k * y[0] + c * sin(t), k * y[0] - y[1]}; },
                      std::tuple{1.0, 0.0}, -1.0, data(d.t));
  const auto m = model(joint(k, c, target(-sum(square(sol)))));
  const auto view = m.program().view();
  CHECK(count_into(view, {range_of(d.t)}) == 1);
  const std::size_t buffers = check_relocation(view, [&] { fill_nan(d.t); });
  CHECK(buffers == 2);  // the output times, and y0 = (1, 0) folded into a vector of the program's storage
}

TEST_CASE("for_each_data_buffer: solve_newton (no output times; the data its equation reads)", "[relocate][compile]") {
  // The algebraic solver's op has no output times (a null pointer, not visited); what its
  // equation reads is in the equation's program view.
  regression_data d;
  auto k = lognormal<"k">(0.0, 0.5);
  auto root = solve_newton([&](const auto& x) { return x * x * x + sum(exp(data(d.yc) * x)) - k; }, 0.5);
  const auto m = model(joint(k, target(-square(root))));
  const auto view = m.program().view();
  CHECK(count_into(view, {range_of(d.yc)}) == 1);
  const std::size_t buffers = check_relocation(view, [&] { fill_nan(d.yc); });
  CHECK(buffers == 1);  // y_c, read in the equation (not foldable: exp(y_c · x))
  // One solve per element of tabulate: the sequence, and the data each element's equation reads
  // (fresh data: the check above spoilt d's).
  regression_data e;
  auto per_element = tabulate(regression_data::n, [&](const auto&, const auto& tj) {
    return solve_newton([&](const auto& x) { return x * x * x + sum(exp(data(e.yc) * x)) - k * (1.0 + 0.1 * tj); }, 0.5);
  }, data(e.t));
  const auto m2 = model(joint(k, target(-sum(square(per_element)))));
  const auto view2 = m2.program().view();
  CHECK(count_into(view2, {range_of(e.yc), range_of(e.t)}) == 2);
  CHECK(check_relocation(view2, [&] {
          fill_nan(e.yc);
          fill_nan(e.t);
        }) == 2);
}

TEST_CASE("for_each_data_buffer: multi_normal, multi_normal_cholesky, multi_normal_prec, rows_dot_product with data",
          "[relocate][compile]") {
  regression_data d;
  std::vector<double> sigma{2.0, 0.5, 0.3, 0.5, 1.5, 0.2, 0.3, 0.2, 1.0};
  std::vector<double> chol{1.0, 0.0, 0.0, 0.4, 1.2, 0.0, -0.3, 0.5, 0.8};
  std::vector<double> a{0.3, -1.0, 0.5, 1.5, 0.2, -0.7, 0.9, 0.1, -0.2, 1.1, 0.4, 0.6};  // 4 x 3
  std::vector<double> x{0.4, -0.3, 1.2};
  std::vector<double> omega{1.5, 0.2, -0.1, 0.2, 2.0, 0.3, -0.1, 0.3, 1.0};
  auto mu = normal<"mu">(0.0, 2.0, shape<3>);
  auto w = normal<"w">(0.0, 1.0, shape<12>);
  // multi_normal(mu, Sigma): the op reads the Cholesky factor it computed (and owns);
  // multi_normal_cholesky(mu, L): the user's L; rows_dot_product: the user's A;
  // multi_normal_prec(mu, Omega): the copy of Omega it owns.
  const auto m = model(joint(mu, w, multi_normal(mu, matrix(sigma, 3, 3)).observe(data(x)),
                             multi_normal_cholesky(mu * 0.5, matrix(chol, 3, 3)).observe(data(d.yc.data(), 3)),
                             multi_normal_prec(mu * 2.0, matrix(omega, 3, 3)).observe(data(x)),
                             target(sum(square(rows_dot_product(matrix(a, 4, 3), tanh(w)))))));
  const auto view = m.program().view();
  std::vector<std::size_t> counts;
  auto copy = view;
  for_each_data_buffer(copy, [&]<class T>(const T*&, std::size_t c) { counts.push_back(c); });
  CHECK(counts == std::vector<std::size_t>{12, 9, 3, 9, 3, 9, 3});
  // Five in the user's data (A, L, y, x twice); Sigma's factor and Omega's copy are the model's.
  CHECK(count_into(view, {range_of(sigma), range_of(chol), range_of(a), range_of(x), range_of(d.yc),
                          range_of(omega)}) == 5);
  const std::size_t buffers = check_relocation(view, [&] {
    fill_nan(chol);
    fill_nan(a);
    fill_nan(x);
    fill_nan(d.yc);
    fill_nan(omega);
  });
  CHECK(buffers == 7);
}

TEST_CASE("for_each_data_buffer: car and icar (the graph buffers they own)", "[relocate][compile]") {
  // A ring of 5 areas: car's buffer holds the 5 pairs twice (first and second areas), the 5
  // numbers of neighbours and the 5 eigenvalues (20 values), icar's the pairs (10).
  const areal_graph g(5, std::vector<int>{0, 1, 2, 3, 4}, std::vector<int>{1, 2, 3, 4, 0});
  auto a = uniform<"a">(0.0, 0.9);
  auto t = gamma<"t">(2.0, 1.0);
  const auto m = model(joint(a, t, car<"phi">(a, t, g), icar<"psi">(g)));
  const auto view = m.program().view();
  std::vector<std::size_t> counts;
  std::vector<const double*> buffers;
  auto copy = view;
  for_each_data_buffer(copy, [&]<class T>(const T*& p, std::size_t c) {
    counts.push_back(c);
    if constexpr (std::is_same_v<T, double>) buffers.push_back(p);
  });
  CHECK(counts == std::vector<std::size_t>{20, 10});
  REQUIRE(buffers.size() == 2);
  // The buffers are the model's (no user data): spoilt through the view's pointers (they point
  // into std::vector<double>s the ops made, not const objects) — car's numbers of neighbours and
  // eigenvalues made NaN, icar's pairs all made (0, 1): indices stay valid indices.
  CHECK(check_relocation(view, [&] {
          double* car_buffer = const_cast<double*>(buffers[0]);
          for (std::size_t i = 10; i < counts[0]; ++i) car_buffer[i] = std::nan("");
          double* icar_buffer = const_cast<double*>(buffers[1]);
          for (std::size_t i = 0; i < counts[1]; ++i) icar_buffer[i] = i < 5 ? 0.0 : 1.0;
        }) == 2);
}

TEST_CASE("for_each_data_buffer: a Gaussian process's points (gp_exp_quad_cov_map)", "[relocate][compile]") {
  // The covariance once in the tree (inside multi_normal_cholesky it would appear twice, the
  // second copy aliased to the first at run time and so never read).
  std::vector<double> x2{0.0, 0.0, 1.0, 0.5, -0.5, 1.5, 2.0, -1.0};  // 4 points in 2 dimensions
  std::vector<double> y{0.4, -0.2, 0.8, 1.1};
  std::vector<double> w(16);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.1 * double(i) - 0.7;
  auto alpha = lognormal<"alpha">(0.0, 1.0);
  auto rho = lognormal<"rho">(0.0, 1.0);
  const auto m = model(joint(alpha, rho, normal(0.0, alpha).observe(data(y)),
                             target(sum(data(w) * gp_exp_quad_cov(matrix(x2, 4, 2), alpha, rho)))));
  const auto view = m.program().view();
  std::vector<std::size_t> counts;
  auto copy = view;
  for_each_data_buffer(copy, [&]<class T>(const T*&, std::size_t c) { counts.push_back(c); });
  std::sort(counts.begin(), counts.end());
  CHECK(counts == std::vector<std::size_t>{8, 16});  // y: folded into its sufficient statistics
  const std::size_t buffers = check_relocation(view, [&] {
    fill_nan(x2);
    fill_nan(y);
    fill_nan(w);
  });
  CHECK(buffers == 2);
}
