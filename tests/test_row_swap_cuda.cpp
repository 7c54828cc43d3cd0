// [gpu] tests of the row interchanges of the cuda LU (solver/src/cuda/row_swap.cu): the
// look-ahead's sequence (reset_origin, apply_row_pairs_in_block per leaf, apply_block_permutation
// per block) and the one-pass path (apply_row_pairs per leaf, compose_interchanges for cuSOLVER's
// pivots) against a host reference that applies every leaf's interchanges to every column
// outside the leaf, leaf after leaf; the results must agree bitwise (a row move copies bits).
// Skipped, with a warning, without a GPU (and empty in a build without CUDA).
//
// The leaves' interchanges are random LAPACK-style sequences (step i of the leaf at c0 exchanges
// rows c0 + i and p_i >= c0 + i), composed on the host into the launchers' pairs by following
// the rows' contents: independent of interchanges.hpp, whose composition the compose test checks.
#include <catch2/catch.hpp>

#if defined(TCSOLVE_HAVE_CUDA)

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/kernels.hpp"
#include "tcsolve/gemm/cuda.hpp"
#include "tcsolve/gemm/gemm.hpp"

namespace {

using namespace tcsolve;
namespace kernels = tcsolve::cuda::kernels;

#define TCSOLVE_GPU_ROW_SWAP_SKIP_WITHOUT_GPU(what)                                     \
  if (!tcsolve::cuda::device_available()) {                                             \
    WARN("no CUDA device: skipping " what " (" << tcsolve::cuda::device_name() << ")"); \
    return;                                                                             \
  }

/// How a leaf's steps pick the row they exchange with.
enum class Targets {
  mixed,        ///< none, inside the leaf, inside the block, anywhere below, a few repeated rows
  fresh_below,  ///< a different row below the block at every step of the block: 2w moved rows
  none,         ///< no exchange: empty pairs
};

/// A leaf [c0, c0 + w) of the block [lo, hi): its exchange targets and its pairs,
/// interchange_scratch_ints(w) ints [count, dst[0..2w), src[0..2w)].
struct Leaf {
  int c0 = 0, w = 0;
  std::vector<int> targets;  ///< p_i, global rows
  std::vector<int> pairs;
};

struct Block {
  int j = 0, w = 0;
  std::vector<Leaf> leaves;
};

/// The pairs of the sequential exchanges (c0 + i, targets[i]), i < w: row dst receives the
/// old row src, every row whose content changes listed once, in a shuffled order (the
/// launchers take any order).
std::vector<int> compose_on_host(int c0, int w, const std::vector<int>& targets, std::mt19937& rng) {
  std::map<int, int> content;  // row -> the row whose old content it holds now
  const auto holds = [&](int r) {
    const auto it = content.find(r);
    return it == content.end() ? r : it->second;
  };
  for (int i = 0; i < w; ++i) {
    const int r = c0 + i, q = targets[static_cast<std::size_t>(i)];
    const int held_r = holds(r), held_q = holds(q);
    content[r] = held_q;
    content[q] = held_r;
  }
  std::vector<std::pair<int, int>> moved;
  for (const auto& [row, held] : content)
    if (row != held) moved.emplace_back(row, held);
  std::shuffle(moved.begin(), moved.end(), rng);
  REQUIRE(moved.size() <= static_cast<std::size_t>(2 * w));
  std::vector<int> pairs(kernels::interchange_scratch_ints(w), -1);
  pairs[0] = static_cast<int>(moved.size());
  for (std::size_t t = 0; t < moved.size(); ++t) {
    pairs[1 + t] = moved[t].first;
    pairs[1 + 2 * static_cast<std::size_t>(w) + t] = moved[t].second;
  }
  return pairs;
}

/// Blocks of nb columns (the last one ragged) cut into leaves of `leaf` columns (ragged at the
/// block's end), each with random exchanges of the given kind.
std::vector<Block> random_plan(int n, int nb, int leaf, Targets kind, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Block> blocks;
  for (int j = 0; j < n; j += nb) {
    Block b;
    b.j = j;
    b.w = std::min(nb, n - j);
    const int hi = j + b.w;
    int fresh = hi;  // fresh_below: the next unused row below the block
    for (int c0 = j; c0 < hi; c0 += leaf) {
      Leaf l;
      l.c0 = c0;
      l.w = std::min(leaf, hi - c0);
      // A few rows below the block that several steps pick (the composition's repeated targets).
      std::vector<int> pool;
      for (int k = 0; k < 3; ++k)
        pool.push_back(hi < n ? std::uniform_int_distribution<int>(hi, n - 1)(rng) : n - 1);
      for (int i = 0; i < l.w; ++i) {
        const int r = c0 + i;
        const auto between = [&](int lo_row, int hi_row) {  // [lo_row, hi_row), not empty
          return std::uniform_int_distribution<int>(lo_row, hi_row - 1)(rng);
        };
        int q = r;
        if (kind == Targets::fresh_below) {
          q = fresh < n ? fresh++ : between(r, n);
        } else if (kind == Targets::mixed) {
          const int pick = std::uniform_int_distribution<int>(0, 99)(rng);
          if (pick < 15)
            q = r;
          else if (pick < 35)
            q = between(r, c0 + l.w);
          else if (pick < 55)
            q = between(r, hi);
          else if (pick < 85)
            q = between(r, n);
          else
            q = std::max(r, pool[static_cast<std::size_t>(pick % 3)]);
        }
        l.targets.push_back(q);
      }
      l.pairs = compose_on_host(l.c0, l.w, l.targets, rng);
      b.leaves.push_back(std::move(l));
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}

/// Row-major n x n random floats with leading dimension ld; the gap columns [n, ld) hold a NaN
/// that no launcher may touch.
std::vector<float> random_matrix(int n, int ld, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(static_cast<std::size_t>(n) * ld, std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < n; ++c) a[static_cast<std::size_t>(i) * ld + c] = dist(rng);
  return a;
}

std::vector<int> random_permutation(int n, unsigned seed) {
  std::vector<int> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

/// The reference: the pairs of the leaf [c0, c0 + w) applied to the columns [lo, hi) of a outside
/// the leaf (all of them: lo = 0, hi = n), and to `index` (perm or origin; may be null).
void apply_on_host(std::vector<float>& a, int ld, int lo, int hi, const Leaf& leaf, std::vector<int>* index) {
  const int count = leaf.pairs[0];
  const int* dst = leaf.pairs.data() + 1;
  const int* src = dst + 2 * leaf.w;
  const std::size_t width = static_cast<std::size_t>(hi - lo);
  std::vector<float> saved(static_cast<std::size_t>(count) * width);
  std::vector<int> saved_index(static_cast<std::size_t>(count));
  for (int t = 0; t < count; ++t) {
    std::copy_n(a.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(src[t]) * ld + lo), width,
                saved.begin() + static_cast<std::ptrdiff_t>(t * width));
    if (index) saved_index[static_cast<std::size_t>(t)] = (*index)[static_cast<std::size_t>(src[t])];
  }
  for (int t = 0; t < count; ++t) {
    for (int c = lo; c < hi; ++c)
      if (c < leaf.c0 || c >= leaf.c0 + leaf.w)
        a[static_cast<std::size_t>(dst[t]) * ld + c] = saved[t * width + static_cast<std::size_t>(c - lo)];
    if (index) (*index)[static_cast<std::size_t>(dst[t])] = saved_index[static_cast<std::size_t>(t)];
  }
}

/// Empty when got and want are the same bits, else where they first differ.
std::string first_difference(const std::vector<float>& got, const std::vector<float>& want, int ld) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    std::uint32_t g, w;
    std::memcpy(&g, &got[k], sizeof g);
    std::memcpy(&w, &want[k], sizeof w);
    if (g != w) {
      std::ostringstream s;
      s << "row " << k / static_cast<std::size_t>(ld) << ", column " << k % static_cast<std::size_t>(ld)
        << ": got " << got[k] << ", want " << want[k];
      return s.str();
    }
  }
  return {};
}

std::string first_difference(const std::vector<int>& got, const std::vector<int>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k)
    if (got[k] != want[k]) {
      std::ostringstream s;
      s << "entry " << k << ": got " << got[k] << ", want " << want[k];
      return s.str();
    }
  return {};
}

