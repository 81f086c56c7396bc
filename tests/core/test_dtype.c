// test_dtype.c — the scalar dtype conversions (src/core/dtype.c):
//   - every bf16 and f16 bit pattern: decoded against an independent decode (ldexp of the
//     fields), and round-trips through f32 (NaN stays NaN, quiet, with its sign);
//   - f32 -> bf16 and f32 -> f16 against an independent rounding in double arithmetic (scale by
//     the target spacing, round half to even with the 2^52 trick, scale back; overflow past the
//     threshold), over every `stride`-th f32 bit pattern and all near-half-way cases (each
//     target midpoint and its f32 neighbours), zeros keeping their sign, NaN -> quiet NaN.
//   test_dtype [--stride N]   (default 127; the `slow` registration uses 7)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "testutil.h"

#define FFN__DEFAULT_STRIDE 127u

struct ffn__fmt {
    const char *name;
    int prec, emin;       // significand bits; exponent of the smallest normal binade
    double overflow;      // |v| ≥ overflow rounds to inf
    double spacing[256];  // target spacing for each f32 biased exponent
};

static void ffn__fmt_init(struct ffn__fmt *f, const char *name, int prec, int emin,
                          double overflow) {
    f->name = name;
    f->prec = prec;
    f->emin = emin;
    f->overflow = overflow;
    for (int e = 0; e < 256; e++) {
        int x = e == 0 ? -126 : e - 127;  // the f32 binade (subnormal f32: that of 2^-126)
        if (x < emin) x = emin;
        f->spacing[e] = ldexp(1.0, x - (prec - 1));
    }
}

// Round x (finite) to the format, in double: a/q is exact (q a power of two, a has 24 bits), and
// adding then subtracting 2^52 rounds a value below 2^52 to an integer, half to even.
static double ffn__expect(const struct ffn__fmt *f, float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    const double a = fabs((double)x);
    if (a >= f->overflow) return copysign(INFINITY, x);
    const double q = f->spacing[(u >> 23) & 0xff];
    volatile double t = a / q + 0x1p52;
    const double r = (t - 0x1p52) * q;
    return copysign(r, x);
}

static float ffn__convert(const struct ffn__fmt *f, float x, uint16_t *bits) {
    if (f->prec == 8) {
        *bits = ffn_f32_to_bf16(x);
        return ffn_bf16_to_f32(*bits);
    }
    *bits = ffn_f32_to_f16(x);
    return ffn_f16_to_f32(*bits);
}

static void ffn__check_one(const struct ffn__fmt *f, float x) {
    uint16_t bits;
    const float got = ffn__convert(f, x, &bits);
    if (isnan(x)) {
        const uint16_t quiet = f->prec == 8 ? 0x0040 : 0x0200;
        if (!(isnan(got) && (bits & quiet) && (bool)signbit(got) == (bool)signbit(x)))
            FAIL("%s(NaN %08x) = %04x: not a quiet NaN of the same sign", f->name, ffn_f32_bits(x),
                 bits);
        return;
    }
    const double want = ffn__expect(f, x);
    if (!(got == want && !signbit(got) == !signbit(want)))
        FAIL("%s(%a) = %a (%04x), want %a", f->name, x, got, bits, want);
}

// Independent decode of a 16-bit pattern.
static double ffn__decode(uint16_t h, bool bf16) {
    const int ebits = bf16 ? 8 : 5, mbits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
    const int sign = h >> 15, e = (h >> mbits) & ((1 << ebits) - 1), m = h & ((1 << mbits) - 1);
    double v;
    if (e == (1 << ebits) - 1)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, 1 - bias - mbits);
    else
        v = ldexp(m + (1 << mbits), e - bias - mbits);
    return sign ? -v : v;
}

