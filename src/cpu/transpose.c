// transpose.c — the CPU layer's transpose (cpu_impl.h): the layout change of a GEMM operand
// that oneDNN 2.6 runs slowly as it lies (block_dnnl.c, docs/blocks.md "Operand layouts"). The
// x86 kernels transpose 8 x 8 blocks in registers (x86_avx2/transpose_avx2.c); element by
// element, a 2048 x 5632 matrix to column-major took 18-74 ms on AMD EPYC Zen 5, which made the
// block's copies cost more than they saved at 256 tokens (docs/blocks.md).

#include "cpu/cpu_impl.h"

// Elements below which one thread transposes the whole matrix (a parallel region costs ~1-2 us).
#define FFN_TRANSPOSE_PAR_MIN ((int64_t)1 << 16)

static void ffn__transpose_rows(bool simd, void *d, int64_t ldd, const void *s, int64_t lds,
                                int64_t C, int64_t r0, int64_t r1, size_t esz) {
#ifdef FFN_HAVE_X86_KERNELS
    if (simd && esz == 4) {
        ffn_f32_transpose__avx2(d, ldd, s, lds, C, r0, r1);
        return;
    }
    if (simd && esz == 2) {
        ffn_u16_transpose__avx2(d, ldd, s, lds, C, r0, r1);
        return;
    }
#else
    (void)simd;
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
    const bool simd = ctx->isa == FFN_ISA_AVX2 || ctx->isa == FFN_ISA_AVX512;
    const int nt = ctx->n_threads;
    if (nt <= 1 || R * C < FFN_TRANSPOSE_PAR_MIN || R <= 16) {
        ffn__transpose_rows(simd, d, ldd, s, lds, C, 0, R, esz);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        int64_t i0, i1;
        ffn_cpu_share(R, 16, &i0, &i1);  // whole 16-row strips
        if (i0 < i1) ffn__transpose_rows(simd, d, ldd, s, lds, C, i0, i1, esz);
    }
}
