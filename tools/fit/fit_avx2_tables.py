#!/usr/bin/env python3
# fit_avx2_tables.py — regenerates the polynomial tables and float-pair constants of the AVX2
# kernels (src/cpu/x86_avx2/), which are pasted there by hand; run it and compare when changing
# any of them. Needs mpmath (Debian: python3-mpmath); 40-digit Chebyshev fits, coefficients
# rounded to f32, and the resulting relative errors printed in ulps of f32 (2^-24 relative).
#
#   python3 tools/fit/fit_avx2_tables.py
#
# Prints, in C:
#   - gelu_erf_avx2.c: Wc(t) = t·Q(t)·e^{t²/2} (Q(t) = Φ(-t) = erfc(t/√2)/2) on the binades
#     [0.5,1) ... [16,32): per binade a degree-9 polynomial in s = t - center with a float-pair
#     constant term (ffn__erfw_*, lanes 6 and 7 repeat binade 5), and Ps(v) = (Φ(√v) - 1/2)/√v on
#     v = x² ∈ [0, 0.25] (FFN_ERF_PS0..5);
#   - vmath_avx2.h: the fast path's 2^r = 1 + C1·r + r²·Q(r) on |r| ≤ 0.5005, C1 = ln 2 rounded
#     (FFN_AVX2_EXP2_*), and the general path's e^r = 1 + r + r²·P(r) on |r| ≤ ln2/2 + 2^-10
#     (FFN_AVX2_EXP_C2..C6). The committed C3..C6 come from an earlier run of this fit on a
#     slightly different interval (0.19 ulp); the set printed here (0.17 ulp) is equivalent;
#     everything else printed is bit-identical to the committed constants;
#   - the float pairs (hi + lo) of log2(e), 1.702·log2(e), √(8/π)(·log2 e), 0.044715·√(8/π)
#     (·log2 e) used by the kernels.
import struct

import mpmath as mp

mp.mp.dps = 40


def f32(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0]


def hx(v):  # C hex-float literal of an f32 value
    if v == 0:
        return '0.0f'
    s = float(v).hex()
    m, e = s.split('p')
    m = m.rstrip('0')
    m = m + '0' if m.endswith('.') else m
    return m + 'p' + e + 'f'


def pair(v):
    h = f32(v)
    return h, f32(v - h)


# --- gelu_erf: Wc on six binades ------------------------------------------------------------------
def Q(t):
    return mp.erfc(t / mp.sqrt(2)) / 2


def Wc(t):
    return t * Q(t) * mp.exp(t * t / 2)


PIECES = [(0.5, 1), (1, 2), (2, 4), (4, 8), (8, 16), (16, 32)]
DEG = 9
rows, centers, worst = [], [], 0
for a, b in PIECES:
    c, h = mp.mpf(a + b) / 2, mp.mpf(b - a) / 2
    co = list(reversed(mp.chebyfit(lambda s: Wc(c + s), [-h, h], DEG + 1)))  # c0 .. c9
    c0h, c0l = pair(co[0])
    row = [c0h, c0l] + [f32(x) for x in co[1:]]
    rows.append(row)
    centers.append(float(c))
    for i in range(201):  # error of the f32 coefficients (c0 as a pair)
        s = -h + 2 * h * i / 200
        p = mp.mpf(0)
        for k in range(DEG, 0, -1):
            p = (p + row[k + 1]) * s
        worst = max(worst, abs((p + c0h + c0l) / Wc(c + s) - 1))


def arr(name, vals):
    vals = vals + [vals[-1]] * (8 - len(vals))
    return 'static const float %s[8] __attribute__((aligned(32))) = {%s};' % (
        name, ', '.join(hx(v) for v in vals))


print('// gelu_erf_avx2.c: Wc(t), relative error %.3f ulp' % float(worst / 2**-24))
print(arr('ffn__erfw_center', centers))
print(arr('ffn__erfw_c0h', [r[0] for r in rows]))
print(arr('ffn__erfw_c0l', [r[1] for r in rows]))
for k in range(1, DEG + 1):
    print(arr('ffn__erfw_c%d' % k, [r[k + 1] for r in rows]))


# --- gelu_erf: Ps(v) for |x| < 0.5 ----------------------------------------------------------------
def Ps(v):
    if v == 0:
        return 1 / mp.sqrt(2 * mp.pi)
    x = mp.sqrt(v)
    return (mp.ncdf(x) - mp.mpf(1) / 2) / x


ps = [f32(c) for c in mp.chebyfit(Ps, [0, 0.25], 6)]  # highest first
err = max(abs(sum(c * (mp.mpf(i) / 1600)**(5 - k) for k, c in enumerate(ps)) /
              Ps(mp.mpf(i) / 1600) - 1) for i in range(401))
print('// gelu_erf_avx2.c: Ps, relative error %.3f ulp' % float(err / 2**-24))
for k, c in enumerate(reversed(ps)):
    print('#define FFN_ERF_PS%d %s' % (k, hx(c)))

# --- vmath_avx2.h: 2^r ----------------------------------------------------------------------------
C1 = f32(mp.log(2))


def Q2(r):
    if abs(r) < mp.mpf('1e-20'):
        return mp.log(2)**2 / 2
    return (mp.power(2, r) - 1 - C1 * r) / (r * r)


q2 = [f32(c) for c in mp.chebyfit(Q2, [-0.5005, 0.5005], 5)]  # highest first
err = 0
for i in range(-2000, 2001):
    r = mp.mpf(i) / 4000 * 1.001
    q = mp.mpf(0)
    for c in q2:
        q = q * r + c
    err = max(err, abs((1 + C1 * r + r * r * q) / mp.power(2, r) - 1))
print('// vmath_avx2.h: 2^r, relative error %.3f ulp' % float(err / 2**-24))
print('#define FFN_AVX2_EXP2_C1 %s' % hx(C1))
for k, c in enumerate(reversed(q2)):
    print('#define FFN_AVX2_EXP2_Q%d %s' % (k, hx(c)))

# --- vmath_avx2.h: e^r (general path) ----------------------------------------------------------
def Pe(r):
    if abs(r) < mp.mpf('1e-20'):
        return mp.mpf(1) / 2
    return (mp.exp(r) - 1 - r) / (r * r)


RE = mp.log(2) / 2 + mp.mpf(2)**-10
pe = [f32(c) for c in mp.chebyfit(Pe, [-RE, RE], 5)]  # highest first
err = 0
for i in range(-2000, 2001):
    r = RE * i / 2000
    q = mp.mpf(0)
    for c in pe:
        q = q * r + c
    err = max(err, abs((1 + r + r * r * q) / mp.exp(r) - 1))
print('// vmath_avx2.h: e^r, relative error %.3f ulp' % float(err / 2**-24))
for k, c in enumerate(reversed(pe)):
    print('#define FFN_AVX2_EXP_C%d %s' % (k + 2, hx(c)))

# --- float pairs ----------------------------------------------------------------------------------
L = 1 / mp.log(2)
K = mp.sqrt(8 / mp.pi)
M = K * mp.mpf('0.044715')
for name, v in (('log2(e)', L), ('log2(e)/2', L / 2), ('1.702', mp.mpf('1.702')),
                ('1.702*log2(e)', mp.mpf('1.702') * L), ('K = sqrt(8/pi)', K),
                ('M = 0.044715*K', M), ('K*log2(e)', K * L), ('M*log2(e)', M * L)):
    h, lo = pair(v)
    print('// %-16s HI %-16s LO %s' % (name, hx(h), hx(lo)))
