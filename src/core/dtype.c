// dtype.c — scalar f32 <-> bf16 / f16 conversions, rounding to nearest even, NaN kept quiet.
// These are the definitions the SIMD kernels are tested against.
#include <string.h>

#include "core_impl.h"

static uint32_t ffn__bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static float ffn__float(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

// bf16 is the top half of an f32: round the low 16 bits to nearest, ties to even.
uint16_t ffn_f32_to_bf16(float x) {
    uint32_t u = ffn__bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float ffn_bf16_to_f32(uint16_t h) { return ffn__float((uint32_t)h << 16); }

// f16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; subnormals below 2^-14.
uint16_t ffn_f32_to_f16(float x) {
    const uint32_t u = ffn__bits(x);
    const uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    const uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u | (uint16_t)((a >> 13) & 0x3ffu);  // NaN, quiet
    if (a >= 0x477ff000u) return sign | 0x7c00u;  // ≥ 65520 rounds to inf (and inf stays inf)
    if (a >= 0x38800000u) {                       // normal f16 (≥ 2^-14)
        uint32_t r = a - 0x38000000u;             // rebias exponent 127 -> 15
        r += 0xfffu + ((r >> 13) & 1u);           // round to nearest even at bit 13
        return sign | (uint16_t)(r >> 13);
    }
    if (a < 0x33000000u) return sign;  // < 2^-25: rounds to ±0 (2^-25 itself ties to even 0)
    // Subnormal f16: value = m · 2^-24 with m = round(a_value · 2^24).
    const uint32_t e = a >> 23;  // biased exponent, 102..112
    const uint32_t mant = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // bits to drop: (e - 127) + 24 = value's scale
    const uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    const uint32_t m = q + (rem > half || (rem == half && (q & 1u)));
    return sign | (uint16_t)m;
}

float ffn_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return ffn__float(sign | 0x7f800000u | (m << 13));  // inf / NaN
    if (e != 0) return ffn__float(sign | ((e + 112) << 23) | (m << 13));
    // Zero or subnormal: m · 2^-24, exact in f32.
    const float v = (float)m * 0x1p-24f;
    return sign ? -v : v;
}
