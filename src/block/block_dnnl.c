// block_dnnl.c — the FFN block's GEMMs through oneDNN's matmul primitive (Debian libdnnl-dev):
// C = A·B (+ bias) (+ C), every operand a pointer, a dtype and two strides, so that each stored
// layout and orientation is a memory descriptor, never a copy. oneDNN picks its kernel from the
// CPU's feature bits (AMX-BF16, AVX512-BF16, AVX-512, AVX2). Primitives are created once per
// shape (dims, strides, dtypes, bias, accumulate, threads) and kept in the block's cache, so a
// one-token call costs an execute, not a JIT compile.
//
// Threads: Debian's oneDNN is built with the OpenMP runtime (DNNL_CPU_RUNTIME_OMP, libgomp, as
// ffn): it runs on omp_get_max_threads() of the calling thread, read both when a primitive is
// created and when it runs. A call sets that to ffn_ctx_threads(ctx) and restores the caller's
// value after (omp_set_num_threads is per calling thread), as for the activation kernels.
//
// Few rows (decode): a GEMM with at most a few rows of A and bf16 or f32 weights goes to the CPU
// layer's skinny GEMM first (cpu/gemm_skinny.c), which streams the weights at memory speed where
// oneDNN's brgemm reaches 0.36-0.64 of a triad (docs/blocks.md, "One token: the skinny GEMM").
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#    include <omp.h>
#endif
#ifdef FFN_HAVE_DNNL
#    include <oneapi/dnnl/dnnl.h>
#endif

#include "block/block_impl.h"
#include "cpu/cpu_impl.h"

void ffn_blk_threads_enter(ffn_ctx_t ctx, struct ffn_blk_threads *t) {
#ifdef _OPENMP
    t->saved = omp_get_max_threads();
    if (t->saved != ctx->n_threads) omp_set_num_threads(ctx->n_threads);
#else
    (void)ctx;
    t->saved = 1;
#endif
}

void ffn_blk_threads_leave(const struct ffn_blk_threads *t) {
#ifdef _OPENMP
    if (omp_get_max_threads() != t->saved) omp_set_num_threads(t->saved);
#else
    (void)t;
#endif
}

#ifdef FFN_HAVE_DNNL

// Primitives one block keeps: a forward + backward at one token count needs ~8 shapes, and the
// ragged last tile of the TILED schedule a few more. The least recently used one goes.
#    define FFN_MM_CACHE_MAX 48
// Smallest M, N and K at which a slow-layout operand is copied (see "operand layouts").
#    define FFN_MM_RELAYOUT_MIN 256

struct ffn_mm_key {
    int64_t M, N, K;
    int64_t sa[2], sb[2], sc[2];
    int32_t ta, tb, tc;  // enum ffn_dtype
    int32_t bias, acc, nthr;
    int32_t packed;  // 1 + the index of B's packed copy in the cache; 0: B as it lies
};

struct ffn_mm_entry {
    struct ffn_mm_key key;
    dnnl_primitive_t prim;
    dnnl_memory_t a, b, c, bias;
    uint64_t last_use;
    char impl[48];
};

// Packed weights (opts.pack_weights): a weight operand B [K, N] of the forward, reordered once
// into the layout oneDNN's matmul chose for it at M = FFN_MM_PACK_M (format "any"), and used at
// every M from there on (oneDNN 2.6.3, AMD EPYC Zen 4, one thread, bf16, warm caches: 16 x 2048 x
// 5632 113 -> 143 GFLOP/s with the layout chosen at M = 256, 135 with the one chosen at 16; 256
// rows 1.01-1.06x; f32 at 16 rows 51 -> 62). Keyed by the operand as the GEMM reads it.
#    define FFN_MM_PACK_MAX 8
#    define FFN_MM_PACK_M 256

struct ffn_mm_packed {
    const void *src;  // the weight as the forward's GEMM reads it: pointer, strides, dtype
    int64_t s0, s1, K, N;
    int32_t dt;
    int32_t state;  // 0: registered, not yet packed; 1: packed (md, p); -1: read as it lies
    dnnl_memory_desc_t md;
    void *p;
    size_t bytes;
};

