// expect: reads_data_buffers = true needs a member for_each_data_buffer\(f\) \(an op.s: for_each_data_buffer\(m, f\)\)
// An op that says it holds pointers to data (reads_data_buffers = true) but has no member
// for_each_data_buffer(m, f) to visit them: for_each_data_buffer (compile/relocate.hpp) refuses it.
#include <tyche/tyche.hpp>

#include <cstddef>
#include <vector>

struct weighted_map {
  static constexpr const char* name = "weighted";
  static constexpr bool has_payload = true;
  static constexpr bool reads_data_buffers = true;
  const double* w = nullptr;
  template <class V>
  static constexpr std::size_t extent = tyche::extent_v<V>;
  bool operator==(const weighted_map&) const = default;
  template <class T>
  void forward(std::size_t m, T* out, const T* const* in, const std::size_t*) const {
    for (std::size_t i = 0; i < m; ++i) out[i] = w[i] * in[0][i];
  }
  template <class T>
  void reverse(std::size_t m, const T*, const T* adj, const T* const*, const std::size_t*, T* const* in_adj) const {
    for (std::size_t i = 0; i < m; ++i) in_adj[0][i] += w[i] * adj[i];
  }
};

int main() {
  using namespace tyche;
  static const std::vector<double> w{1.0, 2.0, 3.0};
  vector_param<"v", 3> v;
  const auto p = compile(sum(make_vector_op(weighted_map{w.data()}, 3, v)), v);
  auto view = p.view();
  for_each_data_buffer(view, [](const auto*&, std::size_t) {});
}
