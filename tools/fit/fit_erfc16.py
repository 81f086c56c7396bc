#!/usr/bin/env python3
# fit_erfc16.py — the polynomial of erf-GeLU's 16-bit tier on the GPU (src/cuda/act_math.h,
# ffn_cm_tier16_erf): erfc(z) = t·exp(-z² + P(t)), t = 1/(1 + z/2), the form of Numerical
# Recipes' erfcc with a degree-5 P fitted where the tier uses it, s = |x| ≤ 12 (z = s/√2,
# t ∈ [1/(1 + 12/(2√2)), 1]): least squares of P(t) - log(erfc(z)/t) - z² over 200 Chebyshev
# nodes in t, 40 digits (mpmath), the coefficients rounded to f32. Prints them as C and the
# largest error of P with those f32 coefficients over 4,001 points of the interval (the relative
# error of erfc it makes: 2^-16.8). Needs mpmath (Debian: python3-mpmath).
#
#   python3 tools/fit/fit_erfc16.py
import math
import struct

import mpmath as mp

DEG = 5
mp.mp.dps = 40


def f32(x):
    return struct.unpack("f", struct.pack("f", float(x)))[0]


def target(t):
    z = 2 * (1 / t - 1)
    return mp.log(mp.erfc(z) / t) + z * z


def main():
    t0 = mp.mpf(1) / (1 + mp.mpf(12) / (2 * mp.sqrt(2)))
    n = 200
    nodes = [(t0 + 1) / 2 + (1 - t0) / 2 * mp.cos(mp.pi * (k + mp.mpf(0.5)) / n) for k in range(n)]
    a = mp.matrix(n, DEG + 1)
    b = mp.matrix(n, 1)
    for i, t in enumerate(nodes):
        for j in range(DEG + 1):
            a[i, j] = t**j
        b[i] = target(t)
    c = [f32(v) for v in mp.lu_solve(a.T * a, a.T * b)]
    worst = 0.0
    for k in range(4001):
        t = t0 + (1 - t0) * k / 4000
        p = c[DEG]
        for j in range(DEG - 1, -1, -1):
            p = p * float(t) + c[j]
        worst = max(worst, abs(p - float(target(t))))
    for j, v in enumerate(c):
        print(f"#define FFN_CM_ERFC16_P{j} {float.hex(v).replace('0000000p', 'p')}f")
    print(f"// largest error of P: {worst:.3g} = 2^{math.log2(worst):.1f}")


if __name__ == "__main__":
    main()