/// A non-blocking stream for the launchers, so that a launcher that enqueued on the legacy
/// default stream instead of the stream it is given would race with the others.
class OwnStream {
 public:
  OwnStream() {
    cuda::device_synchronize();  // the uploads (on the legacy stream, which this one does not wait for)
    REQUIRE(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) == cudaSuccess);
  }
  ~OwnStream() { cudaStreamDestroy(stream_); }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() { REQUIRE(cudaStreamSynchronize(stream_) == cudaSuccess); }

 private:
  cudaStream_t stream_ = nullptr;
};

/// Every leaf's pairs in one device array (uploaded before any launch, as the LU's leaves write
/// them on the device), and each leaf's offset in it.
struct DevicePairs {
  std::vector<std::size_t> offset;  // per leaf, blocks in order
  cuda::DeviceBuffer<int> all;

  explicit DevicePairs(const std::vector<Block>& blocks) : all(pack(blocks, offset)) {}

  static std::vector<int> pack(const std::vector<Block>& blocks, std::vector<std::size_t>& offset) {
    std::vector<int> packed;
    for (const Block& b : blocks)
      for (const Leaf& l : b.leaves) {
        offset.push_back(packed.size());
        packed.insert(packed.end(), l.pairs.begin(), l.pairs.end());
      }
    return packed;
  }
};