struct ffn_mm_cache {
    dnnl_engine_t eng;
    dnnl_stream_t st;
    int n;
    uint64_t clock;
    int n_packed;
    struct ffn_mm_packed packed[FFN_MM_PACK_MAX];
    // Operand copies in the layout oneDNN runs fast (ffn__mm_relayout), grown on demand.
    void *tbuf[2];
    size_t tcap[2];
    // FFN_BLOCK_GEMM_TRANSPOSE: 0 no copies (A/B measurement), "all" a copy at every size
    // above one row (tests of the copy path at small shapes); default by size.
    int64_t relayout_min;
    struct ffn_mm_entry e[FFN_MM_CACHE_MAX];
};

static dnnl_data_type_t ffn__dt(enum ffn_dtype dt) {
    return dt == FFN_DTYPE_BF16 ? dnnl_bf16 : dt == FFN_DTYPE_F16 ? dnnl_f16 : dnnl_f32;
}

static const char *ffn__dt_name(int32_t dt) { return ffn_dtype_name((enum ffn_dtype)dt); }

enum ffn_status ffn_mm_cache_create(ffn_ctx_t ctx, const char *fn, struct ffn_mm_cache **out) {
    struct ffn_mm_cache *c = calloc(1, sizeof *c);
    if (!c) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    dnnl_status_t s = dnnl_engine_create(&c->eng, dnnl_cpu, 0);
    if (s == dnnl_success) {
        s = dnnl_stream_create(&c->st, c->eng, dnnl_stream_default_flags);
        if (s != dnnl_success) dnnl_engine_destroy(c->eng);
    }
    if (s != dnnl_success) {
        free(c);
        return ffn_error(ctx, FFN_STATUS_BACKEND,
                         "%s: oneDNN could not create a CPU engine "
                         "(status %d)",
                         fn, (int)s);
    }
    const char *env = getenv("FFN_BLOCK_GEMM_TRANSPOSE");
    c->relayout_min = !env || !strcmp(env, "1") ? FFN_MM_RELAYOUT_MIN
                      : !strcmp(env, "all")     ? 2
                                                : INT64_MAX;
    *out = c;
    return FFN_STATUS_OK;
}

static void ffn__entry_free(struct ffn_mm_entry *e) {
    dnnl_primitive_destroy(e->prim);
    dnnl_memory_destroy(e->a);
    dnnl_memory_destroy(e->b);
    dnnl_memory_destroy(e->c);
    if (e->bias) dnnl_memory_destroy(e->bias);
    memset(e, 0, sizeof *e);
}

void ffn_mm_cache_destroy(struct ffn_mm_cache *c) {
    if (!c) return;
    for (int i = 0; i < c->n; i++) ffn__entry_free(&c->e[i]);
    for (int i = 0; i < c->n_packed; i++) free(c->packed[i].p);
    free(c->tbuf[0]);
    free(c->tbuf[1]);
    dnnl_stream_destroy(c->st);
    dnnl_engine_destroy(c->eng);
    free(c);
}

bool ffn_mm_has_dtype(struct ffn_mm_cache *c, enum ffn_dtype dt) {
    // Asks oneDNN for a small matmul descriptor of that dtype: no JIT is compiled for it.
    dnnl_memory_desc_t a, b, o;
    dnnl_dims_t da = {16, 32}, db = {32, 16}, dc = {16, 16};
    if (dnnl_memory_desc_init_by_tag(&a, 2, da, ffn__dt(dt), dnnl_ab) ||
        dnnl_memory_desc_init_by_tag(&b, 2, db, ffn__dt(dt), dnnl_ba) ||
        dnnl_memory_desc_init_by_tag(&o, 2, dc, dnnl_f32, dnnl_ab))
        return false;
    dnnl_matmul_desc_t md;
    if (dnnl_matmul_desc_init(&md, &a, &b, NULL, &o)) return false;
    dnnl_primitive_desc_t pd;
    if (dnnl_primitive_desc_create(&pd, &md, NULL, c->eng, NULL)) return false;
    dnnl_primitive_desc_destroy(pd);
    return true;
}