int main(int argc, char **argv) {
    uint32_t stride = FFN__DEFAULT_STRIDE;
    if (argc == 3 && !strcmp(argv[1], "--stride")) stride = (uint32_t)strtoul(argv[2], NULL, 10);
    if (stride == 0) {
        printf("usage: test_dtype [--stride N]\n");
        return 2;
    }
    ffn_check_begin("dtype");
    static struct ffn__fmt bf16, f16;
    ffn__fmt_init(&bf16, "f32_to_bf16", 8, -126, 0x1.ffp127);
    ffn__fmt_init(&f16, "f32_to_f16", 11, -14, 65520.0);

    // Every 16-bit pattern: decode, round trip.
    for (uint32_t h = 0; h < 65536; h++) {
        for (int b = 0; b < 2; b++) {
            const float v = b ? ffn_bf16_to_f32((uint16_t)h) : ffn_f16_to_f32((uint16_t)h);
            const double want = ffn__decode((uint16_t)h, b);
            const uint16_t back = b ? ffn_f32_to_bf16(v) : ffn_f32_to_f16(v);
            const char *name = b ? "bf16" : "f16";
            if (isnan(want)) {
                const uint16_t quiet = b ? 0x0040 : 0x0200;
                CHECK(isnan(v) && (bool)signbit(v) == (h >> 15) && (back & quiet) &&
                          (back >> 15) == (h >> 15) &&
                          isnan(b ? ffn_bf16_to_f32(back) : ffn_f16_to_f32(back)),
                      "%s NaN %04x -> %a -> %04x", name, h, v, back);
            } else {
                CHECK(v == want && !signbit(v) == !signbit(want), "%s %04x decodes to %a, want %a",
                      name, h, v, want);
                CHECK(back == h, "%s %04x -> %a -> %04x", name, h, v, back);
            }
        }
    }
    // Every stride-th f32 pattern.
    int64_t n = 0;
    for (uint64_t u = 0; u <= UINT32_MAX; u += stride, n++) {
        const float x = ffn_f32_from_bits((uint32_t)u);
        ffn__check_one(&bf16, x);
        ffn__check_one(&f16, x);
    }
    ffn_check_count(2 * n);
    // Near half-way, bf16: the low 16 bits around 0x8000 (and around 0) for every upper half.
    static const uint32_t lows[] = {0x7ffe, 0x7fff, 0x8000, 0x8001, 0x0000, 0x0001, 0xffff};
    for (uint32_t hi = 0; hi < 65536; hi++)
        for (size_t k = 0; k < sizeof lows / sizeof lows[0]; k++)
            ffn__check_one(&bf16, ffn_f32_from_bits(hi << 16 | lows[k]));
    // Near half-way, f16: every midpoint between neighbours (0..max, and max..65536) and the f32
    // values within 2 ulps of it, both signs.
    for (uint32_t k = 0; k < 0x7c00; k++) {
        const double lo = ffn__decode((uint16_t)k, false);
        const double hi = k + 1 < 0x7c00 ? ffn__decode((uint16_t)(k + 1), false) : 65536.0;
        const float mid = (float)((lo + hi) / 2);  // exact: 12 significant bits
        float x = nextafterf(nextafterf(mid, 0.0f), 0.0f);
        for (int j = 0; j < 5; j++, x = nextafterf(x, INFINITY)) {
            ffn__check_one(&f16, x);
            ffn__check_one(&f16, -x);
        }
    }
    // NaN payloads, signalling NaNs, infinities.
    static const uint32_t specials[] = {0x7f800001, 0xff800001, 0x7fc00000, 0xffffffff, 0x7fbfffff,
                                        0x7f800000, 0xff800000, 0x00000000, 0x80000000};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) {
        ffn__check_one(&bf16, ffn_f32_from_bits(specials[k]));
        ffn__check_one(&f16, ffn_f32_from_bits(specials[k]));
    }
    printf("every %u-th f32 pattern (%lld), all 16-bit patterns, half-way cases\n", stride,
           (long long)n);
    return ffn_check_summary();
}
