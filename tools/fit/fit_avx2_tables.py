#!/usr/bin/env python3
# fit_avx2_tables.py — regenerates the constants the AVX2 kernels use where they differ from the
# AVX-512 ones (FFN_V_LUT_FAST == 8: 8-entry vpermps lookups), and the float pairs of the shared
# kernels, and compares each with the committed value: "ok" where bit-identical, else the
# difference in f32 ulps. Exit status 1 if any differs. Needs mpmath (Debian: python3-mpmath)
# and, for the GeLU-erf table, a C compiler (`cc`; the table's generator is C).
#
#   python3 tools/fit/fit_avx2_tables.py
#
# Prints, in C, next to the file that holds each:
#   - src/cpu/exp2_tab.h: the 2^(j/16) table as float pairs (hi = 2^(j/16) rounded, lo = the rest
#     rounded); AVX2 reads its even entries, 2^(j/8) (vmath.h, FFN__EVEN);
#   - src/cpu/simd/vmath.h: the degree-3 polynomial of 2^r - 1 = r·(C1 + C2·r + C3·r² + C4·r³)
#     on |r| ≤ 1/16 + 1e-4 (FFN_V_EXP2_C2..C4, used with the 8-entry table): C1 = ln 2 rounded
#     (FFN_EXP2_C1), C2..C4 the least-squares fit of the relative error over 64 Chebyshev nodes,
#     rounded to f32 from the highest coefficient down, each lower one refitted after the one above
#     is rounded (the same coefficients result with 8 to 2001 nodes, rounded at once or one at a
#     time);
#   - src/cpu/act/gelu_erf_tables.h: the 8-interval degree-8 table of the fast GeLU-erf lanes
#     (`#elif FFN_V_LUT_FAST == 8`): Φ(-s) (F rows) and H(s) = Φ(-s) - s·φ(s) (H rows) on 8
#     intervals uniform in v = s·(s + 4), s ∈ [0, 5), by tools/fit/avx512/tab5.c (long double,
#     glibc's erfcl): `tab5 8 5 8 4 0 print` and `tab5 8 5 8 4 1 print`; this script compiles and
#     runs it. FFN_ERF_FAST_K = 8/45 rounded;
#   - the float pairs (hi + lo) of log2(e) (vmath.h), 1.702·log2(e) (quick_gelu.inc),
#     √(8/π)·log2 e and 0.044715·√(8/π)·log2 e (gelu_tanh.inc), and the plain constants √(8/π),
#     3·0.044715·√(8/π) (gelu_tanh.inc) and 1/√(2π) (gelu_erf.inc).
import os
import re
import struct
import subprocess
import sys
import tempfile

import mpmath as mp

mp.mp.dps = 40
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
bad = 0


def f32(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0]


def bits(v):
    return struct.unpack('<i', struct.pack('<f', v))[0]


def hx(v):  # C hex-float literal of an f32 value
    if v == 0:
        return '0x0p+0f'
    s = float(v).hex()
    m, e = s.split('p')
    m = m.rstrip('0')
    m = m[:-1] if m.endswith('.') else m
    return m + 'p' + e + 'f'


def pair(v):
    h = f32(v)
    return h, f32(v - h)


