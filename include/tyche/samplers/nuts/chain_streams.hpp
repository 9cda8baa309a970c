// tyche/samplers/nuts/chain_streams.hpp — the random numbers of W chains run as the lanes of one
// NUTS kernel: lane l reads its chain's own Philox stream (seed, stream[l]) at its own position,
// so a chain's draws depend on the seed and the chain alone, never on the lanes beside it (each
// draw consumes one position of the lane's stream, random/philox.hpp). Draws are taken for the
// lanes a mask selects; the other lanes' positions do not move.
//
// This is the kernel's default generator; another one fits the kernel when it has the same two
// members (uniforms and normals; the contract is samplers/nuts/kernel.hpp's lane_generator).
#pragma once
#include <tyche/backends/simd/random.hpp>
#include <tyche/config.hpp>
#include <tyche/random/philox.hpp>

#include <cstddef>
#include <cstdint>

namespace tyche::samplers {

template <int W>
struct chain_streams {
  std::uint64_t seed = 0;
  std::uint64_t stream[W] = {};    ///< the chain whose stream each lane reads
  std::uint64_t position[W] = {};  ///< the position of each lane's next draw

  /// The generator of lane l at its current position.
  TYCHE_HD counter_rng lane(int l) const { return counter_rng(seed, stream[l], position[l]); }
  TYCHE_HD void set_lane(int l, const counter_rng& g) {
    stream[l] = g.stream();
    position[l] = g.position();
  }

  /// out[l] = the next uniform on (0, 1) of lane l's stream, for the lanes with take[l].
  template <class R>
  TYCHE_HD void uniforms(R* out, const bool* take) {
    if constexpr (W == 1) {
      if (take[0]) out[0] = static_cast<R>(counter_rng(seed, stream[0], position[0]++).uniform01());
    } else {
      philox_site sites[W];
      int lane_of[W];
      int n = 0;
      for (int l = 0; l < W; ++l)
        if (take[l]) {
          sites[n] = {stream[l], position[l]++};
          lane_of[n++] = l;
        }
      double u[W];
      philox_uniforms_at(seed, sites, u, static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) out[lane_of[j]] = static_cast<R>(u[j]);
    }
  }

  /// out[i * W + l], i < n: the next n standard normals of lane l's stream, for the lanes with
  /// take[l] (a momentum: n positions, in order).
  template <class R>
  TYCHE_HD void normals(R* out, std::size_t n, const bool* take) {
    philox_site sites[chunk];
    std::size_t at[chunk];
    std::size_t filled = 0;
    for (int l = 0; l < W; ++l) {
      if (!take[l]) continue;
      for (std::size_t i = 0; i < n; ++i) {
        sites[filled] = {stream[l], position[l] + i};
        at[filled++] = i * W + static_cast<std::size_t>(l);
        if (filled == chunk) flush_normals(out, sites, at, filled);
      }
      position[l] += n;
    }
    if (filled > 0) flush_normals(out, sites, at, filled);
  }

 private:
  static constexpr std::size_t chunk = 32;  // sites per call of philox_normals_at
  template <class R>
  TYCHE_HD void flush_normals(R* out, const philox_site* sites, const std::size_t* at, std::size_t& filled) const {
    double values[chunk];
    philox_normals_at(seed, sites, values, filled);
    for (std::size_t j = 0; j < filled; ++j) out[at[j]] = static_cast<R>(values[j]);
    filled = 0;
  }
};

}  // namespace tyche::samplers
