// tests/compile/sharing_stress_test.cpp — value and gradient of models that stress sharing,
// aliasing, fusion and folding: equal payload nodes, nested reductions, shared scalars inside and
// outside loop bodies, sign chains above sums, matvec in several reductions, run-time sizes,
// layouts.
#include <tyche/tyche.hpp>
#include <catch2/catch.hpp>
#include "support/property.hpp"
#include <algorithm>
#include <cmath>
#include <vector>
using namespace tyche;
using tyche_test::check_gradient_at;

TEST_CASE("sharing stress: shared payload scalars") {
  param<"mu"> mu;
  auto p1 = compile(exp(mu * 2.0) + exp(mu * 2.0));
  check_gradient_at(p1, {0.3}, "exp2+exp2");
  std::vector<double> g(1);
  double v = p1.value_and_gradient(std::vector<double>{0.3}, g);
  CHECK(v == Approx(2*std::exp(0.6)));
  CHECK(g[0] == Approx(4*std::exp(0.6)));
  auto p2 = compile(exp(mu * 2.0) + exp(mu * 3.0));
  check_gradient_at(p2, {0.3}, "exp2+exp3");
  auto p3 = compile(pow(mu, 2.0) + pow(mu, 3.0) * pow(mu, 2.0) + pow(mu,3.0));
  check_gradient_at(p3, {1.3}, "pow");
  vector_param<"v", 5> v5;
  auto p4 = compile(sum(pow(v5, 2.0) + pow(v5, 3.0)) + sum(pow(v5,2.0)));
  check_gradient_at(p4, {1.1,1.2,1.3,1.4,1.5}, "pow vec");
}

TEST_CASE("sharing stress: data sums") {
  vector_param<"v"> v(10);
  std::vector<double> y1{1,2,3,4,5,6,7,8,9,10}, y2{0.5,-1,2,3,1,1,1,2,2,2};
  std::vector<double> x{.1,.2,.3,.4,.5,.6,.7,.8,.9,1.0};
  auto p = compile(sum(data(y1) * v) + sum(data(y2) * v));
  check_gradient_at(p, x, "two data sums");
  auto q = compile(sum(data(y1) * v) + sum(data(y1) * v));
  check_gradient_at(q, x, "two same data sums");
  std::vector<double> g(10);
  double val = q.value_and_gradient(x, g);
  double ref = 0; for (int i=0;i<10;++i) ref += 2*y1[i]*x[i];
  CHECK(val == Approx(ref));
  for (int i=0;i<10;++i) CHECK(g[i] == Approx(2*y1[i]));
  auto r = compile(square(sum(data(y1) * v)) - sum(data(y1) * v) + log(sum(data(y2)*v)));
  check_gradient_at(r, x, "nonfused");
  param<"mu"> mu;
  auto s = compile(sum(data(y1) * v * exp(mu*2.0)) + exp(mu*2.0) - log_sum_exp(v * exp(mu*2.0)) * exp(mu * 2.0), mu, v);
  std::vector<double> xm{0.2}; xm.insert(xm.end(), x.begin(), x.end());
  check_gradient_at(s, xm, "shared payload scalar in/out loops");
}

TEST_CASE("sharing stress: nested sums") {
  vector_param<"v", 4> v; vector_param<"w", 3> w; param<"mu"> mu;
  std::vector<double> x{.1,.2,.3,.4,.5,.6,.7};
  check_gradient_at(compile(sum(v * sum(w))), x, "sum(v*sum(w))");
  check_gradient_at(compile(sum(v * sum(w)) + sum(w)), x, "+sum(w)");
  check_gradient_at(compile(sum(v * sum(w * 2.0)) - sum(w * 2.0)), x, "payload nested");
  check_gradient_at(compile(sum(v * sum(exp(w) * sum(v)))), x, "deeper");
  check_gradient_at(compile(log_sum_exp(v * sum(w) + log_sum_exp(w * 2.0)) + sum(exp(v))), x, "lse nested");
  std::vector<double> xm{0.3,.1,.2,.3,.4,.5,.6,.7};
  check_gradient_at(compile(sum(v * exp(mu)) + exp(mu) - sum(w*exp(mu)), mu, v, w), xm, "shared scalar");
  check_gradient_at(compile(-(mu - (sum(v) - sum(square(w)))) - -sum(exp(v)), mu, v, w), xm, "sign chains");
  check_gradient_at(compile(mu - sum(square(v - mu)) * 0.5 - (-(sum(w))), mu, v, w), xm, "sign chains 2");
}

