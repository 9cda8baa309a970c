// tyche/compile/evaluate.hpp — the forward and reverse passes, generated from an expression's
// type. No tape, no virtual call, no allocation: the slots of one evaluation are a struct on
// the stack (plus, for matvec, a caller-supplied workspace), and each node's step is an
// inlined function chosen at compile time. See docs/design/expression-core.md.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/backends/simd/batch.hpp>
#include <tyche/compile/graph.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/scalar/math.hpp>
#include <tyche/scalar/traits.hpp>

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace tyche::detail {

// ---- slots ---------------------------------------------------------------------------------------

/// A slot's adjoint: zero at construction where the evaluation computes a gradient (the reverse
/// pass adds to it); left unset in a value-only one, which never reads it — there the zeroing was
/// a store per slot per evaluation that the compiler could not drop once the slots escaped to a
/// vector op (a scan's step, evaluated once per time step; docs/design/scan.md, "Cost").
template <class T, bool Zero>
struct slot_adjoint {
  T adj = lift<T>(0.0);
};
template <class T>
struct slot_adjoint<T, false> {
  T adj;
};

template <class N, class T, bool Zero = true, node_kind K = kind_of<N>>
struct slot : slot_adjoint<T, Zero> {  // unary: value, dy/dx, adjoint
  T v;
  T d;
};
template <class N, class T, bool Zero>
struct slot<N, T, Zero, node_kind::binary> : slot_adjoint<T, Zero> {
  T v;
  T d0;
  T d1;
};
/// Reductions and elements of buffered vectors: a value and its adjoint.
template <class N, class T, bool Zero, node_kind K>
  requires(K == node_kind::sum || K == node_kind::log_sum_exp || K == node_kind::residual_squares ||
           K == node_kind::element)
struct slot<N, T, Zero, K> : slot_adjoint<T, Zero> {
  T v;
};
template <class N, class T, bool Zero>
struct slot<N, T, Zero, node_kind::matvec> {
  T* val = nullptr;  // rows values, then rows adjoints, in the workspace
  T* adj = nullptr;
};
template <class N, class T, bool Zero>
  requires is_streamed_v<N>
struct slot<N, T, Zero, node_kind::matvec> : slot_adjoint<T, Zero> {  // one row's value, in the loop
  T v;
};
/// A vector_op whose op asks for scratch space in the workspace (scratch_size(m, in_n)).
template <class N>
inline constexpr bool has_scratch_v =
    requires(const N& n, const std::size_t* in_n) { n.op.scratch_size(std::size_t{}, in_n); };
/// A vector_op with scratch whose op has a cheaper forward pass for an evaluation without a
/// gradient, forward_value(m, out, in, in_n, scratch): one whose forward pass otherwise does part
/// of the reverse pass's work (categorical_logit_glm's gradient sums).
template <class N, class T>
inline constexpr bool has_forward_value_v =
    requires(const N& n, T* out, const T* const* in, const std::size_t* in_n, T* scratch) {
      n.op.forward_value(std::size_t{}, out, in, in_n, scratch);
    };

template <class N, class T, bool Zero>
struct slot<N, T, Zero, node_kind::vector_op> {
  static constexpr std::size_t arity = children_t<N>::size;
  T* scratch = nullptr;
  T* val = nullptr;  // m values, then m adjoints, then each operand's values and adjoints
  T* adj = nullptr;
  T* in[arity] = {};
  T* in_adj[arity] = {};
  std::size_t in_n[arity] = {};
};

template <std::size_t I, class S>
struct slot_holder {
  S s;
};
template <class Seq, class... S>
struct slot_tuple_impl;
template <std::size_t... I, class... S>
struct slot_tuple_impl<std::index_sequence<I...>, S...> : slot_holder<I, S>... {};

/// The slots of a list of entries, as one struct.
template <class Entries, class T, bool Zero = true>
struct slots;
template <class... E, class T, bool Zero>
struct slots<meta::list<E...>, T, Zero>
    : slot_tuple_impl<std::index_sequence_for<E...>, slot<typename E::node, T, Zero>...> {
  using entries = meta::list<E...>;
  using scalar = T;
  // User-provided, so that `state{}` (an evaluation's outer slots) and `ks{}` (a loop body's
  // slots, once per element) run only the slots' member initialisers — adjoints 0, pointers
  // null — and do not zero every value and derivative first: the forward pass writes each of
  // them before the reverse pass reads it (an aliased slot's derivatives included, forward_outer).
  // The zeroing was 14 % of the instructions of eight schools' scalar gradient and 20 % of arK's
  // (whose loop body's slots were zeroed at every element; callgrind, docs/benchmarks.md).
  TYCHE_HD constexpr slots() {}
};

template <std::size_t I, class S>
TYCHE_HD TYCHE_INLINE S& get(slot_holder<I, S>& h) {
  return h.s;
}

template <class Entries, class N, class P>
inline constexpr std::size_t index_in_v = meta::find_if_equal<same_slot, entry<N, P>, Entries>::value;

struct no_kernel {
  using entries = meta::list<>;
};

/// The scalar type a loop body evaluates with: its slots' (T, or a batch of observations when
/// the loop takes several at once); outside loop bodies (no_kernel), T.
template <class K, class T>
struct kernel_scalar {
  using type = T;
};
template <class K, class T>
  requires requires { typename K::scalar; }
struct kernel_scalar<K, T> {
  using type = typename K::scalar;
};
template <class K, class T>
using kernel_scalar_t = typename kernel_scalar<K, T>::type;

/// Whether U, the scalar of a loop body, is two rows of a tile of chains in the lanes of T
/// (column_pair_tiles<T>::rows2: 4 chains × 2 rows in an AVX-512 build's 8-lane batch).
template <class T, class U>
struct is_row_pair : std::false_type {};
template <class T, class U>
  requires requires { typename column_pair_tiles<T>::rows2; }
struct is_row_pair<T, U> : std::is_same<U, typename column_pair_tiles<T>::rows2> {};
template <class T, class U>
inline constexpr bool is_row_pair_v = is_row_pair<T, U>::value;
/// That pair's type where T has one, else T.
template <class T>
struct row_pair_scalar {
  using type = T;
};
template <class T>
  requires requires { typename column_pair_tiles<T>::rows2; }
struct row_pair_scalar<T> {
  using type = typename column_pair_tiles<T>::rows2;
};

// ---- the evaluation --------------------------------------------------------------------------

/// Where the parameters live: the index of each parameter of Layout in the θ vector.
template <class Layout>
struct param_offsets {
  std::size_t offset[Layout::size > 0 ? Layout::size : 1] = {};
  std::size_t size[Layout::size > 0 ? Layout::size : 1] = {};
  std::size_t dim = 0;
};

template <class P>
inline constexpr std::size_t param_extent_v =
    kind_of<P> == node_kind::param ? 1 : extent_v<P>;

/// The length of θ when every parameter's size is known at compile time, else dynamic_extent.
template <class Layout>
inline constexpr std::size_t static_dim_v = []<class... Ps>(meta::list<Ps...>) {
  if constexpr (((param_extent_v<Ps> == dynamic_extent) || ...)) return dynamic_extent;
  else return (std::size_t{0} + ... + param_extent_v<Ps>);
}(Layout{});

/// Offset of parameter K in θ when it and every parameter before it have static sizes.
template <class Layout, std::size_t K>
inline constexpr std::size_t static_offset_v = [] {
  std::size_t offset = 0;
  bool known = true;
  meta::static_for<K>([&](auto k) {
    constexpr std::size_t e = param_extent_v<meta::at<decltype(k)::value, Layout>>;
    if (e == dynamic_extent) known = false;
    else offset += e;
  });
  return known ? offset : dynamic_extent;
}();

/// P's place in Layout (by name). A P that is not there is a random variable missing from a
/// model's joint(...): one error that spells its name (the check joint(...) makes itself, the
/// same instantiation), and 0, so that nothing else fails after it.
template <class Layout, class P>
inline constexpr std::size_t layout_index_v = [] {
  constexpr std::size_t i = []<class... Ps>(meta::list<Ps...>) {
    constexpr bool hit[] = {(Ps::name == P::name)..., true};  // the sentinel stops the search
    std::size_t j = 0;
    while (!hit[j]) ++j;
    return j;
  }(Layout{});
  if constexpr (i == Layout::size) {
    (void)variable_missing_from_joint<typename spelled_name<P::name>::type>();
    return std::size_t{0};
  } else {
    return i;
  }
}();

/// Whether an evaluation of N loops over elements itself: a vector node other than a vector op
/// (whose op loops over its buffers, with its own payload) — an elementwise expression, a
/// parameter or data vector, a matrix–vector product — anywhere in N.
template <class N>
constexpr bool has_loop_node() {
  if constexpr (is_vector_v<N> && kind_of<N> != node_kind::vector_op) return true;
  else return []<class... Cs>(meta::list<Cs...>) { return (has_loop_node<Cs>() || ...); }(children_t<N>{});
}

/// Whether N stacks scalar expressions into a vector (ops::stack_map with no vector operand).
template <class N>
constexpr bool scalar_stack() {
  if constexpr (kind_of<N> != node_kind::vector_op) return false;
  else if constexpr (!std::is_same_v<typename N::op_type, ops::stack_map>) return false;
  else return []<class... Cs>(meta::list<Cs...>) { return (!is_vector_v<Cs> && ...); }(children_t<N>{});
}
template <class N>
inline constexpr bool scalar_stack_v = scalar_stack<N>();

/// One evaluation of Root at one point θ, with scalar type T. Grad selects value-only or
/// value-and-gradient. Constructed, run once, discarded.
template <class Root, class Layout, class T, bool Grad>
struct evaluation {
  using outer_entries = outer_entries_t<Root>;
  using outer_state = slots<outer_entries, T, Grad>;

  // Copies, not references: grad may point anywhere, but not into this local object, so the
  // compiler can keep payloads (constants, data pointers, offsets) in registers. Except for an
  // expression without loops (an ODE's right-hand side, a scan's step and its next state: a few
  // dozen operations, evaluated millions of times): its payloads are read once each, and the
  // copy — wide stores to the stack read back 8 bytes at a time, a store-forwarding stall, or a
  // call to memcpy — cost more than the evaluation (an ODE's gradient 19.5 → 13.5 µs with
  // AVX-512, docs/benchmarks.md). A vector op's operands and result are buffers its op loops
  // over, not loops of this evaluation.
  static constexpr bool copies_payload = has_loop_node<Root>();
  std::conditional_t<copies_payload, Root, const Root&> root;
  std::conditional_t<copies_payload, param_offsets<Layout>, const param_offsets<Layout>&> layout;
  const std::size_t* ws_offsets;
  const bool* aliased;  // per outer slot: equal to its alias candidate (graph.hpp)
  const T* TYCHE_RESTRICT theta;
  T* TYCHE_RESTRICT grad;
  T* TYCHE_RESTRICT workspace;
  outer_state state{};
  // Adjoints of scalar parameters, kept here (in registers, once inlined) and added to grad at
  // the end: grad may alias anything, these cannot.
  // Zeroed by run() where it computes a gradient; never read in a value-only evaluation.
  T param_adj[Layout::size > 0 ? Layout::size : 1];
  // With observation batches, the adjoints a loop body adds to scalars (scalar parameters, then
  // outer slots) are kept as batches and summed across lanes once, after the loop
  // (flush_lanes), not at every batch.
  using W = observation_batch_t<T>;
  static constexpr bool batched = !std::is_same_v<W, T>;
  static constexpr std::size_t lane_adj_size = batched ? Layout::size + outer_entries::size : 0;
  struct no_lane_adj {};
  // Not zeroed here: each loop zeroes the entries its body adds to (begin_lanes) and flushes them
  // after (flush_lanes); zeroing all of them per evaluation (15 batches, 480 bytes for eight
  // schools with AVX2) cost more than the small models' loops.
  [[no_unique_address]] std::conditional_t<batched, std::array<W, lane_adj_size>, no_lane_adj> lane_adj;
  // One part of a split evaluation (set_part): the sums reached from the root by sums only (the
  // fused ones) run over their share of the elements; part 0 also evaluates everything else, the
  // other parts return only their share of the fused sums (in partial_sum), so that the values and
  // gradients of the parts add up to the whole. parts = 1: the whole evaluation.
  std::size_t part = 0, parts = 1;
  T partial_sum{};

  // A constructor, not aggregate initialisation: with braces, g++ zeroed the whole object
  // (1.7 KB for a 30-slot program, the expression copy included) before storing the members, a
  // memset per evaluation that was a large part of the time of a scan over a small step.
  TYCHE_HD TYCHE_INLINE evaluation(const Root& r, const param_offsets<Layout>& l, const std::size_t* wo,
                                   const bool* al, const T* th, T* g, T* ws)
      : root(r), layout(l), ws_offsets(wo), aliased(al), theta(th), grad(g), workspace(ws) {}

  /// Makes this evaluation part `p` of `n` (n ≥ 1, p < n); gradient evaluations only.
  TYCHE_HD TYCHE_INLINE void set_part(std::size_t p, std::size_t n) {
    static_assert(Grad, "tyche: a split evaluation computes the gradient (fused sums need it)");
    part = p;
    parts = n;
  }
  // Elements [lo, hi) of a fused sum of len elements: part's share (boundaries len·p / n).
  TYCHE_HD TYCHE_INLINE std::size_t share_begin(std::size_t len) const { return len * part / parts; }
  TYCHE_HD TYCHE_INLINE std::size_t share_end(std::size_t len) const { return len * (part + 1) / parts; }

  template <class C>
  TYCHE_HD TYCHE_INLINE std::size_t offset_of() const {
    constexpr std::size_t k = layout_index_v<Layout, C>;  // a missing C: its error, and 0
    if constexpr (static_offset_v<Layout, k> != dynamic_extent) return static_offset_v<Layout, k>;
    else return layout.offset[k];
  }

  // The coefficients w of a residual_squares node: a vector parameter's values in θ, or a
  // buffered vector's (ops::stack_map of scalar coefficients and a vector parameter).
  template <class V, class VP>
  TYCHE_HD TYCHE_INLINE const T* residual_coefficients(const V&) {
    if constexpr (kind_of<V> == node_kind::vector_param) return theta + offset_of<V>();
    else return get<index_in_v<outer_entries, V, VP>>(state).val;
  }

  // Elements p[0], p[1], … as a U (U = T: p[0]); adding a to them; the sum of a's lanes.
  template <class U>
  TYCHE_HD TYCHE_INLINE static U load_at(const T* p) {
    if constexpr (std::is_same_v<U, T>) return *p;
    else return lane_ops<U>::load(p);
  }
  template <class U>
  TYCHE_HD TYCHE_INLINE static void add_at(T* p, const U& a) {
    if constexpr (std::is_same_v<U, T>) *p += a;
    else lane_ops<U>::store(p, lane_ops<U>::load(p) + a);
  }
  template <class U>
  TYCHE_HD TYCHE_INLINE static T lane_sum(const U& a) {
    if constexpr (std::is_same_v<U, T>) return a;
    else return lane_ops<U>::sum(a);
  }

  // The number of coefficients of a residual_squares node: a constant when V's size is one,
  // so the O(k²) loops unroll.
  template <class V, class N>
  TYCHE_HD TYCHE_INLINE static std::size_t residual_width(const N& n) {
    if constexpr (extent_v<V> != dynamic_extent) return extent_v<V>;
    else return n.k;
  }

  // The value of child C (at path CP) at element i, wherever it lives. In a loop body that
  // takes several observations at once (U a batch), elements i, i+1, …: vectors are loaded,
  // scalars broadcast.
  template <class C, class CP, class K, class U = kernel_scalar_t<K, T>>
  TYCHE_HD TYCHE_INLINE U value_of(const C& c, K& ks, std::size_t i) {
    constexpr node_kind k = kind_of<C>;
    if constexpr (is_row_pair_v<T, U>) {
      return row_pair_value_of<C, CP>(c, ks, i);
    } else if constexpr (k == node_kind::literal) {
      return lift<U>(C::value);
    } else if constexpr (k == node_kind::constant) {
      return lift<U>(c.value);
    } else if constexpr (k == node_kind::param) {
      return U(theta[offset_of<C>()]);
    } else if constexpr (k == node_kind::vector_param) {
      return load_at<U>(theta + offset_of<C>() + i);
    } else if constexpr (k == node_kind::param_element) {
      return U(theta[offset_of<typename C::vector_type>() + c.index]);
    } else if constexpr (k == node_kind::data_vector) {
      if constexpr (std::is_same_v<U, T>) return lift<T>(c.ptr[i]);
      else return lane_ops<U>::load(c.ptr + i);
    } else if constexpr (k == node_kind::param_gather) {
      const T* v = theta + offset_of<typename C::vector_type>();
      if constexpr (std::is_same_v<U, T>) {
        return v[c.position(i)];
      } else {
        alignas(64) T g[lane_ops<U>::size];
        for (std::size_t j = 0; j < lane_ops<U>::size; ++j) g[j] = v[c.position(i + j)];
        return lane_ops<U>::load(g);
      }
    } else if constexpr (is_elementwise_v<C>) {
      return get<index_in_v<typename K::entries, C, CP>>(ks).v;
    } else if constexpr (is_buffered_v<C>) {
      return load_at<U>(get<index_in_v<outer_entries, C, CP>>(state).val + i);
    } else {
      return U(get<index_in_v<outer_entries, C, CP>>(state).v);
    }
  }

  // Adds a to the adjoint of child C (at path CP) at element i (elements i, i+1, … for a batch:
  // a scalar's adjoint takes the sum of the lanes).
  template <class C, class CP, class K, class U = kernel_scalar_t<K, T>>
  TYCHE_HD TYCHE_INLINE void push_adjoint(K& ks, std::size_t i, const U& a) {
    constexpr node_kind k = kind_of<C>;
    if constexpr (is_row_pair_v<T, U>) {
      row_pair_push_adjoint<C, CP>(ks, i, a);
    } else if constexpr (k == node_kind::param) {
      if constexpr (std::is_same_v<U, T>) param_adj[layout_index_v<Layout, C>] += a;
      else lane_adj[layout_index_v<Layout, C>] += a;
    } else if constexpr (k == node_kind::vector_param) {
      add_at(grad + offset_of<C>() + i, a);
    } else if constexpr (k == node_kind::param_element) {
      grad[offset_of<typename C::vector_type>() + at_path(root, CP{}).index] += lane_sum(a);
    } else if constexpr (k == node_kind::param_gather) {
      T* g = grad + offset_of<typename C::vector_type>();
      const C& c = at_path(root, CP{});
      if constexpr (std::is_same_v<U, T>) {
        g[c.position(i)] += a;
      } else {  // one lane at a time: two lanes may name the same element
        alignas(64) T as[lane_ops<U>::size];
        lane_ops<U>::store(as, a);
        for (std::size_t j = 0; j < lane_ops<U>::size; ++j) g[c.position(i + j)] += as[j];
      }
    } else if constexpr (is_elementwise_v<C>) {
      get<index_in_v<typename K::entries, C, CP>>(ks).adj += a;
    } else if constexpr (is_buffered_v<C>) {
      add_at(get<index_in_v<outer_entries, C, CP>>(state).adj + i, a);
    } else if constexpr (has_outer_slot_v<C>) {
      constexpr std::size_t idx = index_in_v<outer_entries, C, CP>;
      if constexpr (std::is_same_v<U, T>) get<idx>(state).adj += a;
      else lane_adj[Layout::size + idx] += a;
    }
    // constants and data: no adjoint
  }

  // Two rows of a tile at once (U = column_pair_tiles<T>::rows2, see the tile loop below): the
  // value of child C at rows i and i + 1 (lanes 0-3 and 4-7), and its adjoint added to a value of
  // T (a parameter's gradient, an outer slot) row i first, as one row at a time adds it. A product
  // adj·d bound for such a target is formed per half and added in a statement of its own
  // (push_product), as one row at a time forms and adds it (GCC's -ffp-contract=fast fuses a
  // product into the addition it feeds; clang's default fuses only within one expression). The
  // same sums in the same order, unless the body reads a target twice: one row at a time adds
  // both of row i's contributions before row i + 1's, the pair adds the first read's for rows i
  // and i + 1, then the second's. (The last bits can still differ where the compiler fuses
  // 8-lane and 4-lane operations differently: backends/simd/batch.hpp.)
  template <class C, class CP, class K, class U = kernel_scalar_t<K, T>>
  TYCHE_INLINE U row_pair_value_of(const C& c, K& ks, std::size_t i) {
    using R = column_pair_tiles<T>;
    constexpr node_kind k = kind_of<C>;
    if constexpr (k == node_kind::literal) {
      return lift<U>(C::value);
    } else if constexpr (k == node_kind::constant) {
      return lift<U>(c.value);
    } else if constexpr (k == node_kind::param) {
      return R::both(theta[offset_of<C>()]);
    } else if constexpr (k == node_kind::vector_param) {
      const T* p = theta + offset_of<C>() + i;
      return R::rows(p[0], p[1]);
    } else if constexpr (k == node_kind::param_element) {
      return R::both(theta[offset_of<typename C::vector_type>() + c.index]);
    } else if constexpr (k == node_kind::data_vector) {
      return R::rows(lift<T>(c.ptr[i]), lift<T>(c.ptr[i + 1]));
    } else if constexpr (k == node_kind::param_gather) {
      const T* v = theta + offset_of<typename C::vector_type>();
      return R::rows(v[c.position(i)], v[c.position(i + 1)]);
    } else if constexpr (is_elementwise_v<C>) {
      return get<index_in_v<typename K::entries, C, CP>>(ks).v;
    } else if constexpr (is_buffered_v<C>) {
      const T* p = get<index_in_v<outer_entries, C, CP>>(state).val + i;
      return R::rows(p[0], p[1]);
    } else {
      return R::both(get<index_in_v<outer_entries, C, CP>>(state).v);
    }
  }
  template <class C, class CP, class K, class U = kernel_scalar_t<K, T>>
  TYCHE_INLINE void row_pair_push_adjoint(K& ks, std::size_t i, const U& a) {
    if constexpr (is_elementwise_v<C>) {
      get<index_in_v<typename K::entries, C, CP>>(ks).adj += a;
    } else {
      row_pair_add<C, CP>(i, column_pair_tiles<T>::first(a));
      row_pair_add<C, CP>(i + 1, column_pair_tiles<T>::second(a));
    }
  }

  // Adds p (a value of T, row r's contribution) to the T that holds child C's adjoint at row r.
  template <class C, class CP>
  TYCHE_INLINE void row_pair_add(std::size_t r, const T& p) {
    constexpr node_kind k = kind_of<C>;
    if constexpr (k == node_kind::param) {
      param_adj[layout_index_v<Layout, C>] += p;
    } else if constexpr (k == node_kind::vector_param) {
      grad[offset_of<C>() + r] += p;
    } else if constexpr (k == node_kind::param_element) {
      grad[offset_of<typename C::vector_type>() + at_path(root, CP{}).index] += p;
    } else if constexpr (k == node_kind::param_gather) {
      grad[offset_of<typename C::vector_type>() + at_path(root, CP{}).position(r)] += p;
    } else if constexpr (is_buffered_v<C>) {
      get<index_in_v<outer_entries, C, CP>>(state).adj[r] += p;
    } else if constexpr (has_outer_slot_v<C>) {
      get<index_in_v<outer_entries, C, CP>>(state).adj += p;
    }
    // constants and data: no adjoint
  }
  // adj·d to child C: an elementwise child's slot takes the pair's product in its own lanes; any
  // other target takes row i's half-product, then row i + 1's, each a statement of its own.
  template <class C, class CP, class K, class U>
  TYCHE_HD TYCHE_INLINE void push_product(K& ks, std::size_t i, const U& adj, const U& d) {
    if constexpr (is_row_pair_v<T, U> && !is_elementwise_v<C>) {
      using R = column_pair_tiles<T>;
      const T p0 = R::first(adj) * R::first(d);
      row_pair_add<C, CP>(i, p0);
      const T p1 = R::second(adj) * R::second(d);
      row_pair_add<C, CP>(i + 1, p1);
    } else {
      push_adjoint<C, CP>(ks, i, adj * d);
    }
  }

  // One row of X (cols values, double or float) times v, for the buffered matvec and the
  // streamed one alike (the same numbers either way). Four accumulators: the loop vectorises
  // without reassociating a single sum.
  template <class E>
  TYCHE_HD TYCHE_INLINE static T row_dot(const E* row, const T* v, std::size_t cols) {
    T a0 = lift<T>(0.0), a1 = lift<T>(0.0), a2 = lift<T>(0.0), a3 = lift<T>(0.0);
    std::size_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      a0 += lift<T>(row[c]) * v[c];
      a1 += lift<T>(row[c + 1]) * v[c + 1];
      a2 += lift<T>(row[c + 2]) * v[c + 2];
      a3 += lift<T>(row[c + 3]) * v[c + 3];
    }
    for (; c < cols; ++c) a0 += lift<T>(row[c]) * v[c];
    return (a0 + a1) + (a2 + a3);
  }
  // g += a times one row of X (cols values): the adjoint of a matvec's element, to v's gradient.
  // a by value: a copy the loop can keep in a register while it stores to g.
  template <class E>
  TYCHE_HD TYCHE_INLINE static void add_row_times(T* g, const E* row, std::size_t cols, const T a) {
    for (std::size_t c = 0; c < cols; ++c) g[c] += lift<T>(row[c]) * a;
  }

  // Asks for the rows TYCHE_PREFETCH_BATCHES blocks of w rows after row i (x: row i of a matrix
  // of `rows` rows), one cache line at a time, into L2 (locality 1): a matrix read from memory
  // (Edward2's 251 MB) streams near the bandwidth only with these hints (covertype, one chain:
  // 36 ms per gradient without them, 26 ms with hints into L1, 17 ms into L2, 2026-11-27, Zen 4:
  // a burst of 54 L1 prefetches stalls on the L1's miss buffers). A matrix that stays in the
  // last-level cache gets none: it lost 10-15 % to their instructions (TYCHE_PREFETCH_MIN_BYTES,
  // config.hpp). Host code (observation batches and tiles of rows exist only there).
  template <class E>
  TYCHE_INLINE static void prefetch_rows([[maybe_unused]] const E* x, [[maybe_unused]] std::size_t i,
                                         [[maybe_unused]] std::size_t w, [[maybe_unused]] std::size_t rows,
                                         [[maybe_unused]] std::size_t cols) {
#if defined(__GNUC__) && TYCHE_PREFETCH_BATCHES > 0
    if (rows * cols * sizeof(E) >= TYCHE_PREFETCH_MIN_BYTES &&
        i + (TYCHE_PREFETCH_BATCHES + 1) * w <= rows) {
      const E* ahead = x + TYCHE_PREFETCH_BATCHES * w * cols;
      for (std::size_t o = 0; o < w * cols; o += 64 / sizeof(E)) __builtin_prefetch(ahead + o, 0, 1);
    }
#endif
  }

  // Row i of X times v (rows i, i+1, … for a batch U), for a streamed matvec.
  template <class U, class N>
  TYCHE_HD TYCHE_INLINE U row_product(const N& n, std::size_t i) {
    const std::size_t cols = n.x.cols;
    const T* v = theta + offset_of<meta::at<1, children_t<N>>>();
    if constexpr (std::is_same_v<U, T>) {
      return row_dot(n.x.ptr + i * cols, v, cols);
    } else {  // T = double, U a batch of rows: the rows' products with U-wide chunks of v,
              // the rows interleaved (independent chains), each chunk of v loaded once
      using L = lane_ops<U>;
      constexpr std::size_t w = L::size;
      const auto* x = n.x.ptr + i * cols;
      prefetch_rows(x, i, w, n.x.rows, cols);
      U acc[w];
      for (auto& a : acc) a = lift<U>(0.0);
      std::size_t c = 0;
      for (; c + w <= cols; c += w) {
        const U vc = L::load(v + c);
        for (std::size_t j = 0; j < w; ++j) acc[j] += L::load(x + j * cols + c) * vc;
      }
      alignas(64) T out[w];
      for (std::size_t j = 0; j < w; ++j) {
        T d = L::sum(acc[j]);
        for (std::size_t r = c; r < cols; ++r) d += x[j * cols + r] * v[r];
        out[j] = d;
      }
      return L::load(out);
    }
  }

  // Adds a times row i of X (rows i, i+1, … times the lanes of a) to the gradient of v.
  template <class N, class U>
  TYCHE_HD TYCHE_INLINE void row_adjoint(const N& n, std::size_t i, const U& a) {
    const std::size_t cols = n.x.cols;
    T* g = grad + offset_of<meta::at<1, children_t<N>>>();
    if constexpr (std::is_same_v<U, T>) {
      add_row_times(g, n.x.ptr + i * cols, cols, a);
    } else {
      using L = lane_ops<U>;
      constexpr std::size_t w = L::size;
      const auto* x = n.x.ptr + i * cols;
      alignas(64) T as[w];
      L::store(as, a);
      U aj[w];
      for (std::size_t j = 0; j < w; ++j) aj[j] = U(as[j]);
      std::size_t c = 0;
      for (; c + w <= cols; c += w) {  // each chunk of the gradient loaded and stored once
        U gc = L::load(g + c);
        for (std::size_t j = 0; j < w; ++j) gc += L::load(x + j * cols + c) * aj[j];
        L::store(g + c, gc);
      }
      for (; c < cols; ++c) {
        for (std::size_t j = 0; j < w; ++j) g[c] += x[j * cols + c] * as[j];
      }
    }
  }

  // Forward step of a unary or binary node into slot s; G: also the partial derivatives.
  template <bool G, class N, class P, class S, class K>
  TYCHE_HD TYCHE_INLINE void forward_elementary(const N& n, S& s, K& ks, std::size_t i) {
    using U = kernel_scalar_t<K, T>;
    if constexpr (kind_of<N> == node_kind::matvec) {
      if constexpr (is_tiled_v<K> && is_row_pair_v<T, U>)
        s.v = column_pair_tiles<T>::rows(ks.tile_v[i - ks.base], ks.tile_v[i - ks.base + 1]);
      else if constexpr (is_tiled_v<K>) s.v = ks.tile_v[i - ks.base];
      else s.v = row_product<U>(n, i);
    } else if constexpr (kind_of<N> == node_kind::unary) {
      const U x = value_of<meta::at<0, children_t<N>>, meta::push<P, 0>>(n.a, ks, i);
      if constexpr (G) s.v = n.rule.value(x, s.d);
      else s.v = n.rule.value(x);
    } else {
      const U a = value_of<meta::at<0, children_t<N>>, meta::push<P, 0>>(n.a, ks, i);
      const U b = value_of<meta::at<1, children_t<N>>, meta::push<P, 1>>(n.b, ks, i);
      if constexpr (G) s.v = n.rule.value(a, b, s.d0, s.d1);
      else s.v = n.rule.value(a, b);
    }
  }

  // Reverse step of a unary or binary node from slot s.
  template <class N, class P, class S, class K>
  TYCHE_HD TYCHE_INLINE void reverse_elementary(const S& s, K& ks, std::size_t i) {
    if constexpr (kind_of<N> == node_kind::matvec) {
      if constexpr (is_tiled_v<K> && is_row_pair_v<T, kernel_scalar_t<K, T>>) {
        ks.tile_a[i - ks.base] = column_pair_tiles<T>::first(s.adj);
        ks.tile_a[i - ks.base + 1] = column_pair_tiles<T>::second(s.adj);
      } else if constexpr (is_tiled_v<K>) {
        ks.tile_a[i - ks.base] = s.adj;
      }
      else row_adjoint(at_path(root, P{}), i, s.adj);
    } else if constexpr (kind_of<N> == node_kind::unary) {
      push_product<meta::at<0, children_t<N>>, meta::push<P, 0>>(ks, i, s.adj, s.d);
    } else {
      push_product<meta::at<0, children_t<N>>, meta::push<P, 0>>(ks, i, s.adj, s.d0);
      push_product<meta::at<1, children_t<N>>, meta::push<P, 1>>(ks, i, s.adj, s.d1);
    }
  }

  // ---- the loop body of a reduction: element i of operand A at path AP ----

  template <class A, class AP, class U = T>
  using kernel_state = slots<kernel_entries_t<A, AP>, U, Grad>;

  // ---- rows in tiles: chains in SIMD lanes sharing each row of a streamed matvec ----
  //
  // With T a batch of chains (one chain per lane), a streamed matvec's row i is the dot product
  // of one row of X (broadcast) with the chains' v; one row at a time, each product is a chain
  // of dependent FMAs, and the adjoint loads and stores the whole gradient of v per row. A loop
  // whose body holds exactly one streamed matvec therefore takes its rows in tiles of
  // `tile_rows`: the tile's row products first (4 rows interleaved, each chunk of v loaded once
  // per 4 rows: independent FMA chains), then each element's body (the matvec's slot reads its
  // value from the tile, its reverse step leaves the adjoint there), then the adjoints of the
  // tile added to v's gradient (each chunk of the gradient loaded and stored once per tile).
  // Every row's value, and every gradient element's sum over the matvec's rows, is computed in
  // the same order as one row at a time, so the results are the same bit for bit unless the
  // body also adds to v's gradient elsewhere (v read elementwise, by element or by gather: those
  // adjoints now come before the tile's).
  static constexpr std::size_t tile_rows = 8;
  template <class Entries>
  static constexpr std::size_t streamed_matvec_index() {
    std::size_t count = 0, at = 0;
    meta::static_for<Entries::size>([&](auto e) {
      using N = typename meta::at<decltype(e)::value, Entries>::node;
      if constexpr (kind_of<N> == node_kind::matvec && is_streamed_v<N>) {
        ++count;
        at = decltype(e)::value;
      }
    });
    return count == 1 ? at : Entries::size;
  }
  template <class A, class AP>
  static constexpr bool tiles_rows_v =
#if defined(__CUDA_ARCH__)
      false;
#else
      scalar_traits<T>::lanes > 1 && !batched &&
      streamed_matvec_index<kernel_entries_t<A, AP>>() < kernel_entries_t<A, AP>::size;
#endif
  /// A loop body's state while its rows are taken in tiles: the streamed matvec's values and
  /// adjoints for rows base, …, base + tile_rows − 1.
  template <class A, class AP, class U = T>
  struct tiled_state : kernel_state<A, AP, U> {
    static constexpr bool tiled = true;
    const T* tile_v = nullptr;
    T* tile_a = nullptr;
    std::size_t base = 0;
  };
  template <class K>
  static constexpr bool is_tiled_v = requires { K::tiled; };
  // Rows in tiles two at a time (column_pair_tiles<T>::rows2), where T has such a pair.
  static constexpr bool row_pairs_v =
#if TYCHE_TILE_ROW_PAIRS
      requires { typename column_pair_tiles<T>::rows2; };
#else
      false;
#endif

  // The tile's row products: R rows at a time with row_dot's four accumulators each (the same
  // sums in the same order as row_dot), so 4R independent chains of FMAs.
  template <class E>
  TYCHE_INLINE static void tile_row_dots(const E* x, const T* v, std::size_t cols, T* out) {
    if constexpr (detail::column_pair_tiles<T>::available && std::is_same_v<E, double>) {
      // Two columns per wider vector (backends/simd/batch.hpp): the same sums in the same order.
      detail::column_pair_tiles<T>::template row_dots<tile_rows>(x, v, cols, out);
      return;
    }
    constexpr std::size_t R = 4;
    for (std::size_t r0 = 0; r0 < tile_rows; r0 += R) {
      T a[R][4];
      for (auto& ar : a)
        for (auto& ak : ar) ak = lift<T>(0.0);
      const E* xr = x + r0 * cols;
      std::size_t c = 0;
      for (; c + 4 <= cols; c += 4) {
        const T v0 = v[c], v1 = v[c + 1], v2 = v[c + 2], v3 = v[c + 3];
        for (std::size_t r = 0; r < R; ++r) {
          const E* row = xr + r * cols;
          a[r][0] += lift<T>(row[c]) * v0;
          a[r][1] += lift<T>(row[c + 1]) * v1;
          a[r][2] += lift<T>(row[c + 2]) * v2;
          a[r][3] += lift<T>(row[c + 3]) * v3;
        }
      }
      for (; c < cols; ++c)
        for (std::size_t r = 0; r < R; ++r) a[r][0] += lift<T>(xr[r * cols + c]) * v[c];
      for (std::size_t r = 0; r < R; ++r) out[r0 + r] = (a[r][0] + a[r][1]) + (a[r][2] + a[r][3]);
    }
  }
  // The tile's adjoints into v's gradient: g[c] += x[r][c]·a[r] for r in row order (the order
  // add_row_times adds them one row at a time).
  template <class E>
  TYCHE_INLINE static void tile_add_rows(T* g, const E* x, std::size_t cols, const T* a) {
    if constexpr (detail::column_pair_tiles<T>::available && std::is_same_v<E, double>) {
      detail::column_pair_tiles<T>::template add_rows<tile_rows>(g, x, cols, a);
      return;
    }
    T ar[tile_rows];
    for (std::size_t r = 0; r < tile_rows; ++r) ar[r] = a[r];
    std::size_t c = 0;
    for (; c + 4 <= cols; c += 4) {  // four columns: four independent chains of FMAs
      T g0 = g[c], g1 = g[c + 1], g2 = g[c + 2], g3 = g[c + 3];
      for (std::size_t r = 0; r < tile_rows; ++r) {
        const E* row = x + r * cols + c;
        g0 += lift<T>(row[0]) * ar[r];
        g1 += lift<T>(row[1]) * ar[r];
        g2 += lift<T>(row[2]) * ar[r];
        g3 += lift<T>(row[3]) * ar[r];
      }
      g[c] = g0;
      g[c + 1] = g1;
      g[c + 2] = g2;
      g[c + 3] = g3;
    }
    for (; c < cols; ++c) {
      T gc = g[c];
      for (std::size_t r = 0; r < tile_rows; ++r) gc += lift<T>(x[r * cols + c]) * ar[r];
      g[c] = gc;
    }
  }
  template <class N>
  TYCHE_INLINE void tile_forward(const N& n, std::size_t i, T* out) {
    const std::size_t cols = n.x.cols;
    const auto* x = n.x.ptr + i * cols;
    prefetch_rows(x, i, tile_rows, n.x.rows, cols);
    tile_row_dots(x, theta + offset_of<meta::at<1, children_t<N>>>(), cols, out);
  }
  template <class N>
  TYCHE_INLINE void tile_reverse(const N& n, std::size_t i, const T* a) {
    const std::size_t cols = n.x.cols;
    tile_add_rows(grad + offset_of<meta::at<1, children_t<N>>>(), n.x.ptr + i * cols, cols, a);
  }

  template <bool G, class A, class AP, class K>
  TYCHE_HD TYCHE_INLINE kernel_scalar_t<K, T> kernel_forward(const A& a, K& ks, std::size_t i) {
    using entries = typename K::entries;
    meta::static_for<entries::size>([&](auto j) {
      constexpr std::size_t J = decltype(j)::value;
      using E = meta::at<J, entries>;
      forward_elementary<G, typename E::node, typename E::path>(
          at_path(a, relative_path<AP, typename E::path>()), get<J>(ks), ks, i);
    });
    return value_of<A, AP>(a, ks, i);
  }

  template <class A, class AP, class K>
  TYCHE_HD TYCHE_INLINE void kernel_reverse(K& ks, std::size_t i, const kernel_scalar_t<K, T>& seed) {
    using entries = typename K::entries;
    push_adjoint<A, AP>(ks, i, seed);
    meta::static_for_reverse<entries::size>([&](auto j) {
      constexpr std::size_t J = decltype(j)::value;
      using E = meta::at<J, entries>;
      reverse_elementary<typename E::node, typename E::path>(get<J>(ks), ks, i);
    });
  }

  // Path of Full relative to its prefix Prefix (kernel entries carry absolute paths; the loop
  // body navigates from the reduction's operand).
  template <class Prefix, class Full>
  TYCHE_HD static constexpr auto relative_path() {
    return strip_prefix(Prefix{}, Full{});
  }
  template <std::size_t... Rest>
  TYCHE_HD static constexpr auto strip_prefix(path<>, path<Rest...>) {
    return path<Rest...>{};
  }
  template <std::size_t I, std::size_t... Is, std::size_t... Rest>
  TYCHE_HD static constexpr auto strip_prefix(path<I, Is...>, path<I, Rest...>) {
    return strip_prefix(path<Is...>{}, path<Rest...>{});
  }

  // Calls f(std::type_identity<U>{}, i) for the elements of a loop of length len: with
  // observation batches (scalar/traits.hpp), U = the batch for elements i, …, i + lanes − 1, for
  // every whole batch, then U = T for the elements left.
  template <class F>
  TYCHE_HD TYCHE_INLINE static void for_elements(std::size_t len, F&& f) {
    using W = observation_batch_t<T>;
    std::size_t i = 0;
    if constexpr (!std::is_same_v<W, T>) {
      constexpr std::size_t w = lane_ops<W>::size;
      // The whole batches end at len − len mod w, not where i + w > len: with that test, g++ 12
      // at -O2/-O3 for AVX-512 (-march=native, x86-64-v4) warned that the tail loop below
      // "invokes undefined behavior" at iteration 2^61 − 1 (-Waggressive-loop-optimizations, an
      // error under -Werror), for categorical_logit_glm's operands (tests/headers/
      // avx512_tiles_test.cpp compiles that model with -Werror).
      const std::size_t whole = len - len % w;
      for (; i < whole; i += w) f(std::type_identity<W>{}, i);
    }
    for (; i < len; ++i) f(std::type_identity<T>{}, i);
  }

  // Which entries of lane_adj the loop body of operand A (at path AP) adds to: the scalar
  // parameters and the scalar outer slots that its elementwise nodes read.
  template <class A, class AP>
  static constexpr auto lane_targets() {
    std::array<bool, lane_adj_size> m{};
    using entries = kernel_entries_t<A, AP>;
    meta::static_for<entries::size>([&](auto e) {
      using E = meta::at<decltype(e)::value, entries>;
      using N = typename E::node;
      meta::static_for<children_t<N>::size>([&](auto j) {
        using C = meta::at<decltype(j)::value, children_t<N>>;
        using CP = meta::push<typename E::path, decltype(j)::value>;
        if constexpr (kind_of<C> == node_kind::param) m[layout_index_v<Layout, C>] = true;
        else if constexpr (!is_leaf_v<C> && has_outer_slot_v<C> && !is_buffered_v<C>)
          m[Layout::size + index_in_v<outer_entries, C, CP>] = true;
      });
    });
    return m;
  }

  // Before a loop over operand A whose body adds to scalars: their lane sums start at zero.
  template <class A, class AP>
  TYCHE_HD TYCHE_INLINE void begin_lanes() {
    if constexpr (batched) {
      static constexpr auto targets = lane_targets<A, AP>();
      meta::static_for<lane_adj_size>([&](auto k) {
        constexpr std::size_t K = decltype(k)::value;
        if constexpr (targets[K]) lane_adj[K] = lift<W>(0.0);
      });
    }
  }

  // After that loop: the lanes' sums of what its body added to scalars.
  template <class A, class AP>
  TYCHE_HD TYCHE_INLINE void flush_lanes() {
    if constexpr (batched) {
      static constexpr auto targets = lane_targets<A, AP>();
      meta::static_for<lane_adj_size>([&](auto k) {
        constexpr std::size_t K = decltype(k)::value;
        if constexpr (targets[K]) {
          if constexpr (K < Layout::size) param_adj[K] += lane_sum(lane_adj[K]);
          else get<K - Layout::size>(state).adj += lane_sum(lane_adj[K]);
        }
      });
    }
  }

  // ---- outer slots ----

  template <class E>
  TYCHE_HD TYCHE_INLINE void forward_outer() {
    using N = typename E::node;
    using P = typename E::path;
    constexpr std::size_t idx = index_in_v<outer_entries, N, P>;
    const N& n = at_path(root, P{});
    auto& s = get<idx>(state);
    no_kernel none;
    constexpr std::size_t alias = alias_candidate_v<outer_entries, idx>;
    if constexpr (alias != idx) {
      if (aliased[idx]) {  // the same node as slot `alias`: take its value (or its buffers)
        const auto& a = get<alias>(state);
        if constexpr (is_buffered_v<N>) {
          s.val = a.val;
          s.adj = a.adj;
        } else {
          s.v = a.v;
          // Never read (reverse_outer hands an aliased slot's adjoint on), but written, so that
          // every path through the forward pass sets what the reverse pass could read: g++
          // cannot see that aliased[idx] is the same in both and warned (-Wmaybe-uninitialized).
          if constexpr (kind_of<N> == node_kind::unary) {
            s.d = lift<T>(0.0);
          } else if constexpr (kind_of<N> == node_kind::binary) {
            s.d0 = lift<T>(0.0);
            s.d1 = lift<T>(0.0);
          }
        }
        return;
      }
    }
    if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) {
      forward_elementary<Grad, N, P>(n, s, none, 0);
    } else if constexpr (kind_of<N> == node_kind::sum) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      constexpr int sign = Grad ? fused_sign_v<Root, E> : 0;
      const std::size_t len = n.a.size();
      // Element i's value, with its reverse pass folded in when the adjoint is known (sign), in
      // the loop body's state ks: a kernel_state of the scalar or of an observation batch, or the
      // tiled_state of rows in tiles.
      auto element = [&](auto& ks, std::size_t i) TYCHE_LAMBDA_INLINE {  // config.hpp
        if constexpr (sign != 0) {
          const auto v = kernel_forward<true, A, AP>(n.a, ks, i);
          kernel_reverse<A, AP>(ks, i, lift<std::remove_const_t<decltype(v)>>(static_cast<double>(sign)));
          return v;
        } else {
          return kernel_forward<false, A, AP>(n.a, ks, i);
        }
      };
      // Eight partial sums, partial sum j taking the elements i ≡ j (mod 8): eight independent
      // dependency chains, laid out so that SIMD code adds whole vectors (no shuffles). With
      // observation batches of w lanes, 8 / w batches hold the same eight sums, added in the
      // same order.
      constexpr std::size_t width = 8;
      using W = observation_batch_t<T>;
      constexpr std::size_t w = std::is_same_v<W, T> ? 1 : lane_ops<W>::size;
      static_assert(width % w == 0, "tyche: observation batches wider than 8 lanes");
      W tw[width / w];
      for (auto& tj : tw) tj = lift<W>(0.0);
      if constexpr (sign != 0) begin_lanes<A, AP>();
      std::size_t i = 0, end = len;
      if constexpr (sign != 0) {
        if (parts != 1) {  // a split evaluation: this part's share of the elements
          i = share_begin(len);
          end = share_end(len);
        }
      }
      const std::size_t full = end - (end - i) % width;
      if constexpr (tiles_rows_v<A, AP>) {
        static_assert(width == tile_rows && w == 1);
        using entries = kernel_entries_t<A, AP>;
        using MV = meta::at<streamed_matvec_index<entries>(), entries>;
        const auto& mv = at_path(root, typename MV::path{});
        T tile_v[tile_rows], tile_a[tile_rows];
        // With row pairs, the eight partial sums as four pairs (rows j and j + 1) in the wider
        // batch, so that an element's value is added in its own lanes (fused or not as one row
        // at a time), split again after the tiles.
        using pair_sum = typename row_pair_scalar<T>::type;
        [[maybe_unused]] pair_sum pair_sums[width / 2];
        if constexpr (row_pairs_v)
          for (std::size_t k = 0; k < width / 2; ++k)
            pair_sums[k] = column_pair_tiles<T>::rows(tw[2 * k], tw[2 * k + 1]);
        for (; i < full; i += width) {
          tile_forward(mv, i, tile_v);
          if constexpr (row_pairs_v) {  // rows j and j + 1 in one wider batch
            using R = column_pair_tiles<T>;
            for (std::size_t j = 0; j < width; j += 2) {
              tiled_state<A, AP, typename R::rows2> ks{};
              ks.tile_v = tile_v;
              ks.tile_a = tile_a;
              ks.base = i;
              pair_sums[j / 2] += element(ks, i + j);
            }
          } else {
            for (std::size_t j = 0; j < width; ++j) {
              tiled_state<A, AP> ks{};
              ks.tile_v = tile_v;
              ks.tile_a = tile_a;
              ks.base = i;
              tw[j] += element(ks, i + j);
            }
          }
          if constexpr (sign != 0) tile_reverse(mv, i, tile_a);
        }
        if constexpr (row_pairs_v)
          for (std::size_t k = 0; k < width / 2; ++k) {
            tw[2 * k] = column_pair_tiles<T>::first(pair_sums[k]);
            tw[2 * k + 1] = column_pair_tiles<T>::second(pair_sums[k]);
          }
      }
      for (; i < full; i += width) {
        for (std::size_t j = 0; j < width / w; ++j) {
          kernel_state<A, AP, W> ks{};
          tw[j] += element(ks, i + j * w);
        }
      }
      T t[width];
      for (std::size_t j = 0; j < width / w; ++j) {
        if constexpr (w == 1) t[j] = tw[j];
        else lane_ops<W>::store(t + j * w, tw[j]);
      }
      for (; i < end; ++i) {
        kernel_state<A, AP> ks{};
        t[0] += element(ks, i);
      }
      if constexpr (sign != 0) flush_lanes<A, AP>();
      s.v = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
      if constexpr (sign != 0) {
        if (parts != 1) partial_sum += sign > 0 ? s.v : -s.v;
      }
    } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      const std::size_t len = n.a.size();
      T m = lift<T>(0.0);
      T acc = lift<T>(0.0);
      for (std::size_t i = 0; i < len; ++i) {
        kernel_state<A, AP> ks{};
        const T v = kernel_forward<false, A, AP>(n.a, ks, i);
        if (i == 0) {
          m = v;
          acc = lift<T>(1.0);
        } else {
          const T m_new = math::max(m, v);
          // While every element so far is −∞, shift by 0, not by −∞ (−∞ − −∞ is NaN).
          const T ninf = lift<T>(-HUGE_VAL);
          const T base = math::select(m_new == ninf, lift<T>(0.0), m_new);
          acc = acc * math::exp(m - base) + math::exp(v - base);
          m = m_new;
        }
      }
      s.v = m + math::log(acc);
    } else if constexpr (kind_of<N> == node_kind::residual_squares) {
      using S = meta::at<0, children_t<N>>;
      using V = meta::at<1, children_t<N>>;
      const T sv = value_of<S, meta::push<P, 0>>(n.s, none, 0);
      const T* v = residual_coefficients<V, meta::push<P, 1>>(n.v);
      const std::size_t k = residual_width<V>(n);
      const double* xbar = n.stats + 3;
      const double* sxy = xbar + k;
      const double* sxx = sxy + k;
      T quad = lift<T>(0.0), cross = lift<T>(0.0), m = sv - lift<T>(n.stats[1]);
      for (std::size_t a = 0; a < k; ++a) {
        T row = lift<T>(0.0);
        for (std::size_t b = 0; b < k; ++b) row += lift<T>(sxx[a * k + b]) * v[b];
        quad += v[a] * row;
        cross += lift<T>(sxy[a]) * v[a];
        m += lift<T>(xbar[a]) * v[a];
      }
      s.v = lift<T>(n.stats[0]) - lift<T>(2.0) * cross + quad + lift<T>(n.stats[2]) * m * m;
    } else if constexpr (kind_of<N> == node_kind::element) {
      s.v = value_of<meta::at<0, children_t<N>>, meta::push<P, 0>>(n.v, none, n.index);
    } else if constexpr (kind_of<N> == node_kind::vector_op) {
      // Each operand is materialised in the workspace (a vector operand through its loop body),
      // then Op computes the m values from the whole operands.
      const std::size_t m = n.size();
      T* p = workspace + ws_offsets[idx];
      s.val = p;
      s.adj = p + m;
      p += 2 * m;
      meta::static_for<children_t<N>::size>([&](auto j) {
        constexpr std::size_t J = decltype(j)::value;
        using C = meta::at<J, children_t<N>>;
        using CP = meta::push<P, J>;
        const C& c = n.template child<J>();
        const std::size_t len = operand_size(c);
        s.in[J] = p;
        s.in_adj[J] = p + len;
        s.in_n[J] = len;
        p += 2 * len;
        if constexpr (is_vector_v<C>) {
          for_elements(len, [&]<class U>(std::type_identity<U>, std::size_t i) {
            kernel_state<C, CP, U> ks{};
            const U v = kernel_forward<false, C, CP>(c, ks, i);
            if constexpr (std::is_same_v<U, T>) s.in[J][i] = v;
            else lane_ops<U>::store(s.in[J] + i, v);
          });
        } else {
          s.in[J][0] = value_of<C, CP>(c, none, 0);
        }
      });
      if constexpr (has_scratch_v<N>) {
        s.scratch = p;  // after the operands: the op's own scratch (kept for the reverse pass)
        if constexpr (!Grad && has_forward_value_v<N, T>) n.op.forward_value(m, s.val, s.in, s.in_n, s.scratch);
        else n.op.forward(m, s.val, s.in, s.in_n, s.scratch);
      } else {
        n.op.forward(m, s.val, s.in, s.in_n);
      }
      if constexpr (Grad) {
        for (std::size_t r = 0; r < m; ++r) s.adj[r] = lift<T>(0.0);
      }
    } else if constexpr (kind_of<N> == node_kind::matvec) {
      const std::size_t rows = n.x.rows;
      const std::size_t cols = n.x.cols;
      s.val = workspace + ws_offsets[idx];
      s.adj = s.val + rows;
      const T* v = theta + offset_of<meta::at<1, children_t<N>>>();
      for (std::size_t r = 0; r < rows; ++r) {
        s.val[r] = row_dot(n.x.ptr + r * cols, v, cols);
        if constexpr (Grad) s.adj[r] = lift<T>(0.0);
      }
    }
  }

  template <class E>
  TYCHE_HD TYCHE_INLINE void reverse_outer() {
    using N = typename E::node;
    using P = typename E::path;
    constexpr std::size_t idx = index_in_v<outer_entries, N, P>;
    const N& n = at_path(root, P{});
    auto& s = get<idx>(state);
    no_kernel none;
    constexpr std::size_t alias = alias_candidate_v<outer_entries, idx>;
    if constexpr (alias != idx) {
      if (aliased[idx]) {  // hand the adjoint to the slot it aliases (buffers are shared)
        if constexpr (!is_buffered_v<N>) get<alias>(state).adj += s.adj;
        return;
      }
    }
    if constexpr (kind_of<N> == node_kind::unary || kind_of<N> == node_kind::binary) {
      reverse_elementary<N, P>(s, none, 0);
    } else if constexpr (kind_of<N> == node_kind::sum) {
      if constexpr (fused_sign_v<Root, E> == 0) {
        using A = meta::at<0, children_t<N>>;
        using AP = meta::push<P, 0>;
        begin_lanes<A, AP>();
        for_elements(n.a.size(), [&]<class U>(std::type_identity<U>, std::size_t i) {
          kernel_state<A, AP, U> ks{};
          kernel_forward<true, A, AP>(n.a, ks, i);
          kernel_reverse<A, AP>(ks, i, U(s.adj));
        });
        flush_lanes<A, AP>();
      }
    } else if constexpr (kind_of<N> == node_kind::log_sum_exp) {
      using A = meta::at<0, children_t<N>>;
      using AP = meta::push<P, 0>;
      const std::size_t len = n.a.size();
      for (std::size_t i = 0; i < len; ++i) {
        kernel_state<A, AP> ks{};
        const T v = kernel_forward<true, A, AP>(n.a, ks, i);
        // Weight exp(v − lse); when every element is −∞ all weights are 0, not NaN.
        const T ninf = lift<T>(-HUGE_VAL);
        const T w = math::select(s.v == ninf, lift<T>(0.0), math::exp(v - s.v));
        kernel_reverse<A, AP>(ks, i, s.adj * w);
      }
    } else if constexpr (kind_of<N> == node_kind::residual_squares) {
      // ∂/∂s = 2 n m;  ∂/∂v = 2 (S_xx v − S_xy + n m x̄).
      using S = meta::at<0, children_t<N>>;
      using V = meta::at<1, children_t<N>>;
      const T sv = value_of<S, meta::push<P, 0>>(n.s, none, 0);
      const T* v = residual_coefficients<V, meta::push<P, 1>>(n.v);
      const std::size_t k = residual_width<V>(n);
      const double* xbar = n.stats + 3;
      const double* sxy = xbar + k;
      const double* sxx = sxy + k;
      T m = sv - lift<T>(n.stats[1]);
      for (std::size_t a = 0; a < k; ++a) m += lift<T>(xbar[a]) * v[a];
      const T nm2 = lift<T>(2.0 * n.stats[2]) * m;
      push_adjoint<S, meta::push<P, 0>>(none, 0, s.adj * nm2);
      for (std::size_t a = 0; a < k; ++a) {
        T row = lift<T>(0.0);
        for (std::size_t b = 0; b < k; ++b) row += lift<T>(sxx[a * k + b]) * v[b];
        const T g = s.adj * (lift<T>(2.0) * (row - lift<T>(sxy[a])) + nm2 * lift<T>(xbar[a]));
        if constexpr (kind_of<V> == node_kind::vector_param) grad[offset_of<V>() + a] += g;
        else get<index_in_v<outer_entries, V, meta::push<P, 1>>>(state).adj[a] += g;
      }
    } else if constexpr (kind_of<N> == node_kind::element) {
      push_adjoint<meta::at<0, children_t<N>>, meta::push<P, 0>>(none, n.index, s.adj);
    } else if constexpr (kind_of<N> == node_kind::vector_op) {
      constexpr std::size_t arity = children_t<N>::size;
      for (std::size_t j = 0; j < arity; ++j)
        for (std::size_t i = 0; i < s.in_n[j]; ++i) s.in_adj[j][i] = lift<T>(0.0);
      if constexpr (has_scratch_v<N>) n.op.reverse(n.size(), s.val, s.adj, s.in, s.in_n, s.in_adj, s.scratch);
      else n.op.reverse(n.size(), s.val, s.adj, s.in, s.in_n, s.in_adj);
      meta::static_for<arity>([&](auto j) {
        constexpr std::size_t J = decltype(j)::value;
        using C = meta::at<J, children_t<N>>;
        using CP = meta::push<P, J>;
        if constexpr (depends_on_params_v<C>) {
          const C& c = n.template child<J>();
          if constexpr (is_vector_v<C>) {
            begin_lanes<C, CP>();
            for_elements(s.in_n[J], [&]<class U>(std::type_identity<U>, std::size_t i) {
              kernel_state<C, CP, U> ks{};
              kernel_forward<true, C, CP>(c, ks, i);
              kernel_reverse<C, CP>(ks, i, load_at<U>(s.in_adj[J] + i));
            });
            flush_lanes<C, CP>();
          } else {
            push_adjoint<C, CP>(none, 0, s.in_adj[J][0]);
          }
        }
      });
    } else if constexpr (kind_of<N> == node_kind::matvec) {
      const std::size_t rows = n.x.rows;
      const std::size_t cols = n.x.cols;
      T* g = grad + offset_of<meta::at<1, children_t<N>>>();
      for (std::size_t r = 0; r < rows; ++r) add_row_times(g, n.x.ptr + r * cols, cols, s.adj[r]);
    }
  }

  /// For a vector root: evaluates the scalar slots, after which element(i) gives element i.
  TYCHE_HD TYCHE_INLINE void prepare() {
    meta::static_for<outer_entries::size>(
        [&](auto k) { forward_outer<meta::at<decltype(k)::value, outer_entries>>(); });
  }
  TYCHE_HD TYCHE_INLINE T element(std::size_t i) {
    kernel_state<Root, path<>> ks{};
    return kernel_forward<false, Root, path<>>(root, ks, i);
  }

  /// For a root that stacks scalar expressions (scalar_stack_v: a scan's next state): evaluates
  /// the slots below the root and writes operand j's value to out[j] — no buffers for the stacked
  /// vector, no call to its op. Value-only.
  TYCHE_HD TYCHE_INLINE void stacked_values(T* out) {
    static_assert(!Grad && scalar_stack_v<Root>);
    using last = meta::at<outer_entries::size - 1, outer_entries>;
    static_assert(std::is_same_v<typename last::node, Root>, "tyche: the root's slot is evaluated last");
    meta::static_for<outer_entries::size - 1>(
        [&](auto k) { forward_outer<meta::at<decltype(k)::value, outer_entries>>(); });
    no_kernel none;
    meta::static_for<children_t<Root>::size>([&](auto j) {
      constexpr std::size_t J = decltype(j)::value;
      out[J] = value_of<meta::at<J, children_t<Root>>, meta::push<path<>, J>>(root.template child<J>(), none, 0);
    });
  }

  TYCHE_HD TYCHE_INLINE T run() {
    if constexpr (Grad) {
      for (auto& a : param_adj) a = lift<T>(0.0);
    }
    static_assert(!is_vector_v<Root>,
                  "tyche: a model's log density must be a scalar; reduce vectors with "
                  "tyche::sum(...)");
    if (parts != 1) partial_sum = lift<T>(0.0);
    meta::static_for<outer_entries::size>(
        [&](auto k) { forward_outer<meta::at<decltype(k)::value, outer_entries>>(); });
    no_kernel none;
    // A part other than the first of a split evaluation: only its share of the fused sums (whose
    // adjoints their loops have pushed already); the rest of the log density is part 0's.
    const bool share_only = parts != 1 && part != 0;
    const T result = share_only ? partial_sum : value_of<Root, path<>>(root, none, 0);
    if constexpr (Grad) {
      if (!share_only) push_adjoint<Root, path<>>(none, 0, lift<T>(1.0));
      meta::static_for_reverse<outer_entries::size>(
          [&](auto k) { reverse_outer<meta::at<decltype(k)::value, outer_entries>>(); });
      meta::static_for<Layout::size>([&](auto k) {
        constexpr std::size_t K = decltype(k)::value;
        using P = meta::at<K, Layout>;
        if constexpr (kind_of<P> == node_kind::param) grad[offset_of<P>()] += param_adj[K];
      });
    }
    return result;
  }
};