// Creates the primitive and its memory objects for `k` into e (handles set per call).
static dnnl_status_t ffn__entry_make(struct ffn_mm_cache *c, const struct ffn_mm_key *k,
                                     struct ffn_mm_entry *e) {
    memset(e, 0, sizeof *e);
    dnnl_memory_desc_t a, b, o, bias;
    dnnl_dims_t da = {k->M, k->K}, db = {k->K, k->N}, dc = {k->M, k->N}, dbias = {1, k->N};
    dnnl_dims_t sa = {k->sa[0], k->sa[1]}, sb = {k->sb[0], k->sb[1]}, sc = {k->sc[0], k->sc[1]};
    dnnl_dims_t sbias = {k->N, 1};
    dnnl_status_t s;
    if ((s = dnnl_memory_desc_init_by_strides(&a, 2, da, ffn__dt(k->ta), sa)) ||
        (s = dnnl_memory_desc_init_by_strides(&b, 2, db, ffn__dt(k->tb), sb)) ||
        (s = dnnl_memory_desc_init_by_strides(&o, 2, dc, ffn__dt(k->tc), sc)) ||
        (s = dnnl_memory_desc_init_by_strides(&bias, 2, dbias, dnnl_f32, sbias)))
        return s;
    if (k->packed) b = c->packed[k->packed - 1].md;
    dnnl_matmul_desc_t md;
    if ((s = dnnl_matmul_desc_init(&md, &a, &b, k->bias ? &bias : NULL, &o))) return s;
    dnnl_primitive_attr_t attr;
    if ((s = dnnl_primitive_attr_create(&attr))) return s;
    // f32 stays f32: the process default may have been set to bf16 (ONEDNN_DEFAULT_FPMATH_MODE).
    s = dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict);
    dnnl_post_ops_t po = NULL;
    if (!s && k->acc) {
        // C = A·B + C: the sum post-op reads the old C (in its dtype) and adds in f32.
        if (!(s = dnnl_post_ops_create(&po)) && !(s = dnnl_post_ops_append_sum(po, 1.0f)))
            s = dnnl_primitive_attr_set_post_ops(attr, po);
    }
    dnnl_primitive_desc_t pd = NULL;
    if (!s) s = dnnl_primitive_desc_create(&pd, &md, attr, c->eng, NULL);
    if (po) dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    if (s) return s;
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
        snprintf(e->impl, sizeof e->impl, "%s", impl);
    s = dnnl_primitive_create(&e->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (s) return s;
    if ((s = dnnl_memory_create(&e->a, &a, c->eng, DNNL_MEMORY_NONE)) ||
        (s = dnnl_memory_create(&e->b, &b, c->eng, DNNL_MEMORY_NONE)) ||
        (s = dnnl_memory_create(&e->c, &o, c->eng, DNNL_MEMORY_NONE)) ||
        (k->bias && (s = dnnl_memory_create(&e->bias, &bias, c->eng, DNNL_MEMORY_NONE)))) {
        ffn__entry_free(e);
        return s;
    }
    e->key = *k;
    return dnnl_success;
}

// --- packed weights -----------------------------------------------------------------------------

void ffn_mm_pack_add(struct ffn_mm_cache *c, const struct ffn_cpu_mat *B) {
    if (c->n_packed == FFN_MM_PACK_MAX) return;
    c->packed[c->n_packed++] =
        (struct ffn_mm_packed){.src = B->p, .s0 = B->s0, .s1 = B->s1, .dt = (int32_t)B->dt};
}

