// transpose.c — the CPU layer's transpose (cpu_impl.h): the layout change of a GEMM operand
// that oneDNN 2.6 runs slowly as it lies (block_dnnl.c, docs/blocks.md "Operand layouts"). On an
// AVX-512 context the blocks store whole 64-byte destination lines (x86_avx512/
// transpose_avx512.c), on AVX2 pairs of 8 x 8 blocks the two halves of each line back to back
// (x86_avx2/transpose_avx2.c): half lines stored non-temporally apart cost 5-8x a copy of the
// same bytes on an Intel Xeon (family 6 model 207), whole lines 0.7-0.9x. Element by element, a
// 2048 x 5632 matrix to column-major took 18-74 ms on AMD EPYC Zen 5, which made the block's
// copies cost more than they saved at 256 tokens (docs/blocks.md).

#include "cpu/cpu_impl.h"

// Elements below which one thread transposes the whole matrix (a parallel region costs ~1-2 us).
#define FFN_TRANSPOSE_PAR_MIN ((int64_t)1 << 16)

static void ffn__transpose_rows(enum ffn_isa isa, void *d, int64_t ldd, const void *s, int64_t lds,
                                int64_t C, int64_t r0, int64_t r1, size_t esz) {
#ifdef FFN_HAVE_X86_KERNELS
    if (isa == FFN_ISA_AVX512 && esz == 4) {
        ffn_f32_transpose__avx512(d, ldd, s, lds, C, r0, r1);
        return;
    }
    if (isa == FFN_ISA_AVX512 && esz == 2) {
        ffn_u16_transpose__avx512(d, ldd, s, lds, C, r0, r1);
        return;
    }
    const bool simd = isa == FFN_ISA_AVX2;
    if (simd && esz == 4) {
        ffn_f32_transpose__avx2(d, ldd, s, lds, C, r0, r1);
        return;
    }
    if (simd && esz == 2) {
        ffn_u16_transpose__avx2(d, ldd, s, lds, C, r0, r1);
        return;
    }
#else
    (void)isa;
#endif
    if (esz == 4) {
        const float *sp = s;
        float *dp = d;
        for (int64_t i = r0; i < r1; i++)
            for (int64_t j = 0; j < C; j++) dp[j * ldd + i] = sp[i * lds + j];
    } else {
        const uint16_t *sp = s;
        uint16_t *dp = d;
        for (int64_t i = r0; i < r1; i++)
            for (int64_t j = 0; j < C; j++) dp[j * ldd + i] = sp[i * lds + j];
    }
}

void ffn_cpu_transpose(ffn_ctx_t ctx, void *d, int64_t ldd, const void *s, int64_t lds, int64_t R,
                       int64_t C, size_t esz) {
    const int nt = ctx->n_threads;
    if (nt <= 1 || R * C < FFN_TRANSPOSE_PAR_MIN || R <= 32) {
        ffn__transpose_rows(ctx->isa, d, ldd, s, lds, C, 0, R, esz);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        int64_t i0, i1;
        ffn_cpu_share(R, 32, &i0, &i1);  // whole 32-row strips (the 16-bit AVX-512 block's)
        if (i0 < i1) ffn__transpose_rows(ctx->isa, d, ldd, s, lds, C, i0, i1, esz);
    }
}