/// The look-ahead's sequence on the device against the reference; `own_stream`: on a
/// non-blocking stream of its own, else on the default stream; `split`: each block permutation
/// as the LU's look-ahead applies it (the columns right of the block, then those left of it).
void check_block_sequence(int n, int ld, int nb, int leaf, Targets kind, unsigned seed, bool own_stream,
                          bool split = false) {
  INFO("n = " << n << ", ld = " << ld << ", nb = " << nb << ", leaf = " << leaf << ", targets "
              << static_cast<int>(kind) << ", seed " << seed
              << (own_stream ? ", own stream" : ", default stream") << (split ? ", split" : ""));
  const std::vector<Block> blocks = random_plan(n, nb, leaf, kind, seed);
  const std::vector<float> a0 = random_matrix(n, ld, seed + 1);
  const std::vector<int> perm0 = random_permutation(n, seed + 2);

  std::vector<float> want = a0;
  std::vector<int> want_perm = perm0;
  for (const Block& b : blocks)
    for (const Leaf& l : b.leaves) apply_on_host(want, ld, 0, n, l, &want_perm);

  cuda::DeviceBuffer<float> a(a0);
  cuda::DeviceBuffer<int> perm(perm0);
  // origin below the block and the scratch hold garbage: neither may be read.
  cuda::DeviceBuffer<int> origin(std::vector<int>(static_cast<std::size_t>(n), -7));
  cuda::DeviceBuffer<int> scratch(std::vector<int>(kernels::block_permutation_scratch_ints(n), 0x5a5a5a5a));
  DevicePairs pairs(blocks);
  {
    std::unique_ptr<OwnStream> stream;
    if (own_stream) stream = std::make_unique<OwnStream>();
    const cudaStream_t on = stream ? stream->get() : nullptr;
    std::size_t leaf_index = 0;
    for (const Block& b : blocks) {
      kernels::reset_origin(on, origin.data(), b.j, n);
      for (const Leaf& l : b.leaves)
        kernels::apply_row_pairs_in_block(on, a.data(), ld, l.c0, l.w, b.j, b.j + b.w,
                                          pairs.all.data() + pairs.offset[leaf_index++], origin.data());
      kernels::apply_block_permutation(on, a.data(), ld, n, b.j, b.w, origin.data(), perm.data(), scratch.data(),
                                       split);
      if (split) kernels::move_block_permutation_left(on, a.data(), ld, n, b.j, b.w, scratch.data());
    }
    if (stream) stream->synchronize();
  }
  CHECK(first_difference(a.download(), want, ld) == "");
  CHECK(first_difference(perm.download(), want_perm) == "");
}