// The packed copy of B [K, N] for a GEMM from ta to tc: its index + 1 in *idx, or 0 where B is
// read as it lies (not registered by ffn_mm_pack_add, or oneDNN has no other layout for it, or
// prefers the one it has). Made at the first call that asks, on the caller's threads; the only
// error is memory.
static enum ffn_status ffn__mm_pack(ffn_ctx_t ctx, const char *fn, struct ffn_mm_cache *c,
                                    int64_t N, int64_t K, const struct ffn_cpu_mat *B,
                                    enum ffn_dtype ta, enum ffn_dtype tc, int32_t *idx) {
    *idx = 0;
    struct ffn_mm_packed *q = NULL;
    for (int i = 0; i < c->n_packed && !q; i++) {
        struct ffn_mm_packed *r = &c->packed[i];
        if (r->src == B->p && r->s0 == B->s0 && r->s1 == B->s1 && r->dt == (int32_t)B->dt &&
            (r->state == 0 || (r->K == K && r->N == N)))
            q = r;
    }
    if (!q || q->state < 0) return FFN_STATUS_OK;
    if (q->state > 0) {
        *idx = (int32_t)(q - c->packed) + 1;
        return FFN_STATUS_OK;
    }
    q->K = K, q->N = N, q->state = -1;
    // The layout the matmul picks for this B at M = FFN_MM_PACK_M rows (strict f32 math).
    dnnl_memory_desc_t a, b, bany, o;
    dnnl_dims_t da = {FFN_MM_PACK_M, K}, db = {K, N}, dc = {FFN_MM_PACK_M, N};
    dnnl_dims_t sb = {B->s0, B->s1};
    dnnl_matmul_desc_t md;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    bool chosen = false;
    if (!dnnl_memory_desc_init_by_tag(&a, 2, da, ffn__dt(ta), dnnl_ab) &&
        !dnnl_memory_desc_init_by_strides(&b, 2, db, ffn__dt(B->dt), sb) &&
        !dnnl_memory_desc_init_by_tag(&bany, 2, db, ffn__dt(B->dt), dnnl_format_tag_any) &&
        !dnnl_memory_desc_init_by_tag(&o, 2, dc, ffn__dt(tc), dnnl_ab) &&
        !dnnl_matmul_desc_init(&md, &a, &bany, NULL, &o) && !dnnl_primitive_attr_create(&attr) &&
        !dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_strict) &&
        !dnnl_primitive_desc_create(&pd, &md, attr, c->eng, NULL)) {
        const dnnl_memory_desc_t *w = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
        if (w && !dnnl_memory_desc_equal(w, &b)) q->md = *w, chosen = true;
    }
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (!chosen) return FFN_STATUS_OK;
    q->bytes = dnnl_memory_desc_get_size(&q->md);
    q->p = aligned_alloc(64, (q->bytes + 63) / 64 * 64);
    if (!q->p) {
        q->state = 0;  // asked again at the next call
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                         "%s: out of memory for a %zu-byte packed weight (opts.pack_weights)", fn,
                         q->bytes);
    }
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t rp = NULL;
    dnnl_memory_t from = NULL, to = NULL;
    dnnl_status_t s = dnnl_reorder_primitive_desc_create(&rpd, &b, c->eng, &q->md, c->eng, NULL);
    if (!s) s = dnnl_primitive_create(&rp, rpd);
    if (!s) s = dnnl_memory_create(&from, &b, c->eng, (void *)B->p);
    if (!s) s = dnnl_memory_create(&to, &q->md, c->eng, q->p);
    if (!s) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
        s = dnnl_primitive_execute(rp, c->st, 2, args);
        if (!s) s = dnnl_stream_wait(c->st);
    }
    if (to) dnnl_memory_destroy(to);
    if (from) dnnl_memory_destroy(from);
    if (rp) dnnl_primitive_destroy(rp);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (s) {  // no reorder into it: B as it lies
        free(q->p);
        q->p = NULL;
        return FFN_STATUS_OK;
    }
    q->state = 1;
    *idx = (int32_t)(q - c->packed) + 1;
    return FFN_STATUS_OK;
}

size_t ffn_mm_packed_bytes(const struct ffn_mm_cache *c) {
    size_t n = 0;
    for (int i = 0; c && i < c->n_packed; i++)
        if (c->packed[i].state > 0) n += c->packed[i].bytes;
    return n;
}

// --- operand layouts ---------------------------------------------------------------------------
// oneDNN 2.6's brgemm matmul runs fast for src row-major ("ab") and weights column-major ("ba",
// i.e. B stored [N][K]); a transposed src (dW = Aᵀ·B, K = tokens) or row-major weights (dh =
// dy·W_down, dx = dP·W_up) run 2.3-2.7x slower at 4096 x 768 x 3072 in f32 (docs/blocks.md,
// "Operand layouts"). Such an operand is copied once per call into the cache's scratch in the
// fast layout when the GEMM is big enough to repay the copy: M, N and K all at least
// FFN_MM_RELAYOUT_MIN (measured, gpt2-small f32 fwd+bwd: 16 tokens 1.25x slower with copies,
// 256 tokens 1.06x faster, 4096 tokens 1.5x faster). Weights are never modified.
// The copy is a transpose of the operand as it lies, by the CPU layer (ffn_cpu_transpose:
// register blocks storing whole 64-byte lines on AVX-512, 6.6-7.0 ms for a 2048 x 5632 f32
// matrix on an Intel Xeon, model 207, one thread; element by element, 18-74 ms on AMD EPYC
// Zen 5).

