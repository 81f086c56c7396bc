// exp2_tab.h — 2^z by a 16-entry table, as the CPU kernels (src/cpu/simd/vmath.h) and the CUDA
// kernels (src/cuda/act_math.h) evaluate it: the magic constant, the polynomial and the table, in
// one place so both compute the same exponentials. Plain constants; no code.
#ifndef FFN_EXP2_TAB_H
#define FFN_EXP2_TAB_H

// z = n16 + r, n16 a multiple of 1/16, |r| ≤ 1/32: adding FFN_EXP2_MAGIC = 1.5·2^19 (ulp 1/16)
// rounds z to n16 and leaves 16·n16 mod 16 in the low mantissa bits, the table index j; the power
// of two is 2^floor(n16). So 2^z = 2^floor(n16)·T_j·2^r, T_j = 2^(j/16) (a hi + lo pair).
#define FFN_EXP2_MAGIC 0x1.8p19f
// 2^r - 1 ≈ r·(C1 + C2·r + C3·r²) on |r| ≤ 1/32 + 1e-4: relative error 2.4e-9 (0.04 ulp).
#define FFN_EXP2_C1 0x1.62e43p-1f
#define FFN_EXP2_C2 0x1.ebff98p-3f
#define FFN_EXP2_C3 0x1.c6b29ep-5f

// 2^(j/16) rounded to f32, j = 0..15.
#define FFN_EXP2_TAB_HI                                                                     \
    0x1p+0f, 0x1.0b5586p+0f, 0x1.172b84p+0f, 0x1.2387a6p+0f, 0x1.306fep+0f, 0x1.3dea64p+0f, \
        0x1.4bfdaep+0f, 0x1.5ab07ep+0f, 0x1.6a09e6p+0f, 0x1.7a1148p+0f, 0x1.8ace54p+0f,     \
        0x1.9c4918p+0f, 0x1.ae89fap+0f, 0x1.c199bep+0f, 0x1.d5818ep+0f, 0x1.ea4afap+0f
// 2^(j/16) - hi_j, rounded to f32.
#define FFN_EXP2_TAB_LO                                                                            \
    0x0p+0f, 0x1.9f3122p-25f, -0x1.c15742p-27f, 0x1.ceac48p-25f, 0x1.4636e2p-25f, 0x1.824684p-25f, \
        -0x1.593abcp-25f, -0x1.5bd5ecp-27f, 0x1.9fcef4p-26f, -0x1.829fdp-25f, 0x1.15506ep-27f,     \
        0x1.51f848p-27f, -0x1.a94b14p-26f, -0x1.3d56b2p-27f, -0x1.822dbcp-27f, 0x1.52486cp-27f

#endif  // FFN_EXP2_TAB_H