/// The rows that the block's leaves move, composed: origin[i] for i in [j, n) as
/// apply_row_pairs_in_block leaves it (-1 below j).
std::vector<int> composed_origin(const Block& b, int n) {
  std::vector<int> origin(static_cast<std::size_t>(n), -1);
  std::iota(origin.begin() + b.j, origin.end(), b.j);
  for (const Leaf& l : b.leaves) {
    const int count = l.pairs[0];
    const int* dst = l.pairs.data() + 1;
    const int* src = dst + 2 * l.w;
    std::vector<int> saved(static_cast<std::size_t>(count));
    for (int t = 0; t < count; ++t)
      saved[static_cast<std::size_t>(t)] = origin[static_cast<std::size_t>(src[t])];
    for (int t = 0; t < count; ++t)
      origin[static_cast<std::size_t>(dst[t])] = saved[static_cast<std::size_t>(t)];
  }
  return origin;
}

int moved_rows(const std::vector<int>& origin, int j) {
  int moved = 0;
  for (std::size_t i = static_cast<std::size_t>(j); i < origin.size(); ++i)
    moved += origin[i] != static_cast<int>(i);
  return moved;
}

}  // namespace

TEST_CASE(
    "the look-ahead's row interchanges (in-block leaves, one block permutation) give bitwise the "
    "sequential interchanges",
    "[gpu]") {
  TCSOLVE_GPU_ROW_SWAP_SKIP_WITHOUT_GPU("the row interchange test");
  // nb = 512: 1000 = 512 + 488 (the last block ragged, its last leaf 8 columns), 2500 = 4 * 512 +
  // 452 (last leaf 4 columns); ld = n + 5: rows not 16-byte aligned, and a gap that must stay.
  unsigned seed = 100;
  for (int n : {1000, 2500})
    for (int ld : {n, n + 5}) {
      check_block_sequence(n, ld, 512, 32, Targets::mixed, seed++, false);
      check_block_sequence(n, ld, 512, 32, Targets::mixed, seed++, true);
    }
  // w = n: one block, nothing outside it (the permutation goes to perm only).
  check_block_sequence(1000, 1000, 1000, 32, Targets::mixed, seed++, false);
  check_block_sequence(1000, 1003, 1000, 32, Targets::fresh_below, seed++, true);
  // Blocks as wide as a leaf (no block column outside the leaf; 1000 = 31 * 32 + 8), leaves of 16.
  check_block_sequence(1000, 1001, 32, 32, Targets::mixed, seed++, true);
  check_block_sequence(1000, 1000, 512, 16, Targets::mixed, seed++, false);
}

TEST_CASE(
    "the block permutation moves nothing when no leaf exchanges rows, and the most rows (2w) when "
    "every step exchanges with a new row below the block",
    "[gpu]") {
  TCSOLVE_GPU_ROW_SWAP_SKIP_WITHOUT_GPU("the row interchange extremes test");
  for (int ld : {2500, 2505}) {
    check_block_sequence(2500, ld, 512, 32, Targets::none, 7, ld == 2505);
    const std::vector<Block> blocks = random_plan(2500, 512, 32, Targets::fresh_below, 8);
    // The first three blocks have 512 new rows below them: 1024 = 2w moved rows, the launch's bound.
    for (int k = 0; k < 3; ++k) CHECK(moved_rows(composed_origin(blocks[k], 2500), blocks[k].j) == 1024);
    check_block_sequence(2500, ld, 512, 32, Targets::fresh_below, 8, ld == 2500);
  }
  const std::vector<Block> none = random_plan(1000, 512, 32, Targets::none, 9);
  for (const Block& b : none)
    for (const Leaf& l : b.leaves) CHECK(l.pairs[0] == 0);
}

