// gemm_skinny.c — the CPU layer's skinny GEMM: C = A·B (+ bias) (+ C) for a few rows of A and
// bf16 or f32 weights, the shape of decoding one token (or a few) through an FFN block. Such a
// GEMM is a matrix-vector product bound by reading B once: 2 FLOPs per 2- or 4-byte weight.
// oneDNN 2.6's brgemm reaches 0.36-0.45 of a STREAM triad there in bf16 on AMD EPYC Zen 4 and
// 0.44-0.56 in f32 on Zen 5 (docs/blocks.md, "One token: the skinny GEMM"); these kernels stream
// the weights at memory speed. This file decides when they apply, packs A into the f32 layout the
// kernels read (M·K elements, small beside B's K·N, in the context's scratch: no allocation per
// call once it has grown) and
// splits the columns over threads; the kernels are in x86_avx512/gemv_avx512.c (contract:
// kernels.h).
//
// Threads: thread t of T takes the columns [N·t/T, N·(t+1)/T), rounded to the kernel's column
// block, so each streams one contiguous range of weight rows ("ba") or row pieces ("ab"). Every
// output is computed by one thread, its sum in an order fixed by K: no reduction across threads,
// the same bits for any thread count. No parallel region below FFN_SKINNY_PAR_MIN weights.
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_impl.h"

// Weights (K·N) below which one thread runs the whole GEMM (a parallel region costs ~1-2 us).
#define FFN_SKINNY_PAR_MIN ((int64_t)1 << 16)

// A as the kernels read it (kernels.h, struct ffn_skinny), zero padded to ld (a multiple of 32):
// for "ba" with bf16 weights (eo) in 32-k chunks, even k then odd k; otherwise in k order. A's
// dtype (bf) a constant of each instance: one conversion per element, no division (K = 3072:
// 4.5 -> 1 us, a few % of a one-token GEMM's 0.1 ms on two threads).
static inline void ffn__pack_rows(float *dst, int64_t ld, const struct ffn_cpu_mat *A, int64_t M,
                                  int64_t K, bool eo, bool bf) {
    const uint16_t *ah = A->p;
    const float *af = A->p;
    for (int64_t m = 0; m < M; m++) {
        float *d = dst + m * ld;
        const int64_t a0 = m * A->s0, s1 = A->s1;
#define FFN__A(k) (bf ? ffn_bf16_to_f32(ah[a0 + (k)*s1]) : af[a0 + (k)*s1])
        int64_t k = 0;
        if (eo)
            for (; k + 32 <= K; k += 32)
                for (int i = 0; i < 16; i++)
                    d[k + i] = FFN__A(k + 2 * i), d[k + 16 + i] = FFN__A(k + 2 * i + 1);
        else
            for (; k < K; k++) d[k] = FFN__A(k);
        if (k < K) {  // eo's last, partial chunk
            memset(d + k, 0, (size_t)(ld - k) * sizeof(float));
            for (int64_t j = k; j < K; j++) d[k + (j - k) % 2 * 16 + (j - k) / 2] = FFN__A(j);
        } else {
            memset(d + K, 0, (size_t)(ld - K) * sizeof(float));
        }
#undef FFN__A
    }
}

static void ffn__pack_a(float *dst, int64_t ld, const struct ffn_cpu_mat *A, int64_t M, int64_t K,
                        bool eo) {
    if (A->dt == FFN_DTYPE_BF16)
        ffn__pack_rows(dst, ld, A, M, K, eo, true);
    else
        ffn__pack_rows(dst, ld, A, M, K, eo, false);
}

// A (bf16) as the pairs vdpbf16ps reads (kernels.h, struct ffn_skinny's A2): pair p of row m =
// A[m, 2p + 1] | A[m, 2p] << 16, zero past K; ldp pairs per row.
static void ffn__pack_pairs(uint32_t *dst, int64_t ldp, const struct ffn_cpu_mat *A, int64_t M,
                            int64_t K) {
    const uint16_t *a = A->p;
    for (int64_t m = 0; m < M; m++)
        for (int64_t p = 0; p < ldp; p++) {
            const int64_t k = 2 * p;
            const uint32_t lo = k + 1 < K ? a[m * A->s0 + (k + 1) * A->s1] : 0,
                           hi = k < K ? a[m * A->s0 + k * A->s1] : 0;
            dst[m * ldp + p] = lo | hi << 16;
        }
}

bool ffn_skinny_pf_l2_default(const struct ffn_cpu_features *f) {
    return !(f->amd && f->family >= 26);
}

