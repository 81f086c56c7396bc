// cuda_block.c — FFN blocks on the CUDA backend (ffn_block_cuda): the plan of block_plan.c (the
// same validation and the same translation of every stored layout and orientation into GEMM
// operands as the CPU block) turned into cuBLASLt matrix layouts (leading dimensions and
// transposes: no weight is copied), the activations and gated combines by the backend's own
// element-wise kernels (ew_kernel.cuh: the library's accuracy contract), and the few small
// kernels of block_kernels.cu. Everything is queued on the context's stream: nothing here waits
// for the device, except ffn_block_destroy (for the block's last work, before freeing).
//
// Forward (SEPARATE schedule: one GEMM over all tokens per projection):
//   P_k = x·W_k (+ b_k in the GEMM's epilogue)     one GEMM per plane of the plan (1 fused, 2
//                                                   separate or row-interleaved gate/up)
//   h = act(P) | act(gate) ⊙ up                     ffn_act_forward / ffn_glu_forward's kernels
//   y = h·W_down (+ b_down in the epilogue)
// Backward (SAVE keeps P and h; RECOMPUTE recomputes them with the same GEMMs):
//   dW_down = hᵀ·dy, db_down = Σ dy, dh = dy·W_downᵀ, dP = act'(…) (in place over P when the
//   dtypes allow), db = Σ dP, dW_first = dPᵀ·x, dx = dP·W_firstᵀ (the second plane accumulates).
// A plain GeLU-tanh block can instead take cuBLASLt's GELU_AUX_BIAS / DGELU epilogues (h and P
// out of one GEMM; dP out of the dh GEMM) where they meet the accuracy contract: see
// ffn_cuda_gelu_epilogue_ok and docs/cuda.md.
//
// Dtypes: every GEMM multiplies in its weights' dtype (bf16 and f16 on the tensor cores as they
// lie; f32 in true f32 under FFN_BLOCK_MATH_STRICT, TF32 or bf16 tensor-core math as opt-ins that
// cuBLASLt applies to the f32 operands themselves, so no copy is ever made) and accumulates in
// f32. The pre-activations P are kept in opts.save_dtype under every policy (so SAVE, RECOMPUTE
// and NONE compute h from the same values), h in W_down's dtype, an activation input of another
// dtype than its GEMM's weights is converted first (as the CPU block and autocast do), and an
// output cuBLASLt cannot write from those inputs (bf16 from f32 products) is staged in f32 and
// rounded once. Where cuBLASLt offers no algorithm at all (tiny or oddly strided operands) a plain
// tiled GEMM of block_kernels.cu runs instead; ffn_block_info's gemm_impl names what ran.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "block/block_impl.h"
#include "cuda/cuda_block.h"
#include "cuda/cuda_device.h"
#include "cuda/cuda_impl.h"
#include "cuda/cuda_lt.h"

// cuBLASLt's workspace (the size NVIDIA recommends for Hopper's kernels).
#define FFN_CB_WS_BYTES ((size_t)32 << 20)
// Cached GEMM configurations per block (descriptors, layouts, the chosen algorithm).
#define FFN_CB_PLANS 48
// Stages timed per call at most (ffn_cuda_block_profile).
#define FFN_CB_STAGES 32
// Doubles of the column-sum partials buffer at most (16 MiB).
#define FFN_CB_PART_MAX ((int64_t)2 << 20)
// The fused gated GEMM (glu_gemm.cu) from this many tokens on ($FFN_CUDA_GLU_GEMM: 0 never, 1
// from one token), and its name in ffn_block_info and the stage list.
#define FFN_CB_GLU_MIN_T 2048
#define FFN_CB_GLU_IMPL "ffn glu_gemm sm90a (combine in the epilogue)"
#define FFN_CB_DGLU_IMPL "ffn glu_gemm sm90a (backward combine in the epilogue)"
// The fused kernel's forms a block uses (glu_parts, a mask of these bits; $FFN_CUDA_GLU_PARTS
// takes the same numbers). By default the forward and dx; the dh form measured even with the
// unfused dh GEMM and pass at LLaMA-3-8B's shape and slower at phi3-mini's (its epilogue's g, u
// loads and dg, du stores compete with the main loop's operand traffic: docs/cuda.md), so it is
// there on request ($FFN_CUDA_GLU_PARTS=7), and under $FFN_CUDA_GLU_GEMM=1 (the tests: every
// form from one token on).
enum {
    FFN_CB_FORM_FWD = 1,  // the forward: gate and up projections with the combine in the epilogue
    FFN_CB_FORM_DH = 2,   // the backward's dh with dgate, dup in its epilogue
    FFN_CB_FORM_DX = 4,   // the backward's dx of two planes in one GEMM
    FFN_CB_FORM_ALL = 7,
};
#define FFN_CB_GLU_PARTS (FFN_CB_FORM_FWD | FFN_CB_FORM_DX)
#define FFN_CB_PAIR_IMPL "ffn glu_gemm sm90a (two products, one sum)"

// --- the epilogue GeLU --------------------------------------------------------------------------

bool ffn_cuda_gelu_epilogue_ok(enum ffn_dtype out, bool accurate);

// Whether cuBLASLt's GeLU epilogues (GELU_AUX_BIAS forward, DGELU backward: the tanh form) meet the
// accuracy contract for a plain GeLU-tanh block whose h (forward) and dP (backward) have dtype
// `out`: the bounds of docs/numerics.md, measured over every input of the dtype (bf16) or every
// 2^k-th f32 input by `test_cuda_block --epilogue`, which also fails if this table allows an
// epilogue outside its bound. $FFN_CUDA_GELU_EPILOGUE=0/1 overrides it (measurements).
bool ffn_cuda_gelu_epilogue_ok(enum ffn_dtype out, bool accurate) {
    const char *e = getenv("FFN_CUDA_GELU_EPILOGUE");
    if (e && e[0] == '0') return false;
    if (e && e[0] == '1') return true;
    (void)out, (void)accurate;
    return false;  // not measured yet: ffn's own kernels
}

// --- the block object ---------------------------------------------------------------------------

struct ffn_cb_buf {
    void *p;
    size_t cap;  // bytes
};

// A cuBLASLt GEMM configuration, in cuBLASLt's column-major terms: D[m, n] = op(A)·op(B).
struct ffn_cb_key {
    int64_t m, n, k, lda, ldb, ldc, aux_ld;
    int32_t transa, transb, ab_dt, c_dt, compute, epilogue, bias_dt, aux_dt, beta1;
    int32_t align[5];  // log2 of the byte alignment of A, B, C, bias, aux (capped at 256)
};

struct ffn_cb_plan {
    struct ffn_cb_key key;
    bool used, ok;  // ok: cuBLASLt has an algorithm (a miss is cached too)
    bool logged;    // a miss has been logged
    uint64_t tick;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo;
    int pick, n_algos;  // the heuristic's candidate chosen (timed when n_algos > 1), of n_algos
    char name[80];
};

struct ffn_cuda_block {
    struct ffn_block_hdr hdr;  // first (core_impl.h)
    struct ffn_block_plan plan;
    struct ffn_block_opts opts;
    const struct ffn_lt *lt;
    cublasLtHandle_t h;
    enum ffn_dtype fdt;  // the first projection's weights (gate, up / gate_up): its GEMMs' dtype
    enum ffn_dtype hdt;  // W_down's: h and the down GEMMs
    enum ffn_dtype sd;   // the pre-activations P (opts.save_dtype)
    bool gelu_epi;       // a plain GeLU-tanh block whose epilogue may be tried
    bool force_naive;    // $FFN_CUDA_BLOCK_GEMM=naive: the fallback GEMM for everything (tests)
    int64_t glu_min_t;   // the fused gated GEMM from this many tokens on (ffn__glu_form)
    int glu_sms;         // its grid: the device's multiprocessors (ffn_cu_glu_gemm_prepare)
    int glu_parts;       // its forms in use (FFN_CB_GLU_PARTS; $FFN_CUDA_GLU_PARTS; 0: none)
    bool dx_twice;       // $FFN_CUDA_BLOCK_DX_ROUND=2: a 16-bit dx of two planes accumulated in
                         // its own dtype (rounded twice; measurements only), not staged in f32
    // Device buffers, stream-ordered on `stream` (cudaMallocAsync), grown on demand.
    struct ffn_cb_buf P;     // pre-activations (sd), one [T, p_ld] plane per GEMM, then dP
    struct ffn_cb_buf H;     // h (hdt), then dh (sd)
    struct ffn_cb_buf D;     // dP in fdt when it differs from sd (or after a DGELU epilogue)
    struct ffn_cb_buf X;     // x converted for the first projection's GEMMs
    struct ffn_cb_buf Y;     // dy converted for the down projection's
    struct ffn_cb_buf W;     // f32 staging of a GEMM output cuBLASLt cannot write directly
    struct ffn_cb_buf Z;     // f32 sum of the two dx products when dx is not f32
    struct ffn_cb_buf Bg;    // a strided bias gathered dense (row-interleaved gate_up)
    struct ffn_cb_buf part;  // column-sum partials (doubles)
    struct ffn_cb_buf ws;    // cuBLASLt's workspace
    cudaStream_t stream;     // where the buffers were last used
    cudaEvent_t done;        // recorded at the end of every call
    bool have_done;
    struct ffn_cb_plan plans[FFN_CB_PLANS];
    uint64_t tick;
    char gemm_impl[128];
    // Stage timing (ffn_cuda_block_profile): an event before the call's first stage and after each.
    bool prof;
    int n_stage;
    cudaEvent_t prof_ev[FFN_CB_STAGES + 1];
    char stage[FFN_CB_STAGES][16];
    char stage_impl[FFN_CB_STAGES][80];
    // The pending training forward.
    enum ffn_block_policy pending;
    bool saved_h;
    struct ffn_tensor px;
    int64_t p_tokens;
};

static struct ffn_cuda_block *ffn__cb(ffn_block_t b) { return (struct ffn_cuda_block *)(void *)b; }

static size_t ffn__es(enum ffn_dtype dt) { return ffn_dtype_size(dt); }

// A call starts on the context's stream: when it differs from the stream of the block's last
// call, it waits for that call's end first (the buffers are stream-ordered allocations).
static enum ffn_status ffn__begin(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b) {
    cudaStream_t s = (cudaStream_t)ctx->stream;
    if (s != b->stream) {
        if (b->have_done) {
            const cudaError_t e = cudaStreamWaitEvent(s, b->done, 0);
            if (e != cudaSuccess) return ffn_cuda_error(ctx, fn, "cudaStreamWaitEvent", e);
        }
        b->stream = s;
    }
    b->n_stage = 0;
    if (b->prof && cudaEventRecord(b->prof_ev[0], s) != cudaSuccess) b->prof = false;
    return FFN_STATUS_OK;
}