TEST_CASE(
    "every path of apply_block_permutation's move (16, 8 and 4 columns per slice, the buffer) gives "
    "the sequential interchanges",
    "[gpu]") {
  TCSOLVE_GPU_ROW_SWAP_SKIP_WITHOUT_GPU("the block permutation paths test");
  // Bound m = min(2w, n - j) rows: w = 600 -> 1200 (16 columns), w = 1000 -> 2000 (8), n = 4000,
  // w = 1500 -> 3000 (4), n = 6000, w = 2400 -> 4800 rows: through the temporary buffer.
  check_block_sequence(2500, 2503, 600, 32, Targets::mixed, 200, false);
  check_block_sequence(2500, 2500, 1000, 32, Targets::fresh_below, 201, true);
  check_block_sequence(4000, 4001, 1500, 32, Targets::mixed, 202, false);
  check_block_sequence(6000, 6000, 2400, 32, Targets::fresh_below, 203, true);
  // Split as the look-ahead does it: right of the block, then left of it (every path again).
  for (bool own_stream : {false, true}) {
    check_block_sequence(2500, 2503, 600, 32, Targets::mixed, 210, own_stream, true);
    check_block_sequence(2500, 2500, 1000, 32, Targets::fresh_below, 211, own_stream, true);
    check_block_sequence(4000, 4001, 1500, 32, Targets::mixed, 212, own_stream, true);
    check_block_sequence(6000, 6000, 2400, 32, Targets::fresh_below, 213, own_stream, true);
  }
}