TEST_CASE("sharing stress: folding") {
  vector_param<"v", 4> v; param<"mu"> mu;
  std::vector<double> y{1,2,3,4}, z{2,3,5,7};
  std::vector<double> x{.3,.1,.2,.3,.4};
  check_gradient_at(compile(sum(v * (data(y) * 2.0 + 1.0)) + mu, mu, v), x, "fold1");
  check_gradient_at(compile(sum(v / data(y)) + mu, mu, v), x, "fold div");
  check_gradient_at(compile(sum(mu / data(y)) + sum(v / (data(y) + data(z))), mu, v), x, "fold div2");
  check_gradient_at(compile(sum(v * sum(data(y)) / lit<3>) + mu / sum(data(z)), mu, v), x, "fold3");
  check_gradient_at(compile(sum(v * log_sum_exp(data(y))) + mu * exp(data(2.0)), mu, v), x, "fold4");
  check_gradient_at(compile(sum((v - mu) / data(z) * (v - mu) / data(z)), mu, v), x, "fold5");
  check_gradient_at(compile(sum(data(y) / v) + mu, mu, v), x, "fold6");
}
TEST_CASE("sharing stress: matvec") {
  std::vector<double> X{1,2,3, 4,5,6, -1,0.5,2, 0.3,0.2,0.1};   // 4x3
  std::vector<double> Z{2,1,0, 1,1,1, 0,0,1, 1,-1,2};
  std::vector<double> y{1,0,1,1};
  auto Xm = matrix(X.data(), 4, 3); auto Zm = matrix(Z.data(), 4, 3);
  vector_param<"b", 3> b; vector_param<"c", 3> c; param<"a"> a;
  std::vector<double> x{.1,.2,-.3, .4,.5,.6};
  check_gradient_at(compile(sum(square(Xm * b)) + sum(data(y) * (Xm * b))), std::vector<double>{.1,.2,-.3}, "mv in two reductions");
  check_gradient_at(compile(sum(Xm * b) + sum(square(Xm * c))), x, "mv same matrix diff vec");
  check_gradient_at(compile(sum(Xm * b) + sum(square(Zm * b))), std::vector<double>{.1,.2,-.3}, "mv diff matrix same vec");
  check_gradient_at(compile(log_sum_exp(Xm * b) * sum(exp(Xm * b))), std::vector<double>{.1,.2,-.3}, "mv nonfused");
  auto eta = a + Xm * b;
  check_gradient_at(compile(sum(data(y) * eta) - sum(exp(eta)) + square(sum(eta)), a, b), std::vector<double>{.3,.1,.2,-.3}, "glm");
  check_gradient_at(compile(sum(data(y) * (Zm*b)) - sum(exp(eta)) + square(sum(Xm*c)) + log_sum_exp(Zm * b), a, b, c), std::vector<double>{.3,.1,.2,-.3,.4,.5,.6}, "mix");
  // matvec both sides
  check_gradient_at(compile(sum((Xm*b) * (Xm*b)) + sum((Xm*b) * (Zm*b)) ), std::vector<double>{.1,.2,-.3}, "mv product");
  check_gradient_at(compile(sum((Xm*b) * sum(Xm*b))), std::vector<double>{.1,.2,-.3}, "mv nested sum");
}