enum ffn_status ffn_cpu_gemm_skinny(ffn_ctx_t ctx, const char *fn, int64_t M, int64_t N, int64_t K,
                                    const struct ffn_cpu_mat *A, const struct ffn_cpu_mat *B,
                                    const struct ffn_cpu_mat *C, const float *bias, bool acc,
                                    bool *done) {
    *done = false;
#ifdef FFN_HAVE_X86_KERNELS
    struct ffn_cpu_state *s = ffn_cpu_state(ctx);
    if (!s || M < 1 || N < 1 || K < 1) return FFN_STATUS_OK;
    if ((B->dt != FFN_DTYPE_BF16 && B->dt != FFN_DTYPE_F32) ||
        (A->dt != FFN_DTYPE_F32 && A->dt != FFN_DTYPE_BF16) ||
        (C->dt != FFN_DTYPE_F32 && C->dt != FFN_DTYPE_BF16) || (C->s1 != 1 && N > 1))
        return FFN_STATUS_OK;
    // The weights' orientation: contiguous along K ("ba") or along N ("ab"); else not ours.
    const bool ba = B->s0 == 1 || K == 1;
    if (!ba && B->s1 != 1 && N > 1) return FFN_STATUS_OK;
    if (M > (ba ? s->skinny_max : s->skinny_ab_max[B->dt == FFN_DTYPE_BF16])) return FFN_STATUS_OK;
    const int64_t ld = (K + 31) / 32 * 32;
    // bf16 pairs for vdpbf16ps beyond the IEEE rows (kernels.h, struct ffn_skinny's A2); without
    // them bf16 weights stop at those rows (widened, their FMAs lose to oneDNN's vdpbf16ps).
    const bool pairs = !ba && M > FFN_SKINNY_MAX_M && B->dt == FFN_DTYPE_BF16;
    const bool dp = pairs && A->dt == FFN_DTYPE_BF16 && s->avx512_bf16;
    if (pairs && !dp) return FFN_STATUS_OK;
    // A (f32, M·ld floats) then the pairs (M·ld / 2): multiples of 16 floats, 64-byte rows.
    const size_t need = (size_t)(M * ld) + (dp ? (size_t)(M * ld / 2) : 0);
    if (need > s->skinny_cap) {
        float *q = aligned_alloc(64, need * sizeof(float));
        if (!q)
            return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                             "%s: out of memory for a %zu-byte packed GEMM operand", fn,
                             need * sizeof(float));
        free(s->skinny_a);
        s->skinny_a = q, s->skinny_cap = need;
    }
    float *ap = s->skinny_a;
    ffn__pack_a(ap, ld, A, M, K, ba && B->dt == FFN_DTYPE_BF16);
    uint32_t *a2 = dp ? (uint32_t *)(ap + M * ld) : NULL;
    if (dp) ffn__pack_pairs(a2, ld / 2, A, M, K);
    const struct ffn_skinny g = {.M = M,
                                 .N = N,
                                 .K = K,
                                 .A = ap,
                                 .lda = ld,
                                 .A2 = a2,
                                 .B = B->p,
                                 .bdt = B->dt,
                                 .ldb = ba ? B->s1 : B->s0,
                                 .C = (void *)C->p,
                                 .cdt = C->dt,
                                 .ldc = C->s0,
                                 .bias = bias,
                                 .acc = acc,
                                 .cvt = s->avx512_bf16};
    void (*kern)(const struct ffn_skinny *, int64_t, int64_t) =
        s->skinny_pf_l2 ? (ba ? ffn_gemv_ba_l2__avx512 : ffn_gemv_ab_l2__avx512)
                        : (ba ? ffn_gemv_ba__avx512 : ffn_gemv_ab__avx512);
    // Column block of the kernel: thread ranges align to it ("ab": 64 bytes of bf16 weights).
    const int64_t blk = ba ? 8 : 32;
    const int nt = ctx->n_threads;
    if (nt <= 1 || N * K < FFN_SKINNY_PAR_MIN || N <= blk) {
        kern(&g, 0, N);
    } else {
#    pragma omp parallel num_threads(nt)
        {
            int64_t n0, n1;
            ffn_cpu_share(N, blk, &n0, &n1);
            if (n0 < n1) kern(&g, n0, n1);
        }
    }
    *done = true;
#else
    (void)ctx, (void)fn, (void)M, (void)N, (void)K, (void)A, (void)B, (void)C, (void)bias,
        (void)acc;
#endif
    return FFN_STATUS_OK;
}