TEST_CASE(
    "apply_block_permutation applies any permutation of the rows below j, also more rows than "
    "partial pivoting moves",
    "[gpu]") {
  TCSOLVE_GPU_ROW_SWAP_SKIP_WITHOUT_GPU("the block permutation test");
  // n = 2500, block [100, 164): the launch is sized for 128 = 2w rows (16 columns a slice; its
  // shared memory holds one column of 128 x 18 = 2304 rows). 0, 2 (the fewest that can move)
  // and 128 moved rows take the fast path; 300 (7 columns at a time: 7, 7, 2), 500 (4 at a
  // time) and 2300 (one at a time) the slow one, which partial pivoting never needs.
  const int n = 2500, j = 100, w = 64;
  for (int ld : {n, n + 5})
    for (int count : {0, 2, 128, 300, 500, 2300}) {
      INFO("ld = " << ld << ", moved rows " << count);
      std::mt19937 rng(static_cast<unsigned>(count + ld));
      // `count` distinct rows of [j, n) in a random order, each receiving the next one's old
      // content (one cycle: every one of them moves).
      std::vector<int> rows(static_cast<std::size_t>(n - j));
      std::iota(rows.begin(), rows.end(), j);
      std::shuffle(rows.begin(), rows.end(), rng);
      rows.resize(static_cast<std::size_t>(count));
      std::vector<int> origin(static_cast<std::size_t>(n), -3);  // below j: not read
      for (int i = j; i < n; ++i) origin[static_cast<std::size_t>(i)] = i;
      for (int t = 0; t < count; ++t)
        origin[static_cast<std::size_t>(rows[static_cast<std::size_t>(t)])] =
            rows[static_cast<std::size_t>((t + 1) % count)];
      REQUIRE(moved_rows(origin, j) == count);

      const std::vector<float> a0 = random_matrix(n, ld, 300u + static_cast<unsigned>(count));
      const std::vector<int> perm0 = random_permutation(n, 301u + static_cast<unsigned>(count));
      std::vector<float> want = a0;
      std::vector<int> want_perm = perm0;
      for (int i = j; i < n; ++i) {
        const int o = origin[static_cast<std::size_t>(i)];
        if (o == i) continue;
        for (int c = 0; c < n; ++c)
          if (c < j || c >= j + w)
            want[static_cast<std::size_t>(i) * ld + c] = a0[static_cast<std::size_t>(o) * ld + c];
        want_perm[static_cast<std::size_t>(i)] = perm0[static_cast<std::size_t>(o)];
      }
      cuda::DeviceBuffer<float> a(a0);
      cuda::DeviceBuffer<int> perm(perm0), d_origin(origin);
      cuda::DeviceBuffer<int> scratch(kernels::block_permutation_scratch_ints(n));
      kernels::apply_block_permutation(nullptr, a.data(), ld, n, j, w, d_origin.data(), perm.data(), scratch.data());
      CHECK(first_difference(a.download(), want, ld) == "");
      CHECK(first_difference(perm.download(), want_perm) == "");
      CHECK(first_difference(d_origin.download(), origin) == "");  // read only
      // The same in two parts (right of the block, then left of it, from the scratch).
      cuda::DeviceBuffer<float> a2(a0);
      cuda::DeviceBuffer<int> perm2(perm0);
      kernels::apply_block_permutation(nullptr, a2.data(), ld, n, j, w, d_origin.data(), perm2.data(), scratch.data(),
                                       /*right_only=*/true);
      kernels::move_block_permutation_left(nullptr, a2.data(), ld, n, j, w, scratch.data());
      CHECK(first_difference(a2.download(), want, ld) == "");
      CHECK(first_difference(perm2.download(), want_perm) == "");
      // In four (the LU's first block: right of the block up to right_end, the rest of the
      // right side later, in two pieces here, and the left side).
      cuda::DeviceBuffer<float> a3(a0);
      cuda::DeviceBuffer<int> perm3(perm0);
      const int right_end = j + w + 333;
      kernels::apply_block_permutation(nullptr, a3.data(), ld, n, j, w, d_origin.data(), perm3.data(), scratch.data(),
                                       /*right_only=*/true, right_end);
      kernels::move_block_permutation_columns(nullptr, a3.data(), ld, n, j, w, scratch.data(), right_end + 1000, n);
      kernels::move_block_permutation_columns(nullptr, a3.data(), ld, n, j, w, scratch.data(), right_end, right_end + 1000);
      kernels::move_block_permutation_left(nullptr, a3.data(), ld, n, j, w, scratch.data());
      CHECK(first_difference(a3.download(), want, ld) == "");
      CHECK(first_difference(perm3.download(), want_perm) == "");
    }
  // Column ranges that reach into the block, or right_end inside it, are refused.
  cuda::DeviceBuffer<float> a(static_cast<std::size_t>(n) * n);
  cuda::DeviceBuffer<int> perm(static_cast<std::size_t>(n)), origin(static_cast<std::size_t>(n));
  cuda::DeviceBuffer<int> scratch(kernels::block_permutation_scratch_ints(n));
  CHECK_THROWS_AS(kernels::move_block_permutation_columns(nullptr, a.data(), n, n, j, w, scratch.data(), j - 1, j + 1),
                  InvalidInput);
  CHECK_THROWS_AS(kernels::apply_block_permutation(nullptr, a.data(), n, n, j, w, origin.data(), perm.data(),
                                                   scratch.data(), true, j + w - 1),
                  InvalidInput);
}

