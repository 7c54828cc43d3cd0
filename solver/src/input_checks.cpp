// The input checks and the exact-singularity certificate (input_checks.hpp).
#include "input_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "tcsolve/runtime/error.hpp"

namespace tcsolve::detail {

std::string zero_pivot_message(int column) {
  return "matrix is exactly singular: zero pivot in column " + std::to_string(column + 1) + " (1-based)";
}

double check_system(const LinearSystem& sys) {
  if (sys.A.rows() < 1 || sys.A.rows() != sys.A.cols())
    throw InvalidInput("A must be square and non-empty, got " + std::to_string(sys.A.rows()) + " x " +
                       std::to_string(sys.A.cols()));
  if (sys.b.rows() != sys.A.rows() || sys.b.cols() < 1)
    throw InvalidInput("b must have n = " + std::to_string(sys.A.rows()) +
                       " rows and at least one column, got " + std::to_string(sys.b.rows()) + " x " +
                       std::to_string(sys.b.cols()));
  if (!sys.A.allFinite() || !sys.b.allFinite()) throw InvalidInput("A or b has NaN or infinite entries");
  if (sys.x_true && (sys.x_true->rows() != sys.b.rows() || sys.x_true->cols() != sys.b.cols()))
    throw InvalidInput("x_true's shape differs from b's");
  // A zero row or column: exactly singular, found in O(n^2) before an LU of O(n^3) (an all-zero
  // A of n = 20000 ran for minutes before).
  const Eigen::Index n = sys.A.rows();
  double largest = 0;  // max |a_ij|, from the same pass
  for (Eigen::Index j = 0; j < n; ++j) {
    const double column = sys.A.col(j).cwiseAbs().maxCoeff();
    if (column == 0)
      throw InvalidInput("matrix is exactly singular: column " + std::to_string(j + 1) + " (1-based) is zero");
    largest = std::max(largest, column);
  }
  Eigen::VectorXi row_nonzero = Eigen::VectorXi::Zero(n);
  for (Eigen::Index j = 0; j < n; ++j) row_nonzero += (sys.A.col(j).array() != 0.0).cast<int>().matrix();
  for (Eigen::Index i = 0; i < n; ++i)
    if (row_nonzero[i] == 0)
      throw InvalidInput("matrix is exactly singular: row " + std::to_string(i + 1) + " (1-based) is zero");
  return largest;
}

void check_solve_options(const SolveOptions& options) {
  if (options.block_size < 0)
    throw InvalidInput("block size must be a positive integer (0: the backend's default), got " +
                       std::to_string(options.block_size));
  if (options.max_iterations < 0)
    throw InvalidInput("max_iterations must be >= 0, got " + std::to_string(options.max_iterations));
  if (options.rbt_window != 0 && (options.rbt_window < 64 || options.rbt_window > 256))
    throw InvalidInput("rbt window must be 0 (no pivoting) or 64..256 rows, got " +
                       std::to_string(options.rbt_window));
  if (options.fp64_below < kFp64BelowDefault)
    throw InvalidInput("fp64_below must be >= 0 (or kFp64BelowDefault = -1: the backend's default), got " +
                       std::to_string(options.fp64_below));
  check_plan(options.cuda_plan);
}

void check_plan(const CudaLuPlan& plan) {
  const int c = plan.leaf_chunk;
  if (c != 1 && c != 2 && c != 4 && c != 8)
    throw InvalidInput("CUDA LU plan: leaf_chunk must be 1, 2, 4 or 8, got " + std::to_string(c));
  if (plan.panel_sms != 0 && (plan.panel_sms < 16 || plan.panel_sms > 64 || plan.panel_sms % 8 != 0 ||
                              plan.panel_sms == 56))
    throw InvalidInput("CUDA LU plan: panel_sms must be 0 (auto), 16, 24, 32, 40, 48 or 64, got " +
                       std::to_string(plan.panel_sms));
  if (plan.member_share < 0 || plan.member_share > 50 || plan.member_share % 10 != 0)
    throw InvalidInput("CUDA LU plan: member_share must be 0, 10, 20, 30, 40 or 50 (percent), got " +
                       std::to_string(plan.member_share));
}

void check_lu_input(const Eigen::MatrixXd& A, int block_size) {
  if (A.rows() != A.cols() || A.rows() < 1)
    throw InvalidInput("lu_factorize: A must be square and non-empty, got " + std::to_string(A.rows()) +
                       " x " + std::to_string(A.cols()));
  if (block_size < 1)
    throw InvalidInput("block size must be a positive integer, got " + std::to_string(block_size));
  if (!A.allFinite()) throw InvalidInput("matrix A has NaN or infinite entries");
}

namespace {

// --- exact singularity: lines equal up to sign and a power of two ------------------------------

/// splitmix64's finalizer.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A line's hash, normalized by its first non-zero entry in position order (which two lines
/// equal up to s 2^k share): each non-zero entry contributes its frexp mantissa's bits, its
/// exponent minus the reference's, whether its sign differs from the reference's, and its
/// position. The contributions are added (mod 2^64), so the order does not matter.
struct LineHash {
  bool started = false;
  int ref_exp = 0;
  bool ref_negative = false;
  std::uint64_t hash = 0;
  int count = 0;  ///< non-zero entries absorbed