// Replaces *op (R x C, the matrix as the GEMM reads it, column- or row-major) by a copy in
// scratch `slot` in the other layout: column-major becomes row-major, row-major column-major.
static enum ffn_status ffn__mm_relayout(ffn_ctx_t ctx, const char *fn, struct ffn_mm_cache *c,
                                        int slot, struct ffn_cpu_mat *op, int64_t R, int64_t C) {
    const size_t esz = ffn_dtype_size(op->dt), bytes = (size_t)(R * C) * esz;
    if (bytes > c->tcap[slot]) {
        // 64-byte aligned: the transpose stores whole lines non-temporally there.
        void *q = aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!q)
            return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                             "%s: out of memory for a %zu-byte GEMM operand copy", fn, bytes);
        free(c->tbuf[slot]);
        c->tbuf[slot] = q;
        c->tcap[slot] = bytes;
    }
    if (op->s0 == 1) {  // column-major (C stored lines of R elements) to row-major
        ffn_cpu_transpose(ctx, c->tbuf[slot], C, op->p, op->s1, C, R, esz);
        op->s0 = C, op->s1 = 1;
    } else {  // row-major (R stored lines of C elements) to column-major
        ffn_cpu_transpose(ctx, c->tbuf[slot], R, op->p, op->s0, R, C, esz);
        op->s0 = 1, op->s1 = R;
    }
    op->p = c->tbuf[slot];
    return FFN_STATUS_OK;
}

enum ffn_status ffn_mm_run(ffn_ctx_t ctx, const char *fn, struct ffn_mm_cache *c, int64_t M,
                           int64_t N, int64_t K, const struct ffn_cpu_mat *A_in,
                           const struct ffn_cpu_mat *B_in, const struct ffn_cpu_mat *C,
                           const float *bias, bool accumulate, const char **impl_out) {
    if (M == 0 || N == 0) return FFN_STATUS_OK;
    // A few rows with bf16 or f32 weights: the skinny GEMM, when it applies ($FFN_BLOCK_SKINNY=0:
    // never).
    bool done = false;
    const enum ffn_status sk =
        ffn_cpu_gemm_skinny(ctx, fn, M, N, K, A_in, B_in, C, bias, accumulate, &done);
    if (sk || done) {
        if (done && impl_out) *impl_out = FFN_SKINNY_IMPL;
        return sk;
    }
    struct ffn_cpu_mat a_op = *A_in, b_op = *B_in;
    const struct ffn_cpu_mat *A = &a_op, *B = &b_op;
    // A weight the block packs (opts.pack_weights): its packed copy, where oneDNN has one.
    int32_t packed = 0;
    if (c->n_packed) {
        const enum ffn_status st = ffn__mm_pack(ctx, fn, c, N, K, B, A->dt, C->dt, &packed);
        if (st) return st;
    }
    // By default only f32 operands: in bf16 (AMX) the slow forms cost 0-40 % more, and copies
    // of 2-byte operands did not pay even at the copy's own speed (docs/blocks.md, "Operand
    // layouts": 4096 tokens, Xeon and Zen 5).
    if (K > 1 && (c->relayout_min == 2 || (A->dt == FFN_DTYPE_F32 && B->dt == FFN_DTYPE_F32))) {
        enum ffn_status st;
        // src transposed (column-major M x K, M > 1): copy to row-major M x K.
        if (M > 1 && A->s1 != 1 && A->s0 == 1 && N >= c->relayout_min && K >= c->relayout_min &&
            (st = ffn__mm_relayout(ctx, fn, c, 0, &a_op, M, K)))
            return st;
        // weights row-major K x N (N > 1): copy to column-major ("ba", B stored [N][K]).
        if (!packed && N > 1 && B->s1 == 1 && B->s0 != 1 && M >= c->relayout_min &&
            K >= c->relayout_min && (st = ffn__mm_relayout(ctx, fn, c, 1, &b_op, K, N)))
            return st;
    }
    struct ffn_mm_key k;
    memset(&k, 0, sizeof k);  // the key is compared bytewise
    k.M = M, k.N = N, k.K = K;
    // A single row may come with any row stride; oneDNN recognises it as dense (and picks its
    // fast kernels) only with the dense one.
    k.sa[0] = M == 1 && A->s1 == 1 ? K : A->s0, k.sa[1] = A->s1;
    k.sb[0] = B->s0, k.sb[1] = B->s1;
    k.sc[0] = M == 1 && C->s1 == 1 ? N : C->s0, k.sc[1] = C->s1;
    k.ta = A->dt, k.tb = B->dt, k.tc = C->dt;
    k.bias = bias != NULL, k.acc = accumulate;
#    ifdef _OPENMP
    k.nthr = omp_get_max_threads();
#    endif
    k.packed = packed;
    struct ffn_mm_entry *e = NULL;
    for (;;) {
        for (int i = 0; i < c->n && !e; i++)
            if (!memcmp(&c->e[i].key, &k, sizeof k)) e = &c->e[i];
        if (e) break;
        if (c->n == FFN_MM_CACHE_MAX) {
            int lru = 0;
            for (int i = 1; i < c->n; i++)
                if (c->e[i].last_use < c->e[lru].last_use) lru = i;
            ffn__entry_free(&c->e[lru]);
            c->e[lru] = c->e[--c->n];
        }
        e = &c->e[c->n];
        const dnnl_status_t s = ffn__entry_make(c, &k, e);
        if (s == dnnl_success) {
            c->n++;
            break;
        }
        e = NULL;
        if (!k.packed)
            return ffn_error(ctx, FFN_STATUS_BACKEND,
                             "%s: oneDNN matmul [%" PRId64 ", %" PRId64 "] x [%" PRId64 ", %" PRId64
                             "] (%s x %s -> %s%s%s): status %d",
                             fn, M, K, K, N, ffn__dt_name(k.ta), ffn__dt_name(k.tb),
                             ffn__dt_name(k.tc), k.bias ? ", bias" : "", k.acc ? ", +C" : "",
                             (int)s);
        k.packed = packed = 0;  // no kernel for the packed layout at this shape: B as it lies
    }
    e->last_use = ++c->clock;
    dnnl_memory_set_data_handle(e->a, (void *)A->p);
    dnnl_memory_set_data_handle(e->b, packed ? c->packed[packed - 1].p : (void *)B->p);
    dnnl_memory_set_data_handle(e->c, (void *)C->p);
    dnnl_exec_arg_t args[4] = {
        {DNNL_ARG_SRC, e->a}, {DNNL_ARG_WEIGHTS, e->b}, {DNNL_ARG_DST, e->c}};
    int nargs = 3;
    if (bias) {
        dnnl_memory_set_data_handle(e->bias, (void *)bias);
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, e->bias};
    }
    dnnl_status_t s = dnnl_primitive_execute(e->prim, c->st, nargs, args);
    if (s == dnnl_success) s = dnnl_stream_wait(c->st);
    if (s != dnnl_success)
        return ffn_error(ctx, FFN_STATUS_BACKEND, "%s: oneDNN matmul execution failed (status %d)",
                         fn, (int)s);
    if (impl_out) *impl_out = e->impl;
    return FFN_STATUS_OK;
}

