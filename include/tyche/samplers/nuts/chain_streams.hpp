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

/// Ahead: the uniforms computed together per lane, the Philox batch of this build's SIMD setting
/// (1 without xsimd, and in translation units compiled by nvcc). A template argument, not only a
/// constant inside, so that translation units built with different settings — a .cu file and
/// a .cpp file with tyche::simd in one program — name different types instead of one type with
/// two layouts.
template <int W, std::size_t Ahead = philox_batch_size>
struct chain_streams {
  std::uint64_t seed = 0;
  std::uint64_t stream[W] = {};    ///< the chain whose stream each lane reads
  std::uint64_t position[W] = {};  ///< the position of each lane's next draw

  /// The generator of lane l at its current position.
  TYCHE_HD counter_rng lane(int l) const { return counter_rng(seed, stream[l], position[l]); }
  TYCHE_HD void set_lane(int l, const counter_rng& g) {
    stream[l] = g.stream();
    position[l] = g.position();
    cached_[l] = 0;
  }

  /// out[l] = the next uniform on (0, 1) of lane l's stream, for the lanes with take[l]. The
  /// uniforms of the next `ahead` positions of a lane are computed together (one SIMD batch of
  /// Philox blocks) and kept until used; a draw is a pure function of its position, so this
  /// changes no value (a momentum's normals consume positions in between: those uniforms are
  /// simply not used).
  template <class R>
  TYCHE_HD void uniforms(R* out, const bool* take) {
    philox_site sites[W * ahead];
    int refill[W];
    int n = 0;
    for (int l = 0; l < W; ++l) {
      if (!take[l]) continue;
      const std::uint64_t k = position[l] - cache_from_[l];
      if (k < cached_[l]) continue;
      cache_from_[l] = position[l];
      cached_[l] = ahead;
      for (std::size_t j = 0; j < ahead; ++j) sites[n * ahead + j] = {stream[l], position[l] + j};
      refill[n++] = l;
    }
    if (n > 0) {
      double values[W * ahead];
      philox_uniforms_at(seed, sites, values, static_cast<std::size_t>(n) * ahead);
      for (int j = 0; j < n; ++j)
        for (std::size_t i = 0; i < ahead; ++i) cache_[refill[j]][i] = values[j * ahead + i];
    }
    for (int l = 0; l < W; ++l)
      if (take[l]) out[l] = static_cast<R>(cache_[l][position[l]++ - cache_from_[l]]);
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
  static constexpr std::size_t ahead = Ahead;  // uniforms computed ahead per lane
  static constexpr std::size_t chunk = 32;                 // sites per call of philox_normals_at
  double cache_[W][ahead] = {};
  std::uint64_t cache_from_[W] = {};  // the position of cache_[l][0]
  std::uint64_t cached_[W] = {};      // how many are valid
  template <class R>
  TYCHE_HD void flush_normals(R* out, const philox_site* sites, const std::size_t* at, std::size_t& filled) const {
    double values[chunk];
    philox_normals_at(seed, sites, values, filled);
    for (std::size_t j = 0; j < filled; ++j) out[at[j]] = static_cast<R>(values[j]);
    filled = 0;
  }
};

}  // namespace tyche::samplers
