"""std::mt19937_64 in Python (the C++ standard's 64-bit Mersenne Twister: seeding, twist,
tempering), and the ``urand`` draws of tcsolve's test inputs (gemm/src/random.cpp: 53 random bits
-> U[0, 1), the affine map to U(lo, hi) in FP64, one rounding to FP32), so that the tests draw
bit for bit the matrices ``tcsolve gemm-bench`` draws for a seed. Checked against the standard's
value: the 10000th draw of a default-seeded (5489) engine is 9981545732273789042.
"""

import numpy as np

_N, _M = 312, 156
_MASK = (1 << 64) - 1
_UPPER, _LOWER = 0xFFFFFFFF80000000, 0x7FFFFFFF
_A = 0xB5026F5AA96619E9


class Mt19937_64:
    def __init__(self, seed=5489):
        mt = [seed & _MASK]
        for i in range(1, _N):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & _MASK)
        self.mt, self.index = mt, _N

    def _twist(self):
        mt = self.mt
        for i in range(_N):
            x = (mt[i] & _UPPER) | (mt[(i + 1) % _N] & _LOWER)
            xa = x >> 1
            if x & 1:
                xa ^= _A
            mt[i] = mt[(i + _M) % _N] ^ xa
        self.index = 0

    def __call__(self):
        if self.index >= _N:
            self._twist()
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y

    def draws(self, count):
        """The next ``count`` draws as a uint64 NumPy array."""
        return np.array([self() for _ in range(count)], dtype=np.uint64)


def urand(rng, count, lo=-1.0, hi=1.0):
    """``count`` draws of tcsolve's urand:lo:hi (gemm/src/random.cpp), as float32."""
    u = (rng.draws(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return (lo + (hi - lo) * u).astype(np.float32)


def gemm_bench_inputs(m, n, k, seed=1):
    """The A (m x k) and B (k x n) of ``tcsolve gemm-bench --m M --n N --k K --seed S`` (urand,
    shape square): drawn column-major from one engine, A first, then B. Returned as NumPy arrays
    of those shapes (F-ordered, the draws' own layout)."""
    rng = Mt19937_64(seed)
    a = urand(rng, m * k).reshape((k, m)).T
    b = urand(rng, k * n).reshape((n, k)).T
    return a, b