TEST_CASE(
    "the in-block interchanges leave the leaf's columns and the columns outside the block alone, "
    "the block permutation the block's columns; origin composes the leaves",
    "[gpu]") {
  TCSOLVE_GPU_ROW_SWAP_SKIP_WITHOUT_GPU("the row interchange column ranges test");
  const int n = 1500;
  for (int ld : {n, n + 5}) {
    INFO("ld = " << ld);
    // The second block [512, 1024) with mixed leaves; the first one's pairs are not used.
    const std::vector<Block> blocks =
        random_plan(n, 512, 32, Targets::mixed, 400u + static_cast<unsigned>(ld));
    const Block& b = blocks[1];
    const std::vector<float> a0 = random_matrix(n, ld, 401);
    const std::vector<int> perm0 = random_permutation(n, 402);
    cuda::DeviceBuffer<float> a(a0);
    cuda::DeviceBuffer<int> perm(perm0);
    cuda::DeviceBuffer<int> origin(std::vector<int>(static_cast<std::size_t>(n), -1));
    cuda::DeviceBuffer<int> scratch(kernels::block_permutation_scratch_ints(n));
    DevicePairs pairs(blocks);
    const std::size_t first_leaf = blocks[0].leaves.size();

    kernels::reset_origin(nullptr, origin.data(), b.j, n);
    std::vector<int> want_origin(static_cast<std::size_t>(n), -1);
    for (int i = b.j; i < n; ++i) want_origin[static_cast<std::size_t>(i)] = i;
    CHECK(first_difference(origin.download(), want_origin) == "");

    // Leaf by leaf: only the block's columns outside the leaf move.
    std::vector<float> want = a0;
    for (std::size_t k = 0; k < b.leaves.size(); ++k) {
      const Leaf& l = b.leaves[k];
      kernels::apply_row_pairs_in_block(nullptr, a.data(), ld, l.c0, l.w, b.j, b.j + b.w,
                                        pairs.all.data() + pairs.offset[first_leaf + k], origin.data());
      apply_on_host(want, ld, b.j, b.j + b.w, l, &want_origin);
      INFO("leaf " << k << " at column " << l.c0);
      CHECK(first_difference(a.download(), want, ld) == "");
      CHECK(first_difference(origin.download(), want_origin) == "");
    }
    CHECK(first_difference(want_origin, composed_origin(b, n)) == "");

    // The block permutation: the block's columns stay; the rest gets the composed permutation.
    const std::vector<float> before = a.download();
    kernels::apply_block_permutation(nullptr, a.data(), ld, n, b.j, b.w, origin.data(), perm.data(), scratch.data());
    const std::vector<float> after = a.download();
    std::vector<float> want_after = before;
    std::vector<int> want_perm = perm0;
    for (int i = b.j; i < n; ++i) {
      const int o = want_origin[static_cast<std::size_t>(i)];
      for (int c = 0; c < n; ++c)
        if (c < b.j || c >= b.j + b.w)
          want_after[static_cast<std::size_t>(i) * ld + c] = before[static_cast<std::size_t>(o) * ld + c];
      want_perm[static_cast<std::size_t>(i)] = perm0[static_cast<std::size_t>(o)];
    }
    CHECK(first_difference(after, want_after, ld) == "");
    CHECK(first_difference(perm.download(), want_perm) == "");
  }
}

TEST_CASE(
    "compose_interchanges and apply_row_pairs (the cuSOLVER leaves' pairs, the one-pass path) give "
    "bitwise the sequential interchanges",
    "[gpu]") {
  TCSOLVE_GPU_ROW_SWAP_SKIP_WITHOUT_GPU("the composed interchanges test");
  for (int ld : {1000, 1005}) {
    INFO("ld = " << ld);
    const int n = 1000;
    const std::vector<Block> blocks =
        random_plan(n, 512, 32, Targets::mixed, 500u + static_cast<unsigned>(ld));
    const std::vector<float> a0 = random_matrix(n, ld, 501);
    const std::vector<int> perm0 = random_permutation(n, 502);
    std::vector<float> want = a0;
    std::vector<int> want_perm = perm0;
    // sgetrf's ipiv per leaf: 1-based within rows c0..n-1.
    std::vector<int> ipiv_all;
    std::vector<std::size_t> ipiv_offset;
    for (const Block& b : blocks)
      for (const Leaf& l : b.leaves) {
        apply_on_host(want, ld, 0, n, l, &want_perm);
        ipiv_offset.push_back(ipiv_all.size());
        for (int q : l.targets) ipiv_all.push_back(q - l.c0 + 1);
      }
    cuda::DeviceBuffer<float> a(a0);
    cuda::DeviceBuffer<int> perm(perm0), ipiv(ipiv_all);
    cuda::DeviceBuffer<int> pairs(kernels::interchange_scratch_ints(kernels::kMaxLeafWidth));
    std::size_t k = 0;
    for (const Block& b : blocks)
      for (const Leaf& l : b.leaves) {
        kernels::compose_interchanges(nullptr, ipiv.data() + ipiv_offset[k++], l.c0, l.w, n, pairs.data());
        kernels::apply_row_pairs(nullptr, a.data(), ld, n, l.c0, l.w, pairs.data(), perm.data());
      }
    CHECK(first_difference(a.download(), want, ld) == "");
    CHECK(first_difference(perm.download(), want_perm) == "");
  }
}