  void absorb(int pos, double value) { absorb_at(position_mix(pos), value); }
  /// The position's part of the hash, for callers that absorb many lines at one position.
  static std::uint64_t position_mix(int pos) { return mix(0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(pos)); }
  /// absorb() with the position's part given (position_mix(pos)).
  void absorb_at(std::uint64_t pos_mix, double value) {
    if (value == 0) return;
    // frexp's m and e from the bits (normal numbers: m's bits are the mantissa with the exponent
    // field of [1/2, 1)); frexp itself for subnormals
    std::uint64_t raw = 0;
    std::memcpy(&raw, &value, sizeof raw);
    const int field = static_cast<int>((raw >> 52) & 0x7ff);
    int e = 0;
    double m = 0;
    if (field != 0 && field != 0x7ff) {
      e = field - 1022;
      const std::uint64_t m_bits = (raw & 0x800fffffffffffffULL) | (std::uint64_t{1022} << 52);
      std::memcpy(&m, &m_bits, sizeof m);
    } else {
      m = std::frexp(value, &e);
    }
    const bool negative = m < 0;
    if (!started) {
      started = true;
      ref_exp = e;
      ref_negative = negative;
    }
    std::uint64_t bits = 0;
    const double a = std::abs(m);
    std::memcpy(&bits, &a, sizeof bits);
    hash += mix(bits ^ mix(static_cast<std::uint64_t>(static_cast<std::uint32_t>(e - ref_exp)) * 2 +
                           (negative != ref_negative ? 1 : 0)) ^
                pos_mix);
    ++count;
  }
  bool operator<(const LineHash& o) const { return hash != o.hash ? hash < o.hash : count < o.count; }
  bool operator==(const LineHash& o) const { return hash == o.hash && count == o.count; }
};

/// Two lines equal up to sign and a power of two, and neither zero, compared entry by entry.
bool proportional(const std::vector<double>& a, const std::vector<double>& b) {
  bool started = false, flip = false;
  int shift = 0;
  for (std::size_t pos = 0; pos < a.size(); ++pos) {
    const double u = a[pos], v = b[pos];
    if ((u == 0) != (v == 0)) return false;
    if (u == 0) continue;
    int eu = 0, ev = 0;
    const double mu = std::frexp(u, &eu), mv = std::frexp(v, &ev);
    if (std::abs(mu) != std::abs(mv)) return false;
    const bool f = (mu < 0) != (mv < 0);
    if (!started) {
      started = true;
      flip = f;
      shift = eu - ev;
    } else if (f != flip || eu - ev != shift) {
      return false;
    }
  }
  return started;
}

/// The groups of rows (or columns) whose hashes of the sampled entries agree, each group's lines
/// in ascending hash-then-line order, the groups in hash order: `hash_samples(h, p)` hashes every
/// line's entries at the positions p = sample_positions(n) into h.
template <class HashSamples>
std::vector<std::vector<int>> sampled_groups(int n, HashSamples&& hash_samples) {
  std::vector<LineHash> h(static_cast<std::size_t>(n));
  hash_samples(h, sample_positions(n));
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&h](int a, int b) {
    const LineHash &x = h[static_cast<std::size_t>(a)], &y = h[static_cast<std::size_t>(b)];
    return x == y ? a < b : x < y;
  });
  std::vector<std::vector<int>> groups;
  for (std::size_t g0 = 0; g0 < order.size();) {
    std::size_t g1 = g0 + 1;
    while (g1 < order.size() && h[static_cast<std::size_t>(order[g1])] == h[static_cast<std::size_t>(order[g0])]) ++g1;
    if (g1 - g0 >= 2) groups.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(g0), order.begin() + static_cast<std::ptrdiff_t>(g1));
    g0 = g1;
  }
  return groups;
}