def src(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def floats(text):  # the hex-float literals of a piece of C, in order
    return [float.fromhex(t.rstrip('f')) for t in re.findall(r'-?0x[0-9a-fA-F.]+p[-+]?\d+f?', text)]


def macro(path, name):  # the hex-floats of the first #define name that has some
    for m in re.finditer(r'#\s*define\s+%s\b((?:.*\\\n)*.*)' % name, src(path)):
        if floats(m.group(1)):
            return floats(m.group(1))
    sys.exit('fit_avx2_tables: no value of %s in %s' % (name, path))


def compare(name, new, old):  # lists of f32 values
    global bad
    if len(new) != len(old):
        print('//   %s: %d values, %d committed' % (name, len(new), len(old)))
        bad += 1
        return
    d = [abs(bits(a) - bits(b)) for a, b in zip(new, old)]
    if any(d):
        bad += 1
        print('//   %s: %d of %d differ, by up to %d ulp' % (name, sum(1 for x in d if x), len(d),
                                                          max(d)))
    else:
        print('//   %s: ok, bit-identical (%d)' % (name, len(d)))


# --- exp2_tab.h: 2^(j/16) as float pairs; AVX2 reads the even entries --------------------------
hi16, lo16 = zip(*[pair(mp.power(2, mp.mpf(j) / 16)) for j in range(16)])
print('// src/cpu/exp2_tab.h: 2^(j/16), j = 0..15 (AVX2: j even, 2^(i/8))')
print('#define FFN_EXP2_TAB_HI ' + ', '.join(hx(v) for v in hi16))
print('#define FFN_EXP2_TAB_LO ' + ', '.join(hx(v) for v in lo16))
compare('FFN_EXP2_TAB_HI', list(hi16), macro('src/cpu/exp2_tab.h', 'FFN_EXP2_TAB_HI'))
compare('FFN_EXP2_TAB_LO', list(lo16), macro('src/cpu/exp2_tab.h', 'FFN_EXP2_TAB_LO'))

# --- vmath.h: 2^r - 1 = r·(C1 + C2·r + C3·r² + C4·r³) on |r| ≤ 1/16 + 1e-4 ------------------------
C1 = f32(mp.log(2))
R = mp.mpf(1) / 16 + mp.mpf('1e-4')
NODES = [R * mp.cos(mp.pi * (i + mp.mpf(1) / 2) / 64) for i in range(64)]
DEG = 3


def fit_pm1(fixed):  # least squares of the relative error of 1 + r·P(r), C1 and `fixed` given
    free = [k for k in range(2, DEG + 1 + 1) if k not in fixed]
    A = mp.matrix(len(NODES), len(free))
    b = mp.matrix(len(NODES), 1)
    for i, r in enumerate(NODES):
        w = 1 / mp.power(2, r)
        for j, k in enumerate(free):
            A[i, j] = w * r**k
        b[i] = w * (mp.power(2, r) - 1 - C1 * r - sum(v * r**k for k, v in fixed.items()))
    sol = mp.lu_solve(A.T * A, A.T * b)
    out = dict(fixed)
    out.update({k: sol[j] for j, k in enumerate(free)})
    return out


fixed = {}
for k in range(DEG + 1, 1, -1):  # C4, C3, C2: round the highest, refit the lower ones
    fixed[k] = mp.mpf(f32(fit_pm1(fixed)[k]))
cs = [C1] + [float(fixed[k]) for k in range(2, DEG + 2)]
err = 0
for i in range(-2000, 2001):
    r = R * i / 2000
    p = mp.mpf(0)
    for c in reversed(cs):
        p = p * r + c
    err = max(err, abs((1 + r * p) / mp.power(2, r) - 1))
print('// src/cpu/simd/vmath.h: 2^r - 1 on |r| <= 1/16 + 1e-4, relative error %.2g (%.3f ulp)' %
      (float(err), float(err / 2**-24)))
print('#define FFN_EXP2_C1 %s  // ln 2 rounded (exp2_tab.h)' % hx(C1))
for k in range(2, DEG + 2):
    print('#define FFN_V_EXP2_C%d %s' % (k, hx(cs[k - 1])))
compare('FFN_EXP2_C1', [C1], macro('src/cpu/exp2_tab.h', 'FFN_EXP2_C1'))
compare('FFN_V_EXP2_C2..C4', cs[1:],
        sum((macro('src/cpu/simd/vmath.h', 'FFN_V_EXP2_C%d' % k) for k in range(2, DEG + 2)), []))

# --- gelu_erf_tables.h: the 8-interval degree-8 table (tools/fit/avx512/tab5.c) -----------------
K = f32(mp.mpf(8) / 45)
print('// src/cpu/act/gelu_erf_tables.h (FFN_V_LUT_FAST == 8)')
print('#define FFN_ERF_FAST_K %s  // 8/45' % hx(K))
compare('FFN_ERF_FAST_K', [K], macro('src/cpu/act/gelu_erf_tables.h', 'FFN_ERF_FAST_K'))
with tempfile.TemporaryDirectory() as tmp:
    exe = os.path.join(tmp, 'tab5')
    subprocess.run(['cc', '-O2', os.path.join(ROOT, 'tools/fit/avx512/tab5.c'), '-o', exe, '-lm'],
                   check=True)
    out = [subprocess.run([exe, '8', '5', '8', '4', str(mode), 'print'], check=True,
                          capture_output=True, text=True).stdout for mode in (0, 1)]
# Each run prints "scale K", then the rows centre, c0 .. c8, c0 low part (8 values each).
runs = []
for text in out:
    vals = floats(text.split('\n', 1)[1])
    runs.append([vals[i:i + 8] for i in range(0, len(vals), 8)])
F, H = runs
table = [F[0]] + F[1:10] + [F[10]] + H[1:10]  # centre, F c0..c8, F c0 low, H c0..c8
names = ['centre'] + ['c%d' % k for k in range(9)] + ['c0 (low part)'] + \
        ['H c%d' % k for k in range(9)]
print('static const float ffn__erf_fast_tab[FFN_ERF_FAST_ROWS][8] = {')
for nm, row in zip(names, table):
    print('    {%s},  // %s' % (', '.join(hx(v) for v in row), nm))
print('};')
blk = src('src/cpu/act/gelu_erf_tables.h')
blk = blk[blk.index('#elif FFN_V_LUT_FAST == 8'):]
blk = blk[blk.index('ffn__erf_fast_tab'):]
blk = blk[blk.index('= {') + 3:blk.index('\n};')]
blk = re.sub(r'//.*', '', blk)
compare('ffn__erf_fast_tab (8 intervals)', sum(table, []), floats(blk))

# --- float pairs and plain constants of the shared kernels ---------------------------------------
L = 1 / mp.log(2)
KS = mp.sqrt(8 / mp.pi)
M = KS * mp.mpf('0.044715')
print('// float pairs (hi + lo) and constants')
for path, hname, lname, v in (('src/cpu/simd/vmath.h', 'FFN_LOG2E_HI', 'FFN_LOG2E_LO', L),
                              ('src/cpu/act/quick_gelu.inc', 'FFN_QG_L2E_HI', 'FFN_QG_L2E_LO',
                               mp.mpf('1.702') * L),
                              ('src/cpu/act/gelu_tanh.inc', 'FFN_KL_HI', 'FFN_KL_LO', KS * L),
                              ('src/cpu/act/gelu_tanh.inc', 'FFN_ML_HI', 'FFN_ML_LO', M * L),
                              ('src/cpu/act/gelu_tanh.inc', 'FFN_K_HI', None, KS),
                              ('src/cpu/act/gelu_tanh.inc', 'FFN_M3_HI', None, 3 * M),
                              ('src/cpu/act/gelu_erf.inc', 'FFN_INV_SQRT_2PI', None,
                               1 / mp.sqrt(2 * mp.pi))):
    h, lo = pair(v)
    new, old = [h], macro(path, hname)[:1]
    print('#define %s %s  // %s' % (hname, hx(h), path))
    if lname:
        print('#define %s %s' % (lname, hx(lo)))
        new.append(lo)
        old += macro(path, lname)[:1]
    compare(hname + (' + ' + lname if lname else ''), new, old)

print('// %s' % ('every constant bit-identical to the committed one' if not bad else
                 '%d comparison(s) differ' % bad))
sys.exit(1 if bad else 0)
