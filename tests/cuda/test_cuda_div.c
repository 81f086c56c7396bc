// test_cuda_div.c — the division by a multiply and a shift that the CUDA flat kernel uses to find
// the row of a chunk in views of rows (cuda_impl.h: ffn_cuda_div, ffn_cuda_div_magic), the same
// function the kernels compile, against C's `/`: every divisor up to 4096, the powers of two and
// their neighbours, random divisors up to 2^31 − 1; per divisor the numerators at and around its
// multiples (0, d − 1, d, d + 1, …), the largest ones below 2^31 and random ones. Runs without a
// GPU (in CI too).
#include <stdio.h>

#include "check.h"
#include "cuda/cuda_impl.h"

static uint64_t ffn__rng = 0x9e3779b97f4a7c15ull;

static uint32_t ffn__rand31(void) {  // xorshift64*: uniform in [0, 2^31)
    ffn__rng ^= ffn__rng >> 12, ffn__rng ^= ffn__rng << 25, ffn__rng ^= ffn__rng >> 27;
    return (uint32_t)((ffn__rng * 0x2545f4914f6cdd1dull) >> 33);
}

static int64_t ffn__checked, ffn__wrong;

static void ffn__one(uint32_t n, uint32_t d, uint32_t mul, uint32_t shift) {
    if (n >= (1u << 31)) return;
    const uint32_t q = ffn_cuda_div(n, mul, shift);
    ffn__checked++;
    if (q != n / d && ffn__wrong++ < 8)
        FAIL("%u / %u: got %u, want %u (mul %u, shift %u)", n, d, q, n / d, mul, shift);
}

static void ffn__divisor(uint32_t d) {
    uint32_t mul, shift;
    ffn_cuda_div_magic(d, &mul, &shift);
    const uint32_t top = (1u << 31) - 1;
    for (uint32_t k = 0; k < 4; k++)
        for (int e = -1; e <= 1; e++) ffn__one((uint32_t)((int64_t)k * d + e), d, mul, shift);
    const uint32_t last = top / d * d;  // the largest multiple below 2^31
    for (int e = -2; e <= 2; e++) ffn__one((uint32_t)((int64_t)last + e), d, mul, shift);
    ffn__one(top, d, mul, shift);
    for (int r = 0; r < 64; r++) ffn__one(ffn__rand31(), d, mul, shift);
    for (int r = 0; r < 16; r++) {  // around a random multiple
        const uint64_t m = (uint64_t)(ffn__rand31() / d) * d;
        for (int e = -1; e <= 1; e++) ffn__one((uint32_t)((int64_t)m + e), d, mul, shift);
    }
}

int main(void) {
    ffn_check_begin("test_cuda_div");
    int divisors = 0;
    for (uint32_t d = 1; d <= 4096; d++, divisors++) ffn__divisor(d);
    for (int s = 12; s <= 31; s++)
        for (int e = -1; e <= 1; e++) {
            const int64_t d = ((int64_t)1 << s) + e;
            if (d >= 1 && d < ((int64_t)1 << 31)) ffn__divisor((uint32_t)d), divisors++;
        }
    for (int r = 0; r < 20000; r++, divisors++) ffn__divisor(ffn__rand31() | 1u);
    for (int r = 0; r < 20000; r++, divisors++) ffn__divisor((ffn__rand31() >> (r % 31)) + 1);
    ffn_check_count(ffn__checked - ffn__wrong);
    CHECK(ffn__wrong == 0, "%lld of %lld quotients wrong", (long long)ffn__wrong,
          (long long)ffn__checked);
    printf("test_cuda_div: %d divisors, %lld quotients\n", divisors, (long long)ffn__checked);
    return ffn_check_summary();
}