/// The whole-line hashes of `lines` (in their order): fetch() and absorb each line (the
/// default), or one pass over the matrix in its storage order (the host's, whose rows a fetch
/// per row would read with a stride of n).
using LinesHashes = std::function<std::vector<LineHash>(bool rows, const std::vector<int>& lines)>;

/// The first pair (in the groups' order) of lines equal up to sign and a power of two: every
/// group's lines hashed whole at once (`hashes`, or fetched and hashed), and where two whole
/// hashes of a group agree the lines fetched (`fetch`) and compared entry by entry.
std::optional<std::pair<int, int>> proportional_pair(int n, bool rows, const std::vector<std::vector<int>>& groups,
                                                     const LineFetch& fetch, const LinesHashes& hashes = {}) {
  if (groups.empty()) return std::nullopt;
  std::vector<int> lines;
  for (const std::vector<int>& group : groups) lines.insert(lines.end(), group.begin(), group.end());
  std::vector<LineHash> whole;
  if (hashes) {
    whole = hashes(rows, lines);
  } else {
    std::vector<double> values;
    for (const int line : lines) {
      fetch(rows, line, values);
      LineHash h;
      for (int pos = 0; pos < n; ++pos) h.absorb(pos, values[static_cast<std::size_t>(pos)]);
      whole.push_back(h);
    }
  }
  std::size_t first = 0;  // the group's first line in `lines` and `whole`
  std::vector<double> a, b;
  for (const std::vector<int>& group : groups) {
    std::vector<std::size_t> order(group.size());
    std::iota(order.begin(), order.end(), first);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return whole[x] == whole[y] ? lines[x] < lines[y] : whole[x] < whole[y];
    });
    for (std::size_t i = 0; i < order.size(); ++i) {
      const LineHash& hi = whole[order[i]];
      if (hi.count == 0) continue;  // a zero line: the LU's zero pivot reports it
      for (std::size_t j = i + 1; j < order.size() && whole[order[j]] == hi; ++j) {
        fetch(rows, lines[order[i]], a);
        fetch(rows, lines[order[j]], b);
        if (proportional(a, b)) {
          const int x = lines[order[i]], y = lines[order[j]];
          return std::make_pair(std::min(x, y), std::max(x, y));
        }
      }
    }
    first += group.size();
  }
  return std::nullopt;
}

/// Row or column `line` of the column-major n x n matrix a (leading dimension n).
LineFetch column_major_fetch(const double* a, int n) {
  return [a, n](bool rows, int line, std::vector<double>& out) {
    const std::size_t m = static_cast<std::size_t>(n);
    out.resize(m);
    for (std::size_t pos = 0; pos < m; ++pos)
      out[pos] = rows ? a[pos * m + static_cast<std::size_t>(line)] : a[static_cast<std::size_t>(line) * m + pos];
  };
}

/// Whole-line hashes of the column-major n x n matrix a, in one pass in its storage order (the
/// rows sorted, so that each column is read forward; zeros, most of a sparse matrix's, skipped
/// before the hash).
LinesHashes column_major_hashes(const double* a, int n) {
  return [a, n](bool rows, const std::vector<int>& lines) {
    const std::size_t m = static_cast<std::size_t>(n);
    std::vector<LineHash> h(lines.size());
    if (rows) {
      std::vector<std::size_t> order(lines.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return lines[x] < lines[y]; });
      for (std::size_t pos = 0; pos < m; ++pos) {
        const double* column = a + pos * m;
        for (const std::size_t k : order)
          if (const double v = column[lines[k]]; v != 0) h[k].absorb(static_cast<int>(pos), v);
      }
    } else {
      for (std::size_t k = 0; k < lines.size(); ++k) {
        const double* column = a + static_cast<std::size_t>(lines[k]) * m;
        for (std::size_t pos = 0; pos < m; ++pos)
          if (const double v = column[pos]; v != 0) h[k].absorb(static_cast<int>(pos), v);
      }
    }
    return h;
  };
}