TEST_CASE("sharing stress: runtime size") {
  vector_param<"v"> v(5); param<"mu"> mu; vector_param<"w"> w(3);
  std::vector<double> x{.3,.1,.2,.3,.4,.5, -.1,.2,.3};
  check_gradient_at(compile(sum(square(v - mu)) + mu * 2.0 + log_sum_exp(w * mu) + sum(v*sum(w)), mu, v, w), x, "rt");
  check_gradient_at(compile(sum(square(mu - v)) * -0.5 + sum(exp(w)), mu, v, w), x, "rt2");
  check_gradient_at(compile(sum(mu * v * 2.0) + sum(w / mu), mu, v, w), x, "rt3");
  std::vector<double> big(1+37); for (size_t i=0;i<big.size();++i) big[i] = 0.01*i - 0.1;
  vector_param<"u"> u(37);
  check_gradient_at(compile(sum(square(u - mu)) + log_sum_exp(u * mu), mu, u), big, "37");
}

TEST_CASE("sharing stress: lanes") {
  std::vector<double> X{1,2,3, 4,5,6, -1,0.5,2, 0.3,0.2,0.1};
  auto Xm = matrix(X.data(), 4, 3);
  vector_param<"b", 3> b; param<"a"> a;
  std::vector<double> y{1,0,1,1};
  auto eta = a + Xm * b;
  auto p = compile(sum(data(y) * eta) - sum(exp(eta)) + square(sum(eta)) + log_sum_exp(eta*2.0) + exp(a*2.0) + exp(a * 2.0), a, b);
  auto pts = tyche_test::random_points(16, 4, -1, 1, 5);
  tyche_test::check_lanes(p, pts, "lanes");
  vector_param<"v"> v(11);
  auto q = compile(sum(square(v - a)) + log_sum_exp(v*a) + sum(v * sum(exp(v))), a, v);
  tyche_test::check_lanes(q, tyche_test::random_points(16, 12, -1, 1, 6), "lanes2");
}

TEST_CASE("sharing stress: roots") {
  param<"mu"> mu; vector_param<"v", 3> v;
  std::vector<double> g(1);
  auto p = compile(mu);
  CHECK(p.value_and_gradient(std::vector<double>{2.0}, g) == 2.0); CHECK(g[0] == 1.0);
  auto q = compile(-mu);
  CHECK(q.value_and_gradient(std::vector<double>{2.0}, g) == -2.0); CHECK(g[0] == -1.0);
  std::vector<double> g3(3);
  auto r = compile(sum(v));
  CHECK(r.value_and_gradient(std::vector<double>{1,2,3}, g3) == 6.0); CHECK(g3[2] == 1.0);
  auto s = compile(-sum(v));
  CHECK(s.value_and_gradient(std::vector<double>{1,2,3}, g3) == -6.0); CHECK(g3[2] == -1.0);
  auto t = compile(lit<0>-sum(v) - (lit<1>-sum(v)));
  CHECK(t.value_and_gradient(std::vector<double>{1,2,3}, g3) == -1.0); CHECK(g3[2] == 0.0);
  auto u = compile(sum(v) * 1.0 + sum(v));
  CHECK(u.value_and_gradient(std::vector<double>{1,2,3}, g3) == 12.0); CHECK(g3[2] == 2.0);
}
TEST_CASE("sharing stress: layout order") {
  vector_param<"v"> v(3); param<"mu"> mu; vector_param<"w", 2> w; param<"s"> s;
  auto f = sum(square(v - mu)) + sum(w * exp(s)) + log_sum_exp(v * s) + mu * s;
  auto p = compile(f, w, v, s, mu);
  auto ps = p.parameters();
  REQUIRE(ps.size() == 4);
  CHECK(ps[0].first == "w"); CHECK(ps[0].second == 2);
  CHECK(ps[1].first == "v"); CHECK(ps[1].second == 3);
  CHECK(p.offset(2) == 5); CHECK(p.offset(3) == 6);
  std::vector<double> x{.1,.2, .3,.4,.5, .6, .7};
  check_gradient_at(p, x, "order");
  // hand value
  double w0=.1,w1=.2,v0=.3,v1=.4,v2=.5,sv=.6,m=.7;
  double ref = (v0-m)*(v0-m)+(v1-m)*(v1-m)+(v2-m)*(v2-m) + (w0+w1)*std::exp(sv) + std::log(std::exp(v0*sv)+std::exp(v1*sv)+std::exp(v2*sv)) + m*sv;
  CHECK(p.value(x) == Approx(ref));
  auto p2 = compile(f, s, w, mu, v);
  std::vector<double> x2{.6, .1,.2, .7, .3,.4,.5};
  CHECK(p2.value(x2) == Approx(ref));
  check_gradient_at(p2, x2, "order2");
}

