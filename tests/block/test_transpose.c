// test_transpose.c — the CPU layer's transpose (cpu/transpose.c, x86_avx2/transpose_avx2.c,
// x86_avx512/transpose_avx512.c), which the block uses to put GEMM operands in the layout oneDNN
// runs fast: against the definition d[j·ldd + i] = s[i·lds + j], bit for bit (NaN payloads,
// signed zeros, subnormals), for every R from 1 to 72 and C from 1 to 40 and a few large ones
// (whole blocks of 8, 16 and 32 rows by 8 and 16 columns, plus tails), with leading dimensions
// at and above the minimum, into destinations on a 64-byte boundary (the non-temporal paths)
// and off it, on the scalar, AVX2 and AVX-512 contexts this CPU has and on 1 and 3 threads, f32
// and 16-bit elements; the destination's padding and the bytes around it are left untouched.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/cpu_impl.h"
#include "ffn.h"

static uint64_t rng = 5u;

static uint32_t rbits(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 32);
}

// One transpose of an R x C source of esz-byte elements with leading dimensions lds ≥ C,
// ldd ≥ R, into a destination `off` elements past a 64-byte boundary; true when exact.
static bool one(ffn_ctx_t ctx, int64_t R, int64_t C, int64_t lds, int64_t ldd, size_t esz,
                int64_t off) {
    // All ones is a NaN as f32 and as bf16/f16: what the padding and the bytes around keep.
    const size_t head = (size_t)off * esz, body = (size_t)(C * ldd) * esz,
                 dbytes = (head + body + 64 + 63) / 64 * 64;
    uint32_t *s = malloc((size_t)(R * lds) * 4);
    unsigned char *dmem = aligned_alloc(64, dbytes);
    if (!s || !dmem) {
        free(s), free(dmem);
        FAIL("out of memory for R %" PRId64 " C %" PRId64, R, C);
        return false;
    }
    for (int64_t k = 0; k < R * lds; k++) s[k] = rbits();  // every pattern: NaNs, -0, subnormals
    memset(dmem, 0xff, dbytes);
    unsigned char *d = dmem + head;
    ffn_cpu_transpose(ctx, d, ldd, s, lds, R, C, esz);
    int64_t bad = 0;
    for (int64_t j = 0; j < C; j++)
        for (int64_t i = 0; i < ldd; i++) {
            const unsigned char *got = d + (size_t)(j * ldd + i) * esz;
            static const unsigned char ones[4] = {0xff, 0xff, 0xff, 0xff};
            const void *want =
                i >= R ? (const void *)ones
                       : (const void *)((const unsigned char *)s + (size_t)(i * lds + j) * esz);
            bad += memcmp(got, want, esz) != 0;
        }
    for (size_t k = 0; k < dbytes; k++)  // nothing written before or after the destination
        bad += (k < head || k >= head + body) && dmem[k] != 0xff;
    free(s), free(dmem);
    CHECK(bad == 0,
          "%s, %d threads, %zu-byte elements, R %" PRId64 " C %" PRId64 " lds %" PRId64
          " ldd %" PRId64 " offset %" PRId64 ": %" PRId64 " elements wrong",
          ffn_isa_name(ffn_ctx_isa(ctx)), ffn_ctx_threads(ctx), esz, R, C, lds, ldd, off, bad);
    return bad == 0;
}

int main(void) {
    ffn_check_begin("transpose");
    const enum ffn_isa isas[] = {FFN_ISA_SCALAR, FFN_ISA_AVX2, FFN_ISA_AVX512};
    int ran = 0;
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
        struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
        o.force_isa = isas[k];
        ffn_ctx_t ctx = NULL;
        if (ffn_ctx_create(&o, &ctx) != FFN_STATUS_OK) continue;  // not on this CPU
        ran++;
        for (int th = 1; th <= 3; th += 2)
            for (size_t esz = 4; esz >= 2; esz -= 2) {
                ffn_ctx_set_threads(ctx, th);
                bool ok = true;
                for (int64_t R = 1; R <= 72 && ok; R++)
                    for (int64_t C = 1; C <= 40 && ok; C++)
                        ok = one(ctx, R, C, C + R % 3, R + C % 5, esz, 0) &&
                             (R % 16 || one(ctx, R, C, C + R % 3, R, esz, 0)) &&
                             one(ctx, R, C, C, R, esz, (R + C) % 3);
                // Big enough for the threads (2^16 elements), with strips and tails, on and off
                // the 64-byte boundary.
                for (int64_t off = 0; off <= 1 && ok; off++)
                    ok = one(ctx, 517, 300, 301, 520, esz, off) &&
                         one(ctx, 256, 1024, 1024, 256, esz, off) &&
                         one(ctx, 1000, 77, 80, 1000, esz, off) &&
                         one(ctx, 33, 4099, 4099, 40, esz, off) &&
                         one(ctx, 608, 200, 203, 640, esz, off);
            }
        ffn_ctx_destroy(ctx);
    }
    CHECK(ran >= 1, "no CPU context could be created");
    return ffn_check_summary();
}