/// Workspace offsets for the buffered slots (matvec, vector_op) of an expression (none for aliased slots); with
/// ws_offsets null, only the total.
template <class Root, class Entries = outer_entries_t<Root>>
std::size_t assign_workspace(const Root& root, const bool* aliased, std::size_t* ws_offsets) {
  std::size_t total = 0;
  meta::static_for<Entries::size>([&](auto k) {
    constexpr std::size_t K = decltype(k)::value;
    using E = meta::at<K, Entries>;
    if constexpr (kind_of<typename E::node> == node_kind::matvec) {
      if (!aliased[K]) {
        if (ws_offsets) ws_offsets[K] = total;
        total += 2 * at_path(root, typename E::path{}).x.rows;
      }
    } else if constexpr (kind_of<typename E::node> == node_kind::vector_op) {
      if (!aliased[K]) {  // values and adjoints of the result and of every operand
        if (ws_offsets) ws_offsets[K] = total;
        const auto& n = at_path(root, typename E::path{});
        total += 2 * n.size();
        std::size_t in_n[children_t<typename E::node>::size] = {};
        meta::static_for<children_t<typename E::node>::size>([&](auto j) {
          in_n[decltype(j)::value] = operand_size(n.template child<decltype(j)::value>());
          total += 2 * in_n[decltype(j)::value];
        });
        if constexpr (has_scratch_v<typename E::node>) total += n.op.scratch_size(n.size(), in_n);
      }
    }
  });
  return total;
}

}  // namespace tyche::detail