// Stage timing: the end of a stage named `name` (a GEMM's implementation in impl, or NULL).
static void ffn__mark(struct ffn_cuda_block *b, const char *name, const char *impl) {
    if (!b->prof || b->n_stage >= FFN_CB_STAGES) return;
    if (cudaEventRecord(b->prof_ev[b->n_stage + 1], b->stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    snprintf(b->stage[b->n_stage], sizeof b->stage[0], "%s", name);
    snprintf(b->stage_impl[b->n_stage], sizeof b->stage_impl[0], "%s", impl ? impl : "");
    b->n_stage++;
}

int ffn_cuda_block_profile(ffn_block_t block, bool on) {
    struct ffn_cuda_block *b = ffn__cb(block);
    if (!b || b->hdr.backend != FFN_BACKEND_CUDA) return -1;
    if (on && !b->prof_ev[0]) {
        for (int k = 0; k <= FFN_CB_STAGES; k++)
            if (cudaEventCreate(&b->prof_ev[k]) != cudaSuccess) {
                (void)cudaGetLastError();
                for (int j = 0; j < k; j++) (void)cudaEventDestroy(b->prof_ev[j]);
                memset(b->prof_ev, 0, sizeof b->prof_ev);
                return -1;
            }
    }
    b->prof = on;
    b->n_stage = 0;
    return 0;
}

int ffn_cuda_block_stages(ffn_block_t block, int max, const char **names, const char **impls,
                          float *ms) {
    struct ffn_cuda_block *b = ffn__cb(block);
    if (!b || b->hdr.backend != FFN_BACKEND_CUDA || !b->prof) return -1;
    const int n = b->n_stage < max ? b->n_stage : max;
    if (n > 0 && cudaEventSynchronize(b->prof_ev[b->n_stage]) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    for (int k = 0; k < n; k++) {
        names[k] = b->stage[k], impls[k] = b->stage_impl[k], ms[k] = 0.0f;
        if (cudaEventElapsedTime(&ms[k], b->prof_ev[k], b->prof_ev[k + 1]) != cudaSuccess)
            ms[k] = -1.0f;
    }
    (void)cudaGetLastError();
    return n;
}

static enum ffn_status ffn__end(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                enum ffn_status st) {
    const cudaError_t e = cudaEventRecord(b->done, b->stream);
    if (e == cudaSuccess) b->have_done = true;
    if (st == FFN_STATUS_OK && e != cudaSuccess)
        return ffn_cuda_error(ctx, fn, "cudaEventRecord", e);
    return st;
}

// Grows buf to `bytes` (stream-ordered on the block's stream; the old contents are not kept).
static enum ffn_status ffn__reserve(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                    struct ffn_cb_buf *buf, size_t bytes) {
    if (bytes <= buf->cap) return FFN_STATUS_OK;
    bytes = (bytes + 255) & ~(size_t)255;
    if (buf->p) (void)cudaFreeAsync(buf->p, b->stream);
    buf->p = NULL;
    buf->cap = 0;
    const cudaError_t e = cudaMallocAsync(&buf->p, bytes, b->stream);
    if (e != cudaSuccess) {
        buf->p = NULL;
        char what[96];
        snprintf(what, sizeof what, "cudaMallocAsync of a %zu-byte workspace", bytes);
        return ffn_cuda_error(ctx, fn, what, e);
    }
    buf->cap = bytes;
    return FFN_STATUS_OK;
}

// --- GEMMs --------------------------------------------------------------------------------------

// A matrix operand: element (i, j) at p + (i·s0 + j·s1)·dtype_size; s0 or s1 is 1.
struct ffn_cb_mat {
    const void *p;
    enum ffn_dtype dt;
    int64_t s0, s1;
};

enum { FFN_CB_EPI_NONE = 0, FFN_CB_EPI_GELU, FFN_CB_EPI_DGELU };

// C[M, N] (row-major, C.s1 = 1) = A[M, K]·B[K, N] (+ bias[N], dense) (+ C when acc). A and B share
// a dtype. GELU: C = gelu(A·B + bias), and aux = A·B + bias (aux non-NULL); DGELU: C = (A·B) ⊙
// gelu'(aux). aux: [M, N] of aux_dt, row stride aux_ld.
struct ffn_cb_call {
    int64_t M, N, K;
    struct ffn_cb_mat A, B, C;
    const void *bias;
    enum ffn_dtype bias_dt;
    bool acc;
    int epi;
    void *aux;
    enum ffn_dtype aux_dt;
    int64_t aux_ld;
};

static cudaDataType_t ffn__cdt(enum ffn_dtype dt) {
    return dt == FFN_DTYPE_F32 ? CUDA_R_32F : dt == FFN_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
}

static int32_t ffn__align(const void *p) {
    const uintptr_t a = (uintptr_t)p;
    int32_t k = 0;
    while (k < 8 && !(a & ((uintptr_t)1 << k))) k++;
    return k;
}

static void ffn__plan_free(const struct ffn_lt *lt, struct ffn_cb_plan *pl) {
    if (pl->desc) lt->desc_destroy(pl->desc);
    if (pl->la) lt->layout_destroy(pl->la);
    if (pl->lb) lt->layout_destroy(pl->lb);
    if (pl->lc) lt->layout_destroy(pl->lc);
    memset(pl, 0, sizeof *pl);
}

// The cached plan of `key`, made on a miss: its algorithm is the heuristic's first, or for a large
// GEMM the fastest of the heuristic's first ffn_lt_algos candidates timed on call's operands (the
// first call of a new shape waits for the device once). NULL only when cuBLASLt failed outright
// (message in ctx); a plan without an algorithm has ok false. bias/aux: the pointers the heuristic
// sees (their alignment is part of the key).
static struct ffn_cb_plan *ffn__plan(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                     const struct ffn_cb_key *key, const void *bias,
                                     const void *aux, const struct ffn_cb_call *call) {
    struct ffn_cb_plan *lru = &b->plans[0];
    for (int i = 0; i < FFN_CB_PLANS; i++) {
        struct ffn_cb_plan *pl = &b->plans[i];
        if (pl->used && !memcmp(&pl->key, key, sizeof *key)) {
            pl->tick = ++b->tick;
            return pl;
        }
        if (!pl->used || (lru->used && pl->tick < lru->tick)) lru = pl;
    }
    const struct ffn_lt *lt = b->lt;
    struct ffn_cb_plan *pl = lru;
    if (pl->used) ffn__plan_free(lt, pl);
    pl->key = *key;
    pl->used = true;
    pl->tick = ++b->tick;
    cublasStatus_t s;
    const char *what = "cublasLtMatmulDescCreate";
    const int32_t ta = key->transa, tb = key->transb;
    if ((s = lt->desc_create(&pl->desc, (cublasComputeType_t)key->compute, CUDA_R_32F)) ||
        (what = "CUBLASLT_MATMUL_DESC_TRANSA",
         s = lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) ||
        (what = "CUBLASLT_MATMUL_DESC_TRANSB",
         s = lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)))
        goto fail;
    if (key->epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
        const uint32_t ep = (uint32_t)key->epilogue;
        what = "CUBLASLT_MATMUL_DESC_EPILOGUE";
        if ((s = lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep))) goto fail;
    }
    // Attributes a configuration may not support: refused here, it is a plan without algorithm.
    if (key->bias_dt >= 0) {
        const int32_t bt = key->bias_dt;
        if (lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt) ||
            lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias))
            goto no_algo;
    }
    if (key->aux_dt >= 0) {
        const int64_t ld = key->aux_ld;
        const int32_t at = key->aux_dt;
        if (lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux) ||
            lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld) ||
            (at != key->c_dt &&
             lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &at, sizeof at)))
            goto no_algo;
    }
    {
        const uint64_t ar = (uint64_t)(ta == CUBLAS_OP_N ? key->m : key->k);
        const uint64_t ac = (uint64_t)(ta == CUBLAS_OP_N ? key->k : key->m);
        const uint64_t br = (uint64_t)(tb == CUBLAS_OP_N ? key->k : key->n);
        const uint64_t bc = (uint64_t)(tb == CUBLAS_OP_N ? key->n : key->k);
        what = "cublasLtMatrixLayoutCreate";
        if ((s = lt->layout_create(&pl->la, (cudaDataType_t)key->ab_dt, ar, ac, key->lda)) ||
            (s = lt->layout_create(&pl->lb, (cudaDataType_t)key->ab_dt, br, bc, key->ldb)) ||
            (s = lt->layout_create(&pl->lc, (cudaDataType_t)key->c_dt, (uint64_t)key->m,
                                   (uint64_t)key->n, key->ldc)))
            goto no_algo;  // e.g. a leading dimension it does not take
    }
    {
        cublasLtMatmulPreference_t pref = NULL;
        what = "cublasLtMatmulPreferenceCreate";
        if ((s = lt->pref_create(&pref))) goto fail;
        const uint64_t wsb = b->ws.cap;
        const uint32_t al[4] = {1u << key->align[0], 1u << key->align[1], 1u << key->align[2],
                                1u << key->align[2]};
        lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
        lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al[0], sizeof al[0]);
        lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al[1], sizeof al[1]);
        lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al[2], sizeof al[2]);
        lt->pref_set(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al[3], sizeof al[3]);
        cublasLtMatmulHeuristicResult_t res[FFN_LT_ALGOS_MAX];
        int n = 0;
        memset(res, 0, sizeof res);
        const int want = ffn_lt_algos(2.0 * (double)key->m * (double)key->n * (double)key->k);
        s = lt->heuristic(b->h, pl->desc, pl->la, pl->lb, pl->lc, pl->lc, pref, want, res, &n);
        lt->pref_destroy(pref);
        if (s != CUBLAS_STATUS_SUCCESS || n < 1 || res[0].state != CUBLAS_STATUS_SUCCESS)
            goto no_algo;
        // Several candidates: each timed once on this call's operands (the heuristic's first is
        // not always the fastest: docs/cuda.md); into scratch when the GEMM accumulates into C.
        pl->pick = 0, pl->n_algos = n;
        enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(b->stream, &cap) != cudaSuccess) {
            (void)cudaGetLastError();
            cap = cudaStreamCaptureStatusActive;
        }
        if (cap != cudaStreamCaptureStatusNone) pl->n_algos = 1;  // no timing under capture
        if (n > 1 && call && cap == cudaStreamCaptureStatusNone) {
            const void *C = call->C.p;
            void *D = (void *)call->C.p;
            const size_t cb = (size_t)(key->ldc * key->n) * (key->c_dt == CUDA_R_32F ? 4 : 2);
            bool scratch = false;
            if (call->acc) {
                scratch = cudaMallocAsync(&D, cb, b->stream) == cudaSuccess;
                if (scratch && cudaMemsetAsync(D, 0, cb, b->stream) != cudaSuccess) {
                    (void)cudaFreeAsync(D, b->stream);
                    scratch = false;
                }
                C = D;
                (void)cudaGetLastError();
            }
            if (!call->acc || scratch) {
                pl->pick = ffn_lt_pick(lt, b->h, pl->desc, pl->la, pl->lb, pl->lc, res, n,
                                       call->B.p, call->A.p, C, D, call->acc ? 1.0f : 0.0f, b->ws.p,
                                       b->ws.cap, b->stream, 3, NULL);
            }
            if (scratch) (void)cudaFreeAsync(D, b->stream);
        }
        pl->algo = res[pl->pick].algo;
    }
    {
        int32_t id = 0, splitk = 1;
        uint32_t tile = 0;
        size_t w = 0;
        lt->algo_get(&pl->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
        lt->algo_get(&pl->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
        lt->algo_get(&pl->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
        char tn[32];
        const char *math = key->compute == CUBLAS_COMPUTE_32F_FAST_TF32   ? "tf32"
                           : key->compute == CUBLAS_COMPUTE_32F_FAST_16BF ? "f32 as bf16"
                           : key->ab_dt == CUDA_R_32F                     ? "f32"
                           : key->ab_dt == CUDA_R_16BF                    ? "bf16"
                                                                          : "f16";
        char pk[40] = "";
        if (pl->n_algos > 1) snprintf(pk, sizeof pk, ", #%d of %d", pl->pick + 1, pl->n_algos);
        snprintf(pl->name, sizeof pl->name, "cuBLASLt algo %d, %s, splitK %d, %s%s", id,
                 ffn_lt_tile_name((int)tile, tn, sizeof tn), splitk, math, pk);
    }
    pl->ok = true;
    return pl;
no_algo:
    (void)cudaGetLastError();
    pl->ok = false;
    snprintf(pl->name, sizeof pl->name, "no cuBLASLt algorithm");
    return pl;
fail:
    ffn_error(ctx, FFN_STATUS_BACKEND, "%s: %s: %s", fn, what, ffn_lt_status(b->lt, s));
    ffn__plan_free(b->lt, pl);
    return NULL;
}

static cublasComputeType_t ffn__compute(const struct ffn_cuda_block *b, enum ffn_dtype dt) {
    if (dt != FFN_DTYPE_F32) return CUBLAS_COMPUTE_32F;
    switch (b->opts.math) {
    case FFN_BLOCK_MATH_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case FFN_BLOCK_MATH_BF16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    default: return CUBLAS_COMPUTE_32F;
    }
}

// Runs call c through cuBLASLt when it has an algorithm (*ran = true), else leaves *ran false.
// c's output dtype must be one cuBLASLt writes from its inputs (f32, or the inputs' dtype).
static enum ffn_status ffn__lt_run(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                   const struct ffn_cb_call *c, const char **impl, bool *ran) {
    *ran = false;
    if (b->force_naive) return FFN_STATUS_OK;
    // Row-major C[M, N] is the column-major D[N, M] = Bᵀ·Aᵀ: cuBLASLt's A is our B, its B our A.
    struct ffn_cb_key k;
    memset(&k, 0, sizeof k);
    k.m = c->N, k.n = c->M, k.k = c->K;
    const struct ffn_cb_mat *A = &c->A, *B = &c->B;
    if (B->s1 == 1) {  // B(k, j) at k·s0 + j: column-major [N, K], ld s0
        k.transa = CUBLAS_OP_N;
        k.lda = B->s0 > c->N ? B->s0 : c->N;
    } else {  // at k + j·s1: column-major [K, N] = (our Bᵀ)ᵀ
        k.transa = CUBLAS_OP_T;
        k.lda = B->s1 > c->K ? B->s1 : c->K;
    }
    if (A->s1 == 1) {  // A(i, k) at i·s0 + k: column-major [K, M]
        k.transb = CUBLAS_OP_N;
        k.ldb = A->s0 > c->K ? A->s0 : c->K;
    } else {
        k.transb = CUBLAS_OP_T;
        k.ldb = A->s1 > c->M ? A->s1 : c->M;
    }
    k.ldc = c->C.s0 > c->N ? c->C.s0 : c->N;
    // A leading dimension below its rows can only come from a one-column operand (clamped above)
    // or a caller's bug: refuse rather than hand cuBLASLt a bad layout.
    if ((k.transa == CUBLAS_OP_N && B->s0 < c->N && c->K > 1) ||
        (k.transa == CUBLAS_OP_T && B->s1 < c->K && c->N > 1) ||
        (k.transb == CUBLAS_OP_N && A->s0 < c->K && c->M > 1) ||
        (k.transb == CUBLAS_OP_T && A->s1 < c->M && c->K > 1) || (c->C.s0 < c->N && c->M > 1))
        return ffn_error(ctx, FFN_STATUS_INTERNAL,
                         "%s: a GEMM operand with a leading dimension "
                         "below its rows",
                         fn);
    k.ab_dt = ffn__cdt(A->dt);
    k.c_dt = ffn__cdt(c->C.dt);
    k.compute = ffn__compute(b, A->dt);
    k.bias_dt = c->bias ? (int32_t)ffn__cdt(c->bias_dt) : -1;
    k.aux_dt = c->aux ? (int32_t)ffn__cdt(c->aux_dt) : -1;
    k.aux_ld = c->aux ? c->aux_ld : 0;
    k.beta1 = c->acc;
    switch (c->epi) {
    case FFN_CB_EPI_GELU:
        k.epilogue = c->aux
                         ? (c->bias ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX)
                         : (c->bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU);
        break;
    case FFN_CB_EPI_DGELU: k.epilogue = CUBLASLT_EPILOGUE_DGELU; break;
    default: k.epilogue = c->bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT; break;
    }
    k.align[0] = ffn__align(B->p);
    k.align[1] = ffn__align(A->p);
    k.align[2] = ffn__align(c->C.p);
    k.align[3] = c->bias ? ffn__align(c->bias) : 0;
    k.align[4] = c->aux ? ffn__align(c->aux) : 0;
    struct ffn_cb_plan *pl = ffn__plan(ctx, fn, b, &k, c->bias, c->aux, c);
    if (!pl) return FFN_STATUS_BACKEND;
    if (!pl->ok) {
        if (!pl->logged)  // say once which configuration has no algorithm
            ffn_log(ctx, 2,
                    "%s: no cuBLASLt algorithm for %" PRId64 " x %" PRId64 " x %" PRId64
                    " (A %s ld %" PRId64 " op %d, B %s ld %" PRId64 " op %d, C %s ld %" PRId64
                    ", epilogue %d, bias type %d, aux type %d)",
                    fn, c->M, c->N, c->K, ffn_dtype_name(A->dt), k.ldb, k.transb,
                    ffn_dtype_name(B->dt), k.lda, k.transa, ffn_dtype_name(c->C.dt), k.ldc,
                    (int)k.epilogue, (int)k.bias_dt, (int)k.aux_dt);
        pl->logged = true;
        return FFN_STATUS_OK;
    }
    const struct ffn_lt *lt = b->lt;
    if (c->bias)
        lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &c->bias, sizeof c->bias);
    if (c->aux)
        lt->desc_set(pl->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &c->aux, sizeof c->aux);
    const float alpha = 1.0f, beta = c->acc ? 1.0f : 0.0f;
    const cublasStatus_t s =
        lt->matmul(b->h, pl->desc, &alpha, B->p, pl->la, A->p, pl->lb, &beta, c->C.p, pl->lc,
                   (void *)c->C.p, pl->lc, &pl->algo, b->ws.p, b->ws.cap, b->stream);
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE) {
        // The heuristic's algorithm refuses this problem after all (a layout it did not weigh):
        // this configuration goes the other ways from now on.
        ffn_log(ctx, 1,
                "%s: cublasLtMatmul refused %" PRId64 " x %" PRId64 " x %" PRId64
                " (%s, epilogue %d): %s; using a fallback",
                fn, c->M, c->N, c->K, pl->name, (int)k.epilogue, ffn_lt_status(lt, s));
        pl->ok = false;
        snprintf(pl->name, sizeof pl->name, "cuBLASLt refused it");
        return FFN_STATUS_OK;
    }
    if (s != CUBLAS_STATUS_SUCCESS)
        return ffn_error(ctx, FFN_STATUS_BACKEND,
                         "%s: cublasLtMatmul (%" PRId64 " x %" PRId64 " x %" PRId64 ", %s): %s", fn,
                         c->M, c->N, c->K, pl->name, ffn_lt_status(lt, s));
    if (impl) *impl = pl->name;
    *ran = true;
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__launch_err(ffn_ctx_t ctx, const char *fn, const char *what, int e) {
    return e ? ffn_cuda_error(ctx, fn, what, (cudaError_t)e) : FFN_STATUS_OK;
}

// out[r, c] = in (+ bias) (+ out): the conversion kernel.
static enum ffn_status ffn__convert(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                    int64_t rows, int64_t cols, void *out, enum ffn_dtype odt,
                                    int64_t ldo, const void *in, enum ffn_dtype idt, int64_t ldi,
                                    const void *bias, enum ffn_dtype bdt, int64_t bs, bool acc) {
    const struct ffn_cu_cvt a = {in,  out, bias,         rows,         cols,         ldi,
                                 ldo, bs,  (int32_t)idt, (int32_t)odt, (int32_t)bdt, acc};
    return ffn__launch_err(ctx, fn, "the conversion kernel", ffn_cu_convert_launch(b->stream, &a));
}

// One GEMM (no epilogue activation), whatever the dtypes and layout: cuBLASLt with the bias in
// its epilogue; else cuBLASLt without it and the bias added after (f32 outputs) or through an f32
// staging buffer rounded once (16-bit outputs, and outputs cuBLASLt does not write from these
// inputs); else the fallback GEMM kernel.
static enum ffn_status ffn__mm(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                               const struct ffn_cb_call *c, const char **impl) {
    if (c->M == 0 || c->N == 0) return FFN_STATUS_OK;
    enum ffn_status st;
    bool ran = false;
    const bool direct = c->C.dt == FFN_DTYPE_F32 || c->C.dt == c->A.dt;
    if (c->K > 0 && direct) {
        if ((st = ffn__lt_run(ctx, fn, b, c, impl, &ran)) || ran) return st;
        if (c->bias && c->C.dt == FFN_DTYPE_F32) {
            struct ffn_cb_call nb = *c;
            nb.bias = NULL;
            if ((st = ffn__lt_run(ctx, fn, b, &nb, impl, &ran))) return st;
            if (ran)
                return ffn__convert(ctx, fn, b, c->M, c->N, (void *)c->C.p, c->C.dt, c->C.s0,
                                    c->C.p, c->C.dt, c->C.s0, c->bias, c->bias_dt, 1, false);
        }
    }
    if (c->K > 0 && !b->force_naive) {
        // Staging: W = A·B in f32, then C = round(W + bias (+ C)).
        if ((st = ffn__reserve(ctx, fn, b, &b->W, (size_t)(c->M * c->N) * sizeof(float))))
            return st;
        struct ffn_cb_call w = *c;
        w.C = (struct ffn_cb_mat){b->W.p, FFN_DTYPE_F32, c->N, 1};
        w.bias = NULL;
        w.acc = false;
        if ((st = ffn__lt_run(ctx, fn, b, &w, impl, &ran))) return st;
        if (ran)
            return ffn__convert(ctx, fn, b, c->M, c->N, (void *)c->C.p, c->C.dt, c->C.s0, b->W.p,
                                FFN_DTYPE_F32, c->N, c->bias, c->bias_dt, 1, c->acc);
    }
    const struct ffn_cu_gemm g = {c->A.p,
                                  c->B.p,
                                  c->bias,
                                  (void *)c->C.p,
                                  c->M,
                                  c->N,
                                  c->K,
                                  c->A.s0,
                                  c->A.s1,
                                  c->B.s0,
                                  c->B.s1,
                                  c->C.s0,
                                  1,
                                  (int32_t)c->A.dt,
                                  (int32_t)c->C.dt,
                                  (int32_t)c->bias_dt,
                                  c->acc};
    if (impl) *impl = "ffn tiled GEMM (no cuBLASLt algorithm)";
    return ffn__launch_err(ctx, fn, "the fallback GEMM kernel",
                           ffn_cu_gemm_naive_launch(b->stream, &g));
}

// --- operands of the plan -----------------------------------------------------------------------

// The weight w as the GEMM operand of "x·W" (logical [K, N]), or transposed ([N, K]).
static struct ffn_cb_mat ffn__wop(const struct ffn_cuda_block *b, const struct ffn_blk_mat *w,
                                  bool transpose) {
    const struct ffn_blk_stored *s = &b->plan.mat[w->which];
    int64_t st[2];
    ffn_blk_mat_strides(w, s->ld, st);
    const void *p = (const char *)s->p + (size_t)(w->row0 * s->ld) * ffn__es(s->dtype);
    struct ffn_cb_mat o = {p, s->dtype, st[0], st[1]};
    if (transpose) o.s0 = st[1], o.s1 = st[0];
    return o;
}

static struct ffn_cb_mat ffn__act_op(const struct ffn_tensor *t) {
    return (struct ffn_cb_mat){t->data, t->dtype, t->rows > 1 ? t->row_stride : t->cols, 1};
}

// An activation view as a GEMM operand of dtype `want`: itself, or a dense converted copy in buf.
static enum ffn_status ffn__as(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                               const struct ffn_tensor *t, enum ffn_dtype want,
                               struct ffn_cb_buf *buf, struct ffn_cb_mat *out) {
    if (t->dtype == want) {
        *out = ffn__act_op(t);
        return FFN_STATUS_OK;
    }
    enum ffn_status st = ffn__reserve(ctx, fn, b, buf, (size_t)(t->rows * t->cols) * ffn__es(want));
    if (st) return st;
    const struct ffn_cb_mat src = ffn__act_op(t);
    if ((st = ffn__convert(ctx, fn, b, t->rows, t->cols, buf->p, want, t->cols, t->data, t->dtype,
                           src.s0, NULL, FFN_DTYPE_F32, 0, false)))
        return st;
    ffn__mark(b, "convert", NULL);
    *out = (struct ffn_cb_mat){buf->p, want, t->cols, 1};
    return FFN_STATUS_OK;
}

// The bias of plane k of the first projection as a dense vector (gathered into Bg when strided:
// a row-interleaved gate_up's bias), or NULL.
static enum ffn_status ffn__first_bias(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                       int k, const void **bias, enum ffn_dtype *bdt) {
    const struct ffn_block_plan *pl = &b->plan;
    *bias = NULL;
    *bdt = FFN_DTYPE_F32;
    for (int i = 0; i < pl->n_bias; i++) {
        const struct ffn_blk_bias *bp = &pl->bias[i];
        if (bp->seg != k) continue;
        const struct ffn_blk_stored *v = &pl->vec[bp->which];
        const size_t es = ffn__es(v->dtype);
        const char *src = (const char *)v->p + (size_t)bp->off * es;
        *bdt = v->dtype;
        if (bp->stride == 1) {
            *bias = src;
            return FFN_STATUS_OK;
        }
        // Both strided pieces are gathered into their own half of Bg.
        enum ffn_status st = ffn__reserve(ctx, fn, b, &b->Bg, (size_t)(2 * pl->p_ld) * es);
        if (st) return st;
        char *dst = (char *)b->Bg.p + (size_t)(k * pl->p_ld) * es;
        if ((st = ffn__convert(ctx, fn, b, bp->n, 1, dst, v->dtype, 1, src, v->dtype, bp->stride,
                               NULL, FFN_DTYPE_F32, 0, false)))
            return st;
        *bias = dst;
        return FFN_STATUS_OK;
    }
    return FFN_STATUS_OK;
}

// An element-wise call of the backend on the block's own (checked) views.
static enum ffn_status ffn__ew(ffn_ctx_t ctx, const char *fn, enum ffn_kop op, enum ffn_act act,
                               int n_out, const struct ffn_tensor *o0, const struct ffn_tensor *o1,
                               int n_in, const struct ffn_tensor *i0, const struct ffn_tensor *i1,
                               const struct ffn_tensor *i2) {
    struct ffn_ew_call c = {
        .fn = fn,
        .op = op,
        .act = act,
        .in = i0->dtype,
        .out = o0->dtype,
        .accurate = ctx->accuracy == FFN_ACCURACY_HIGH,
        .parity = ctx->bf16_parity && op == FFN_KOP_GLU_FWD,
        .n_out = n_out,
        .n_in = n_in,
        .outs = {o0, o1},
        .ins = {i0, i1, i2},
        .out_names = {"block buffer", "block buffer"},
        .in_names = {"block buffer", "block buffer", "block buffer"},
        .trusted = true,
    };
    if (i0->rows == 0 || i0->cols == 0) return FFN_STATUS_OK;
    return ctx->be->elementwise(ctx, &c);
}

// A [rows, cols] view of plane `k` of a P-like buffer (dtype dt, planes of T rows × p_ld) from
// column c0.
static struct ffn_tensor ffn__pview(const struct ffn_cuda_block *b, void *base, enum ffn_dtype dt,
                                    int64_t T, int k, int64_t c0, int64_t cols) {
    const int64_t ld = b->plan.p_ld;
    char *p = (char *)base + (size_t)(k * T * ld + c0) * ffn__es(dt);
    return ffn_tensor_2d(p, dt, T, cols, ld);
}

// h = act(P) or the gated combine, from the planes of P (dtype pdt) into H (hdt, [T, m] dense).
static enum ffn_status ffn__act_fwd(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                    int64_t T, void *P, enum ffn_dtype pdt) {
    const struct ffn_block_plan *pl = &b->plan;
    const int64_t m = pl->spec.d_ff;
    if (!pl->spec.gated) {
        const struct ffn_tensor in = ffn__pview(b, P, pdt, T, 0, 0, m);
        const struct ffn_tensor out = ffn_tensor_2d(b->H.p, b->hdt, T, m, m);
        return ffn__ew(ctx, fn, FFN_KOP_ACT_FWD, pl->spec.act, 1, &out, NULL, 1, &in, NULL, NULL);
    }
    for (int64_t g = 0; g < pl->n_groups; g++) {
        const struct ffn_tensor gt =
            ffn__pview(b, P, pdt, T, pl->g_plane, pl->g0 + g * pl->gs, pl->gw);
        const struct ffn_tensor up =
            ffn__pview(b, P, pdt, T, pl->u_plane, pl->u0 + g * pl->gs, pl->gw);
        const struct ffn_tensor h = ffn_tensor_2d(
            (char *)b->H.p + (size_t)(g * pl->gw) * ffn__es(b->hdt), b->hdt, T, pl->gw, m);
        enum ffn_status st =
            ffn__ew(ctx, fn, FFN_KOP_GLU_FWD, pl->spec.act, 1, &h, NULL, 2, &gt, &up, NULL);
        if (st) return st;
    }
    return FFN_STATUS_OK;
}

// dP = dh ⊙ act'(P) or (dgate, dup), from P (pdt) and dh (H, pdt, [T, m]) into D (ddt; D may be P).
static enum ffn_status ffn__act_bwd(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                    int64_t T, void *P, enum ffn_dtype pdt, void *D,
                                    enum ffn_dtype ddt) {
    const struct ffn_block_plan *pl = &b->plan;
    const int64_t m = pl->spec.d_ff;
    if (!pl->spec.gated) {
        const struct ffn_tensor x = ffn__pview(b, P, pdt, T, 0, 0, m);
        const struct ffn_tensor dh = ffn_tensor_2d(b->H.p, pdt, T, m, m);
        const struct ffn_tensor dx = ffn__pview(b, D, ddt, T, 0, 0, m);
        return ffn__ew(ctx, fn, FFN_KOP_ACT_BWD, pl->spec.act, 1, &dx, NULL, 2, &x, &dh, NULL);
    }
    for (int64_t g = 0; g < pl->n_groups; g++) {
        const int64_t gc = pl->g0 + g * pl->gs, uc = pl->u0 + g * pl->gs;
        const struct ffn_tensor gt = ffn__pview(b, P, pdt, T, pl->g_plane, gc, pl->gw);
        const struct ffn_tensor up = ffn__pview(b, P, pdt, T, pl->u_plane, uc, pl->gw);
        const struct ffn_tensor dg = ffn__pview(b, D, ddt, T, pl->g_plane, gc, pl->gw);
        const struct ffn_tensor du = ffn__pview(b, D, ddt, T, pl->u_plane, uc, pl->gw);
        const struct ffn_tensor dh =
            ffn_tensor_2d((char *)b->H.p + (size_t)(g * pl->gw) * ffn__es(pdt), pdt, T, pl->gw, m);
        enum ffn_status st =
            ffn__ew(ctx, fn, FFN_KOP_GLU_BWD, pl->spec.act, 2, &dg, &du, 3, &gt, &up, &dh);
        if (st) return st;
    }
    return FFN_STATUS_OK;
}

// Whether the backward tries the DGELU epilogue (dP = dh ⊙ gelu'(P) out of the dh GEMM, dP in
// the first projection's dtype, which cuBLASLt must write from W_down's).
static bool ffn__dgelu_try(const struct ffn_cuda_block *b) {
    return b->gelu_epi && ffn_cuda_gelu_epilogue_ok(b->fdt, false) && b->plan.p_ld % 8 == 0 &&
           (b->fdt == FFN_DTYPE_F32 || b->fdt == b->hdt);
}

// Bytes of H for T tokens (h in hdt, then dh in sd).
static size_t ffn__h_bytes(const struct ffn_cuda_block *b, int64_t T) {
    const size_t es = ffn__es(b->hdt) > ffn__es(b->sd) ? ffn__es(b->hdt) : ffn__es(b->sd);
    return (size_t)(T * b->plan.spec.d_ff) * es;
}

// Whether the fused kernel's form `part` (FFN_CB_FORM_*) runs for T tokens: a Hopper GPU
// (glu_sms), the form in use, T ≥ glu_min_t, bf16 or f16 weights (the first projection's).
static bool ffn__glu_form(const struct ffn_cuda_block *b, int part, int64_t T) {
    return (b->glu_parts & part) && T >= b->glu_min_t &&
           (b->fdt == FFN_DTYPE_BF16 || b->fdt == FFN_DTYPE_F16);
}

// The fused gated GEMM's call for T tokens of x (xop), h into H and, keep_p, g and u into their
// planes of P; false where it does not apply: the form (ffn__glu_form), weights stored [out, in]
// (separate, fused or row-interleaved), x and h in the weights' dtype and the kept
// pre-activations too (bf16: save_dtype has no f16, so an f16 block's SAVE forward stays
// unfused), no bias on the first projection, one gate/up group (not a blocked layout), and the
// kernel's terms (ffn_cu_glu_gemm_fits: its element math — the 16-bit tier of the default
// accuracy without parity, or ReLU / identity — and its alignment).
static bool ffn__glu_try(ffn_ctx_t ctx, const struct ffn_cuda_block *b,
                         const struct ffn_cb_mat *xop, int64_t T, bool keep_p,
                         struct ffn_cu_glu_gemm *g) {
    const struct ffn_block_plan *pl = &b->plan;
    const enum ffn_act act = pl->spec.act;
    const enum ffn_dtype dt = b->fdt;
    if (!ffn__glu_form(b, FFN_CB_FORM_FWD, T) || xop->dt != dt || xop->s1 != 1 || b->hdt != dt ||
        (keep_p && b->sd != dt) || pl->n_bias != 0 || pl->n_groups != 1)
        return false;
    const struct ffn_cb_mat wg = ffn__wop(b, &pl->seg[pl->g_plane].w, false);
    const struct ffn_cb_mat wu = ffn__wop(b, &pl->seg[pl->u_plane].w, false);
    if (wg.s0 != 1 || wu.s0 != 1) return false;  // [in, out] weights: N-major, not this kernel's
    const int64_t ld = pl->p_ld;
    const size_t es = ffn__es(dt);
    *g = (struct ffn_cu_glu_gemm){
        .x = xop->p,
        .wg = (const char *)wg.p + (size_t)(pl->g0 * wg.s1) * es,
        .wu = (const char *)wu.p + (size_t)(pl->u0 * wu.s1) * es,
        .h = b->H.p,
        .g = keep_p ? ffn__pview(b, b->P.p, dt, T, pl->g_plane, pl->g0, pl->gw).data : NULL,
        .u = keep_p ? ffn__pview(b, b->P.p, dt, T, pl->u_plane, pl->u0, pl->gw).data : NULL,
        .T = T,
        .m = pl->gw,
        .K = pl->spec.d_model,
        .ldx = xop->s0,
        .ldwg = wg.s1,
        .ldwu = wu.s1,
        .ldh = pl->spec.d_ff,
        .ldg = ld,
        .ldu = ld,
        .act = act,
        .accurate = ctx->accuracy == FFN_ACCURACY_HIGH,
        .parity = ctx->bf16_parity,
        .f16 = dt == FFN_DTYPE_F16,
        .sms = b->glu_sms,
    };
    return ffn_cu_glu_gemm_fits(g);
}

// The backward's fused dh GEMM for T tokens of dy (dyop): dh = dy·W_down and, in its epilogue,
// dgate and dup over the gate and up planes of P (in place); false where it does not apply: the
// form (ffn__glu_form), one gate/up group, dy, h, the saved pre-activations and dP all in
// W_down's dtype (dP in place over P), and the kernel's terms (ffn_cu_dglu_gemm_fits: the element
// math as the forward's, bf16_parity aside, which does not touch the backward; W_down's rows
// 16-byte strides).
static bool ffn__dglu_try(ffn_ctx_t ctx, const struct ffn_cuda_block *b,
                          const struct ffn_cb_mat *dyop, const struct ffn_cb_mat *wdt, int64_t T,
                          struct ffn_cu_dglu_gemm *g) {
    const struct ffn_block_plan *pl = &b->plan;
    const enum ffn_act act = pl->spec.act;
    const enum ffn_dtype dt = b->fdt;
    if (!ffn__glu_form(b, FFN_CB_FORM_DH, T) || !pl->spec.gated || wdt->dt != dt ||
        dyop->dt != dt || dyop->s1 != 1 || b->hdt != dt || b->sd != dt || pl->n_groups != 1 ||
        (wdt->s0 != 1 && wdt->s1 != 1))
        return false;
    const int64_t ld = pl->p_ld;
    void *gp = ffn__pview(b, b->P.p, dt, T, pl->g_plane, pl->g0, pl->gw).data;
    void *up = ffn__pview(b, b->P.p, dt, T, pl->u_plane, pl->u0, pl->gw).data;
    *g = (struct ffn_cu_dglu_gemm){
        .dy = dyop->p,
        .w = wdt->p,
        .g = gp,
        .u = up,
        .dg = gp,
        .du = up,
        .T = T,
        .m = pl->gw,
        .K = pl->spec.d_model,
        .lddy = dyop->s0,
        .ldw = wdt->s1 == 1 ? wdt->s0 : wdt->s1,
        .ldg = ld,
        .ldu = ld,
        .lddg = ld,
        .lddu = ld,
        .w_kn = wdt->s1 == 1,
        .act = act,
        .accurate = ctx->accuracy == FFN_ACCURACY_HIGH,
        .f16 = dt == FFN_DTYPE_F16,
        .sms = b->glu_sms,
    };
    return ffn_cu_dglu_gemm_fits(g);
}

// The backward's dx = dP_0·W_0ᵀ + dP_1·W_1ᵀ of two planes (separate gate and up weights) as one
// GEMM of ffn's, its sum over both in f32 and rounded once, where the form applies
// (ffn__glu_form) with dP, dx and both weights in one 16-bit dtype and the weights in one
// orientation; false elsewhere (then cuBLASLt: two GEMMs through an f32 sum).
static bool ffn__dx_pair_try(const struct ffn_cuda_block *b, const struct ffn_tensor *dx, void *Dp,
                             int64_t T, struct ffn_cu_gemm_pair *g) {
    const struct ffn_block_plan *pl = &b->plan;
    const enum ffn_dtype dt = b->fdt;
    if (!ffn__glu_form(b, FFN_CB_FORM_DX, T) || pl->n_seg != 2 || dx->dtype != dt) return false;
    const struct ffn_cb_mat w0 = ffn__wop(b, &pl->seg[0].w, true);
    const struct ffn_cb_mat w1 = ffn__wop(b, &pl->seg[1].w, true);
    const bool kn = w0.s1 == 1;
    if (w0.dt != dt || w1.dt != dt || (kn ? w1.s1 != 1 : w0.s0 != 1 || w1.s0 != 1)) return false;
    const int64_t ld = pl->p_ld;
    *g = (struct ffn_cu_gemm_pair){
        .a0 = Dp,
        .a1 = ffn__pview(b, Dp, dt, T, 1, 0, pl->seg[1].n).data,
        .b0 = w0.p,
        .b1 = w1.p,
        .c = dx->data,
        .M = T,
        .N = pl->spec.d_model,
        .K0 = pl->seg[0].n,
        .K1 = pl->seg[1].n,
        .lda0 = ld,
        .lda1 = ld,
        .ldb0 = kn ? w0.s0 : w0.s1,
        .ldb1 = kn ? w1.s0 : w1.s1,
        .ldc = ffn__act_op(dx).s0,
        .b_kn = kn,
        .f16 = dt == FFN_DTYPE_F16,
        .sms = b->glu_sms,
    };
    return ffn_cu_gemm_pair_fits(g);
}

// The first projection and the activation for T tokens of x (converted: xop): P (sd) when keep_p
// or unfused, h into H. The plain GeLU-tanh block tries the GELU(_AUX)_BIAS epilogue first.
static enum ffn_status ffn__first_act(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                      const struct ffn_cb_mat *xop, int64_t T, bool keep_p) {
    const struct ffn_block_plan *pl = &b->plan;
    const int64_t d = pl->spec.d_model, m = pl->spec.d_ff, ld = pl->p_ld;
    enum ffn_status st;
    const char *impl = NULL;
    const size_t pbytes = (size_t)(pl->n_seg * T * ld) * ffn__es(b->sd);
    if ((st = ffn__reserve(ctx, fn, b, &b->H, ffn__h_bytes(b, T))) ||
        (keep_p && (st = ffn__reserve(ctx, fn, b, &b->P, pbytes))))
        return st;
    struct ffn_cu_glu_gemm gg;
    if (ffn__glu_try(ctx, b, xop, T, keep_p, &gg)) {
        if ((st = ffn__launch_err(ctx, fn, "the fused gate/up GEMM",
                                  ffn_cu_glu_gemm_launch(b->stream, &gg))))
            return st;
        snprintf(b->gemm_impl, sizeof b->gemm_impl, "%s", FFN_CB_GLU_IMPL);
        ffn__mark(b, "P+glu", FFN_CB_GLU_IMPL);
        return FFN_STATUS_OK;
    }
    if (b->gelu_epi && T > 0 &&
        ffn_cuda_gelu_epilogue_ok(b->hdt, ctx->accuracy == FFN_ACCURACY_HIGH)) {
        const void *bias;
        enum ffn_dtype bdt;
        if ((st = ffn__first_bias(ctx, fn, b, 0, &bias, &bdt))) return st;
        const struct ffn_cb_call c = {T,
                                      m,
                                      d,
                                      *xop,
                                      ffn__wop(b, &pl->seg[0].w, false),
                                      {b->H.p, b->hdt, m, 1},
                                      bias,
                                      bdt,
                                      false,
                                      FFN_CB_EPI_GELU,
                                      keep_p ? b->P.p : NULL,
                                      b->sd,
                                      ld};
        bool ran = false;
        const bool direct = b->hdt == FFN_DTYPE_F32 || b->hdt == xop->dt;
        if (direct && ld % 8 == 0 && (st = ffn__lt_run(ctx, fn, b, &c, &impl, &ran))) return st;
        if (ran) {
            snprintf(b->gemm_impl, sizeof b->gemm_impl, "%s + GELU epilogue", impl);
            ffn__mark(b, "P0+gelu", impl);
            return FFN_STATUS_OK;
        }
    }
    if ((st = ffn__reserve(ctx, fn, b, &b->P, pbytes))) return st;
    for (int k = 0; k < pl->n_seg; k++) {
        const void *bias;
        enum ffn_dtype bdt;
        if ((st = ffn__first_bias(ctx, fn, b, k, &bias, &bdt))) return st;
        const struct ffn_cb_call c = {
            T,
            pl->seg[k].n,
            d,
            *xop,
            ffn__wop(b, &pl->seg[k].w, false),
            {(char *)b->P.p + (size_t)(k * T * ld) * ffn__es(b->sd), b->sd, ld, 1},
            bias,
            bdt,
            false,
            FFN_CB_EPI_NONE,
            NULL,
            FFN_DTYPE_F32,
            0};
        impl = NULL;
        if ((st = ffn__mm(ctx, fn, b, &c, &impl))) return st;
        if (k == 0 && impl) snprintf(b->gemm_impl, sizeof b->gemm_impl, "%s", impl);
        ffn__mark(b, k ? "P1" : "P0", impl);
    }
    if ((st = ffn__act_fwd(ctx, fn, b, T, b->P.p, b->sd))) return st;
    ffn__mark(b, "act fwd", NULL);
    return FFN_STATUS_OK;
}

// --- create / destroy / info --------------------------------------------------------------------

static void ffn__cuda_destroy(ffn_block_t block) {
    struct ffn_cuda_block *b = ffn__cb(block);
    if (!b) return;
    int prev = -1;
    const bool entered = ffn_cuda_enter(b->hdr.device, &prev) == cudaSuccess;
    if (entered) {
        // The block's last work must be done before its memory goes.
        if (b->have_done) (void)cudaEventSynchronize(b->done);
        // After that wait the memory has no user left: free it on the legacy stream (the block's
        // own may be gone). Without a recorded call (a failed create) the block's stream is live.
        const cudaStream_t fs = b->have_done ? NULL : b->stream;
        struct ffn_cb_buf *bufs[] = {&b->P, &b->H, &b->D,  &b->X,    &b->Y,
                                     &b->W, &b->Z, &b->Bg, &b->part, &b->ws};
        for (size_t i = 0; i < FFN_ARRAY_LEN(bufs); i++)
            if (bufs[i]->p) (void)cudaFreeAsync(bufs[i]->p, fs);
        if (b->done) (void)cudaEventDestroy(b->done);
        for (int k = 0; k <= FFN_CB_STAGES && b->prof_ev[0]; k++)
            (void)cudaEventDestroy(b->prof_ev[k]);
    }
    if (b->lt) {
        for (int i = 0; i < FFN_CB_PLANS; i++)
            if (b->plans[i].used) ffn__plan_free(b->lt, &b->plans[i]);
        if (b->h) b->lt->destroy(b->h);
    }
    if (entered) ffn_cuda_leave(b->hdr.device, prev);
    (void)cudaGetLastError();
    free(b);
}

// A weight member as a view, for the device-pointer check.
static enum ffn_status ffn__check_weights(ffn_ctx_t ctx, const char *fn,
                                          const struct ffn_block_plan *p) {
    static const char *const vn[] = {"weights.b_gate", "weights.b_up", "weights.b_gate_up",
                                     "weights.b_down"};
    static const char *const mn[] = {"weights.gate", "weights.up", "weights.gate_up",
                                     "weights.down"};
    enum ffn_status st;
    for (int k = 0; k < FFN_BLK_COUNT; k++) {
        const struct ffn_blk_stored *s = &p->mat[k], *v = &p->vec[k];
        if (s->p) {
            const struct ffn_tensor t = ffn_tensor_2d((void *)s->p, s->dtype, s->R, s->C, s->ld);
            if ((st = ffn_cuda_check_view(ctx, fn, mn[k], &t))) return st;
        }
        if (v->p) {
            const struct ffn_tensor t = ffn_tensor_vec((void *)v->p, v->dtype, v->C);
            if ((st = ffn_cuda_check_view(ctx, fn, vn[k], &t))) return st;
        }
    }
    return FFN_STATUS_OK;
}

// Buffers for n tokens of a training forward + backward (opts.max_tokens).
static enum ffn_status ffn__reserve_tokens(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                           int64_t T) {
    const struct ffn_block_plan *pl = &b->plan;
    const size_t pbytes = (size_t)(pl->n_seg * T * pl->p_ld);
    enum ffn_status st;
    if ((st = ffn__reserve(ctx, fn, b, &b->P, pbytes * ffn__es(b->sd))) ||
        (st = ffn__reserve(ctx, fn, b, &b->H, ffn__h_bytes(b, T))))
        return st;
    if (b->fdt != b->sd || ffn__dgelu_try(b))
        if ((st = ffn__reserve(ctx, fn, b, &b->D, pbytes * ffn__es(b->fdt)))) return st;
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__cuda_create(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                        const struct ffn_block_weights *weights,
                                        const struct ffn_block_opts *opts, ffn_block_t *block_out) {
    static const char fn[] = "ffn_block_create";
    struct ffn_block_opts o;
    enum ffn_status st;
    if ((st = ffn_block_opts_read(ctx, fn, opts, &o))) return st;
    char why[512];
    const struct ffn_lt *lt = ffn_lt_get(why, sizeof why);
    if (!lt) return ffn_error(ctx, FFN_STATUS_UNSUPPORTED, "%s: %s", fn, why);
    struct ffn_cuda_block *b = calloc(1, sizeof *b);
    if (!b) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    b->hdr = (struct ffn_block_hdr){
        .impl = &ffn_block_cuda, .backend = FFN_BACKEND_CUDA, .device = ctx->device};
    b->opts = o;
    b->lt = lt;
    if ((st = ffn_block_plan_make(ctx, fn, spec, weights, &b->plan))) {
        free(b);
        return st;
    }
    const struct ffn_block_plan *p = &b->plan;
    if (p->mat[FFN_BLK_GATE].p && p->mat[FFN_BLK_GATE].dtype != p->mat[FFN_BLK_UP].dtype) {
        st = ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                       "%s: weights.gate is %s and weights.up is "
                       "%s; a CUDA block multiplies both with one x and writes one dP, so they "
                       "need one dtype (convert one of them)",
                       fn, ffn_dtype_name(p->mat[FFN_BLK_GATE].dtype),
                       ffn_dtype_name(p->mat[FFN_BLK_UP].dtype));
        free(b);
        return st;
    }
    if ((st = ffn__check_weights(ctx, fn, p))) {
        free(b);
        return st;
    }
    b->fdt = p->mat[p->seg[0].w.which].dtype;
    b->hdt = p->mat[FFN_BLK_DOWN].dtype;
    b->sd = o.save_dtype;
    b->gelu_epi = !p->spec.gated && p->spec.act == FFN_ACT_GELU_TANH;
    const char *gm = getenv("FFN_CUDA_BLOCK_GEMM");
    b->force_naive = gm && !strcmp(gm, "naive");
    const char *dr = getenv("FFN_CUDA_BLOCK_DX_ROUND");
    b->dx_twice = dr && !strcmp(dr, "2");
    snprintf(b->gemm_impl, sizeof b->gemm_impl, "%s", "");
    int prev;
    cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
    if (e != cudaSuccess) {
        free(b);
        return ffn_cuda_error(ctx, fn, "cudaSetDevice", e);
    }
    const char *gg = getenv("FFN_CUDA_GLU_GEMM");
    b->glu_sms = p->spec.gated ? ffn_cu_glu_gemm_prepare() : 0;
    const bool gg_all = gg && gg[0] == '1';
    const char *parts = getenv("FFN_CUDA_GLU_PARTS");
    b->glu_min_t = gg_all ? 1 : FFN_CB_GLU_MIN_T;
    b->glu_parts = !b->glu_sms || b->force_naive || (gg && gg[0] == '0') ? 0
                   : parts && *parts ? (int)strtol(parts, NULL, 0)
                   : gg_all          ? FFN_CB_FORM_ALL
                                     : FFN_CB_GLU_PARTS;
    b->stream = (cudaStream_t)ctx->stream;
    cublasStatus_t s = lt->create(&b->h);
    if (s != CUBLAS_STATUS_SUCCESS) {
        b->h = NULL;
        st = ffn_error(ctx, FFN_STATUS_BACKEND, "%s: cublasLtCreate: %s", fn, ffn_lt_status(lt, s));
    } else if ((e = cudaEventCreateWithFlags(&b->done, cudaEventDisableTiming)) != cudaSuccess) {
        b->done = NULL;
        st = ffn_cuda_error(ctx, fn, "cudaEventCreateWithFlags", e);
    } else if (!(st = ffn__reserve(ctx, fn, b, &b->ws, FFN_CB_WS_BYTES)) && o.max_tokens > 0) {
        st = ffn__reserve_tokens(ctx, fn, b, o.max_tokens);
    }
    if (!st) st = ffn__end(ctx, fn, b, st);
    ffn_cuda_leave(ctx->device, prev);
    if (st) {
        ffn__cuda_destroy((ffn_block_t)(void *)b);
        return st;
    }
    *block_out = (ffn_block_t)(void *)b;
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__cuda_info(ffn_ctx_t ctx, ffn_block_t block, int64_t n_tokens,
                                      struct ffn_block_info *info) {
    struct ffn_cuda_block *b = ffn__cb(block);
    const struct ffn_block_plan *p = &b->plan;
    const size_t T = (size_t)n_tokens, m = (size_t)p->spec.d_ff, pc = (size_t)p->pc;
    const size_t d = (size_t)p->spec.d_model;
    info->n_params = p->n_params;
    info->weight_bytes = p->weight_bytes;
    info->cache_bytes = 0;  // every weight and bias is used where it lies
    // SAVE keeps P (save_dtype) and h (W_down's dtype).
    info->saved_bytes_save = T * pc * ffn__es(b->sd) + T * m * ffn__es(b->hdt);
    info->saved_bytes_recompute = 0;
    // cuBLASLt's workspace, dh beyond h when wider, dP when it has another dtype than P, and the
    // f32 staging of one [T, d_model] output.
    const size_t hx =
        ffn__es(b->sd) > ffn__es(b->hdt) ? T * m * (ffn__es(b->sd) - ffn__es(b->hdt)) : 0;
    info->workspace_bytes = FFN_CB_WS_BYTES + hx +
                            (b->fdt != b->sd ? T * pc * ffn__es(b->fdt) : 0) +
                            T * d * sizeof(float);
    info->schedule = FFN_BLOCK_SCHEDULE_SEPARATE;
    info->tile_rows = n_tokens > 0 ? n_tokens : 1;
    info->compute_dtype = b->fdt;
    snprintf(info->gemm_impl, sizeof info->gemm_impl, "%.63s", b->gemm_impl);
    return FFN_STATUS_OK;
}

// --- forward ------------------------------------------------------------------------------------

static enum ffn_status ffn__check_dev_act(ffn_ctx_t ctx, const char *fn, const char *name,
                                          const struct ffn_tensor *t) {
    if (t->rows == 0 || t->cols == 0) return FFN_STATUS_OK;
    return ffn_cuda_check_view(ctx, fn, name, t);
}

static enum ffn_status ffn__cuda_forward(ffn_ctx_t ctx, ffn_block_t block,
                                         const struct ffn_tensor *y, const struct ffn_tensor *x,
                                         enum ffn_block_policy policy) {
    static const char fn[] = "ffn_block_forward";
    struct ffn_cuda_block *b = ffn__cb(block);
    const struct ffn_block_plan *pl = &b->plan;
    const int64_t d = pl->spec.d_model, m = pl->spec.d_ff;
    enum ffn_status st;
    if ((st = ffn_block_check_forward(ctx, fn, pl, y, x))) return st;
    if ((st = ffn__check_dev_act(ctx, fn, "x", x)) || (st = ffn__check_dev_act(ctx, fn, "y", y)))
        return st;
    b->pending = FFN_BLOCK_POLICY_NONE;  // a new forward replaces (or, failing, drops) the tape
    const int64_t T = x->rows;
    int prev;
    cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
    if (e != cudaSuccess) return ffn_cuda_error(ctx, fn, "cudaSetDevice", e);
    if ((st = ffn__begin(ctx, fn, b))) goto out;
    if (T > 0) {
        struct ffn_cb_mat xop;
        if ((st = ffn__as(ctx, fn, b, x, b->fdt, &b->X, &xop)) ||
            (st = ffn__first_act(ctx, fn, b, &xop, T, policy == FFN_BLOCK_POLICY_SAVE)))
            goto out;
        const void *bd = pl->has_b_down ? pl->vec[FFN_BLK_DOWN].p : NULL;
        const struct ffn_cb_call c = {T,
                                      d,
                                      m,
                                      {b->H.p, b->hdt, m, 1},
                                      ffn__wop(b, &pl->down, false),
                                      ffn__act_op(y),
                                      bd,
                                      pl->vec[FFN_BLK_DOWN].dtype,
                                      false,
                                      FFN_CB_EPI_NONE,
                                      NULL,
                                      FFN_DTYPE_F32,
                                      0};
        const char *impl = NULL;
        if ((st = ffn__mm(ctx, fn, b, &c, &impl))) goto out;
        ffn__mark(b, "down", impl);
    }
    if (policy != FFN_BLOCK_POLICY_NONE) {
        b->pending = policy;
        b->saved_h = policy == FFN_BLOCK_POLICY_SAVE;
        b->px = *x;
        b->p_tokens = T;
    }
out:
    st = ffn__end(ctx, fn, b, st);
    ffn_cuda_leave(ctx->device, prev);
    return st;
}

// --- backward -----------------------------------------------------------------------------------

// Dense shape of a gradient member (its weight's stored shape; a bias: [1, n]).
static void ffn__grad_shape(const struct ffn_block_plan *p, int k, bool bias, int64_t *R,
                            int64_t *C) {
    const struct ffn_blk_stored *s = bias ? &p->vec[k] : &p->mat[k];
    *R = bias ? 1 : s->R;
    *C = s->C;
}

static enum ffn_status ffn__zero_grads(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                       const struct ffn_block_grads *g, enum ffn_dtype gdt) {
    if (g->accumulate) return FFN_STATUS_OK;
    for (int k = 0; k < FFN_BLK_COUNT; k++)
        for (int bias = 0; bias < 2; bias++) {
            void *p = ffn_block_grad_member(g, (enum ffn_blk_which)k, bias);
            if (!p) continue;
            int64_t R, C;
            ffn__grad_shape(&b->plan, k, bias, &R, &C);
            const cudaError_t e = cudaMemsetAsync(p, 0, (size_t)(R * C) * ffn__es(gdt), b->stream);
            if (e != cudaSuccess) return ffn_cuda_error(ctx, fn, "cudaMemsetAsync", e);
        }
    return FFN_STATUS_OK;
}

// Weight gradient of a logical [K, N] weight, dW = Xᵀ[K, T]·D[T, N], written in the stored
// orientation at G (gdt, leading dimension ldg): [out, in] (trans) holds dWᵀ = Dᵀ·X, so each
// orientation is one GEMM with a row-major output (as the CPU block).
static enum ffn_status ffn__dw(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b, int64_t T,
                               int64_t K, int64_t N, const struct ffn_cb_mat *X,
                               const struct ffn_cb_mat *D, bool trans, void *G, enum ffn_dtype gdt,
                               int64_t ldg, bool acc, const char **impl) {
    const struct ffn_cb_mat xt = {X->p, X->dt, X->s1, X->s0}, dt = {D->p, D->dt, D->s1, D->s0};
    struct ffn_cb_call c = {0};
    c.C = (struct ffn_cb_mat){G, gdt, ldg, 1};
    c.acc = acc;
    c.K = T;
    if (trans) {
        c.M = N, c.N = K, c.A = dt, c.B = *X;
    } else {
        c.M = K, c.N = N, c.A = xt, c.B = *D;
    }
    return ffn__mm(ctx, fn, b, &c, impl);
}

static enum ffn_status ffn__colsum(ffn_ctx_t ctx, const char *fn, struct ffn_cuda_block *b,
                                   const void *A, enum ffn_dtype dt, int64_t lda, int64_t rows,
                                   int64_t n, void *g, enum ffn_dtype gdt, int64_t gs, bool acc) {
    int64_t cap = 4096 * n;
    if (cap > FFN_CB_PART_MAX) cap = FFN_CB_PART_MAX > n ? FFN_CB_PART_MAX : n;
    enum ffn_status st = ffn__reserve(ctx, fn, b, &b->part, (size_t)cap * sizeof(double));
    if (st) return st;
    return ffn__launch_err(
        ctx, fn, "the column-sum kernels",
        ffn_cu_colsum_launch(b->stream, A, (int)dt, lda, rows, n, b->part.p,
                             (int64_t)(b->part.cap / sizeof(double)), g, (int)gdt, gs, acc));
}

static enum ffn_status ffn__check_grad_ptrs(ffn_ctx_t ctx, const char *fn,
                                            const struct ffn_cuda_block *b,
                                            const struct ffn_block_grads *g, enum ffn_dtype gdt) {
    static const char *const wn[] = {"grads.gate", "grads.up", "grads.gate_up", "grads.down"};
    static const char *const bn[] = {"grads.b_gate", "grads.b_up", "grads.b_gate_up",
                                     "grads.b_down"};
    for (int k = 0; k < FFN_BLK_COUNT; k++)
        for (int bias = 0; bias < 2; bias++) {
            void *p = ffn_block_grad_member(g, (enum ffn_blk_which)k, bias);
            if (!p) continue;
            int64_t R, C;
            ffn__grad_shape(&b->plan, k, bias, &R, &C);
            const struct ffn_tensor t = ffn_tensor_2d(p, gdt, R, C, C);
            enum ffn_status st = ffn_cuda_check_view(ctx, fn, bias ? bn[k] : wn[k], &t);
            if (st) return st;
        }
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__cuda_backward(ffn_ctx_t ctx, ffn_block_t block,
                                          const struct ffn_block_grads *grads,
                                          const struct ffn_tensor *dx,
                                          const struct ffn_tensor *dy) {
    static const char fn[] = "ffn_block_backward";
    struct ffn_cuda_block *b = ffn__cb(block);
    struct ffn_block_grads none = FFN_BLOCK_GRADS_INIT;
    const struct ffn_block_grads *g = grads ? grads : &none;
    const struct ffn_block_plan *pl = &b->plan;
    const int64_t d = pl->spec.d_model, m = pl->spec.d_ff, ld = pl->p_ld, np = pl->n_seg;
    enum ffn_status st;
    enum ffn_dtype gdt;
    const int64_t T = b->p_tokens;
    const struct ffn_tensor *x = &b->px;
    if ((st = ffn_block_check_backward(ctx, fn, pl, b->pending, x, T, g, dx, dy, &gdt))) return st;
    if ((dx && (st = ffn__check_dev_act(ctx, fn, "dx", dx))) ||
        (st = ffn__check_dev_act(ctx, fn, "dy", dy)) ||
        (st = ffn__check_grad_ptrs(ctx, fn, b, g, gdt)))
        return st;
    const bool recompute = b->pending == FFN_BLOCK_POLICY_RECOMPUTE;
    b->pending = FFN_BLOCK_POLICY_NONE;  // the saved buffers are about to be overwritten
    int prev;
    cudaError_t e = ffn_cuda_enter(ctx->device, &prev);
    if (e != cudaSuccess) return ffn_cuda_error(ctx, fn, "cudaSetDevice", e);
    if ((st = ffn__begin(ctx, fn, b))) goto out;
    if (T == 0) {
        st = ffn__zero_grads(ctx, fn, b, g, gdt);
        goto out;
    }
    const bool need_dp = ffn_block_need_dp(pl, g, dx != NULL);
    const enum ffn_dtype hdt = b->hdt, fdt = b->fdt, sd = b->sd;
    struct ffn_cb_mat xop, dyop;
    if (recompute) {  // P (and h) as the forward computed them
        if ((st = ffn__as(ctx, fn, b, x, fdt, &b->X, &xop)) ||
            (st = ffn__first_act(ctx, fn, b, &xop, T, true)))
            goto out;
    } else if ((st = ffn__reserve(ctx, fn, b, &b->H, ffn__h_bytes(b, T)))) {  // (kept by SAVE)
        goto out;
    }
    if ((st = ffn__as(ctx, fn, b, dy, hdt, &b->Y, &dyop))) goto out;

    // Down projection: dW_down = hᵀ·dy (h as the forward or the recompute left it), db_down = Σ dy.
    if (g->down) {
        const struct ffn_cb_mat hop = {b->H.p, hdt, m, 1};
        const char *impl = NULL;
        if ((st = ffn__dw(ctx, fn, b, T, m, d, &hop, &dyop, pl->down.trans, g->down, gdt,
                          pl->down_grad_ld, g->accumulate, &impl)))
            goto out;
        ffn__mark(b, "dW_down", impl);
    }
    if (g->b_down) {
        const struct ffn_cb_mat dyv = ffn__act_op(dy);
        if ((st = ffn__colsum(ctx, fn, b, dy->data, dy->dtype, dyv.s0, T, d, g->b_down, gdt, 1,
                              g->accumulate)))
            goto out;
        ffn__mark(b, "db_down", NULL);
    }
    if (!need_dp) goto out;

    // dh = dy·W_downᵀ, then dP: in place over P when dP has P's dtype; a plain GeLU-tanh block
    // may take the DGELU epilogue (dP straight out of the GEMM, into D).
    const struct ffn_cb_mat wdt = ffn__wop(b, &pl->down, true);
    bool fused = false;
    void *Dp = b->P.p;
    const bool try_dgelu = ffn__dgelu_try(b);
    if (fdt != sd || try_dgelu) {
        if ((st = ffn__reserve(ctx, fn, b, &b->D, (size_t)(np * T * ld) * ffn__es(fdt)))) goto out;
    }
    if (try_dgelu) {
        const struct ffn_cb_call c = {T,      m,
                                      d,      dyop,
                                      wdt,    {b->D.p, fdt, ld, 1},
                                      NULL,   FFN_DTYPE_F32,
                                      false,  FFN_CB_EPI_DGELU,
                                      b->P.p, sd,
                                      ld};
        const char *impl = NULL;
        if ((st = ffn__lt_run(ctx, fn, b, &c, &impl, &fused))) goto out;
        if (fused) Dp = b->D.p, ffn__mark(b, "dh+dgelu", impl);
    }
    struct ffn_cu_dglu_gemm dg;
    if (!fused && ffn__dglu_try(ctx, b, &dyop, &wdt, T, &dg)) {
        if ((st = ffn__launch_err(ctx, fn, "the fused dh GEMM",
                                  ffn_cu_dglu_gemm_launch(b->stream, &dg))))
            goto out;
        fused = true;
        ffn__mark(b, "dh+glu bwd", FFN_CB_DGLU_IMPL);
    }
    if (!fused) {
        const struct ffn_cb_call c = {T,     m,
                                      d,     dyop,
                                      wdt,   {b->H.p, sd, m, 1},
                                      NULL,  FFN_DTYPE_F32,
                                      false, FFN_CB_EPI_NONE,
                                      NULL,  FFN_DTYPE_F32,
                                      0};
        const char *impl = NULL;
        if ((st = ffn__mm(ctx, fn, b, &c, &impl))) goto out;
        ffn__mark(b, "dh", impl);
        Dp = fdt == sd ? b->P.p : b->D.p;
        if ((st = ffn__act_bwd(ctx, fn, b, T, b->P.p, sd, Dp, fdt))) goto out;
        ffn__mark(b, "act bwd", NULL);
    }
    // Bias gradients of the first projection: column sums of dP, scattered to the layout.
    for (int k = 0; k < pl->n_bias; k++) {
        const struct ffn_blk_bias *bp = &pl->bias[k];
        char *gb = ffn_block_grad_member(g, bp->which, true);
        if (!gb) continue;
        const struct ffn_tensor dp = ffn__pview(b, Dp, fdt, T, bp->seg, bp->col0, bp->n);
        if ((st = ffn__colsum(ctx, fn, b, dp.data, fdt, ld, T, bp->n,
                              gb + (size_t)bp->off * ffn__es(gdt), gdt, bp->stride, g->accumulate)))
            goto out;
        ffn__mark(b, "db_P", NULL);
    }
    // dW_first = dPᵀ·x, one GEMM per plane (one when fused), in the stored orientation.
    bool any_dw = false;
    for (int k = 0; k < np; k++)
        any_dw |= ffn_block_grad_member(g, pl->seg[k].w.which, false) != NULL;
    if (any_dw && (st = ffn__as(ctx, fn, b, x, fdt, &b->X, &xop))) goto out;
    for (int k = 0; k < np && any_dw; k++) {
        const struct ffn_blk_seg *s = &pl->seg[k];
        char *gw = ffn_block_grad_member(g, s->w.which, false);
        if (!gw) continue;
        const struct ffn_cb_mat dp = {(char *)Dp + (size_t)(k * T * ld) * ffn__es(fdt), fdt, ld, 1};
        const char *impl = NULL;
        if ((st = ffn__dw(ctx, fn, b, T, d, s->n, &xop, &dp, s->w.trans,
                          gw + (size_t)s->grad_off * ffn__es(gdt), gdt, s->grad_ld, g->accumulate,
                          &impl)))
            goto out;
        ffn__mark(b, k ? "dW_P1" : "dW_P0", impl);
    }
    // dx = Σ dP_k·W_kᵀ: two planes in one GEMM of ffn's where it applies; else the second plane
    // accumulates, through an f32 sum when dx is not f32, so that it is rounded once.
    struct ffn_cu_gemm_pair dxp;
    if (dx && ffn__dx_pair_try(b, dx, Dp, T, &dxp)) {
        if ((st =
                 ffn__launch_err(ctx, fn, "the dx GEMM", ffn_cu_gemm_pair_launch(b->stream, &dxp))))
            goto out;
        ffn__mark(b, "dx_P0+P1", FFN_CB_PAIR_IMPL);
    } else if (dx) {
        const bool stage = np > 1 && dx->dtype != FFN_DTYPE_F32 && !b->dx_twice;
        if (stage && (st = ffn__reserve(ctx, fn, b, &b->Z, (size_t)(T * d) * sizeof(float))))
            goto out;
        const struct ffn_cb_mat c0 =
            stage ? (struct ffn_cb_mat){b->Z.p, FFN_DTYPE_F32, d, 1} : ffn__act_op(dx);
        for (int k = 0; k < np; k++) {
            const struct ffn_cb_call c = {
                T,
                d,
                pl->seg[k].n,
                {(char *)Dp + (size_t)(k * T * ld) * ffn__es(fdt), fdt, ld, 1},
                ffn__wop(b, &pl->seg[k].w, true),
                c0,
                NULL,
                FFN_DTYPE_F32,
                k > 0,
                FFN_CB_EPI_NONE,
                NULL,
                FFN_DTYPE_F32,
                0};
            const char *impl = NULL;
            if ((st = ffn__mm(ctx, fn, b, &c, &impl))) goto out;
            ffn__mark(b, k ? "dx_P1" : "dx_P0", impl);
        }
        if (stage) {
            const struct ffn_cb_mat dxv = ffn__act_op(dx);
            if ((st = ffn__convert(ctx, fn, b, T, d, dx->data, dx->dtype, dxv.s0, b->Z.p,
                                   FFN_DTYPE_F32, d, NULL, FFN_DTYPE_F32, 0, false)))
                goto out;
            ffn__mark(b, "dx convert", NULL);
        }
    }
out:
    st = ffn__end(ctx, fn, b, st);
    ffn_cuda_leave(ctx->device, prev);
    return st;
}

// The entry points with the thread's stream-capture mode relaxed (ffn_cuda_capture_relax): a
// forward or backward may be captured into the caller's CUDA graph once a first call has reserved
// the block's memory for that many tokens.
static enum ffn_status ffn__cuda_create_cap(ffn_ctx_t ctx, const struct ffn_block_spec *spec,
                                            const struct ffn_block_weights *weights,
                                            const struct ffn_block_opts *opts,
                                            ffn_block_t *block_out) {
    const int mode = ffn_cuda_capture_relax();
    const enum ffn_status st = ffn__cuda_create(ctx, spec, weights, opts, block_out);
    ffn_cuda_capture_restore(mode);
    return st;
}

static enum ffn_status ffn__cuda_forward_cap(ffn_ctx_t ctx, ffn_block_t block,
                                             const struct ffn_tensor *y, const struct ffn_tensor *x,
                                             enum ffn_block_policy policy) {
    const int mode = ffn_cuda_capture_relax();
    const enum ffn_status st = ffn__cuda_forward(ctx, block, y, x, policy);
    ffn_cuda_capture_restore(mode);
    return st;
}

static enum ffn_status ffn__cuda_backward_cap(ffn_ctx_t ctx, ffn_block_t block,
                                              const struct ffn_block_grads *grads,
                                              const struct ffn_tensor *dx,
                                              const struct ffn_tensor *dy) {
    const int mode = ffn_cuda_capture_relax();
    const enum ffn_status st = ffn__cuda_backward(ctx, block, grads, dx, dy);
    ffn_cuda_capture_restore(mode);
    return st;
}

static enum ffn_status ffn__cuda_info_cap(ffn_ctx_t ctx, ffn_block_t block, int64_t n_tokens,
                                          struct ffn_block_info *info) {
    const int mode = ffn_cuda_capture_relax();
    const enum ffn_status st = ffn__cuda_info(ctx, block, n_tokens, info);
    ffn_cuda_capture_restore(mode);
    return st;
}

const struct ffn_block_i ffn_block_cuda = {
    .create = ffn__cuda_create_cap,
    .destroy = ffn__cuda_destroy,
    .forward = ffn__cuda_forward_cap,
    .backward = ffn__cuda_backward_cap,
    .info = ffn__cuda_info_cap,
};