TEST_CASE("sharing stress: big mixture") {
  std::vector<double> X{1,2,3, 4,5,6, -1,0.5,2, 0.3,0.2,0.1, 1,1,1, 0,1,0, 2,0,1, .5,.5,.5, -1,-1,1};
  auto Xm = matrix(X.data(), 9, 3);
  std::vector<double> y{1,0,1,1,0,0,1,1,0}, z{0.2, 1.5, -0.3, 2, 1, 0.1, 0.4, 0.9, -2};
  vector_param<"b", 3> b; param<"a"> a; param<"ls"> ls; vector_param<"r"> r(9); param<"lam"> lam;
  auto sigma = exp(ls);
  auto eta = a + Xm * b + r * sigma;
  auto lp1 = lit<-1,2> * square(r);
  auto th = logistic(lam);
  auto comp1 = log(th) + lit<-1,2> * square((data(z) - eta) / sigma) - ls;
  auto comp2 = log1m_logistic(lam) + lit<-1,2> * square((data(z) - a * 2.0) / exp(ls * 2.0)) - ls * 2.0;
  auto f = sum(lp1) + sum(data(y) * log_logistic(eta) + (lit<1> - data(y)) * log1m_logistic(eta))
           + log_sum_exp(comp1 * 0.5 + comp2 * 0.5)
           - square(sum(eta) / 9.0) + log(sum(exp(eta * 0.3))) - log1p(square(sigma / lit<5>)) + ls
           + sum(r * sum(exp(Xm * b) * th)) * 0.01 + pow(sigma, 2.0) * 0.1 + pow(sigma, 3.0) * 0.01
           + exp(ls * 2.0) * 0.1 - exp(ls * 2.0) * 0.05;
  auto p = compile(f, a, ls, lam, b, r);
  auto pts = tyche_test::random_points(8, 15, -0.8, 0.8, 42);
  for (auto& pt : pts) check_gradient_at(p, pt, "big");
  tyche_test::check_lanes(p, pts, "big lanes");
  // hand value at pts[0]
  auto& x = pts[0];
  double A=x[0], LS=x[1], LAM=x[2]; double B[3]={x[3],x[4],x[5]}; double R[9]; for(int i=0;i<9;++i) R[i]=x[6+i];
  double sg = std::exp(LS), TH = 1/(1+std::exp(-LAM));
  double ETA[9], XB[9];
  for (int i=0;i<9;++i){ XB[i]=0; for(int c=0;c<3;++c) XB[i]+=X[i*3+c]*B[c]; ETA[i]=A+XB[i]+R[i]*sg; }
  double ref=0, s1=0, se=0, sx=0, sr=0; std::vector<double> cs(9);
  for(int i=0;i<9;++i){ ref += -0.5*R[i]*R[i];
    double ll = -std::log1p(std::exp(-ETA[i])), l1m = -std::log1p(std::exp(ETA[i]));
    s1 += y[i]*ll + (1-y[i])*l1m;
    double c1 = std::log(TH) - 0.5*std::pow((z[i]-ETA[i])/sg,2) - LS;
    double c2 = std::log(1-TH) - 0.5*std::pow((z[i]-A*2)/std::exp(LS*2),2) - LS*2;
    cs[i] = 0.5*c1+0.5*c2; se += ETA[i]; sx += std::exp(ETA[i]*0.3); sr += std::exp(XB[i])*TH; }
  double m = *std::max_element(cs.begin(), cs.end()); double acc=0; for(double c: cs) acc+=std::exp(c-m);
  double sumr=0; for(int i=0;i<9;++i) sumr += R[i];
  ref += s1 + m + std::log(acc) - std::pow(se/9,2) + std::log(sx) - std::log1p(std::pow(sg/5,2)) + LS + sumr*sr*0.01 + sg*sg*0.1 + sg*sg*sg*0.01 + std::exp(2*LS)*0.05;
  CHECK(p.value(x) == Approx(ref).epsilon(1e-12));
}