/// The first pair of lines equal up to sign and a power of two, from `hash_samples` (as
/// sampled_groups) and `fetch` (as proportional_pair).
template <class HashSamples>
std::optional<std::pair<int, int>> proportional_lines(int n, bool rows, HashSamples&& hash_samples,
                                                      const LineFetch& fetch, const LinesHashes& hashes = {}) {
  return proportional_pair(n, rows, sampled_groups(n, hash_samples), fetch, hashes);
}

}  // namespace

std::vector<int> sample_positions(int n) {
  constexpr int kSample = 64;
  std::vector<int> sample;
  for (int k = 0; k < std::min(n, kSample); ++k) {
    const int pos = static_cast<int>(static_cast<long long>(k) * n / std::min(n, kSample));
    if (sample.empty() || sample.back() != pos) sample.push_back(pos);
  }
  return sample;
}

/// The message for the first pair `proportional_lines` finds in the rows, then the columns.
template <class Find>
std::optional<std::string> singularity_message(Find&& find) {
  for (const bool rows : {true, false})
    if (const auto pair = find(rows))
      return "matrix is exactly singular: " + std::string(rows ? "rows " : "columns ") +
             std::to_string(pair->first + 1) + " and " + std::to_string(pair->second + 1) +
             " (1-based) are equal up to sign and a power of two";
  return std::nullopt;
}

SampledCandidates sampled_candidates(int n, const std::vector<double>& row_samples,
                                     const std::vector<double>& column_samples) {
  SampledCandidates c;
  c.n = n;
  for (const bool rows : {true, false}) {
    const std::vector<double>& samples = rows ? row_samples : column_samples;
    (rows ? c.rows : c.columns) = sampled_groups(n, [&](std::vector<LineHash>& h, const std::vector<int>& sample) {
      const std::size_t count = sample.size(), m = static_cast<std::size_t>(n);
      for (std::size_t k = 0; k < count; ++k) {
        const std::uint64_t pos = LineHash::position_mix(sample[k]);
        for (std::size_t line = 0; line < m; ++line) h[line].absorb_at(pos, samples[k * m + line]);
      }
    });
  }
  return c;
}

std::optional<std::string> verify_candidates(const SampledCandidates& c, const LineFetch& fetch,
                                             const WholeMatrix& whole) {
  if (c.rows.empty() && c.columns.empty()) return std::nullopt;
  if (whole)
    if (const double* a = whole()) {
      const LineFetch from_copy = column_major_fetch(a, c.n);
      const LinesHashes hashes = column_major_hashes(a, c.n);
      return singularity_message(
          [&](bool rows) { return proportional_pair(c.n, rows, rows ? c.rows : c.columns, from_copy, hashes); });
    }
  return singularity_message(
      [&](bool rows) { return proportional_pair(c.n, rows, rows ? c.rows : c.columns, fetch); });
}

std::optional<std::string> exact_singularity(int n, const std::vector<double>& row_samples,
                                             const std::vector<double>& column_samples,
                                             const LineFetch& fetch, const WholeMatrix& whole) {
  return verify_candidates(sampled_candidates(n, row_samples, column_samples), fetch, whole);
}

std::optional<std::string> exact_singularity(const Eigen::MatrixXd& A) {
  const int n = static_cast<int>(A.rows());
  const LineFetch fetch = column_major_fetch(A.data(), n);
  return singularity_message([&](bool rows) {
    return proportional_lines(
        n, rows,
        [&](std::vector<LineHash>& h, const std::vector<int>& sample) {  // in the storage order of A
          std::vector<std::uint64_t> mixes;
          for (const int pos : sample) mixes.push_back(LineHash::position_mix(pos));
          const std::size_t count = sample.size();
          if (rows) {
            for (std::size_t k = 0; k < count; ++k)
              for (int line = 0; line < n; ++line)
                h[static_cast<std::size_t>(line)].absorb_at(mixes[k], A(line, sample[k]));
          } else {
            for (int line = 0; line < n; ++line)
              for (std::size_t k = 0; k < count; ++k)
                h[static_cast<std::size_t>(line)].absorb_at(mixes[k], A(sample[k], line));
          }
        },
        fetch,
        column_major_hashes(A.data(), n));
  });
}

}  // namespace tcsolve::detail