#else  // no oneDNN in this build: blocks are refused at create (block.c)

enum ffn_status ffn_mm_cache_create(ffn_ctx_t ctx, const char *fn, struct ffn_mm_cache **out) {
    *out = NULL;
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                     "%s: this build has no oneDNN (install "
                     "libdnnl-dev, e.g. with scripts/deps.sh, and reconfigure)",
                     fn);
}

void ffn_mm_cache_destroy(struct ffn_mm_cache *c) { (void)c; }

size_t ffn_mm_packed_bytes(const struct ffn_mm_cache *c) {
    (void)c;
    return 0;
}

void ffn_mm_pack_add(struct ffn_mm_cache *c, const struct ffn_cpu_mat *B) { (void)c, (void)B; }

bool ffn_mm_has_dtype(struct ffn_mm_cache *c, enum ffn_dtype dt) {
    (void)c, (void)dt;
    return false;
}

enum ffn_status ffn_mm_run(ffn_ctx_t ctx, const char *fn, struct ffn_mm_cache *c, int64_t M,
                           int64_t N, int64_t K, const struct ffn_cpu_mat *A,
                           const struct ffn_cpu_mat *B, const struct ffn_cpu_mat *C,
                           const float *bias, bool accumulate, const char **impl_out) {
    (void)c, (void)M, (void)N, (void)K, (void)A, (void)B, (void)C, (void)bias, (void)accumulate;
    (void)impl_out;
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: this build has no oneDNN", fn);
}

#endif  // FFN_HAVE_DNNL
