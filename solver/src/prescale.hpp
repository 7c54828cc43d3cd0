// Exact power-of-two prescaling of a system near FP64's underflow threshold (solve(), both
// backends). The refinement's residual r = b - A x is formed on the system as given; when the
// entries of A or b are so small that their products with x fall among FP64's subnormal numbers,
// r carries absolute errors of 2^-1074 per operation and dsgesv's criterion
// ||r|| <= sqrt(n) ||x|| ||A|| eps64 can no longer be met, although the equilibrated system is
// exact and easy (a random 48 x 48 system times 1e-309 "diverged" at backward error 1.4e-15).
// So such a system is solved as its scaled copy
//   A' = 2^s A,  b'_j = 2^t_j b_j,  x_j = 2^(s - t_j) x'_j,
// with s, t_j >= 0 chosen so that max|A'| and max|b'_j| lie in [1, 2): scaling up by a power of
// two is exact (a subnormal times 2^k is a normal number with the same bits of significance), so
// A' x' = b' is the same system and its residual has full precision. Only A or columns of b
// whose largest entry is below kPrescaleBelow are scaled: above it every product of two such
// entries is a normal number, and the system is solved as given (no copy of A). Host systems
// only (solve); solve_device takes its system as given.
#pragma once

#include <vector>

#include "tcsolve/solver/solver.hpp"
#include "tcsolve/solver/system.hpp"

namespace tcsolve::detail {

/// A or a column of b whose largest |entry| is below this is scaled (2^-511: the product of two
/// numbers at or above it is at least 2^-1022, FP64's smallest normal number).
inline constexpr double kPrescaleBelow = 0x1p-511;

/// The exponents of the scaling: A' = 2^a A, b'_j = 2^b[j] b_j (all >= 0).
struct Prescale {
  int a = 0;
  std::vector<int> b;
  bool any() const;
};

/// The scaling `sys` needs, max_abs_a its largest |a_ij| (check_system's result): Prescale::any()
/// is false for every system away from underflow.
Prescale prescale_for(const LinearSystem& sys, double max_abs_a);

/// sys scaled by p: A' = 2^a A, b'_j = 2^b_j b_j, x_true'_j = 2^(b_j - a) x_true_j (exact unless
/// that last one underflows; the forward error is computed again on the original by unscale).
LinearSystem prescaled(const LinearSystem& sys, const Prescale& p);

/// The result of the scaled system as the original's: x_j = 2^(a - b_j) x'_j, the forward error
/// against the original x_true, and a note. The backward error is the scaled system's (the
/// normwise backward error is invariant under scaling of A and b, up to rounding).
void unscale(SolveResult& res, const Prescale& p, const LinearSystem& original);

}  // namespace tcsolve::detail
