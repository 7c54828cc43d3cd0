// Host emulations of the cluster leaf kernels' elimination (solver/src/cuda/panel.cu's partial
// pivoting, leaf_tournament.cu's rounds), shared by their [gpu] tests: the same fmaf, the same
// reciprocal, the same tie rule, so that the device's leaves are checked bitwise; and where the
// leaves' write-back puts each row.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

namespace tcsolve::test {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline std::vector<float> host_vector(const float* p, Eigen::Index size) { return {p, p + size}; }

/// The kernel's comparison key of a candidate: |v| as bits, NaN as +inf.
inline unsigned key_of(float v) {
  float mag = std::fabs(v);
  if (mag != mag) mag = INFINITY;
  unsigned bits;
  std::memcpy(&bits, &mag, sizeof bits);
  return bits;
}

/// One round of the kernel's eliminate(), on rows `ids` (relative to c0) whose current values
/// are work.row(j): w steps; choosing (u_given null): the live row of the largest key, the
/// lower id on a tie; else step i's pivot is given[i] and its row u_given->row(i). Returns the
/// pivots; with u_out, u_out->row(i) = the pivot row at step i (columns >= i; 0 before).
inline std::vector<int> eliminate_host(RowMajorF& work, const std::vector<int>& ids, int w,
                                const std::vector<int>* given, const RowMajorF* u_given, RowMajorF* u_out) {
  const int rows = static_cast<int>(ids.size());
  std::vector<bool> live(static_cast<std::size_t>(rows), true);
  std::vector<int> chosen;
  for (int i = 0; i < w; ++i) {
    int q = -1, at = -1;
    std::vector<float> u(32, 0.0f);
    if (given) {
      q = (*given)[static_cast<std::size_t>(i)];
      for (int c = 0; c < 32; ++c) u[static_cast<std::size_t>(c)] = (*u_given)(i, c);
    } else {
      unsigned best = 0;
      for (int j = 0; j < rows; ++j) {
        if (!live[static_cast<std::size_t>(j)]) continue;
        const unsigned k = key_of(work(j, i));
        if (at < 0 || k > best || (k == best && ids[static_cast<std::size_t>(j)] < q))
          best = k, q = ids[static_cast<std::size_t>(j)], at = j;
      }
      if (at < 0) {  // no live row left
        chosen.push_back(-1);
        continue;
      }
      for (int c = 0; c < 32; ++c) u[static_cast<std::size_t>(c)] = c >= i ? work(at, c) : 0.0f;
      if (u_out)
        for (int c = 0; c < 32; ++c) (*u_out)(i, c) = u[static_cast<std::size_t>(c)];
    }
    chosen.push_back(q);
    const float pivot = u[static_cast<std::size_t>(i)];
    const float scale = pivot != 0.0f ? 1.0f / pivot : 1.0f;
    for (int j = 0; j < rows; ++j) {
      if (!live[static_cast<std::size_t>(j)]) continue;
      if (ids[static_cast<std::size_t>(j)] == q) {
        live[static_cast<std::size_t>(j)] = false;
        continue;
      }
      const float l = work(j, i) * scale;
      work(j, i) = l;
      for (int c = i + 1; c < 32; ++c) work(j, c) = std::fma(-l, u[static_cast<std::size_t>(c)], work(j, c));
    }
  }
  return chosen;
}

/// Where the write-back puts row r (relative to c0): step i's pivot at i; the rows r < w not
/// chosen in the places the chosen rows below w left, in step order; every other row stays.
inline std::vector<int> destinations(const std::vector<int>& pivots, int m, int w) {
  std::vector<int> dest(static_cast<std::size_t>(m));
  std::vector<int> below;
  std::vector<bool> top(static_cast<std::size_t>(w), false);
  for (int i = 0; i < w; ++i) {
    const int q = pivots[static_cast<std::size_t>(i)];
    if (q >= w)
      below.push_back(q);
    else
      top[static_cast<std::size_t>(q)] = true;
  }
  std::size_t next = 0;
  for (int r = 0; r < m; ++r) dest[static_cast<std::size_t>(r)] = r;
  for (int r = 0; r < w; ++r)
    if (!top[static_cast<std::size_t>(r)]) dest[static_cast<std::size_t>(r)] = below[next++];
  for (int i = 0; i < w; ++i) dest[static_cast<std::size_t>(pivots[static_cast<std::size_t>(i)])] = i;
  return dest;
}

}  // namespace tcsolve::test
