// tyche/samplers/nuts/instruction_table.hpp — the U-turn instruction table of the unrolled NUTS
// (Lao & Dillon, "Unrolled implementation of No-U-Turn Sampler", TensorFlow Probability note):
// the recursion of a tree doubling of depth d is enumerated ahead of time, at compile time here,
// as the list of (first leaf, last leaf) pairs of the subtrees whose U-turn is checked, in the
// order the recursion checks them (post-order). From it follows the compressed schedule the
// state machine runs: after leaf k a stack of at most d + 1 subtree records receives the leaf in
// slot popcount(k − 1), then the two top records are merged ctz(k) times.
#pragma once
#include <tyche/config.hpp>

#include <array>
#include <bit>
#include <cstddef>

namespace tyche::samplers {

/// One U-turn check: the subtree spanning leaves first..last (1-based, as in the note).
struct uturn_check {
  int first = 0;
  int last = 0;
  constexpr bool operator==(const uturn_check&) const = default;
};

/// The (2^depth − 1) checks of a tree doubling of the given depth, in recursion order: the
/// note's build_tree_uturn_instruction(depth), computed at compile time.
template <int Depth>
constexpr auto uturn_instructions() {
  static_assert(Depth >= 1 && Depth <= 20, "tyche::nuts: tree depth must be in [1, 20]");
  std::array<uturn_check, (std::size_t{1} << Depth) - 1> out{};
  std::size_t n = 0;
  // Post-order over the complete binary tree of 2^Depth leaves, without recursion: the subtree
  // of size 2^j ending at leaf k is checked after leaf k exactly when 2^j divides k (j ≥ 1),
  // smaller subtrees first.
  for (int k = 1; k <= (1 << Depth); ++k)
    for (int j = 1; j <= Depth && k % (1 << j) == 0; ++j) out[n++] = {k - (1 << j) + 1, k};
  return out;
}

// The note's example, exactly.
static_assert(uturn_instructions<3>() == std::array<uturn_check, 7>{{{1, 2}, {3, 4}, {1, 4}, {5, 6},
                                                                     {7, 8}, {5, 8}, {1, 8}}});

/// The compressed memory schedule for leaf k (1-based) of a doubling: the stack slot its record
/// is written to, and how many merges (U-turn checks) follow it.
struct leaf_schedule {
  int write_slot = 0;
  int merges = 0;
};

/// The schedule for every leaf of a doubling of the given depth, derived from the instruction
/// table: the checks ending at leaf k are the merges after it, and its slot is the number of
/// complete subtrees on the stack before it. Uses depth + 1 slots at most.
template <int Depth>
constexpr auto leaf_schedules() {
  constexpr auto checks = uturn_instructions<Depth>();
  std::array<leaf_schedule, (std::size_t{1} << Depth) + 1> out{};  // index 1 .. 2^Depth
  int stack = 0;
  std::size_t c = 0;
  for (int k = 1; k <= (1 << Depth); ++k) {
    out[k].write_slot = stack++;
    while (c < checks.size() && checks[c].last == k) {
      ++out[k].merges;
      --stack;  // two records become one
      ++c;
    }
  }
  return out;
}

template <int Depth>
constexpr bool schedule_is_compressed() {
  constexpr auto s = leaf_schedules<Depth>();
  for (int k = 1; k <= (1 << Depth); ++k) {
    if (s[k].write_slot != std::popcount(static_cast<unsigned>(k - 1))) return false;
    if (s[k].merges != std::countr_zero(static_cast<unsigned>(k))) return false;
    if (s[k].write_slot > Depth) return false;  // depth + 1 slots suffice
  }
  return true;
}
// Depths 10 and 12 are checked in tests/samplers/unrolled_nuts_test.cpp: evaluated here they
// cost every translation unit that includes tyche a third of a second.
static_assert(schedule_is_compressed<1>() && schedule_is_compressed<3>());

/// The largest tree depth the sampler accepts.
inline constexpr int max_supported_depth = 30;  // leaf indices are unsigned long; slots grow with the depth

}  // namespace tyche::samplers
