// test_transpose.c — the CPU layer's transpose (cpu/transpose.c, x86_avx2/transpose_avx2.c),
// which the block uses to put GEMM operands in the layout oneDNN runs fast: against the
// definition d[j·ldd + i] = s[i·lds + j], bit for bit (NaN payloads, signed zeros, subnormals),
// for every R and C from 1 to 40 and a few large ones with 16-row strips and 8-column blocks
// plus tails, with leading dimensions above the minimum, on the scalar, AVX2 and AVX-512
// contexts this CPU has and on 1 and 3 threads, f32 and 16-bit elements; the destination's
// padding is left untouched.
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
// ldd ≥ R; true when exact.
static bool one(ffn_ctx_t ctx, int64_t R, int64_t C, int64_t lds, int64_t ldd, size_t esz) {
    const uint32_t pad = 0xffffffff;  // a NaN (as f32 and as bf16/f16): what the padding keeps
    uint32_t *s = malloc((size_t)(R * lds) * 4), *d = malloc((size_t)(C * ldd) * 4);
    if (!s || !d) {
        free(s), free(d);
        FAIL("out of memory for R %" PRId64 " C %" PRId64, R, C);
        return false;
    }
    for (int64_t k = 0; k < R * lds; k++) s[k] = rbits();  // every pattern: NaNs, -0, subnormals
    for (int64_t k = 0; k < C * ldd; k++) d[k] = pad;
    ffn_cpu_transpose(ctx, d, ldd, s, lds, R, C, esz);
    // Element k of a buffer, and what the padding holds, in the element size under test.
    const uint16_t *s16 = (const uint16_t *)s, *d16 = (const uint16_t *)d;
    const uint32_t pd = esz == 4 ? pad : 0xffff;
    int64_t bad = 0;
    for (int64_t j = 0; j < C; j++)
        for (int64_t i = 0; i < ldd; i++) {
            const uint32_t got = esz == 4 ? d[j * ldd + i] : d16[j * ldd + i];
            const uint32_t want = i >= R ? pd : esz == 4 ? s[i * lds + j] : s16[i * lds + j];
            bad += got != want;
        }
    free(s), free(d);
    CHECK(bad == 0,
          "%s, %d threads, %zu-byte elements, R %" PRId64 " C %" PRId64 " lds %" PRId64
          " ldd %" PRId64 ": %" PRId64 " elements wrong",
          ffn_isa_name(ffn_ctx_isa(ctx)), ffn_ctx_threads(ctx), esz, R, C, lds, ldd, bad);
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
                for (int64_t R = 1; R <= 40 && ok; R++)
                    for (int64_t C = 1; C <= 40 && ok; C++)
                        ok = one(ctx, R, C, C + R % 3, R + C % 5, esz);
                // Big enough for the threads (2^16 elements), with strips and tails.
                ok = ok && one(ctx, 517, 300, 301, 520, esz) &&
                     one(ctx, 256, 1024, 1024, 256, esz) && one(ctx, 1000, 77, 80, 1000, esz) &&
                     one(ctx, 33, 4099, 4099, 40, esz);
            }
        ffn_ctx_destroy(ctx);
    }
    CHECK(ran >= 1, "no CPU context could be created");
    return ffn_check_summary();
}
