// Programs (tyche/compile/program.hpp): parameter layout, argument checks, scalar types, and no
// heap allocation per evaluation.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <vector>

#include "support/eight_schools.hpp"
#include "support/small_regression.hpp"
#include "support/property.hpp"

// Every allocation in this executable goes through these, so a test can count them. Every
// replaceable form is replaced (nothrow and aligned ones too), all on malloc/aligned_alloc and
// free: a form left to the runtime would pair its allocation with these deletes, which
// AddressSanitizer reports as alloc-dealloc-mismatch (operator new vs free).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
namespace {
std::atomic<long> allocations{0};
void* counted_allocation(std::size_t n, std::size_t alignment) noexcept {
  ++allocations;
  n = n > 0 ? n : 1;
  if (alignment <= alignof(std::max_align_t)) return std::malloc(n);
  return std::aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment);
}
void* counted_or_throw(std::size_t n, std::size_t alignment) {
  if (void* p = counted_allocation(n, alignment)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t n) { return counted_or_throw(n, 0); }
void* operator new[](std::size_t n) { return counted_or_throw(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_allocation(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_allocation(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_allocation(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted_allocation(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

using namespace tyche;
using Catch::Matchers::Contains;

TEST_CASE("program: parameters are laid out in the order given, or of first appearance",
          "[core][program]") {
  param<"a"> a;
  vector_param<"v"> v(3);
  param<"b"> b;
  const auto f = b * sum(v) + a;
  const auto natural = compile(f);
  const auto ordered = compile(f, a, b, v);
  using P = std::vector<std::pair<std::string, std::size_t>>;
  CHECK(natural.parameters() == P{{"b", 1}, {"v", 3}, {"a", 1}});
  CHECK(ordered.parameters() == P{{"a", 1}, {"b", 1}, {"v", 3}});
  CHECK(ordered.dim() == 5);
  CHECK(ordered.offset(2) == 2);
  CHECK(natural.value(std::vector<double>{2, 1, 2, 3, 10}) == 2 * 6 + 10);
  CHECK(ordered.value(std::vector<double>{10, 2, 1, 2, 3}) == 2 * 6 + 10);
}

TEST_CASE("program: wrong argument sizes are refused with the sizes named", "[core][program]") {
  param<"a"> a;
  vector_param<"v"> v(3);
  const auto f = compile(a * sum(v));
  std::vector<double> g(4), theta(4), short_theta(3);
  CHECK_THROWS_WITH(f.value(short_theta), Contains("theta has size 3, expected 4"));
  std::vector<double> short_g(2);
  CHECK_THROWS_WITH(f.value_and_gradient(theta, short_g), Contains("grad has size 2, expected 4"));
  const std::vector<double> flat(6);
  vector_param<"b"> b(2);
  // Xb used twice (read whole by at()): buffered, so the program needs a workspace.
  const auto mv = matvec(matrix(flat.data(), 3, 2), b);
  const auto m = compile(sum(mv) + at(mv, 1));
  std::vector<double> small_ws(1), x(2);
  CHECK_THROWS_WITH(m.value(x, small_ws), Contains("workspace has size 1, expected at least 6"));
  // One name, two sizes.
  vector_param<"v"> v4(4);
  CHECK_THROWS_WITH(compile(sum(v) + sum(v4)),
                    Contains("'v'") && Contains("sizes 3 and 4"));
}

TEST_CASE("program: no heap allocation per evaluation", "[core][program]") {
  const auto f = tyche_test::eight_schools_noncentered(tyche_test::eight_schools_y,
                                                       tyche_test::eight_schools_inv_sigma);
  std::vector<double> y(50), flat(50 * 4), theta(f.dim(), 0.1), g(f.dim());
  for (std::size_t i = 0; i < flat.size(); ++i) flat[i] = std::sin(double(i));
  vector_param<"b"> b(4);
  param<"c"> c;
  auto eta = c + matvec(matrix(flat.data(), 50, 4), b);
  const auto m = compile(sum(data(y) * eta - log1p_exp(eta)) + log_sum_exp(b * c), b, c);
  std::vector<double> mtheta(5, 0.2), mg(5), ws(m.workspace_size());
  const long before = allocations.load();
  double total = 0;
  for (int i = 0; i < 100; ++i) {
    total += f.value_and_gradient(std::span<const double>(theta), std::span<double>(g));
    total += f.value(std::span<const double>(theta));
    total += m.value_and_gradient(std::span<const double>(mtheta), std::span<double>(mg),
                                  std::span<double>(ws));
  }
  const long during = allocations.load() - before;
  CHECK(during == 0);
  CHECK(std::isfinite(total));
  // The counter works: building a program does allocate (its folding storage).
  const long before_build = allocations.load();
  const auto again = tyche_test::eight_schools_noncentered(tyche_test::eight_schools_y,
                                                           tyche_test::eight_schools_inv_sigma);
  CHECK(allocations.load() > before_build);
  CHECK(again.dim() == 10);
}

TEST_CASE("program: eight schools matches the written log density (host twin of the CUDA test)",
          "[core][program]") {
  const auto f = tyche_test::eight_schools_noncentered(tyche_test::eight_schools_y,
                                                       tyche_test::eight_schools_inv_sigma);
  const auto pts = tyche_test::random_points(20, 10, -1.5, 1.5, 8);
  for (const auto& th : pts) {
    const double mu = th[0], log_tau = th[1], tau = std::exp(log_tau);
    double expected = -mu * mu / 50 - std::log1p((tau / 5) * (tau / 5)) + log_tau;
    for (int j = 0; j < 8; ++j) {
      const double raw = th[2 + j];
      const double r = (tyche_test::eight_schools_y[j] - mu - tau * raw) /
                       tyche_test::eight_schools_sigma[j];
      expected += -0.5 * raw * raw - 0.5 * r * r;
    }
    std::vector<double> g(10);
    const double v = tyche_test::eight_schools_chain(f.view(), th.data(), g.data());
    CHECK(v == Approx(expected).epsilon(1e-14));
    tyche_test::check_gradient_at(f, th, "eight schools");
  }
  tyche_test::check_lanes(f, pts, "eight schools");
  tyche_test::check_float(f, pts[0], "eight schools");
}

TEST_CASE("program: evaluations take any contiguous range; sizes in the list are checked",
          "[core][program]") {
  vector_param<"v"> v(3);
  const auto f = compile(sum(square(v)), v);
  std::vector<double> x{1, 2, 3}, g(3);
  const std::array<double, 3> arr{1, 2, 3};
  std::span<double> mutable_span(x);
  CHECK(f.value(x) == 14);
  CHECK(f.value(arr) == 14);
  CHECK(f.value(mutable_span) == 14);
  CHECK(f.value_and_gradient(std::span<const double>(x), g) == 14);
  CHECK(g == std::vector<double>{2, 4, 6});
  std::vector<float> xf{1, 2, 3};
  CHECK(f.value(xf) == 14.0f);
  vector_param<"v"> v7(7);
  CHECK_THROWS_WITH(compile(sum(square(v)), v7), Contains("'v'") && Contains("sizes 3 and 7"));
}

TEST_CASE("program: edge values", "[core][program]") {
  param<"mu"> mu;
  // Constants 0.0 and −0.0 are different nodes: 1/(mu·0) + 1/(mu·−0) = inf − inf = NaN.
  CHECK(std::isnan(compile(inverse(mu * 0.0) + inverse(mu * -0.0)).value(std::vector<double>{1.0})));
  // x⁰ has derivative 0 at 0.
  std::vector<double> g(1);
  CHECK(compile(pow(mu, 0.0) + mu).value_and_gradient(std::vector<double>{0.0}, g) == 1.0);
  CHECK(g[0] == 1.0);
  // log_sum_exp of all −∞ is −∞ with zero gradient, not NaN.
  vector_param<"v", 2> v;
  const auto lse = compile(log_sum_exp(v) * lit<1, 2>);
  std::vector<double> gv(2);
  const double r = lse.value_and_gradient(std::vector<double>{-HUGE_VAL, -HUGE_VAL}, gv);
  CHECK(r == -HUGE_VAL);
  CHECK(gv[0] == 0.0);
  CHECK(gv[1] == 0.0);
  // A temporary std::span is a view, and data() accepts it.
  const std::vector<double> y{1, 2};
  CHECK(compile(sum(data(std::span<const double>(y)) * v) + mu).dim() == 3);
}

namespace {
// The parts of a split evaluation (program_view::value_and_gradient_part) against the whole, at
// `points` random points: Σ values and Σ gradients to 1e-12 relative, for each number of parts
// (more parts than elements included: the shares of a short sum are then mostly empty).
template <class View>
void check_parts_add_up(const View& view, std::size_t points, unsigned seed, const char* what) {
  const std::size_t d = view.dim();
  std::vector<double> ws(view.workspace_size + 1), g(d), whole(d), sum_g(d);
  for (const auto& th : tyche_test::random_points(points, d, -1.2, 1.2, seed)) {
    const double v = view.value_and_gradient(th.data(), whole.data(), ws.data());
    for (const std::size_t parts : {1u, 2u, 3u, 7u, 64u}) {
      double sum_v = 0;
      std::fill(sum_g.begin(), sum_g.end(), 0.0);
      for (std::size_t p = 0; p < parts; ++p) {
        sum_v += view.value_and_gradient_part(th.data(), g.data(), ws.data(), p, parts);
        for (std::size_t k = 0; k < d; ++k) sum_g[k] += g[k];
      }
      INFO(what << ", " << parts << " parts");
      CHECK(std::fabs(sum_v - v) <= 1e-12 * std::max(1.0, std::fabs(v)));
      for (std::size_t k = 0; k < d; ++k) {
        INFO("gradient " << k << ": " << sum_g[k] << " vs " << whole[k]);
        CHECK(std::fabs(sum_g[k] - whole[k]) <= 1e-12 * std::max(1.0, std::fabs(whole[k])));
      }
    }
    // Part 1 of 2 is not the whole: the split does split (eight schools' likelihood has 8 terms).
    const double second = view.value_and_gradient_part(th.data(), g.data(), ws.data(), 1, 2);
    CHECK(second != v);
  }
}
}  // namespace

TEST_CASE("program: the parts of a split evaluation add up to the whole (what GPU threads share)",
          "[core][program]") {
  const auto f = tyche_test::eight_schools_noncentered(tyche_test::eight_schools_y,
                                                       tyche_test::eight_schools_inv_sigma);
  check_parts_add_up(f.view(), 5, 3, "eight schools");
  const auto regression = tyche_test::small_regression();  // a streamed matvec in the loop
  check_parts_add_up(regression.program().view(), 5, 4, "regression");
  // Sums that are not reached by sums only (inside a log; used twice; a buffered matvec read by
  // two loops) are evaluated whole by part 0 and repeated, uncounted, by the others; a vector
  // prior and a likelihood beside them are split.
  static const std::vector<double> y = {0.3, -1.1, 2.2, 0.7, -0.4, 1.6, 0.05, -2.3, 0.9, 1.2, -0.6};
  static const std::vector<double> x = {0.5, -1.2, 0.3, 2.0, -0.7, 1.1, -0.4, 0.9, 1.6, -2.1, 0.2,
                                        0.8, -1.5, 0.6, 1.3, -0.1, 0.4, -0.9, 1.8, -0.3, 0.7, -0.2};
  param<"mu"> mu;
  vector_param<"b"> b(2);
  const auto inside_log = log(sum(exp(data(y) * mu)));
  const auto shared = sum(log(1.0 + square(data(y) - mu)));
  const auto xb = matvec(matrix(x, 11, 2), b);
  const auto lp = -0.5 * sum(square(b)) + inside_log - shared + 0.1 * shared * mu -
                  sum(log(1.0 + square(data(y) - xb))) + sum(exp(-square(xb)));
  const auto mixed = compile(lp, mu, b);
  check_parts_add_up(mixed.view(), 5, 5, "mixed sums");
}
