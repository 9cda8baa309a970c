// expect: gaussian_dlm_obs\(F, G, V, W, m0, C0\): y must be a data matrix of r rows
// gaussian_dlm_obs observing one number: y must be the r x T observations (a data matrix, or the
// r*T values of one); the message says so instead of a failure inside the Kalman filter op.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  auto q = half_normal<"q">(1.0);
  const auto m = model(joint(q, gaussian_dlm_obs(1.0, 1.0, square(q), 1.0, 0.0, 1.0).observe(0.5)));
  return static_cast<int>(m.dim());
}