TEST_CASE("row interchange times at n = 16384, w = 512 (information only)", "[gpu]") {
  TCSOLVE_GPU_ROW_SWAP_SKIP_WITHOUT_GPU("the row interchange timing");
  constexpr int kN = 16384, kW = 512, kCalls = 20;
  // The first block: its 512 rows and 512 rows below it move (partial pivoting's most).
  std::vector<int> origin(kN);
  std::iota(origin.begin(), origin.end(), 0);
  std::mt19937 rng(600);
  std::vector<int> below(kN - kW);
  std::iota(below.begin(), below.end(), kW);
  std::shuffle(below.begin(), below.end(), rng);
  for (std::size_t i = 0; i < kW; ++i) std::swap(origin[i], origin[static_cast<std::size_t>(below[i])]);
  const int moved = moved_rows(origin, 0);
  cuda::DeviceBuffer<float> a(static_cast<std::size_t>(kN) * kN);  // contents do not matter
  cuda::DeviceBuffer<int> perm(random_permutation(kN, 601)), d_origin(origin);
  cuda::DeviceBuffer<int> scratch(kernels::block_permutation_scratch_ints(kN));
  kernels::apply_block_permutation(nullptr, a.data(), kN, kN, 0, kW, d_origin.data(), perm.data(),
                                   scratch.data());  // warm-up
  cuda::EventTimer timer;
  timer.start();
  for (int i = 0; i < kCalls; ++i)
    kernels::apply_block_permutation(nullptr, a.data(), kN, kN, 0, kW, d_origin.data(), perm.data(), scratch.data());
  const float ms = timer.stop_ms();
  const double us = 1000.0 * ms / kCalls;
  const double bytes = 2.0 * moved * (kN - kW) * sizeof(float);
  std::printf(
      "\napply_block_permutation, n = %d, w = %d, %d moved rows: %.1f us per call (%.0f GB/s of moved "
      "rows)\n",
      kN, kW, moved, us, bytes / (us * 1e3));

  const std::vector<Block> blocks = random_plan(kN, kW, 32, Targets::fresh_below, 602);
  DevicePairs pairs(blocks);
  const Block& b = blocks[0];
  kernels::reset_origin(nullptr, d_origin.data(), 0, kN);
  timer.start();
  for (std::size_t k = 0; k < b.leaves.size(); ++k)
    kernels::apply_row_pairs_in_block(nullptr, a.data(), kN, b.leaves[k].c0, b.leaves[k].w, 0, kW,
                                      pairs.all.data() + pairs.offset[k], d_origin.data());
  const float leaves_ms = timer.stop_ms();
  std::printf("apply_row_pairs_in_block, 512-column block, 64 rows a leaf: %.1f us per leaf\n",
              1000.0 * leaves_ms / static_cast<double>(b.leaves.size()));
  CHECK(moved == 2 * kW);
}

#endif  // TCSOLVE_HAVE_CUDA
